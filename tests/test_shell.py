#!/usr/bin/env python3
"""Shell integration: 'cfapkg completion' for bash, zsh, fish and
PowerShell, made from the command and option tables (driven in the real
shells where they are installed), 'env activate' and its way back
(cfapkg_deactivate, 'env deactivate') leaving the environment exactly as
it was, the man pages made from docs/, '--version' with the libraries'
versions, and NO_COLOR / TERM=dumb turning every escape sequence off.

Arguments: the cfapkg program, the build's man page folder."""
import hashlib
import json
import os
import pathlib
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import channel
import harness

BIN, MAN = sys.argv[1], pathlib.Path(sys.argv[2])
WINDOWS = bool(harness.EMULATOR)
LIBRARIES = ["libsolv", "libcurl", "libarchive", "OpenSSL", "cJSON"]
check = harness.Checks()


def run(*args, env=None):
    return harness.run(BIN, *args, env=env)


def commands():
    """The command table's names, as --help lists them."""
    out = run("--help").stdout
    block = out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if re.match(r"  \S", line)]


def skip(what, why):
    print(f"skipped: {what}: {why}")


def test_version():
    r = run("--version")
    lines = r.stdout.splitlines()
    check("--version's first line is still 'cfapkg X.Y.Z'",
          r.returncode == 0 and re.fullmatch(r"cfapkg \d+\.\d+\.\d+", lines[0] if lines else ""),
          r.stdout)
    got = dict(line.split(None, 1) for line in lines[1:] if len(line.split(None, 1)) == 2)
    check("--version lists each library with a version",
          all(got.get(name, "").strip() for name in LIBRARIES), r.stdout)
    r = run("--version", "--json")
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        doc = {}
    libs = doc.get("libraries", {})
    check("--version --json: the version and each library's",
          doc.get("version") == lines[0].split()[-1] and
          all(libs.get(name) for name in LIBRARIES) and libs.get("libcurl") == got.get("libcurl"),
          r.stdout)
    if WINDOWS:
        skip("libcurl's version against the system's", "the Windows build links its own")
        return
    want = ""
    if shutil.which("pkg-config"):
        want = subprocess.run(["pkg-config", "--modversion", "libcurl"], capture_output=True,
                              text=True).stdout.strip()
    if not want and shutil.which("curl-config"):
        want = subprocess.run(["curl-config", "--version"], capture_output=True,
                              text=True).stdout.split()[-1]
    check("libcurl's version is the system libcurl's", want and got.get("libcurl") == want,
          f"{got.get('libcurl')} vs {want}")


def test_completion_text(cmds):
    for shell in ("bash", "zsh", "fish", "powershell"):
        r = run("completion", shell)
        missing = [c for c in cmds if not re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])",
                                                     r.stdout)]
        check(f"the {shell} script names every command", r.returncode == 0 and cmds and
              not missing, f"{r.returncode} {missing} {r.stderr}")
    ps = run("completion", "powershell").stdout
    check("the PowerShell script registers a completer",
          "Register-ArgumentCompleter -Native -CommandName cfapkg" in ps and
          "'--env' = '@envs'" in ps and "'--shell' = @('bash', 'zsh', 'fish', 'powershell', "
          "'cmd')" in ps, ps[:400])
    r = run("completion", "tcsh")
    check("completion for an unknown shell is a usage error", r.returncode == 2, r.stderr)
    r = run("completion", "bash", "--json")
    check("completion refuses --json (its output is a script)", r.returncode == 2, r.stderr)


BASH_DRIVER = r"""
source "$SCRIPT"
t() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _cfapkg
      printf '%s\n' "$*=${COMPREPLY[*]}"; }
"""


def drive(shell_args, script, calls, env):
    """Runs the completion function once per call; {call: completions}."""
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        f.write(script + "\n".join(calls) + "\n")
    try:
        r = subprocess.run([*shell_args, f.name], capture_output=True, text=True, env=env,
                           timeout=harness.TIMEOUT)
    finally:
        os.unlink(f.name)
    got = {}
    for line in r.stdout.splitlines():
        key, _, value = line.partition("=")
        got[key] = value.split()
    return got, r


