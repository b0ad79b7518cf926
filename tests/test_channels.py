#!/usr/bin/env python3
"""Signed channels: a recipe folder published with 'channel build', served
by nginx on 127.0.0.1, followed with 'channel add' and 'channel update'.
Every attack a channel must withstand is served for real and must be
refused with its reason and nothing changed: a bad signature, an older
version (rollback), an expired index (freeze), an index past the size cap
(endless data), another channel's index, other contents under the
accepted version, an index signed for one version and an artifact of
another (mix and match), and a tampered artifact behind a valid index.
Key rotation, channel priority and 'info' naming a recipe's origin too.
The accepted index is cached as images of its recipes and GPU table: a
plan through them equals one parsed from the index, a damaged or missing
image is made again, a refused index takes its cache with it, and gc keeps
only the caches of channels the root still follows.  A plan asked again
takes the answer kept for it without solving; a new index is solved
again, and the stored index changed on disk is refused all the same.

Indexes no honest 'channel build' would make (expired, reused versions)
are signed here with the openssl command line and the channel's key."""
import base64
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys

import channel
import harness

BIN = sys.argv[1]
REPO = pathlib.Path(__file__).resolve().parent.parent
check = harness.Checks()


class Client:
    """A root that follows channels and reads no other recipes."""

    def __init__(self, path):
        self.path = pathlib.Path(path)

    def run(self, *args):
        return harness.run(BIN, *args, env={"CFAPKG_ROOT": str(self.path),
                                             "CFAPKG_NO_BUILTIN_RECIPES": "1",
                                             "CFAPKG_RECIPES": "", "CFAPKG_MIRRORS": ""})

    def state(self, name="lab"):
        f = self.path / "channels" / name / "channel.json"
        return json.loads(f.read_text()) if f.exists() else {}

    def stored(self, name="lab"):
        f = self.path / "channels" / name / "index.signed"
        return f.read_bytes() if f.exists() else b""

    def versions(self, name):
        r = self.run("info", name, "--json")
        try:
            return [v["version"] for v in json.loads(r.stdout)["versions"]]
        except (json.JSONDecodeError, KeyError, TypeError):
            return []


def cli(*args):
    r = harness.run(BIN, *args)
    if r.returncode:
        raise RuntimeError(f"cfapkg {' '.join(args)}: {r.stderr}")
    return r


def publish(folder, key, *extra):
    cli("channel", "build", str(folder), "--key", str(key), "--name", "lab", *extra)
    return (folder / "index.json").read_bytes(), (folder / "index.json.sig").read_bytes()


def serve(folder, index, sig):
    (folder / "index.json").write_bytes(index)
    (folder / "index.json.sig").write_bytes(sig)


def openssl_sign(key, payload, tmp):
    """An ed25519 signature line made outside cfapkg, for indexes its build
    refuses to make."""
    (tmp / "payload").write_bytes(payload)
    subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", str(key), "-rawin", "-in",
                    str(tmp / "payload"), "-out", str(tmp / "sig.bin")], check=True,
                   capture_output=True, timeout=60)
    sig = base64.b64encode((tmp / "sig.bin").read_bytes()).decode()
    pub = base64.b64decode(pathlib.Path(f"{key}.pub").read_text().split()[1])
    return f"ed25519 {hashlib.sha256(pub).hexdigest()[:16]} {sig}\n".encode()


def refused(client, r, phrase, before, name):
    check(f"{name}: refused (exit 9)", r.returncode == 9, r.stdout + r.stderr)
    check(f"{name}: says why", phrase in r.stderr, r.stderr)
    check(f"{name}: nothing changed", client.state() == before[0] and
          client.stored() == before[1], client.state())


def caches(client, ext):
    """The channel caches of the client's root with the extension."""
    return sorted((client.path / "cache" / "recipes").glob(f"*.{ext}"))


def same_as_parsed(client, what, *cmd):
    """cmd's --json through the cache against the same parsed whole."""
    cmd = cmd or ("plan", "pytorch-cuda-stack", *channel.FACTS)
    warm = client.run(*cmd, "--json")
    whole = client.run(*cmd, "--json", "--no-index-cache")
    check(f"{what}: the same answer as the index parsed whole",
          warm.returncode == 0 and warm.stdout == whole.stdout and warm.stdout,
          warm.stderr + whole.stderr)


def snapshot(client):
    return client.state(), client.stored()


