#!/usr/bin/env python3
"""What people type without thinking, from apt, dnf, pacman and uv: short
options (-y -q -v -V -n -e -o, bundled and joined), unique prefixes of long
options, 'help COMMAND', did-you-mean for commands and options, 'run
PROGRAM ARGS' without "--" (everything after the program is its own),
'env activate' taking the shell from $SHELL, --verbose (each URL tried,
what the solver decided), and the cfapkg.conf settings with their
precedence (system < user < root < environment < options), against nginx
on 127.0.0.1 serving a test channel (tests/channel.py)."""
import json
import os
import pathlib
import subprocess
import sys

import channel
import harness

BIN = sys.argv[1]
check = harness.Checks()
WINE = bool(harness.EMULATOR)
FACTS = channel.FACTS


def doc_of(r):
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def test_short_options(root, tmp):
    r, long = root.run("-V"), root.run("--version")
    check("-V is --version", r.returncode == 0 and r.stdout == long.stdout and
          r.stdout.startswith("cfapkg "), r.stdout + r.stderr)
    r = root.run("search", "-q", "zluda")
    check("-q is --quiet: names only, one a line", r.returncode == 0 and
          "zluda" in r.stdout.split() and all(" " not in ln for ln in r.stdout.splitlines()),
          r.stdout)
    before = root.current()
    r = root.run("install", "-n", "zluda==7-preview.10", *FACTS)
    check("-n is --dry-run for install: the changes shown, nothing done",
          r.returncode == 0 and "zluda 6-preview.69 -> 7-preview.10" in r.stdout and
          root.current() == before, r.stdout + r.stderr)
    r = root.run("install", "--dry", "zluda==7-preview.10", *FACTS)
    check("a unique prefix of a long option is the option (--dry)", r.returncode == 0 and
          root.current() == before, r.stderr)
    r = root.run("plan", "zluda", "--gp", "gfx1200")
    check("an ambiguous prefix is refused, naming what it could be", r.returncode == 2 and
          "--gpu, --gpu-index" in r.stderr, r.stderr)
    root.run("env", "create", "short")
    r = root.run("install", "-ye", "short", "zluda==6-preview.69", *FACTS)
    check("-y and -e bundled (-ye NAME): installed into that environment without asking",
          r.returncode == 0 and root.current("short") == 1, r.stdout + r.stderr)
    r = root.run("env", "remove", "short", "-y")
    check("-y answers env remove's question", r.returncode == 0 and root.current("short") == 0,
          r.stdout + r.stderr)
    out = tmp / "short.lock"
    r = root.run("lock", f"-o{out}")
    check("-oFILE (joined) is --output FILE", r.returncode == 0 and
          json.loads(out.read_text()).get("format") == "cfapkg-lock", r.stderr)
    r = root.run("list", "--env=default", "--json")
    check("--name=VALUE", r.returncode == 0 and doc_of(r).get("packages"), r.stderr)
    r = root.run("list", "--json=yes")
    check("a flag given a value is refused", r.returncode == 2 and
          "takes no value: --json" in r.stderr, r.stderr)
    r = root.run("plan", "zluda", "--gpux", "gfx1200")
    check("an unknown option: did you mean", r.returncode == 2 and
          "unknown option --gpux; did you mean --gpu" in r.stderr, r.stderr)
    r = root.run("plan", "--help")
    check("--help shows the letters", "-n, --dry-run" not in r.stdout and
          "-e, --env NAME" in r.stdout and "-v, --verbose" in r.stdout, r.stdout)
    r = root.run("bench", "--help")
    check("bench's -n is --runs", "-n, --runs N" in r.stdout and "--dry-run" not in r.stdout,
          r.stdout)


