#!/usr/bin/env python3
"""Integration: SIGUSR1 (`systemctl kill -s USR1 armd@arm0`) during a trajectory is an emergency
stop: state estop, exactly zero torque in armsim's truth right after, armd logs it and keeps
running (reset and enable work again). Real armd + armsim on a pty.

The servos' bus watchdog is off in this rig (as in test_api_faults), so the zero torque is
armd's doing. Clocks as in test_api_faults: the truth rows are selected by time through the
enable instant; the stop instant is bounded by the status time stamps taken just before the
signal and at the first status that shows estop."""
import signal
import time

from test_api_lib import (NO_WATCHDOG_DROPIN, Recorder, Rig, check, enable_clock_offset,
                          rows_between, run)
from test_api_tracking import make_points

ESTOP_WITHIN = 0.010  # s after the first estop status by which the torque must be exactly 0


def main(args):
    with Rig(args, "usr1", dropin=NO_WATCHDOG_DROPIN) as rig:
        rec = Recorder(rig.sock, 10)
        c = rig.client()
        info = c.call("info")
        q0 = c.call("status")["q"]
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        c.call("trajectory", {"points": make_points(info, q0)})
        rec.collect(1.0)
        rec.client.close()
        st = c.call("status")
        check(st["state"] == "moving", "expected moving before SIGUSR1, got %s" % st["state"])
        t_before = st["time"]
        rig.armd.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            st = c.call("status")
            if st["state"] != "moving":
                break
        check(st["state"] == "estop", "state after SIGUSR1: %s" % st["state"])
        t_after = st["time"]
        time.sleep(0.5)
        check(rig.armd.poll() is None, "armd exited on SIGUSR1")
        deadline = time.monotonic() + 10
        while "SIGUSR1" not in rig.armd_log() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("SIGUSR1: emergency stop" in rig.armd_log(), "armd did not log the SIGUSR1")
        check(c.call("reset")["state"] == "disabled", "reset after the estop failed")
        check(c.call("enable")["state"] == "holding", "enable after reset failed")
        c.close()
        truth = rig.read_truth()
        d = enable_clock_offset(rec, truth)
        moving = rows_between(truth, t_before + d - 0.2, t_before + d)
        after = rows_between(truth, t_after + d + ESTOP_WITHIN, t_after + d + 0.4)
        check(len(moving) > 100 and len(after) > 100, "too little truth around the stop (%d, %d "
              "rows)" % (len(moving), len(after)))
        t0 = t_before + d
        later = rows_between(truth, t0, t_after + d + 0.4)
        zero = next((r[0] for r in later if all(x == 0.0 for x in r[3])), None)
        check(zero is not None, "the truth never shows zero torque after SIGUSR1")
        print("SIGUSR1: torque exactly 0 from %.1f ms after the last moving status" %
              (1e3 * (zero - t0)))
        before = max(max(abs(x) for x in r[3]) for r in moving)
        worst = max(max(abs(x) for x in r[3]) for r in after)
        print("SIGUSR1: estop seen %.1f ms (armd time) after the last moving status; max |tau| "
              "%.3f N m in the 0.2 s before, %g from %g ms after the estop status for 0.4 s" %
              (1e3 * (t_after - t_before), before, worst, 1e3 * ESTOP_WITHIN))
        check(before > 0.1, "no torque before the signal (nothing to test)")
        check(worst == 0.0, "torque not zero %g ms after the estop: %g" %
              (1e3 * ESTOP_WITHIN, worst))


if __name__ == "__main__":
    run(main)
