#!/usr/bin/env python3
"""Integration: the socket API's idle timeout does not follow the wall clock. armd runs with a
shim (clock_shift.so, LD_PRELOAD) that shows it the wall clock shifted by the number in a file,
read on every call, so that the test steps armd's wall clock while it runs (the machine's clock
is never touched). [socket] idle_timeout = IDLE s.

 - forward: IDLE_CLIENTS connections sit idle (one a partial line, which is no request); the
   wall clock steps +1 h. None may be closed before IDLE s after its connect (a deadline on the
   wall clock closes them at once), and each gets its idle_timeout error and end of connection
   within IDLE + LATE_BY s;
 - back: new idle connections, then the wall clock steps back 1 h (to the machine's time). Each
   must still be closed within IDLE + LATE_BY s (a deadline on the wall clock waits an hour).
Then armd exits 0. Both phases run before the checks, so that each one's outcome is printed.
Real armd + armsim on a pty. argv: the usual, plus --shim PATH."""
import os
import select
import socket
import sys
import time

from test_api_lib import DEFAULT_DROPIN, Rig, check, run

IDLE = 2.0  # [socket] idle_timeout [s]
LATE_BY = 1.0  # [s] the close may come this much after the timeout (a stalled host)
IDLE_CLIENTS = 3


def step(path, seconds):
    """Sets armd's wall clock shift to seconds (the shim reads it on its next call)."""
    with open(path + ".new", "w") as f:
        f.write("%d\n" % seconds)
    os.replace(path + ".new", path)


def watch_idle(rig, shift_file, shift_to):
    """Connects IDLE_CLIENTS idle clients, steps the wall clock to shift_to [s], and returns
    for each the time [s] from its connect to armd's close (the idle_timeout error, then the end
    of the connection), or None when it was not closed within IDLE + LATE_BY s, and what it got."""
    socks, t_conn = [], []
    for k in range(IDLE_CLIENTS):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(rig.sock)
        t_conn.append(time.monotonic())
        if k == 0:
            s.sendall(b'{"id": 1, "method": "sta')  # bytes, but no request
        socks.append(s)
    time.sleep(0.2)
    step(shift_file, shift_to)
    closed, got = [None] * len(socks), [b""] * len(socks)
    deadline = t_conn[-1] + IDLE + LATE_BY
    while any(c is None for c in closed) and time.monotonic() < deadline:
        open_ = [s for s, c in zip(socks, closed) if c is None]
        ready, _, _ = select.select(open_, [], [], max(0.0, deadline - time.monotonic()))
        now = time.monotonic()
        for s in ready:
            i = socks.index(s)
            data = s.recv(4096)
            got[i] += data
            if not data:
                closed[i] = now - t_conn[i]
    for s in socks:
        s.close()
    return closed, got


def judge(what, closed, got):
    """Checks one phase's outcome (see the docstring)."""
    for i, (c, g) in enumerate(zip(closed, got)):
        check(c is not None, "%s: idle client %d not closed within %.1f s of its connect "
              "(idle_timeout %.1f s)" % (what, i, IDLE + LATE_BY, IDLE))
        check(c >= IDLE, "%s: idle client %d closed %.2f s after its connect, before "
              "idle_timeout (%.1f s)" % (what, i, c, IDLE))
        check(b'"idle_timeout"' in g, "%s: idle client %d closed without the idle_timeout "
              "error: %r" % (what, i, g))


def main(args):
    rig = Rig(args, "idlestep", dropin=DEFAULT_DROPIN + "[socket]\nidle_timeout = %g\n" % IDLE)
    shift_file = os.path.join(rig.dir, "clock.shift")
    step(shift_file, 0)
    rig.armd_env = dict(os.environ, LD_PRELOAD=SHIM, CLOCK_SHIFT_FILE=shift_file)
    with rig:
        fwd = watch_idle(rig, shift_file, 3600)
        print("wall clock +1 h: idle clients closed %s s after their connect (idle_timeout %g s)"
              % (["%.2f" % c if c is not None else "never" for c in fwd[0]], IDLE))
        back = watch_idle(rig, shift_file, 0)
        print("wall clock -1 h: idle clients closed %s s after their connect" %
              ["%.2f" % c if c is not None else "never" for c in back[0]])
        judge("wall clock +1 h", *fwd)
        judge("wall clock -1 h", *back)
        c = rig.client()
        check(c.call("status")["state"] == "disabled", "armd not answering after the steps")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    i = sys.argv.index("--shim")
    SHIM = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    run(main)