def test_keys(tmp):
    r = harness.run(BIN, "channel", "keygen", str(tmp / "lab.key"))
    check("keygen writes a private and a public key", r.returncode == 0 and
          (tmp / "lab.key").is_file() and (tmp / "lab.key.pub").read_text().startswith(
              "ed25519 "), r.stdout + r.stderr)
    if not harness.EMULATOR:
        check("the private key is its owner's only",
              (tmp / "lab.key").stat().st_mode & 0o077 == 0, oct((tmp / "lab.key").stat().st_mode))
    if not harness.EMULATOR:
        # A link planted where the key is first written is not followed.
        bait = tmp / "bait.txt"
        bait.write_text("not a key\n")
        (tmp / "planted.key.tmp").symlink_to(bait)
        r = harness.run(BIN, "channel", "keygen", str(tmp / "planted.key"))
        check("keygen does not write through a link at its temporary name",
              r.returncode == 0 and bait.read_text() == "not a key\n" and
              (tmp / "planted.key").stat().st_mode & 0o077 == 0 and
              not (tmp / "planted.key").is_symlink(), r.stderr)
    r = harness.run(BIN, "channel", "keygen", str(tmp / "lab.key"))
    check("keygen never writes over a key", r.returncode != 0 and "exists" in r.stderr, r.stderr)
    harness.run(BIN, "channel", "keygen", str(tmp / "new.key"))
    harness.run(BIN, "channel", "keygen", str(tmp / "evil.key"))


def test_key_files(tmp, url, key):
    """--key takes what a person's editor writes (a byte order mark, CRLF,
    blank lines), and refuses what is not exactly one key, or no file."""
    line = pathlib.Path(f"{key}.pub").read_text().strip()
    other = pathlib.Path(tmp / "new.key.pub").read_text().split()[1]
    cases = {"a byte order mark, CRLF and blank lines": ("\ufeff" + line + "\r\n\r\n\r\n", None),
             "the bare base64 and spaces": ("  " + line.split()[1] + "  \n", None),
             "a stray word after the key": (line + " stray\n", "more after the key"),
             "two keys": (line + "\n" + f"ed25519 {other}\n", "more after the key"),
             "a key cut short": (line[:-4] + "\n", "not the base64")}
    for i, (what, (text, refusal)) in enumerate(cases.items()):
        f = tmp / f"key{i}.pub"
        f.write_bytes(text.encode())
        r = Client(tmp / f"keyroot{i}").run("channel", "add", "lab", url, "--key", str(f))
        if refusal:
            check(f"a key file with {what} is refused, naming the file and why",
                  r.returncode == 2 and f"{f}: not an ed25519 public key file" in r.stderr and
                  refusal in r.stderr, r.stderr)
        else:
            check(f"a key file with {what} is accepted", r.returncode == 0, r.stderr)
    missing = tmp / "nonexistent.pub"
    r = Client(tmp / "keyroot-missing").run("channel", "add", "lab", url, "--key", str(missing))
    check("--key naming no file says there is no such file",
          r.returncode == 2 and "there is no such file" in r.stderr and str(missing) in r.stderr,
          r.stderr)


def test_add_and_update(client, lab, url, key):
    index1, sig1 = publish(lab, key)
    r = client.run("channel", "add", "lab", url, "--key", str(key) + ".pub")
    check("add fetches and accepts the first index", r.returncode == 0 and
          client.state().get("version") == 1, r.stdout + r.stderr)
    check("its recipes take part in planning",
          client.run("plan", "pytorch-cuda-stack", *channel.FACTS).returncode == 0,
          client.run("plan", "pytorch-cuda-stack", *channel.FACTS).stderr)
    r = client.run("info", "zluda")
    check("info says where the recipe came from",
          f"channel lab (index 1, {url})" in r.stdout, r.stdout + r.stderr)
    r = client.run("channel", "update")
    check("an unchanged channel is current", r.returncode == 0 and "index 1 is current" in
          r.stdout, r.stdout + r.stderr)
    doc = json.loads((lab / "zluda.json").read_text())
    extra = json.loads(json.dumps(doc["versions"][0]))
    extra["version"] = "6-preview.80"
    doc["versions"].insert(0, extra)
    (lab / "zluda.json").write_text(json.dumps(doc, indent=1))
    index2, sig2 = publish(lab, key)
    r = client.run("channel", "update", "lab")
    check("a newer index is accepted", r.returncode == 0 and "index 1 -> 2" in r.stdout and
          "6-preview.80" in client.versions("zluda"), r.stdout + r.stderr)
    return (index1, sig1), (index2, sig2)


