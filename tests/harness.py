"""What the Python test drivers share: starting cfapkg (through the cross
build's emulator when there is one) with a bounded wait, on a
pseudo-terminal when asked, and counting checks into the closing
'N passed, N failed' line."""
import os
import shlex
import subprocess
import time

TIMEOUT = 120
# A cross-built cfapkg runs through an emulator (Wine for cfapkg.exe).
EMULATOR = shlex.split(os.environ.get("CFAPKG_TEST_EMULATOR", ""))


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def __call__(self, name, cond, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}")

    def report(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed or not self.passed else 0


def run(binary, *args, env=None, drop=()):
    """Runs binary (through the emulator) with args; env adds variables,
    drop removes them."""
    e = dict(os.environ)
    for name in drop:
        e.pop(name, None)
    e.update(env or {})
    r = subprocess.run([*EMULATOR, binary, *args], capture_output=True, text=True,
                       timeout=TIMEOUT, env=e)
    if EMULATOR and r.returncode == 1 and not r.stdout and not r.stderr:
        # Where address randomization cannot be turned off, Wine now and
        # then fails to start a program (status 1, no output at all, which
        # cfapkg never does); one more start (tests/WINE.md).
        r = subprocess.run([*EMULATOR, binary, *args], capture_output=True, text=True,
                           timeout=TIMEOUT, env=e)
    return r


def on_pty(binary, args, env, cols=None):
    """(exit status, bytes) of binary's standard error on a pseudo-terminal
    of cols columns (the default size when None); standard output a pipe."""
    import fcntl
    import pty
    import struct
    import termios
    main, sub = pty.openpty()
    if cols:
        fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    p = subprocess.Popen([binary, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=sub, env=env)
    os.close(sub)
    out = b""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the program is gone: the terminal reads as closed
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=TIMEOUT)
    os.close(main)
    return p.returncode, out
