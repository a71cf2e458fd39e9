#!/usr/bin/env python3
"""Integration: armd's systemd notify protocol, against a real UNIX datagram socket given as
NOTIFY_SOCKET with WATCHDOG_USEC (no WATCHDOG_PID: sd_watchdog_enabled(3) then enables the
watchdog for the process reading it). Real armd + armsim on a pty.

Asserts: READY=1 comes once and the API socket answers as soon as it has come; STATUS= carries
the state, the rate and the overrun / failed-read counts and follows state changes; WATCHDOG=1
comes repeatedly while control ticks advance; when the control thread alone is stopped
(ptrace-interrupting just that thread, which the kernel allows a parent to do), WATCHDOG=1
stops and STATUS= reports the stall, and once it runs again the arm is in fault ("control
thread stalled") with zero torque; STOPPING=1 on SIGTERM, and armd exits 0.
"""
import ctypes
import os
import signal
import socket
import time

from test_api_lib import Rig, check, run

# armd pings every WATCHDOG_USEC / 2 = 0.5 s: a gap must stay below WATCHDOG_USEC, which leaves
# 0.5 s for a main loop delayed by a loaded machine
WATCHDOG_USEC = 1000000
PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000  # __WALL: wait for any child or traced thread


class Notify:
    """The receiving end of NOTIFY_SOCKET: (time received, assignment) pairs in order."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.msgs = []

    def poll(self, seconds):
        """Receives for seconds; returns the assignments that arrived."""
        end = time.time() + seconds
        got = []
        while True:
            left = end - time.time()
            if left <= 0:
                break
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                break
            now = time.time()
            for line in data.decode(errors="replace").split("\n"):
                if line:
                    got.append((now, line))
        self.msgs += got
        return got

    def wait_for(self, prefix, seconds):
        end = time.time() + seconds
        while time.time() < end:
            for t, m in self.poll(0.05):
                if m.startswith(prefix):
                    return t, m
        raise AssertionError  # replaced by check() in callers


def wait_for(n, prefix, seconds, what):
    try:
        return n.wait_for(prefix, seconds)
    except AssertionError:
        check(False, "no %s within %g s; received %s" % (what, seconds, [m for _, m in n.msgs]))


def control_tid(pid):
    """The control thread's id (named armd-control by armd)."""
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().strip() == "armd-control":
                return int(tid)
    check(False, "armd has no thread named armd-control")


def stop_thread(libc, tid):
    """Stops one thread of a child process (ptrace seize + interrupt); returns an error text or
    None."""
    if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
        return "ptrace(PTRACE_SEIZE) refused: %s" % os.strerror(ctypes.get_errno())
    if libc.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
        return "ptrace(PTRACE_INTERRUPT) refused: %s" % os.strerror(ctypes.get_errno())
    os.waitpid(tid, WALL)
    return None


def main(args):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    with Rig(args, "notify") as rig:
        rig.stop_armd()  # restarted below with the notify environment
        n = Notify(os.path.join(rig.dir, "notify.sock"))
        os.environ["NOTIFY_SOCKET"] = n.path
        os.environ["WATCHDOG_USEC"] = str(WATCHDOG_USEC)
        os.environ.pop("WATCHDOG_PID", None)
        try:
            os.unlink(rig.sock)
        except FileNotFoundError:
            pass
        rig.start_armd()
        for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC"):
            del os.environ[k]

        # READY=1 (start_armd returned once the socket answered; READY must be there too and
        # the socket must answer right after it)
        wait_for(n, "READY=1", 5, "READY=1")
        c = rig.client()
        check(c.call("status")["state"] == "disabled", "armd not disabled after READY=1")
        before = [m for _, m in n.msgs[: [m for _, m in n.msgs].index("READY=1")]]
        st0 = [m for m in before if m.startswith("STATUS=")]
        check(st0, "no STATUS= before READY=1: %s" % before)
        print("before READY=1:", st0)
        check("disabled" in st0[-1] and "1000 Hz" in st0[-1] and "overruns" in st0[-1]
              and "failed reads" in st0[-1], "STATUS= lacks state/rate/errors: %r" % st0[-1])

        # watchdog pings while ticking, STATUS= follows the state
        check(c.call("enable")["state"] == "holding", "enable failed")
        got = n.poll(3.0)
        pings = [t for t, m in got if m == "WATCHDOG=1"]
        status = [m for _, m in got if m.startswith("STATUS=")]
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        print("3 s ticking: %d WATCHDOG=1 (largest gap %.3f s), STATUS= %s" %
              (len(pings), max(gaps) if gaps else -1, status))
        check(len(pings) >= 4, "only %d WATCHDOG=1 in 3 s with WATCHDOG_USEC=%d" %
              (len(pings), WATCHDOG_USEC))
        check(max(gaps) < WATCHDOG_USEC * 1e-6,
              "WATCHDOG=1 gap %.3f s exceeds WATCHDOG_USEC" % max(gaps))
        check(any(m.startswith("STATUS=holding") for m in status),
              "STATUS= did not follow the state to holding: %s" % status)

        # the control thread alone stops: no more WATCHDOG=1, STATUS= says why
        tid = control_tid(rig.armd.pid)
        err = stop_thread(libc, tid)
        check(err is None, "cannot stop the control thread: %s" % err)
        t_stop = time.time()
        try:
            got = n.poll(2.0)
            check(c.call("status")["state"] == "holding",
                  "the main thread should still answer (control thread stopped)")
        finally:
            libc.ptrace(PTRACE_DETACH, tid, None, None)
        # one ping may still be due for the ticks made just before the stop (armd pings every
        # WATCHDOG_USEC / 2), none after that
        period = WATCHDOG_USEC * 1e-6 / 2
        late = [t - t_stop for t, m in got if m == "WATCHDOG=1" and t > t_stop + period + 0.05]
        print("control thread stopped 2 s: received %s" % [m for _, m in got])
        check(not late, "WATCHDOG=1 continued while the control thread was stopped (%s s after)"
              % late)
        check(any(m.startswith("STATUS=") and "stalled" in m for _, m in got),
              "STATUS= did not report the stall: %s" % got)
        deadline = time.monotonic() + 5  # until the control thread has run again
        st = c.call("status")
        while st["state"] != "fault" and time.monotonic() < deadline:
            time.sleep(0.02)
            st = c.call("status")
        print("after the stall: state %s, fault %r" % (st["state"], st["fault"]))
        check(st["state"] == "fault" and "control thread stalled" in st["fault"],
              "no stall fault after the control thread ran again: %s %r" %
              (st["state"], st["fault"]))
        check(all(x == 0 for x in st["tau"]), "torque not zero after the stall: %s" % st["tau"])
        got = n.poll(3.0)
        check(sum(1 for _, m in got if m == "WATCHDOG=1") >= 3,
              "WATCHDOG=1 did not resume with the ticks: %s" % got)
        c.close()

        check(rig.stop_armd(signal.SIGTERM) == 0, "armd did not exit 0 on SIGTERM")
        got = n.poll(0.2)
        check(any(m == "STOPPING=1" for _, m in n.msgs), "no STOPPING=1 on SIGTERM: %s" %
              [m for _, m in n.msgs[-10:]])
        print("SIGTERM: STOPPING=1 received; exit status 0")


if __name__ == "__main__":
    run(main)