def test_attacks(client, lab, tmp, key, old, cur):
    before = snapshot(client)
    serve(lab, cur[0].replace(b'"6-preview.80"', b'"6-preview.81"'), cur[1])
    refused(client, client.run("channel", "update"), "no valid signature", before,
            "a changed index under a valid signature")
    serve(lab, cur[0], old[1])
    refused(client, client.run("channel", "update"), "no valid signature", before,
            "an index with another version's signature (mix and match)")
    serve(lab, *old)
    refused(client, client.run("channel", "update"), "older than version 2", before,
            "an older index (rollback)")
    doc = json.loads(cur[0])
    doc["version"], doc["expires"] = 3, "2020-01-01T00:00:00Z"
    payload = json.dumps(doc).encode()
    serve(lab, payload, openssl_sign(key, payload, tmp))
    refused(client, client.run("channel", "update"), "expired on 2020-01-01", before,
            "an expired index (freeze)")
    doc["expires"], doc["channel"] = "2099-01-01T00:00:00Z", "other"
    payload = json.dumps(doc).encode()
    serve(lab, payload, openssl_sign(key, payload, tmp))
    refused(client, client.run("channel", "update"), "the index of another channel", before,
            "another channel's index")
    doc["channel"], doc["version"] = "lab", 2
    payload = json.dumps(doc).encode()
    serve(lab, payload, openssl_sign(key, payload, tmp))
    refused(client, client.run("channel", "update"), "different contents under the accepted",
            before, "other contents under the accepted version")
    doc["version"] = 3
    payload = json.dumps(doc).encode()
    serve(lab, payload, openssl_sign(tmp / "evil.key", payload, tmp))
    refused(client, client.run("channel", "update"), "no valid signature", before,
            "an index signed by a key the channel does not use")
    with open(lab / "index.json", "wb") as f:
        f.write(b'{"format": 1, "recipes": {"x": "' + b"a" * (17 << 20) + b'"}}')
    (lab / "index.json.sig").write_bytes(cur[1])
    refused(client, client.run("channel", "update"), "more than the 16 MiB", before,
            "an index past the 16 MiB cap (endless data)")
    serve(lab, *cur)


def test_artifacts(client, www, lab):
    """The artifact bytes must be those the accepted index records."""
    zip6 = www / "zluda6.zip"
    good = zip6.read_bytes()
    zip6.write_bytes(good[:-10] + b"x" * 10)
    r = client.run("install", "zluda==6-preview.69", *channel.FACTS, "--yes")
    check("a tampered artifact behind a valid index is refused",
          r.returncode == 9 and "SHA-256" in r.stderr, r.stdout + r.stderr)
    check("and nothing is installed", not (client.path / "envs" / "default" / "1").exists(),
          r.stdout)
    zip6.write_bytes(good)
    r = client.run("install", "zluda==6-preview.69", *channel.FACTS, "--yes")
    check("the genuine artifact installs", r.returncode == 0, r.stdout + r.stderr)


def test_local_tamper(client):
    stored = client.path / "channels" / "lab" / "index.signed"
    good = stored.read_bytes()
    state = client.path / "channels" / "lab" / "channel.json"
    kept = state.read_bytes()
    state.write_text(json.dumps({**json.loads(kept), "version": 1e300, "priority": -1e300}))
    r = client.run("channel", "list")
    check("a channel state with numbers past any integer is read, not cast blindly",
          r.returncode == 0 and "lab" in r.stdout, r.stdout + r.stderr)
    state.write_bytes(kept)
    stored.write_bytes(good.replace(b"6-preview.80", b"6-preview.99"))
    had = caches(client, "img")
    r = client.run("plan", "zluda", *channel.FACTS)
    check("an accepted index changed on disk is refused when planning",
          r.returncode == 9 and "no valid signature" in r.stderr, r.stdout + r.stderr)
    check("... and its cache goes with it", len(had) == 1 and not caches(client, "img"), had)
    r = client.run("channel", "update", "lab")
    check("update repairs it from the server", r.returncode == 0 and stored.read_bytes() == good,
          r.stdout + r.stderr)