def test_help_and_words(root):
    r, h = root.run("help", "install"), root.run("install", "--help")
    check("help COMMAND is COMMAND --help", r.returncode == 0 and r.stdout == h.stdout and
          "usage: cfapkg install" in r.stdout, r.stdout + r.stderr)
    r = root.run("help")
    check("help alone lists the commands", r.returncode == 0 and "  plan SPEC" in r.stdout)
    r = root.run("help", "instal")
    check("help of an unknown command: exit 2, did you mean", r.returncode == 2 and
          "did you mean: cfapkg install" in r.stderr, r.stderr)
    for typed, meant in (("upgrade", "cfapkg update"), ("uninstall", "cfapkg remove"),
                         ("activate", "cfapkg env activate"), ("instal", "cfapkg install")):
        r = root.run(typed)
        check(f"{typed}: did you mean {meant}", r.returncode == 2 and
              f"did you mean: {meant}" in r.stderr, r.stderr)


def test_run(root, tmp):
    if WINE:
        return  # sh is a POSIX program
    r = root.run("run", "sh", "-c", 'printf "%s|" "$0" "$@"', "zero", "-v", "--env", "x")
    check("run PROGRAM ARGS: the options after the program are the program's",
          r.returncode == 0 and r.stdout == "zero|-v|--env|x|", r.stdout + r.stderr)
    r = root.run("run", "--", "sh", "-c", "exit 3")
    check("run -- PROGRAM still works, and the status comes back", r.returncode == 3, r.stderr)
    r = root.run("run", "-e", "default", "sh", "-c", 'printf "%s" "$ZLUDA_TEST_TAG"')
    check("options before the program are cfapkg's", r.returncode == 0 and
          r.stdout.startswith("6"), r.stdout + r.stderr)


def test_activate(root):
    # cfapkg on Windows takes PowerShell whatever $SHELL says (below).
    for path, shell in () if WINE else (("/bin/zsh", "zsh"), ("/usr/local/bin/fish", "fish"),
                                         ("/bin/bash", "bash")):
        r = root.run("env", "activate", env={"SHELL": path})
        want = root.run("env", "activate", "--shell", shell)
        check(f"env activate with SHELL={path} prints {shell}'s snippet",
              r.returncode == 0 and want.returncode == 0 and r.stdout == want.stdout,
              r.stderr)
    if WINE:
        r = root.run("env", "activate")
        want = root.run("env", "activate", "--shell", "powershell")
        check("env activate on Windows prints PowerShell's snippet", r.returncode == 0 and
              r.stdout == want.stdout, r.stderr)
        return
    r = root.run("env", "activate", env={"SHELL": "/bin/dash"})
    check("a $SHELL with no snippet: exit 2, naming it and --shell", r.returncode == 2 and
          "/bin/dash" in r.stderr and "--shell" in r.stderr, r.stderr)
    r = root.run("env", "activate", "--shell", "fish", env={"SHELL": "/bin/zsh"})
    check("--shell wins over $SHELL", r.returncode == 0 and "set -gx" in r.stdout, r.stdout)


def test_verbose(root, srv):
    r = root.run("plan", "pytorch-cuda-stack", *FACTS, "-v")
    check("plan -v says what the solver decided and why", r.returncode == 0 and
          "The solver decided:" in r.stderr and
          "pytorch-cuda-stack 1: your request pytorch-cuda-stack" in r.stderr and
          "libtorch-cuda 2.3.0+cu118: pytorch-cuda-stack 1 requires libtorch-cuda" in r.stderr,
          r.stderr)
    r = root.run("plan", "zluda", *FACTS, "--verbose")
    check("and which versions it passed over", "passed over: 7-preview.10" in r.stderr or
          "passed over: 6-preview.69" in r.stderr, r.stderr)
    missing = srv.url("no-such-file.zip")
    r = root.run("prefetch", missing, srv.url("zluda6.zip"), "-v", "--retries", "0")
    check("prefetch -v names each URL tried and why it failed",
          r.returncode == 8 and f"trying {missing} (attempt 1)" in r.stderr and
          f"{missing} failed: HTTP 404; giving up" in r.stderr and
          f"{srv.url('zluda6.zip')} served it" in r.stderr, r.stderr)


def settings(root, env=None):
    return doc_of(root.run("config", "--json", env=env)).get("settings", {})