def completion_cases(tmp):
    """(words, what must be offered, what must not), the same in every
    shell.  tmp/other-root holds the environment other-env: a --root on
    the line is passed on when names are asked for."""
    return [
        (["cfapkg", "ins"], ["install"], ["info"]),
        (["cfapkg", "install", "--e"], ["--env"], []),
        (["cfapkg", "gc", "--"], ["--keep", "--dry-run", "--root"], ["--env", "--shell"]),
        (["cfapkg", "install", "--env", ""], ["default", "shell-env"], []),
        (["cfapkg", "env", "remove", "s"], ["shell-env"], ["default"]),
        (["cfapkg", "--root", str(tmp / "other-root"), "info", "--env", ""], ["other-env"],
         ["shell-env"]),
        (["cfapkg", "env", ""], ["create", "activate", "deactivate", "list"], ["install"]),
        (["cfapkg", "env", "activate", "--shell", ""], ["bash", "zsh", "fish", "cmd"], []),
        (["cfapkg", "plan", "--os", ""], ["linux", "windows"], []),
        (["cfapkg", "install", "z"], ["zluda"], ["libtorch-cuda"]),
        (["cfapkg", "cache", ""], ["info", "clean"], []),
        (["cfapkg", "completion", ""], ["bash", "zsh", "fish", "powershell"], []),
    ]


def check_cases(shell, got, cases):
    for words, want, unwanted in cases:
        key = " ".join(words)
        offered = got.get(key, [])
        check(f"{shell}: {key!r} offers {want}",
              all(w in offered for w in want) and not any(u in offered for u in unwanted),
              f"{offered}")


def shell_env(root, extra=None):
    e = dict(os.environ, CFAPKG_ROOT=str(root.path), CFAPKG_RECIPES=str(root.recipes),
             CFAPKG_MIRRORS="", PATH=f"{pathlib.Path(BIN).resolve().parent}:{os.environ['PATH']}")
    e.update(extra or {})
    return e


def test_bash_completion(root, tmp):
    script = tmp / "cfapkg.bash"
    script.write_text(run("completion", "bash").stdout)
    r = subprocess.run(["bash", "--norc", "-c", f"source {script}; complete -p cfapkg"],
                       capture_output=True, text=True)
    check("bash: the script registers _cfapkg for cfapkg",
          r.stdout.strip() == "complete -F _cfapkg cfapkg" and not r.stderr, r.stdout + r.stderr)
    cases = completion_cases(tmp)
    calls = ["t " + " ".join(f"'{w}'" for w in words) for words, _, _ in cases]
    got, r = drive(["bash", "--norc", "--noprofile"], BASH_DRIVER, calls,
                   shell_env(root, {"SCRIPT": str(script)}))
    check("bash: the completion function runs cleanly", bool(got) and not r.stderr, r.stderr)
    check_cases("bash", got, cases)


# compadd, _describe and _files answer inside real completion; here they
# print, filtered by the word as zsh would.
ZSH_DRIVER = r"""
autoload -U compinit; compinit -u -d "$ZDOTDIR/.zcompdump"
source "$SCRIPT"
print -r -- "registered=$_comps[cfapkg]"
compadd() { while [[ $# -gt 0 && $1 != -- ]]; do shift; done; shift
            reply+=(${(M)@:#${PREFIX}*}); }
_describe() { local -a _d; _d=("${(@P)${@[-1]}}"); _d=("${_d[@]%%:*}")
              reply+=(${(M)_d:#${PREFIX}*}); }
_files() { reply+=(@files); }
compset() { PREFIX=${PREFIX#*=}; }
t() { local -a words reply; words=("$@"); local CURRENT=${#words} PREFIX=${words[-1]}
      _cfapkg; print -r -- "$*=${reply[*]}"; }
"""


def test_zsh_completion(root, tmp):
    script = tmp / "_cfapkg"
    script.write_text(run("completion", "zsh").stdout)
    env = shell_env(root, {"SCRIPT": str(script), "ZDOTDIR": str(tmp)})
    r = subprocess.run(["zsh", "-f", "-c", 'autoload -U compinit; compinit -u -d '
                        f'"$ZDOTDIR/.zcompdump"; source {script}'],
                       capture_output=True, text=True, env=env)
    check("zsh: the script loads after compinit without a message",
          r.returncode == 0 and not r.stderr and not r.stdout, r.stderr)
    cases = completion_cases(tmp)
    calls = ["t " + " ".join(f"'{w}'" for w in words) for words, _, _ in cases]
    got, r = drive(["zsh", "-f"], ZSH_DRIVER, calls, env)
    check("zsh: compdef names _cfapkg for cfapkg", got.get("registered") == ["_cfapkg"],
          r.stdout[:300] + r.stderr)
    check_cases("zsh", got, cases)
    test_zsh_typed(root, tmp)


