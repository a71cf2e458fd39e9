#!/usr/bin/env python3
"""Integration: a control thread stuck for good is cancelled at shutdown, and the main thread
then zeroes the torque and disables the servos itself; one that cannot even be cancelled (it
spins without a cancellation point) is left behind: the main thread writes the torque-off frame
and armd exits 1 at once. armd runs with a shim (hang_control.so, LD_PRELOAD) that makes its
control thread sleep for an hour (or, with HANG_CONTROL_MODE=spin, spin for good) once a
trigger file exists; the servos' bus watchdog is off (allow_no_watchdog), so only armd can zero
the torque.

While the thread hangs the last torque stays applied (the truth shows it up to SIGTERM); on
SIGTERM ctl_stop waits its 2 s, cancels the thread and joins it within 0.5 s more. Asleep: the
join succeeds, the main thread writes zero torque and disables (logged), armd exits 0. Spinning:
the join times out, the main thread writes the torque-off frame (logged), armd exits 1 (it used
to hang in pthread_join for good). Either way the truth shows exactly zero torque by ZERO_WITHIN
after armd's exit. Real armd + armsim on a pty. argv: the usual, plus --shim PATH."""
import os
import select
import signal
import sys
import time

from test_api_lib import (NO_WATCHDOG_DROPIN, Recorder, Rig, check, enable_clock_offset,
                          rows_between, run, zero_onset)

ZERO_WITHIN = 0.020  # s after armd's exit
EXIT_WITHIN = 10  # s after SIGTERM: armd's own bound is 2.5 s; past this armd is taken as hung


def stuck(args, mode):
    """One run with the thread stuck in mode ("sleep" or "spin"); returns the seconds from
    SIGTERM to armd's exit."""
    env = dict(os.environ, LD_PRELOAD=SHIM, HANG_CONTROL_MODE=mode)
    rig = Rig(args, "stuck-" + mode, dropin=NO_WATCHDOG_DROPIN, armd_env=env)
    trigger = os.path.join(rig.dir, "hang")  # armd's control thread hangs once it exists
    env["HANG_CONTROL_FILE"] = trigger  # the dict armd will be started with
    with rig:
        rec = Recorder(rig.sock, 10)
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        rec.collect(0.5)
        rec.client.close()
        st = c.call("status")
        w_status = time.monotonic()
        open(trigger, "w").close()
        deadline = time.monotonic() + 10
        while "stalled" not in rig.armd_log() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("stalled" in rig.armd_log(), "%s: armd did not notice the stuck control thread"
              % mode)
        pidfd = os.pidfd_open(rig.armd.pid)
        w_term = time.monotonic()
        rig.armd.send_signal(signal.SIGTERM)
        ready, _, _ = select.select([pidfd], [], [], EXIT_WITHIN)
        w_exit = time.monotonic()
        os.close(pidfd)
        check(ready, "%s: armd did not exit within %g s of SIGTERM" % (mode, EXIT_WITHIN))
        code = rig.armd.wait()
        c.close()
        log = rig.armd_log()
        time.sleep(0.5)
        rig.stop_sim()
        truth = rig.read_truth()
        d = enable_clock_offset(rec, truth)
        t_term = st["time"] + (w_term - w_status) + d
        t_exit = st["time"] + (w_exit - w_status) + d
        print("stuck control thread (%s): SIGTERM, armd exited %.2f s later with %s" %
              (mode, w_exit - w_term, code))
        if mode == "sleep":
            check(code == 0, "sleep: armd exited %s" % code)
            check("cancelling it" in log and "torque off written from the main thread" in log,
                  "sleep: armd did not log the cancel and its own torque off:\n" + log[-2000:])
        else:
            check(code == 1, "spin: armd exited %s, not 1" % code)
            check("could not be cancelled" in log and
                  "torque-off frame written from the main thread" in log,
                  "spin: armd did not log the failed join and its torque off:\n" + log[-2000:])
        held = rows_between(truth, t_term - 0.1, t_term)
        check(len(held) > 50 and all(any(x != 0.0 for x in r[3]) for r in held),
              "%s: the torque was not applied while the thread hung (nothing to test)" % mode)
        iz = zero_onset(truth)
        check(iz < len(truth), "%s: torque not zero at the end of the truth: %s"
              % (mode, truth[-1][3]))
        t_zero = truth[iz][0]
        print("%s: torque exactly 0 from %.2f s after SIGTERM, %.1f ms after armd's exit (bound "
              "%g ms)" % (mode, t_zero - t_term, 1e3 * (t_zero - t_exit), 1e3 * ZERO_WITHIN))
        check(t_zero - t_exit <= ZERO_WITHIN, "%s: torque reached zero %.1f ms after armd's exit"
              % (mode, 1e3 * (t_zero - t_exit)))
        return w_exit - w_term


def main(args):
    stuck(args, "sleep")
    stuck(args, "spin")


if __name__ == "__main__":
    i = sys.argv.index("--shim")
    SHIM = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    run(main)