def test_config(root, tmp, srv):
    system, user = tmp / "system.conf", tmp / "user.conf"
    rootconf = root.path / "cfapkg.conf"
    system.write_text("# the lab's machines\nparallel = 2\nretries = 7\n")
    user.write_text("\ufeffparallel = 3\nenv = preview\n")
    rootconf.write_text("parallel = 4\n")
    files = {"CFAPKG_SYSTEM_CONFIG": str(system), "CFAPKG_CONFIG": str(user)}
    s = settings(root, files)
    check("the root's file beats the user's, which beats the system's",
          s.get("parallel", {}).get("value") == "4" and
          s.get("parallel", {}).get("from") == f"{rootconf}:1" and
          s.get("retries", {}).get("value") == "7" and
          s.get("env", {}).get("from") == f"{user}:2", s)
    s = settings(root, dict(files, CFAPKG_PARALLEL="5"))
    check("an environment variable beats every file", s.get("parallel", {}).get("value") == "5"
          and s.get("parallel", {}).get("from") == "CFAPKG_PARALLEL", s)
    r = root.run("list", env=files)
    check("env in a settings file is the default environment", r.returncode == 4 and
          '"preview"' in r.stderr, r.stderr)
    r = root.run("list", "--env", "default", env=files)
    check("and an option beats it", r.returncode == 0, r.stderr)
    rootconf.write_text("offline = true\n")
    r = root.run("prefetch", srv.url("zluda7.tar.gz"))
    check("offline = true: nothing is fetched", r.returncode == 8 and "offline" in r.stderr,
          r.stderr)
    r = root.run("prefetch", srv.url("zluda7.tar.gz"), env={"CFAPKG_OFFLINE": "0"})
    check("CFAPKG_OFFLINE=0 overrides it", r.returncode == 0, r.stderr)
    rootconf.write_text("paralel = 2\n")
    r = root.run("list")
    check("an unknown setting: exit 2, the file and line, did you mean", r.returncode == 2 and
          f"{rootconf}:1: unknown setting \"paralel\"; did you mean: parallel" in r.stderr,
          r.stderr)
    rootconf.write_text("\n\nretries = 99\n")
    r = root.run("list")
    check("a bad value: exit 2, the file, line and range", r.returncode == 2 and
          f"{rootconf}:3: retries \"99\"" in r.stderr and "0..20" in r.stderr, r.stderr)
    rootconf.unlink()


def test_proxy_setting(root, tmp, srv):
    """proxy in cfapkg.conf is used; libcurl's own variable beats it."""
    proc = subprocess.Popen([sys.executable, str(pathlib.Path(__file__).parent / "servers" /
                             "proxy.py"), "--lifetime", "120"], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    (tmp / "proxied").mkdir(exist_ok=True)
    conf = tmp / "proxied" / "cfapkg.conf"
    clear = {"http_proxy": "", "HTTP_PROXY": "", "https_proxy": "", "HTTPS_PROXY": "",
             "ALL_PROXY": "", "all_proxy": "", "no_proxy": "", "NO_PROXY": ""}
    try:
        conf.write_text(f"proxy = http://127.0.0.1:{port}\n")
        r = root.run("prefetch", srv.url("libtorch.zip"), "--root", str(tmp / "proxied"),
                     env=clear)
        with urllib_direct().open(f"http://127.0.0.1:{port}/count", timeout=10) as c:
            relayed = int(c.read())
        check("proxy in cfapkg.conf is used", r.returncode == 0 and relayed == 1,
              f"{relayed} {r.stderr}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        conf.unlink()


def urllib_direct():
    import urllib.request
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def main():
    with channel.served("cfapkg-conventions-") as (tmp, srv, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        r = root.change("install", "pytorch-cuda-stack", "zluda==6-preview.69")
        if r.returncode != 0:
            print(f"FAIL setup: install: {r.stdout}{r.stderr}")
            return 1
        test_short_options(root, tmp)
        test_help_and_words(root)
        test_run(root, tmp)
        test_activate(root)
        test_verbose(root, srv)
        test_config(root, tmp, srv)
        test_proxy_setting(root, tmp, srv)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
