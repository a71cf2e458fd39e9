#!/usr/bin/env python3
"""Integration: a fatal signal (SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL, SIGQUIT, SIGTRAP,
SIGSYS, SIGXCPU, SIGXFSZ: every signal whose default action is a core dump) sent to armd in the
middle of a trajectory still ends with exactly zero torque in armsim's truth, shortly after
armd's death, and armd dies by that signal (its handler writes the driver's torque-off frame,
then re-raises). Real armd + armsim on a pty.

The servos' bus watchdog is off in this rig (bus_watchdog_ms = 0 with allow_no_watchdog), so
only armd can have zeroed the torque; test_api_sigterm's SIGKILL control run shows that the same
rig keeps the torque applied when armd gets no chance to act. Clocks and instants as in
test_api_sigterm (interrupt()): the death instant is seen through a pidfd."""
import resource
import signal

from test_api_lib import check, run, zero_onset
from test_api_sigterm import interrupt

ZERO_WITHIN = 0.020  # s after armd's death by which the applied torque must be exactly 0
SIGNALS = (signal.SIGSEGV, signal.SIGABRT, signal.SIGFPE, signal.SIGBUS, signal.SIGILL,
           signal.SIGQUIT, signal.SIGTRAP, signal.SIGSYS, signal.SIGXCPU, signal.SIGXFSZ)


def main(args):
    # no core files from the deliberate deaths (the signal and the exit status are what count)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    results = []
    for sig in SIGNALS:
        name = signal.Signals(sig).name
        truth, t_exit, t_sig, code, _, log, late = interrupt(args, sig)
        check(code == -sig, "armd ended with %s after %s, expected death by the signal" %
              (code, name))
        iz = zero_onset(truth)
        check(iz < len(truth), "%s: torque not zero at the end of the truth: %s" %
              (name, truth[-1][3]))
        t_zero = truth[iz][0]
        print("%s: applied torque exactly 0 on every joint from truth t = %.4f s: %.1f ms after "
              "the signal was sent, %.1f ms after armd's death (bound %g ms), until the end "
              "(%.2f s later)" % (name, t_zero, 1e3 * (t_zero - t_sig), 1e3 * (t_zero - t_exit),
                                  1e3 * ZERO_WITHIN, truth[-1][0] - t_zero))
        check(t_zero - t_exit <= ZERO_WITHIN, "%s: torque reached zero %.1f ms after armd's "
              "death" % (name, 1e3 * (t_zero - t_exit)))
        check(t_zero >= t_sig - 0.002 - late, "%s: torque was already zero %.1f ms before the "
              "signal (allowed: 2 ms + the worst tick lateness)" %
              (name, 1e3 * (t_sig - t_zero)))
        check(truth[-1][0] - t_zero >= 0.3, "%s: too little truth after the zero onset" % name)
        results.append((name, 1e3 * (t_zero - t_sig)))
    print("signal -> zero torque [ms]: " + ", ".join("%s %.1f" % r for r in results))


if __name__ == "__main__":
    run(main)
