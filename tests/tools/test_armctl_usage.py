#!/usr/bin/env python3
"""test_armctl_usage.py — armctl's command line without an armd: every command answers --help
and -h (anywhere among its arguments) with its own usage on stdout and exit 0; usage errors
exit 2 naming the bad word and the valid choices; neither opens a connection; a socket the user
may not open names the group to join.

Usage: test_armctl_usage.py ARMCTL

The commands are those armctl's own top-level usage lists (under "Commands:"), not a copy. The
socket armctl is pointed at is a listening UNIX socket of this test that never accepts: after
each run its backlog must be empty (no connection was opened).

Permission denied: as a normal user, a socket of this test's own with mode 000; as root (which
access checks do not stop), armctl runs as nobody (setpriv) against a socket owned by root's
group 'daemon' with mode 0660; when neither is possible the test says so and skips that part
(exit 77 only if it is the only part left).
"""
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile

FAILURES = []


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print("FAIL " + message)


def run(armctl, args, sock, env=None, prefix=()):
    """armctl -s sock args; a run that outlasts 10 s (it waits for an answer that never comes)
    as exit status -1."""
    cmd = list(prefix) + [armctl, "-s", sock] + list(args)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10, env=env)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, -1, e.stdout or "", "(still running after 10 s)")


def commands(armctl):
    """The command names of armctl --help's "Commands:" section (each entry's first word)."""
    p = subprocess.run([armctl, "--help"], capture_output=True, text=True, timeout=20)
    check(p.returncode == 0, "armctl --help: exit %d" % p.returncode)
    parts = p.stdout.split("\nCommands:\n", 1)
    check(len(parts) == 2, "armctl --help has no 'Commands:' section")
    section = parts[-1].split("\n\n", 1)[0] if len(parts) == 2 else p.stdout
    names = []
    for line in section.splitlines():
        # "  name ..." or "  a | b | c" (every entry's first word)
        words = re.findall(r"^  ([a-z][a-z-]*)\b", line) or []
        if re.match(r"^  [a-z]+( \| [a-z]+)+\s*$", line):
            words = line.split(" | ")
        for w in (w.strip() for w in words):
            if w not in names:
                names.append(w)
    return names


def no_connection(listener, what):
    """The listener's backlog is empty: armctl did not connect."""
    ready, _, _ = select.select([listener], [], [], 0)
    if ready:
        conn, _ = listener.accept()
        conn.close()
    check(not ready, "%s: armctl opened a connection" % what)


def help_everywhere(armctl, sock, listener):
    names = commands(armctl)
    print("commands in armctl --help: %s" % " ".join(names))
    check(len(names) >= 20 and "wait" in names and "move" in names,
          "armctl --help lists only %s" % names)
    for name in names:
        for args in ([name, "--help"], [name, "-h"], [name, "x", "--help"],
                     [name, "--json", "-h", "y"]):
            p = run(armctl, args, sock)
            what = "armctl %s" % " ".join(args)
            check(p.returncode == 0, "%s: exit %d, stderr %r" % (what, p.returncode, p.stderr))
            first = p.stdout.splitlines()[0] if p.stdout else ""
            check(first.startswith("usage: armctl [OPTIONS] %s" % name),
                  "%s: stdout does not start with its usage: %r" % (what, p.stdout[:200]))
            check("Commands:" not in p.stdout, "%s: printed the top-level usage" % what)
            check(p.stderr == "", "%s: stderr %r" % (what, p.stderr))
            no_connection(listener, what)


# (arguments, words the message must name)
USAGE_ERRORS = [
    (["wait", "bogus", "--timeout", "2"], ["'bogus'", "holding", "estop", "done"]),
    (["wait", "done", "--timeout", "soon"], ["--timeout", "'soon'"]),
    (["wait", "done", "--bogus"], ["'--bogus'", "--timeout"]),
    (["move"], ["move", "at least 1"]),
    (["move", "0.1", "abc"], ["'abc'", "number"]),
    (["status", "extra"], ["status", "no arguments"]),
    (["enable", "now"], ["enable", "no arguments"]),
    (["controller", "bogus"], ["'bogus'", "computed_torque", "pd_gravity", "gravity_comp"]),
    (["gains", "kq=1"], ["'kq=1'", "kp=V"]),
    (["gains", "kp=x"], ["'x'", "number"]),
    (["impedance", "stiff=3"], ["'stiff=3'", "translational=V", "guide=V"]),
    (["impedance", "damping=0.5,x"], ["'x'", "number"]),
    (["payload", "bogus"], ["'bogus'", "show", "estimate"]),
    (["collision", "bogus"], ["'bogus'", "calibrate"]),
    (["watch", "--bogus"], ["'--bogus'", "--rate"]),
    (["fly"], ["'fly'", "status", "resonance"]),
    (["--bogus", "status"], ["'--bogus'", "--socket"]),
]


def usage_errors(armctl, sock, listener):
    for args, words in USAGE_ERRORS:
        p = run(armctl, args, sock)
        what = "armctl %s" % " ".join(args)
        check(p.returncode == 2, "%s: exit %d (expected 2), stderr %r" % (what, p.returncode,
                                                                           p.stderr))
        for w in words:
            check(w in p.stderr, "%s: the message does not name %s: %r" % (what, w, p.stderr))
        check(p.stdout == "", "%s: stdout %r" % (what, p.stdout))
        no_connection(listener, what)
    print("%d usage errors: exit 2, the bad word and the choices named, nothing sent"
          % len(USAGE_ERRORS))


def permission_denied(armctl, tmp):
    """A socket the user may not open: the message names it, its group and how to join."""
    path = os.path.join(tmp, "locked.sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(1)
    try:
        if os.geteuid() != 0:
            os.chmod(path, 0)
            group = __import__("grp").getgrgid(os.stat(path).st_gid).gr_name
            prefix = ()
            how = "as uid %d against a socket of mode 000" % os.geteuid()
        else:
            setpriv = shutil.which("setpriv")
            if not setpriv:
                print("SKIP permission denied: running as root without setpriv")
                return False
            os.chmod(tmp, 0o755)
            os.chown(path, 0, 1)  # group 'daemon' (gid 1)
            os.chmod(path, 0o660)
            group = __import__("grp").getgrgid(1).gr_name
            prefix = (setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")
            probe = subprocess.run(list(prefix) + [armctl, "--help"], capture_output=True)
            if probe.returncode != 0:
                print("SKIP permission denied: nobody cannot run %s" % armctl)
                return False
            how = "as nobody (setpriv) against a root:%s socket of mode 0660" % group
        p = run(armctl, ["status"], path, prefix=prefix)
        print("permission denied, %s: exit %d: %s" % (how, p.returncode, p.stderr.strip()))
        check(p.returncode == 1, "locked socket: exit %d" % p.returncode)
        expect = ("permission denied on %s: your user must be in the group '%s' "
                  "(sudo usermod -aG %s $USER, then log in again)" % (path, group, group))
        check(expect in p.stderr, "locked socket: %r lacks %r" % (p.stderr, expect))
        return True
    finally:
        s.close()


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    armctl = os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="armctl-usage-")
    try:
        sock = os.path.join(tmp, "armd.sock")
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(sock)
        listener.listen(64)
        help_everywhere(armctl, sock, listener)
        usage_errors(armctl, sock, listener)
        listener.close()
        permission_denied(armctl, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