def test_rotation(client, lab, tmp, key):
    new = tmp / "new.key"
    publish(lab, key, "--next-key", str(new) + ".pub")
    r = client.run("channel", "update")
    check("an index naming the next key is accepted", r.returncode == 0 and
          len(client.state().get("keys", [])) == 2, r.stdout + r.stderr)
    publish(lab, new)
    r = client.run("channel", "update")
    check("the next index, signed by the new key, is accepted",
          r.returncode == 0 and len(client.state().get("keys", [])) == 1, r.stdout + r.stderr)
    before = snapshot(client)
    publish(lab, key)
    refused(client, client.run("channel", "update"), "no valid signature", before,
            "the retired key")
    publish(lab, new)
    check("the new key keeps working", client.run("channel", "update").returncode == 0,
          client.state())


def test_cache(client, lab, key):
    """The accepted index as images: the plan through them, their upkeep."""
    same_as_parsed(client, "a plan from a channel")
    imgs = caches(client, "img")
    check("a plan caches the accepted index's recipes, and it has no GPU table",
          len(imgs) == 1 and not caches(client, "gpus"), imgs)
    shutil.copy(REPO / "recipes" / "gpus.json", lab / "gpus.json")
    publish(lab, key)
    r = client.run("channel", "update", "lab")
    check("an index with a GPU table is accepted", r.returncode == 0, r.stdout + r.stderr)
    same_as_parsed(client, "the channel's GPU table", "gpus")
    tables = caches(client, "gpus")
    check("... which is cached beside its recipes", len(tables) == 1 and
          caches(client, "img") == imgs, caches(client, "img") + tables)
    same_as_parsed(client, "a plan from the new index")
    kept = imgs[0].read_bytes()
    imgs[0].write_bytes(kept[:len(kept) // 2] + bytes(64) + kept[len(kept) // 2 + 64:])
    same_as_parsed(client, "a plan over a damaged image")
    check("... which is made again, byte for byte", imgs[0].read_bytes() == kept)
    tables[0].unlink()
    same_as_parsed(client, "the GPU table gone from beside its image", "gpus")
    check("... which is made again", tables[0].is_file() and imgs[0].read_bytes() == kept)
    for crash in ("1", "2"):
        for p in imgs + tables:
            p.unlink()
        r = harness.run(BIN, "plan", "pytorch-cuda-stack", *channel.FACTS,
                        env={"CFAPKG_ROOT": str(client.path), "CFAPKG_NO_BUILTIN_RECIPES": "1",
                             "CFAPKG_RECIPES": "", "CFAPKG_CRASH_AFTER": crash})
        # A signal on POSIX, TerminateProcess's code under Wine.
        check(f"a plan killed at write {crash} of the channel's cache",
              r.returncode in (-9, 137), r.returncode)
        same_as_parsed(client, f"the plan after that kill ({crash})")
        left = [p.name for p in (client.path / "cache").rglob("*")
                if p.name.endswith((".tmp", ".part"))]
        check(f"... leaves nothing half-written and the cache whole ({crash})", left == [] and
              imgs[0].read_bytes() == kept and tables[0].is_file(), left)
    (lab / "gpus.json").unlink()
    publish(lab, key)
    client.run("channel", "update", "lab")
    same_as_parsed(client, "the next index, without a GPU table")
    check("... whose image is another", imgs[0].read_bytes() != kept)
    return [p.name for p in imgs + tables]


def solves(client, *cmd):
    """Whether the command loads libsolv (it solves rather than taking a
    kept answer); None where the loader cannot say."""
    if harness.EMULATOR or not sys.platform.startswith("linux"):
        return None
    r = harness.run(BIN, *cmd, env={"CFAPKG_ROOT": str(client.path), "LD_DEBUG": "files",
                                    "CFAPKG_NO_BUILTIN_RECIPES": "1", "CFAPKG_RECIPES": ""})
    return any("libsolv" in w for w in r.stderr.split() if w.startswith("file="))


def test_memo(client, lab, key):
    """A plan from an accepted index asked again takes its kept answer; a
    new index, or the stored one changed, is never answered from it."""
    plan = ("plan", "pytorch-cuda-stack", *channel.FACTS)
    same_as_parsed(client, "a plan from a channel asked again")
    check("a plan from a channel asked again takes its kept answer",
          solves(client, *plan) in (False, None))
    publish(lab, key)
    r = client.run("channel", "update", "lab")
    check("a new index is accepted", r.returncode == 0, r.stdout + r.stderr)
    check("... and the plan on it is solved, not taken", solves(client, *plan) in (True, None))
    same_as_parsed(client, "a plan from the new index")
    stored = client.path / "channels" / "lab" / "index.signed"
    good = stored.read_bytes()
    stored.write_bytes(good.replace(b"6-preview.80", b"6-preview.99"))
    r = client.run(*plan)
    check("an index changed on disk is refused though an answer was kept for it",
          r.returncode == 9 and "no valid signature" in r.stderr, r.stdout + r.stderr)
    r = client.run("channel", "update", "lab")
    check("... and update repairs it", r.returncode == 0 and stored.read_bytes() == good,
          r.stdout + r.stderr)


def test_cache_gc(client, lab_caches):
    r = client.run("gc", "--json")
    doc = json.loads(r.stdout or "{}")
    gone = sorted(i["name"] for i in doc.get("items", []) if i["kind"] == "recipe-cache")
    left = sorted(p.name for p in (client.path / "cache" / "recipes").iterdir())
    check("gc removes the caches of a channel that was removed, naming them",
          r.returncode == 0 and gone and not set(gone) & set(lab_caches), r.stdout[-400:])
    check("... and keeps those of the channels still followed",
          set(lab_caches) <= set(left) and not set(gone) & set(left), left)


def test_damaged_old_index(lab, key):
    """A build over an index.json it cannot read does not start again at 1
    (clients would refuse every later index as older than theirs)."""
    good = (lab / "index.json").read_bytes()
    (lab / "index.json").write_bytes(good[: len(good) // 2])
    r = harness.run(BIN, "channel", "build", str(lab), "--key", str(key), "--name", "lab")
    check("a build over a damaged index.json stops, naming it and --index-version",
          r.returncode == 2 and str(lab / "index.json") in r.stderr and
          "--index-version" in r.stderr and
          (lab / "index.json").read_bytes() == good[: len(good) // 2], r.stdout + r.stderr)
    version = json.loads(good)["version"]
    r = harness.run(BIN, "channel", "build", str(lab), "--key", str(key), "--name", "lab",
                    "--index-version", str(version + 1))
    check("--index-version builds over it", r.returncode == 0 and
          json.loads((lab / "index.json").read_text())["version"] == version + 1,
          r.stdout + r.stderr)


def test_priority(client, www, url_of, tmp):
    other = www / "other"
    shutil.copytree(www / "lab", other)
    for f in ("index.json", "index.json.sig"):
        (other / f).unlink()
    doc = json.loads((other / "zluda.json").read_text())
    doc["versions"] = [v for v in doc["versions"] if v["version"] == "7-preview.10"]
    (other / "zluda.json").write_text(json.dumps(doc, indent=1))
    cli("channel", "build", str(other), "--key", str(tmp / "evil.key"), "--name", "other")
    r = client.run("channel", "add", "other", url_of("other"), "--key",
                   str(tmp / "evil.key") + ".pub", "--priority", "60")
    check("a second channel is added", r.returncode == 0, r.stdout + r.stderr)
    check("the higher priority channel's recipe wins",
          client.versions("zluda") == ["7-preview.10"], client.versions("zluda"))
    r = client.run("info", "zluda")
    check("and info names it", "channel other (index 1" in r.stdout, r.stdout)
    r = client.run("channel", "list", "--json")
    names = [c["name"] for c in json.loads(r.stdout or "{}").get("channels", [])]
    check("list shows both, lowest priority first", names == ["lab", "other"], r.stdout)
    r = client.run("channel", "remove", "other")
    check("remove takes it away", r.returncode == 0 and "6-preview.80" in
          client.versions("zluda"), r.stdout + r.stderr)


def main():
    with channel.www_served("cfapkg-channels-") as (tmp, srv):
        www = tmp / "www"
        _, recipes = channel.write(tmp, srv.url)
        shutil.copytree(recipes, www / "lab")
        client = Client(tmp / "root")
        test_keys(tmp)
        key = tmp / "lab.key"
        old, cur = test_add_and_update(client, www / "lab", srv.url("lab"), key)
        test_key_files(tmp, srv.url("lab"), key)
        test_attacks(client, www / "lab", tmp, key, old, cur)
        test_local_tamper(client)
        test_artifacts(client, www, www / "lab")
        test_rotation(client, www / "lab", tmp, key)
        test_memo(client, www / "lab", tmp / "new.key")
        lab_caches = test_cache(client, www / "lab", tmp / "new.key")
        test_damaged_old_index(www / "lab", tmp / "new.key")
        test_priority(client, www, srv.url, tmp)
        test_cache_gc(client, lab_caches)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
