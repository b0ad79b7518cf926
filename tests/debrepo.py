"""A Debian repository made here, without dpkg: .debs written as ar
archives (debian-binary, control.tar.gz, data.tar.gz, each holding one
small file), a Packages index listing them in the order given, and a
recipe whose APT source pins that index.  Nothing is served: the index and
the .debs go into a root's download cache, and installs run --offline."""
import hashlib
import io
import json
import tarfile

REPO_URL = "http://127.0.0.1:9/debian"  # never reached: every install is --offline


def tar_gz(files):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def ar(members):
    """A .deb is an ar archive: debian-binary, control.tar.gz, data.tar.gz."""
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode()
        out += data + (b"\n" if len(data) % 2 else b"")
    return bytes(out)


def deb(name, version, arch):
    control = f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\n" \
              f"Maintainer: t <t@example.invalid>\nDescription: test\n"
    data = {f"./usr/share/{name}/VERSION": f"{version}\n".encode()}
    return ar([("debian-binary", b"2.0\n"),
               ("control.tar.gz", tar_gz({"./control": control.encode()})),
               ("data.tar.gz", tar_gz(data))])


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Repo:
    """Generated .debs and an index listing them (in this order)."""

    def __init__(self, pkgs):
        self.debs, stanzas = {}, []
        for name, version, arch, depends in pkgs:
            data = deb(name, version, arch)
            path = f"pool/main/{name[0]}/{name}/{name}_{version}_{arch}.deb"
            self.debs[path] = data
            stanzas.append(f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\n"
                           f"Maintainer: t <t@example.invalid>\n"
                           + (f"Depends: {depends}\n" if depends else "") +
                           f"Filename: {path}\nSize: {len(data)}\nSHA256: {sha(data)}\n"
                           f"Description: test\n")
        self.index = "\n".join(stanzas).encode()

    def recipe(self, folder, name, wanted):
        """folder/NAME.json: a recipe whose APT source pins the index and
        wants those packages ("NAME=VERSION" or "NAME")."""
        r = {"format": 1, "name": name, "summary": "an APT source of generated packages",
             "versions": [{"version": "1.0", "os": ["linux"],
                           "sources": {"linux-x86_64": {"apt": {
                               "repository": REPO_URL, "suite": "sid", "component": "main",
                               "index_sha256": sha(self.index), "index_size": len(self.index),
                               "packages": wanted}}}}]}
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.json").write_text(json.dumps(r, indent=1))
        return folder

    def seed(self, root):
        """The index and the .debs in root's download cache."""
        (root / "downloads").mkdir(parents=True, exist_ok=True)
        for data in [self.index, *self.debs.values()]:
            (root / "downloads" / sha(data)).write_bytes(data)
        return root
