#!/usr/bin/env python3
"""Integration: armd's shutdown deadline does not depend on the wall clock. armd runs with a
shim (clock_shift.so, LD_PRELOAD) that shows it CLOCK_REALTIME an hour behind the kernel's, as
a deadline meets when the wall clock steps an hour forward while armd waits: a wait on such a
deadline ends at once. SIGTERM mid-trajectory must still go the normal way: the control thread
is not cancelled (no "cancelling" in the log), armd exits 0 and armsim's truth shows exactly
zero torque within ZERO_WITHIN of armd's exit (bus watchdog off: only armd can zero it).
Real armd + armsim on a pty. argv: the usual, plus --shim PATH."""
import os
import signal
import sys

from test_api_lib import check, run, zero_onset
from test_api_sigterm import interrupt

ZERO_WITHIN = 0.020  # s after armd's exit


def main(args):
    env = dict(os.environ, LD_PRELOAD=SHIM, CLOCK_SHIFT_S="-3600")
    truth, t_exit, t_sig, code, _, log, late = interrupt(args, signal.SIGTERM, armd_env=env)
    check("cancelling" not in log, "armd cancelled its control thread:\n" + log[-2000:])
    check(code == 0, "armd exited %s on SIGTERM with the wall clock shifted" % code)
    iz = zero_onset(truth)
    check(iz < len(truth), "torque not zero at the end of the truth: %s" % truth[-1][3])
    t_zero = truth[iz][0]
    print("wall clock an hour off: no cancel; torque exactly 0 from %.1f ms after armd's exit "
          "(bound %g ms)" % (1e3 * (t_zero - t_exit), 1e3 * ZERO_WITHIN))
    check(t_zero - t_exit <= ZERO_WITHIN, "torque reached zero %.1f ms after armd's exit" %
          (1e3 * (t_zero - t_exit)))
    check(t_zero >= t_sig - 0.002 - late, "torque already zero before SIGTERM (allowed: 2 ms + "
          "the worst tick lateness %.1f ms)" % (1e3 * late))


if __name__ == "__main__":
    i = sys.argv.index("--shim")
    SHIM = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    run(main)
