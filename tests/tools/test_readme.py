#!/usr/bin/env python3
"""test_readme.py — README.md as a newcomer meets it (issue 32). Python 3 standard library only.

1. It is at most 400 lines and names the two quick-start commands, tools/demo and tools/check.
2. Every relative Markdown link (outside code blocks) names a file of the source tree; every
   link to a heading of README.md itself names one that exists.
3. Every shell command of its ```sh and ```console blocks (a console block's commands are its
   "$ " lines) is either run, in README order, against armsim, or in SKIP below with the reason
   it cannot run here. A command that is neither fails the test, so the README cannot show a
   command nobody checks. Paths a reader has and this test has not (the real serial port, the
   reader's INI, /tmp) are replaced by the explicit SUBSTITUTIONS table, printed at the start.
4. Each command run must exit with the status the README implies (0; EXPECT lists others),
   else the test fails with the command's output. No retries: each command runs once; waits
   for the arm's state are armctl's own `wait` with its timeout, as the README shows them.

A command ending in `&` starts a process that runs until stopped (armsim, armd): the test starts
it, waits for it to be ready (armsim's ready line, armd answering `status` on its socket) as
tests/daemon/test_api_lib.py's Rig does, with that module's helpers, and stops it (SIGTERM) when
the README starts the next one in its place or at the end.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "daemon"))
import test_api_lib as lib  # noqa: E402

MAX_LINES = 400

# Commands the test does not run, each with why: exactly as the README writes them (trailing
# comment removed, words separated by one space).
SKIP = {
    "tools/demo":
        "bootstraps (installs packages with sudo) and builds the tree; this test runs its "
        "steps by hand (armsim, armd, armctl enable, move, wait)",
    "tools/check": "the whole test run, this test included",
    "tools/demo --config omx.ini --q0 0,0,-1.5,0":
        "tools/demo bootstraps (sudo) and builds the tree; the steps below run the same arm "
        "on armsim",
    "tools/armweb/armweb --socket /tmp/armd.sock":
        "serves HTTP until stopped and needs python3-aiohttp; tests/armweb runs it against armd",
    "sudo usermod -aG dialout $USER": "sudo: changes the machine's users",
    "sudo cp systemd/99-armd-serial.rules /etc/udev/rules.d/": "sudo: installs a udev rule",
    "sudo udevadm control --reload": "sudo: udev",
    "sudo udevadm trigger": "sudo: udev",
    "build/tools/armctl/armctl collision calibrate moves.csv --runs 3":
        "needs the reader's own moves (moves.csv) and [safety] collision = detect; "
        "tests/daemon/test_api_calibrate.py runs it on lockstep",
    "build/tools/armctl/armctl identify --out omx.d/60-identified.ini --report identify":
        "a 60 s excitation and a fit of seconds, past this test's budget; "
        "tests/daemon/test_api_identify_omx.py runs it on the OpenManipulator-X (lockstep)",
    "build/tools/armctl/armctl payload estimate --apply":
        "needs a real payload on the tool (without one the estimate is, by design, not "
        "validated and armctl exits 1); tests/daemon/test_api_payload.py runs it on lockstep",
    "sudo cp omx.ini /etc/armd/arm0.ini": "sudo: writes /etc/armd",
    "sudo armd --check-config /etc/armd/arm0.ini":
        "sudo: /etc/armd is readable by root and group armd only (the test runs "
        "--check-config on the example above)",
    "sudo systemctl enable --now armd@arm0": "sudo: systemd; tests/systemd runs the units",
    "sudo usermod -aG armd $USER": "sudo: changes the machine's users",
    "journalctl -u armd@arm0 -f": "follows the journal of a systemd unit until Ctrl-C",
    "sudo apt-get build-dep ./": "sudo: installs packages",
    "dpkg-buildpackage -us -uc -b": "builds the package for minutes; tools/check-deb does",
    "sudo apt install ../armd_0.1.0-1_amd64.deb ../python3-armd_0.1.0-1_all.deb "
    "../armweb_0.1.0-1_all.deb": "sudo: installs packages",
}

# Exit statuses other than 0 that the README says a command has.
EXPECT = {}

# A stand-in for the real arm behind a serial device: armsim on a pseudo-terminal for the INI
# of the armd command, started in this pose: upright with the forearm raised, as tools/demo
# starts the OpenManipulator-X, but 0.1 rad inside joint3's lower limit rather than on it, as the
# README's gravity_comp enable needs. With --brake it stays there until armd enables it: the limp
# OpenManipulator-X has no Coulomb friction and would fall from any pose within 0.7 s of
# armsim's start, before a loaded machine has started armd and enabled. A 30 mm object (1e5 N/m:
# rigid) sits between the gripper's fingers, so the README's grasp holds it.
STANDIN_Q0 = {"omx.ini": "0,0,-1.4,0"}
STANDIN_OBJECT = {"omx.ini": "0.030,100000"}

# What the README's example configurations get in this test: the tolerance of a shared, loaded
# machine (test_api_lib.DEFAULT_DROPIN: a 400 ms read gap and a 500 ms bus watchdog instead of
# the examples' 20 and 100 ms), so a busy build machine does not fault the arm mid-test; the
# loop rate stays the example's (the OpenManipulator-X's 1 Mbps bus fits 400 Hz, not 1 kHz).
TOLERANCE_DROPIN = lib.DEFAULT_DROPIN.replace("[arm]\nrate_hz = 1000\n", "")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True, help="the source tree (README.md's directory)")
    for prog in ("armd", "armctl", "armsim", "armurdf", "armbench"):
        p.add_argument("--" + prog, required=True)
    p.add_argument("--keep", action="store_true", help="keep the run directory")
    return p.parse_args()


def fenced_blocks(lines):
    """(language, [(line number, text)]) of every fenced code block."""
    blocks, lang, body = [], None, []
    for no, line in enumerate(lines, 1):
        m = re.match(r"^\s*```\s*(\S*)", line)
        if m and lang is None:
            lang, body = m.group(1), []
        elif m and lang is not None:
            blocks.append((lang, body))
            lang = None
        elif lang is not None:
            body.append((no, line))
    lib.check(lang is None, "README.md: a code block is not closed")
    return blocks


def prose(lines):
    """The lines outside fenced code blocks, with inline code removed."""
    out, inside = [], False
    for no, line in enumerate(lines, 1):
        if re.match(r"^\s*```", line):
            inside = not inside
            continue
        if not inside:
            out.append((no, re.sub(r"`[^`]*`", "", line)))
    return out


def slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def check_links(root, lines):
    anchors = {slug(re.sub(r"^#+", "", l)) for l in lines if re.match(r"^#+ ", l)}
    bad, n = [], 0
    for no, line in prose(lines):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            n += 1
            path, _, frag = target.partition("#")
            if not path:
                if frag not in anchors:
                    bad.append("line %d: #%s: no such heading" % (no, frag))
                continue
            if not os.path.exists(os.path.normpath(os.path.join(root, path))):
                bad.append("line %d: %s: no such file" % (no, path))
    lib.check(not bad, "README.md: broken links:\n  " + "\n  ".join(bad))
    print("links: %d relative links, all resolve" % n)


def commands(lines):
    """(line number, text) of every command of the ```sh and ```console blocks, in order."""
    out = []
    for lang, body in fenced_blocks(lines):
        if lang not in ("sh", "console"):
            continue
        pending = None
        for no, line in body:
            text = line.rstrip()
            if pending is None:
                if lang == "console":
                    if not text.startswith("$ "):
                        continue  # output
                    text = text[2:]
                if not text.strip() or text.lstrip().startswith("#"):
                    continue
                pending = (no, "")
            start, acc = pending
            if text.endswith("\\"):
                pending = (start, acc + text[:-1] + " ")
                continue
            out.append((start, acc + text))
            pending = None
    return out


def words(text):
    return shlex.split(text, comments=True)


class Session:
    """Runs the README's commands in order, in a private directory."""

    def __init__(self, args):
        for prog in ("armd", "armctl", "armsim", "armurdf", "armbench"):
            setattr(args, prog, os.path.abspath(getattr(args, prog)))
        self.args = args
        self.root = os.path.abspath(args.source)
        self.dir = tempfile.mkdtemp(prefix="armd-test-readme-")
        self.sock = os.path.join(self.dir, "armd.sock")
        self.env = dict(os.environ)
        self.env.pop("ARMD_SOCKET", None)
        self.procs = {}  # "armsim", "armd": (Popen, log path)
        self.programs = {
            "build/daemon/armd": args.armd, "armd": args.armd,
            "build/tools/armctl/armctl": args.armctl, "armctl": args.armctl,
            "build/tools/armsim/armsim": args.armsim, "armsim": args.armsim,
            "build/tools/armurdf/armurdf": args.armurdf, "armurdf": args.armurdf,
            "build/tools/armbench/armbench": args.armbench, "armbench": args.armbench,
        }
        examples = os.path.join(self.root, "config", "examples")
        self.subst = {
            "/tmp/armd.sock": (self.sock, "a socket in the test's own directory"),
            "/tmp/arm.tty": (os.path.join(self.dir, "arm.tty"),
                             "armsim's link in the test's own directory"),
            "config/examples/puma560.ini": (
                self.tolerant_copy(os.path.join(examples, "puma560.ini"), "puma560.ini"),
                "a copy with the loaded machine's tolerance drop-in (puma560.d/10-test.ini)"),
            "config/examples/open_manipulator_x.ini": (
                os.path.join(examples, "open_manipulator_x.ini"), "the source tree's file"),
            "omx.ini": (
                self.tolerant_copy(os.path.join(examples, "open_manipulator_x.ini"), "omx.ini"),
                "the reader's INI: a copy of config/examples/open_manipulator_x.ini with the "
                "tolerance drop-in (omx.d/10-test.ini)"),
            "open_manipulator_x.urdf": (
                os.path.join(self.root, "tests", "armurdf", "data", "open_manipulator_x.urdf"),
                "the URDF shipped for armurdf's tests"),
            "/dev/ttyUSB0": (os.path.join(self.dir, "ttyUSB0.tty"),
                             "the arm: armsim on a pseudo-terminal, started by the test for the "
                             "command's -c INI (pose %s, held by --brake until enabled, "
                             "object %s)" % (STANDIN_Q0, STANDIN_OBJECT)),
            "--arm arm0": ("--socket " + self.sock, "armd@arm0's socket: the test's armd"),
        }
        self.ran = 0
        self.skipped = 0

    def tolerant_copy(self, src, name):
        dst = os.path.join(self.dir, name)
        shutil.copy(src, dst)
        dropins = dst[:-len(".ini")] + ".d"
        os.mkdir(dropins)
        with open(os.path.join(dropins, "10-test.ini"), "w") as f:
            f.write(TOLERANCE_DROPIN)
        return dst

    def print_table(self):
        print("substitutions (README word -> what the test uses):")
        for word, (value, why) in self.subst.items():
            print("  %-40s -> %s\n  %-40s    (%s)" % (word, value, "", why))
        print("run directory:", self.dir)

    def substitute(self, argv):
        out, i = [], 0
        while i < len(argv):
            pair = " ".join(argv[i:i + 2])
            if pair in self.subst:
                out += self.subst[pair][0].split(" ")
                i += 2
                continue
            w = argv[i]
            if w in self.subst:
                w = self.subst[w][0]
            elif re.match(r"^(config|tools|tests|systemd)/", w):
                w = os.path.join(self.root, w)
            out.append(w)
            i += 1
        return out

    def run(self, no, text):
        argv = words(text)
        key = " ".join(argv)
        if key in SKIP:
            print("SKIP line %d: %s\n     (%s)" % (no, key, SKIP[key]))
            self.skipped += 1
            return
        background = argv[-1] == "&"
        if background:
            argv = argv[:-1]
        if argv[0] == "export":
            lib.check(len(argv) == 2 and "=" in argv[1], "line %d: export NAME=VALUE" % no)
            name, value = argv[1].split("=", 1)
            self.env[name] = self.substitute([value])[0]
            print("RUN  line %d: %s\n     -> %s=%s" % (no, key, name, self.env[name]))
            self.ran += 1
            return
        lib.check(argv[0] in self.programs,
                  "README.md line %d: the command `%s` is neither runnable here nor in the "
                  "test's SKIP list (tests/tools/test_readme.py)" % (no, key))
        cmd = [self.programs[argv[0]]] + self.substitute(argv[1:])
        print("RUN  line %d: %s\n     -> %s" % (no, key, " ".join(cmd)))
        self.ran += 1
        if background:
            self.start(no, key, cmd)
            return
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=self.dir, env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120,
                           preexec_fn=lib._die_with_parent)
        want = EXPECT.get(key, 0)
        out = p.stdout.decode(errors="replace")
        lib.check(p.returncode == want,
                  "README.md line %d: `%s` exited %d, the README implies %d; its output:\n%s%s"
                  % (no, key, p.returncode, want, out, self.logs()))
        print("     exit %d in %.2f s" % (p.returncode, time.monotonic() - t0))

    def start(self, no, key, cmd):
        prog = os.path.basename(cmd[0])
        lib.check(prog in ("armd", "armsim"), "line %d: only armsim and armd run in the "
                  "background here, not %s" % (no, prog))
        if prog == "armd":
            self.stop("armd")
            standin = self.subst["/dev/ttyUSB0"][0]
            if standin in cmd:
                self.stop("armsim")
                ini = cmd[cmd.index("-c") + 1]
                q0 = STANDIN_Q0[os.path.basename(ini)]
                obj = STANDIN_OBJECT[os.path.basename(ini)]
                self.start_armsim([self.args.armsim, "-c", ini, "--link", standin, "--q0", q0,
                                   "--brake", "--object", obj], standin)
                print("     (armsim stands in for the arm on %s)" % standin)
            self.start_armd(cmd)
        else:
            self.stop("armd")
            self.stop("armsim")
            self.start_armsim(cmd, cmd[cmd.index("--link") + 1])

    def start_armsim(self, cmd, link):
        log = os.path.join(self.dir, "armsim.log")
        # as the Rig starts it: FIFO where allowed, so a busy machine does not slow the arm
        p = subprocess.Popen(lib.realtime_prefix() + cmd, cwd=self.dir, env=self.env,
                             stdout=open(log, "w"), stderr=subprocess.STDOUT,
                             preexec_fn=lib._die_with_parent)
        self.procs["armsim"] = (p, log)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            text = open(log, errors="replace").read()
            if "ready" in text and os.path.exists(link):
                return
            lib.check(p.poll() is None, "armsim exited early:\n" + text)
            time.sleep(0.05)
        raise lib.TestFailure("armsim did not become ready:\n" + open(log).read())

    def start_armd(self, cmd):
        log = os.path.join(self.dir, "armd.log")
        p = subprocess.Popen(cmd, cwd=self.dir, env=self.env, stdout=open(log, "w"),
                             stderr=subprocess.STDOUT, preexec_fn=lib._die_with_parent)
        self.procs["armd"] = (p, log)
        sock = cmd[cmd.index("--socket") + 1]
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if os.path.exists(sock):
                try:
                    c = lib.Client(sock)
                    c.call("status")
                    c.close()
                    return
                except (OSError, lib.TestFailure, lib.armd.Error):
                    pass
            lib.check(p.poll() is None, "armd exited early:\n" + open(log).read())
            time.sleep(0.05)
        raise lib.TestFailure("armd did not answer on its socket:\n" + open(log).read())

    def stop(self, name):
        """Stops a background process; armd must exit 0 (it disables the arm first)."""
        if name not in self.procs:
            return
        p, log = self.procs.pop(name)
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                raise lib.TestFailure("%s did not stop within 10 s of SIGTERM" % name)
        if name == "armd":
            lib.check(p.returncode == 0, "armd exited %d on SIGTERM:\n%s"
                      % (p.returncode, open(log, errors="replace").read()))

    def logs(self):
        out = ""
        for name, (p, log) in self.procs.items():
            out += "\n---- %s (tail)\n%s" % (name, "".join(
                open(log, errors="replace").readlines()[-30:]))
        return out

    def close(self):
        try:
            self.stop("armd")
        finally:
            self.stop("armsim")


