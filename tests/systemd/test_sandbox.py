#!/usr/bin/env python3
"""Integration: what armd does at run time fits the sandbox of the generated armd@.service, as far
as it can be told without systemd as PID 1: a real armd on armsim (pseudo-terminal) runs under
strace(1) through start, sd_notify (NOTIFY_SOCKET, WATCHDOG_USEC), SCHED_FIFO, CPU pinning,
mlockall, the socket with a [socket] group, enable, a move, gains, a controller switch, reloads
(socket and SIGHUP), estop, reset and SIGTERM. The configuration and the socket's directory in
the test's run directory stand in for /etc/armd and /run/armd/NAME, the pseudo-terminal for the
serial port.

Asserts, from the trace of every thread:
- every system call is allowed by the unit's SystemCallFilter= lines, evaluated as
  systemd.exec(5) says (the first line sets allow-list mode, later lines add to or remove from
  it; the @default set, "system calls that are always permitted", is part of every allow-list),
  with the sets expanded by `systemd-analyze syscall-filter`; and the calls this sandbox exists
  for (sched_setscheduler, sched_setaffinity, mlockall, chown) were really made;
- RestrictAddressFamilies=AF_UNIX: sockets are AF_UNIX only; PrivateNetwork=: every address
  used is a path in the file system, none in the abstract namespace;
- ProtectSystem=strict: nothing is opened for writing, created, removed, renamed or re-owned
  outside the runtime directory, except the serial port;
- DevicePolicy=closed: the only devices opened are the serial port and /dev/null, zero, full,
  random, urandom; ProtectHome=: nothing in /home, /root, /run/user; PrivateTmp=: nothing in
  /tmp but the stand-ins; ProcSubset=pid, ProtectProc=invisible: /proc only for armd itself;
- RemoveIPC=: no System V or POSIX IPC objects (shared memory, semaphores, message queues).
The same for `armd --torque-off` (ExecStopPost= runs it in the same sandbox), run after armd
has exited: it must exit 0.
Negative control: the same evaluation of the filter must refuse a call the unit removes
(setpriority, of @resources) and one it never allows (ptrace).

usage: test_sandbox.py --armd A --armsim S --armctl C --config INI --units BUILD/systemd
"""
import argparse
import grp
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from test_api_lib import (READY_POSE, Client, Rig, TestFailure, _die_with_parent,  # noqa: E402
                          check)

import unitmodel  # noqa: E402

PSEUDO_DEVICES = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
IPC_CALLS = {"shmget", "shmat", "shmctl", "semget", "semop", "semctl", "msgget", "msgsnd",
             "msgrcv", "msgctl", "mq_open", "mq_unlink"}
# calls that change the file system at a path argument (the first quoted string)
PATH_WRITES = {"mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
               "renameat2", "link", "linkat", "symlink", "symlinkat", "chmod", "fchmodat",
               "chown", "lchown", "fchownat", "mknod", "mknodat", "truncate", "utimensat"}
WRITE_FLAGS = re.compile(r"\bO_(WRONLY|RDWR|CREAT|TRUNC|APPEND)\b")
LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\((.*))$")


def parse_args():
    p = argparse.ArgumentParser()
    for a in ("--armd", "--armsim", "--armctl", "--config", "--units"):
        p.add_argument(a, required=True)
    p.add_argument("--keep", action="store_true", help="keep the run directory")
    return p.parse_args()


def syscall_sets():
    """{"@set": [members]} from `systemd-analyze syscall-filter` (members may be @sets)."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True,
                         check=True).stdout
    sets, cur = {}, None
    for line in out.splitlines():
        if line.startswith("#"):
            break  # the kernel's calls that no set lists
        if re.match(r"^@\S+$", line):
            cur = sets.setdefault(line, [])
        elif cur is not None and line.strip() and not line.strip().startswith("#"):
            cur.append(line.strip())
    check("@default" in sets and "@system-service" in sets,
          "systemd-analyze syscall-filter lists no @default / @system-service")
    return sets


def expand(names, sets):
    out = set()
    for n in names:
        if n.startswith("@"):
            check(n in sets, "SystemCallFilter= names an unknown set %s" % n)
            out |= expand(sets[n], sets)
        else:
            out.add(n.split(":")[0])
    return out


def allowed_syscalls(unit, sets):
    """The allow-list the unit's SystemCallFilter= lines make (systemd.exec(5))."""
    lines = unit.values("SystemCallFilter")
    check(lines and not lines[0].startswith("~"),
          "%s: SystemCallFilter= does not start with an allow-list: %s" % (unit.name, lines))
    allowed = expand(["@default"], sets)
    for line in lines:
        names = expand(line.lstrip("~").split(), sets)
        allowed = allowed - names if line.startswith("~") else allowed | names
    return allowed