def typed_in_zsh(env, setup, keys, want):
    """Types keys into an interactive zsh on a terminal; whether the line
    shows want (escape sequences taken out) within ten seconds."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("zsh", ["zsh", "-f", "-i"], env)
    seen = b""
    try:
        os.write(fd, setup.encode() + b"\n")
        os.write(fd, keys.encode())
        deadline = time.monotonic() + 10
        while want.encode() not in re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\r", b"", seen):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return want.encode() in re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\r", b"", seen)


def test_zsh_typed(root, tmp):
    """Real completion in an interactive zsh: TAB after a word."""
    script = tmp / "_cfapkg"
    setup = (f"PS1='> '; autoload -U compinit; compinit -u -d {tmp}/.zcompdump-typed; "
             f"source {script}")
    env = shell_env(root)
    for keys, want in (("cfapkg ins\t", "cfapkg install "),
                       ("cfapkg install --env shell-\t", "--env shell-env "),
                       ("cfapkg install zlu\t", "install zluda ")):
        check(f"zsh, typed: {keys!r} becomes {want!r}", typed_in_zsh(env, setup, keys, want))


def test_fish_completion(root, tmp):
    script = tmp / "cfapkg.fish"
    script.write_text(run("completion", "fish").stdout)
    r = subprocess.run(["fish", "-n", str(script)], capture_output=True, text=True)
    check("fish: the script parses", r.returncode == 0 and not r.stderr, r.stderr)
    cases = completion_cases(tmp)
    got = {}
    for words, _, _ in cases:
        line = " ".join(words)
        r = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
                           capture_output=True, text=True, env=shell_env(root),
                           timeout=harness.TIMEOUT)
        got[line] = [out.split("\t")[0] for out in r.stdout.splitlines()]
        check(f"fish: {line!r} runs cleanly", r.returncode == 0 and not r.stderr, r.stderr)
    check_cases("fish", got, cases)


# One session per shell: the environment before, while active, after
# cfapkg_deactivate (activated twice: no stacking), and after
# 'env deactivate'.  ZLUDA_CC is set beforehand (the environment sets it),
# LD_LIBRARY_PATH and TORCH_ALLOW_TF32_CUBLAS_OVERRIDE are not.
SESSION_SH = r"""
unset LD_LIBRARY_PATH TORCH_ALLOW_TF32_CUBLAS_OVERRIDE
export ZLUDA_CC="old 'value' with \"quotes\", \\ and
a second line"
env -0 > before
eval "$(cfapkg env activate --env rt --shell SHELL)"
printf '%s|%s|%s' "$ZLUDA_CC" "${LD_LIBRARY_PATH-unset}" "$PATH" > active
eval "$(cfapkg env activate --env rt --shell SHELL)"
cfapkg_deactivate
env -0 > after
type cfapkg_deactivate > /dev/null 2>&1 && echo defined > leftover
eval "$(cfapkg env activate --env rt --shell SHELL)"
eval "$(cfapkg env deactivate --shell SHELL)"
env -0 > after2
true  # zsh runs a last command in place of itself, one SHLVL down
"""
SESSION_FISH = r"""
set -e LD_LIBRARY_PATH; set -e TORCH_ALLOW_TF32_CUBLAS_OVERRIDE
set -gx ZLUDA_CC "old 'value' with \"quotes\", \\ and
a second line"
env -0 > before
cfapkg env activate --env rt --shell fish | source
printf '%s|%s|%s' "$ZLUDA_CC" (set -q LD_LIBRARY_PATH; and echo $LD_LIBRARY_PATH; or echo unset) (string join : $PATH) > active
cfapkg env activate --env rt --shell fish | source
cfapkg_deactivate
env -0 > after
functions -q cfapkg_deactivate; and echo defined > leftover
cfapkg env activate --env rt --shell fish | source
cfapkg env deactivate --shell fish | source
env -0 > after2
"""


def environ_of(path):
    return sorted(path.read_bytes().split(b"\0"))


def test_session(root, tmp, shell):
    work = tmp / f"session-{shell}"
    work.mkdir()
    script = SESSION_FISH if shell == "fish" else SESSION_SH.replace("SHELL", shell)
    args = {"bash": ["bash", "--norc", "--noprofile"], "zsh": ["zsh", "-f"],
            "fish": ["fish", "--no-config"]}[shell]
    r = subprocess.run([*args, "-c", script], capture_output=True, text=True, cwd=work,
                       env=shell_env(root), timeout=harness.TIMEOUT)
    check(f"{shell}: the session runs cleanly", r.returncode == 0 and not r.stderr,
          r.stdout + r.stderr)
    if not (work / "after2").exists():
        return
    cc, ld, path = ((work / "active").read_text().split("|") + ["", "", ""])[:3]
    view = str(root.path / "envs" / "rt")
    check(f"{shell}: activate sets the variables and paths",
          cc == "8.6" and view in path.split(":")[0] and ld != "unset" and view in ld,
          (work / "active").read_text())
    before = environ_of(work / "before")
    check(f"{shell}: cfapkg_deactivate restores the environment byte for byte",
          environ_of(work / "after") == before,
          set(environ_of(work / "after")) ^ set(before))
    check(f"{shell}: cfapkg_deactivate removes itself", not (work / "leftover").exists())
    check(f"{shell}: 'env deactivate' restores it too", environ_of(work / "after2") == before,
          set(environ_of(work / "after2")) ^ set(before))


def test_snippet_text(root):
    r = root.run("env", "activate", "--env", "rt", "--shell", "powershell")
    check("PowerShell: saves, sets and defines cfapkg_deactivate",
          "$env:CFAPKG_SAVED = 'PATH LD_LIBRARY_PATH" in r.stdout and
          "if (Test-Path env:ZLUDA_CC) { $env:CFAPKG_SAVED_ZLUDA_CC = $env:ZLUDA_CC }" in r.stdout
          and "$env:ZLUDA_CC = '8.6'" in r.stdout and
          "function global:cfapkg_deactivate" in r.stdout, r.stdout)
    r = root.run("env", "activate", "--env", "rt", "--shell", "cmd")
    check("cmd: saves each variable it sets",
          'if defined ZLUDA_CC set "CFAPKG_SAVED_ZLUDA_CC=%ZLUDA_CC%"' in r.stdout and
          'set "ZLUDA_CC=8.6"' in r.stdout, r.stdout)
    saved = {"CFAPKG_SAVED": "ZLUDA_CC HIP_PATH", "CFAPKG_SAVED_ZLUDA_CC": "old value",
             "ZLUDA_CC": "8.6", "HIP_PATH": "x"}
    r = root.run("env", "deactivate", "--shell", "cmd", env=saved)
    check("cmd: 'env deactivate' writes the saved values back",
          r.stdout.splitlines() == ['set "ZLUDA_CC=old value"', 'set "CFAPKG_SAVED_ZLUDA_CC="',
                                    'set "HIP_PATH="', 'set "CFAPKG_SAVED="'], r.stdout)
    r = root.run("env", "deactivate", "--shell", "cmd",
                 env={**saved, "CFAPKG_SAVED_ZLUDA_CC": "50% of %HOME%"})
    check("cmd: a saved percent sign is doubled, as the lines run as a batch file",
          'set "ZLUDA_CC=50%% of %%HOME%%"' in r.stdout.splitlines(), r.stdout)
    r = root.run("env", "activate", "--env", "rt", "--shell", "cmd", env=saved)
    check("cmd: activating again restores first",
          r.stdout.startswith('set "ZLUDA_CC=old value"\n'), r.stdout[:200])
    r = harness.run(BIN, "env", "deactivate", "--shell", "bash", drop=["CFAPKG_SAVED"])
    check("'env deactivate' with nothing active: exit 4", r.returncode == 4, r.stderr)
    r = root.run("env", "activate", "--env", "rt", "--shell", "tcsh")
    check("an unknown shell is refused", r.returncode == 2 and "--shell takes" in r.stderr)


def test_man_pages(cmds):
    pages = [MAN / "cfapkg.1", MAN / "cfapkg-recipes.5"]
    check("the man pages are made at build time", all(p.exists() for p in pages), str(MAN))
    if not shutil.which("groff"):
        skip("man page rendering", "groff is not installed")
        return
    text = {}
    for p in pages:
        if not p.exists():
            continue
        r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", str(p)], capture_output=True)
        check(f"{p.name} renders without a warning", r.returncode == 0 and not r.stderr,
              r.stderr.decode(errors="replace")[:400])
        plain = subprocess.run(["groff", "-man", "-Tascii", "-P-cbou", str(p)],
                               capture_output=True, text=True).stdout
        text[p.name] = plain
        check(f"{p.name} has NAME, SYNOPSIS and DESCRIPTION",
              all(re.search(rf"^{h}$", plain, re.M) for h in ("NAME", "SYNOPSIS", "DESCRIPTION")),
              plain[:300])
    page = text.get("cfapkg.1", "")
    missing = [c for c in cmds if f"cfapkg {c}" not in page]
    check("cfapkg(1) names every command of the table", page and not missing, missing)
    check("cfapkg-recipes(5) is docs/recipes.md",
          "RECIPE" in text.get("cfapkg-recipes.5", "").upper() and
          "HOW THE SOLVER CHOOSES" in text.get("cfapkg-recipes.5", ""), "")


def on_pty(args, env):
    """Standard error of cfapkg on a terminal (standard output a pipe)."""
    return harness.on_pty(BIN, args, env)


def test_no_color(tmp):
    data = os.urandom(3_000_000)
    (tmp / "big.bin").write_bytes(data)
    args = ["prefetch", (tmp / "big.bin").as_uri(), "--sha256", hashlib.sha256(data).hexdigest(),
            "--size", str(len(data))]
    cases = [("a terminal", {"TERM": "xterm"}, True),
             ("NO_COLOR=1", {"TERM": "xterm", "NO_COLOR": "1"}, False),
             ("an empty NO_COLOR", {"TERM": "xterm", "NO_COLOR": ""}, True),
             ("TERM=dumb", {"TERM": "dumb"}, False)]
    for name, extra, escapes in cases:
        root = tmp / f"pty-{len(extra)}-{name.split('=')[0].replace(' ', '')}"
        env = dict(os.environ, CFAPKG_ROOT=str(root), **extra)
        rc, out = on_pty(args, env)
        check(f"progress on {name}: {'escapes' if escapes else 'no escape'}",
              rc == 0 and (b"\x1b" in out) == escapes and
              (escapes or re.search(rb"big\.bin: 2\.9 MiB, done in", out)), out[:300])
    r = subprocess.run([BIN, *args], capture_output=True, env=dict(
        os.environ, TERM="xterm", CFAPKG_ROOT=str(tmp / "pipe")), timeout=harness.TIMEOUT)
    check("nothing writes escapes when standard error is no terminal",
          r.returncode == 0 and b"\x1b" not in r.stderr + r.stdout, r.stderr[:300])


def main():
    cmds = commands()
    check("--help lists the commands", "completion" in cmds and "install" in cmds, cmds)
    test_version()
    test_completion_text(cmds)
    test_man_pages(cmds)
    if WINDOWS:
        skip("shell sessions, completion in shells, terminals",
             "they need a POSIX shell and a cfapkg it can run")
        return check.report()
    with channel.served("cfapkg-shell-", headers=2, big=1000) as (tmp, _, recipes):
        root = channel.Root(BIN, tmp / "root", recipes)
        root.run("env", "create", "shell-env")
        root.run("env", "create", "rt")
        r = root.change("install", "--env", "rt", "pytorch-cuda-stack", "--os", "linux")
        check("an environment to activate", r.returncode == 0, r.stderr)
        r = harness.run(BIN, "env", "create", "other-env",
                        env={"CFAPKG_ROOT": str(tmp / "other-root")})
        check("a second root", r.returncode == 0, r.stderr)
        r = root.run("env", "list", "--quiet")
        check("env list --quiet: the names, one a line",
              sorted(r.stdout.split("\n")) == ["", "default", "rt", "shell-env"], r.stdout)
        r = root.run("search", "--quiet")
        names = r.stdout.splitlines()
        check("search --quiet: the recipe names, one a line",
              {"libtorch-cuda", "pytorch-cuda-stack", "zluda"} <= set(names) and
              all(re.fullmatch(r"[\w.+-]+", n) for n in names), r.stdout)
        test_snippet_text(root)
        test_no_color(tmp)
        for shell, test in (("bash", test_bash_completion), ("zsh", test_zsh_completion),
                            ("fish", test_fish_completion)):
            if not shutil.which(shell):
                skip(f"{shell} completion and session", f"{shell} is not installed")
                continue
            test(root, tmp)
            test_session(root, tmp, shell)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