def main(args):
    t0 = time.monotonic()
    path = os.path.join(args.source, "README.md")
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    text = "\n".join(lines)
    lib.check(len(lines) <= MAX_LINES, "README.md has %d lines, more than %d"
              % (len(lines), MAX_LINES))
    for cmd in ("tools/demo", "tools/check"):
        lib.check(cmd in text, "README.md does not name the quick-start command " + cmd)
    print("README.md: %d lines; names tools/demo and tools/check" % len(lines))
    check_links(os.path.abspath(args.source), lines)

    cmds = commands(lines)
    listed = {" ".join(words(t)) for _, t in cmds}
    stale = sorted(k for k in SKIP if k not in listed)
    lib.check(not stale, "SKIP names commands the README no longer shows:\n  "
              + "\n  ".join(stale))
    s = Session(args)
    s.print_table()
    try:
        for no, t in cmds:
            s.run(no, t)
        s.close()
    except BaseException:
        try:
            s.close()
        except lib.TestFailure as e:
            print(e)
        print("run directory kept:", s.dir)
        raise
    if not args.keep:
        shutil.rmtree(s.dir, ignore_errors=True)
    print("commands: %d in README.md, %d run, %d skipped; %.1f s"
          % (len(cmds), s.ran, s.skipped, time.monotonic() - t0))


if __name__ == "__main__":
    lib.run(main, parse_args)