class Trace:
    """An strace -f log: the calls by name, and each call's text up to its return."""

    def __init__(self, path):
        self.calls = []  # (pid, name, arguments as printed)
        self.pids = set()
        with open(path, errors="replace") as f:
            for line in f:
                m = LINE.match(line.rstrip("\n"))
                if not m:
                    continue
                pid = int(m.group(1))
                self.pids.add(pid)
                if m.group(3):
                    self.calls.append((pid, m.group(3), m.group(4)))

    def names(self):
        return {name for _, name, _ in self.calls}

    def of(self, *names):
        return [(pid, name, a) for pid, name, a in self.calls if name in names]


def first_path(text):
    m = re.search(r'"((?:[^"\\]|\\.)*)"', text)
    return m.group(1) if m else None


def run_armd(args, rig, rundir, strace_log, notify_path):
    sock = os.path.join(rundir, "armd.sock")
    env = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="1000000")
    env.pop("WATCHDOG_PID", None)
    log = open(os.path.join(rig.dir, "armd.log"), "w")
    strace = shutil.which("strace")
    check(strace, "strace not found: install the Debian package strace (tools/bootstrap does)")
    proc = subprocess.Popen(
        [strace, "-f", "-qq", "-s", "4096", "-e", "signal=none", "-o", strace_log,
         os.path.abspath(args.armd), "-c", rig.config, "--port", rig.link, "--socket", sock,
         "--foreground"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=rundir, preexec_fn=_die_with_parent)
    rig.armd = proc  # stopped by the rig whatever happens
    return proc, sock


def armd_pid(strace_log, proc, deadline):
    while time.time() < deadline:
        check(proc.poll() is None, "strace exited %s before armd ran" % proc.returncode)
        try:
            with open(strace_log) as f:
                m = re.match(r"^(\d+)\s+execve\(", f.readline())
            if m:
                return int(m.group(1))
        except OSError:
            pass
        time.sleep(0.05)
    raise TestFailure("no execve in the strace log")


def exercise(sock, pid, proc, notify):
    deadline = time.time() + 30
    while True:
        check(proc.poll() is None, "armd (under strace) exited early")
        try:
            c = Client(sock)
            c.call("status")
            break
        except (OSError, TestFailure):
            check(time.time() < deadline, "armd did not answer on %s" % sock)
            time.sleep(0.1)
    sub = Client(sock)
    sub.call("subscribe", {"rate_hz": 20})
    info = c.call("info")
    q = c.call("status")["q"]
    check(c.call("enable")["state"] == "holding", "enable did not hold")
    goal = list(q)
    goal[0] += 0.05
    c.call("move_to", {"q": goal, "duration": 0.5})
    deadline = time.time() + 10
    while c.call("status")["state"] != "holding":
        check(time.time() < deadline, "the move did not end")
        time.sleep(0.1)
    g = c.call("gains.get")
    c.call("gains.set", {"kp": g["kp"]})
    c.call("controller.set", {"name": info["controller"]})
    c.call("reload")
    os.kill(pid, signal.SIGHUP)
    time.sleep(0.5)
    c.call("disable")
    c.call("estop")
    c.call("reset")
    sub.close()
    c.close()
    got = notify.recv(4096).decode(errors="replace")
    check(got, "nothing arrived on NOTIFY_SOCKET")
    os.kill(pid, signal.SIGTERM)
    code = proc.wait(20)
    check(code == 0, "strace/armd exited %d on SIGTERM" % code)


def check_trace(trace, unit, sets, rundir, port, armd_pids,
                needs=("sched_setscheduler", "sched_setaffinity", "mlockall", "chown", "sendmsg")):
    allowed = allowed_syscalls(unit, sets)
    for bad in ("setpriority", "ptrace"):  # negative control of the evaluation
        check(bad not in allowed, "the filter evaluation lets %s through" % bad)
    used = trace.names()
    denied = sorted(used - allowed)
    check(not denied, "armd makes system calls %s's SystemCallFilter= refuses: %s" %
          (unit.name, ", ".join(denied)))
    for need in needs:
        check(need in used, "armd never called %s: the run did not exercise it" % need)
    print("%d distinct system calls, all allowed; beyond @default: %s" %
          (len(used), " ".join(sorted(used - expand(["@default"], sets)))))

    ipc = sorted(used & IPC_CALLS)
    check(not ipc, "armd uses System V / POSIX IPC (%s), which RemoveIPC= removes" % ipc)
    for pid, name, a in trace.of("socket", "socketpair"):
        check(a.startswith("AF_UNIX,"), "%s(%s: not AF_UNIX (RestrictAddressFamilies=)" %
              (name, a[:60]))
    for pid, name, a in trace.of("connect", "bind", "sendto", "sendmsg"):
        if "sa_family=" in a:
            check("sa_family=AF_UNIX" in a, "%s to a non-AF_UNIX address: %s" % (name, a[:120]))
            check('sun_path=@' not in a, "%s to an abstract socket, which PrivateNetwork= hides: "
                  "%s" % (name, a[:120]))

    def writable(path):
        return unitmodel.inside(path, rundir) or os.path.realpath(path) == port

    opened = set()
    for pid, name, a in trace.of("open", "openat", "creat"):
        path = first_path(a)
        if path is None:
            continue
        if not path.startswith("/"):
            path = os.path.join(rundir, path)
        opened.add(path)
        if name == "creat" or WRITE_FLAGS.search(a):
            check(writable(path), "opened for writing outside the runtime directory "
                  "(ProtectSystem=strict): %s(%s" % (name, a[:160]))
    for pid, name, a in trace.of(*PATH_WRITES):
        path = first_path(a)
        if path is not None:
            check(writable(path if path.startswith("/") else os.path.join(rundir, path)),
                  "changes the file system outside the runtime directory (ProtectSystem=strict):"
                  " %s(%s" % (name, a[:160]))
    for pid, name, a in trace.of("bind"):
        path = re.search(r'sun_path="([^"]*)"', a)
        check(path and unitmodel.inside(path.group(1), rundir),
              "binds a socket outside the runtime directory: %s" % a[:160])
    for path in sorted(opened):
        real = os.path.realpath(path)
        if path.startswith("/dev/"):
            check(path in PSEUDO_DEVICES or real == port,
                  "opens %s, which DevicePolicy=closed refuses" % path)
        for d in ("/home", "/root", "/run/user"):
            check(not unitmodel.inside(path, d), "opens %s (ProtectHome=)" % path)
        if path.startswith("/tmp/"):
            check(unitmodel.inside(path, os.path.dirname(rundir)),
                  "opens %s in the shared /tmp (PrivateTmp=)" % path)
        if path.startswith("/proc/"):
            head = path.split("/")[2]
            check(head in ("self", "thread-self") or (head.isdigit() and int(head) in armd_pids),
                  "opens %s, hidden by ProcSubset=pid / ProtectProc=invisible" % path)
    print("%d files opened; writes only to the runtime directory and the port; AF_UNIX only"
          % len(opened))


def main(args):
    units = unitmodel.load(args.units, ["arm0"])
    unit = units[1]
    sets = syscall_sets()
    group = grp.getgrgid(os.getgid()).gr_name
    dropin = ("[arm]\nrate_hz = 100\n[driver]\ntimeout_us = 5000\nretries = 3\n"
              "[safety]\nmax_failed_reads = 25\n"
              "[realtime]\npriority = 10\ncpu = 0\nlock_memory = true\n"
              "[socket]\ngroup = %s\n" % group)
    # the rig's armsim and run directory, but armd started here, under strace
    rig = Rig(args, "sandbox", sim_args=READY_POSE + ("--rate", "2000"), dropin=dropin)
    ok = False
    try:
        rig.start_sim()
        port = os.path.realpath(rig.link)
        rundir = os.path.join(rig.dir, "run")  # stands in for /run/armd/arm0
        os.mkdir(rundir, 0o755)
        notify_path = os.path.join(rig.dir, "notify")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.settimeout(10)
        strace_log = os.path.join(rig.dir, "strace.log")
        proc, sock = run_armd(args, rig, rundir, strace_log, notify_path)
        pid = armd_pid(strace_log, proc, time.time() + 15)
        exercise(sock, pid, proc, notify)
        trace = Trace(strace_log)
        check(len(trace.calls) > 1000, "only %d calls traced" % len(trace.calls))
        check_trace(trace, unit, sets, rundir, port, trace.pids)
        # ExecStopPost= runs armd --torque-off in the same sandbox: the same checks for it
        off_log = os.path.join(rig.dir, "strace-torque-off.log")
        off = subprocess.run(
            [shutil.which("strace"), "-f", "-qq", "-s", "4096", "-e", "signal=none", "-o",
             off_log, os.path.abspath(args.armd), "--torque-off", "-c", rig.config, "--port",
             rig.link], cwd=rundir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=30)
        check(off.returncode == 0, "armd --torque-off exited %d: %s" % (off.returncode,
                                                                      off.stdout.strip()))
        off_trace = Trace(off_log)
        check_trace(off_trace, unit, sets, rundir, port, off_trace.pids, needs=("write",))
        ok = True
    finally:
        rig.__exit__(None if ok else TestFailure, None, None)


if __name__ == "__main__":
    args = parse_args()
    try:
        main(args)
    except (TestFailure, unitmodel.UnitError, subprocess.CalledProcessError) as e:
        print("FAIL:", e)
        sys.exit(1)
    print("ok")
