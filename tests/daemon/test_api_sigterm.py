#!/usr/bin/env python3
"""Integration: SIGTERM in the middle of a trajectory stops the arm (zero torque in armsim's
truth within a few ticks of armd's exit), removes the socket and armd exits 0. Real armd +
armsim on a pty.

The servos' bus watchdog is switched off ([driver] bus_watchdog_ms = 0): with it on they go limp
by themselves 100 ms after armd's last packet, so the truth would show zero torque whatever armd
did. Without it only armd can zero the torque. Negative control: the same rig with SIGKILL
(armd gets no chance to stop the arm) must NOT show zero torque within the window, which proves
the check tells a good armd from a bad one.

Clocks: armd's times map onto the truth's by the enable instant (enable_clock_offset). armd's
exit instant in armd time is the time stamp of a status taken just before the signal plus the
CLOCK_MONOTONIC time from that reply until the process exited (seen through a pidfd, at once).
The status time stamp is up to a tick old, so the mapped exit is if anything early: stricter."""
import os
import select
import signal
import time

from test_api_lib import (NO_WATCHDOG_DROPIN, Recorder, Rig, check, enable_clock_offset, run,
                          zero_onset)
from test_api_tracking import make_points

ZERO_WITHIN = 0.020  # s after armd's exit by which the applied torque must be exactly 0


def interrupt(args, sig, armd_env=None):
    """Runs a trajectory, sends sig to armd mid-way; returns (truth, exit time in truth seconds,
    signal time in truth seconds, armd's exit status, whether the socket file is left, armd's
    log, the worst tick lateness armd reported before the signal [s]). The truth times come from
    the enable instant (enable_clock_offset), which a late enable tick shifts by up to that
    lateness. armd_env: armd's environment (None: this process's)."""
    with Rig(args, "sig%d" % sig, dropin=NO_WATCHDOG_DROPIN, armd_env=armd_env) as rig:
        rec = Recorder(rig.sock, 10)
        c = rig.client()
        info = c.call("info")
        q0 = c.call("status")["q"]
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        r = c.call("trajectory", {"points": make_points(info, q0)})
        rec.collect(1.5)
        rec.client.close()
        pidfd = os.pidfd_open(rig.armd.pid)
        st = c.call("status")
        w_status = time.monotonic()
        check(st["state"] == "moving", "expected moving before the signal, got %s" % st["state"])
        rig.armd.send_signal(sig)
        ready, _, _ = select.select([pidfd], [], [], 10)
        w_exit = time.monotonic()
        os.close(pidfd)
        check(ready, "armd did not exit within 10 s of signal %d" % sig)
        code = rig.armd.wait()
        c.close()
        time.sleep(0.5)  # truth after the exit
        rig.stop_sim()
        truth = rig.read_truth()
        d = enable_clock_offset(rec, truth)
        t_exit = st["time"] + (w_exit - w_status) + d
        print("signal %d: trajectory %d interrupted at armd t = %.4f s; armd exited %.1f ms "
              "later (truth t = %.4f s)" % (sig, r["id"], st["time"], 1e3 * (w_exit - w_status),
                                            t_exit))
        return (truth, t_exit, st["time"] + d, code, os.path.exists(rig.sock), rig.armd_log(),
                st["loop"]["lateness_us"]["max"] * 1e-6)


def main(args):
    truth, t_exit, t_sig, code, sock_left, log, late = interrupt(args, signal.SIGTERM)
    check(code == 0, "armd exited %s on SIGTERM" % code)
    check(not sock_left, "socket file left behind")
    check("stopped" in log, "armd did not log its stop")
    iz = zero_onset(truth)
    check(iz < len(truth), "torque not zero at the end of the truth after SIGTERM: %s" %
          truth[-1][3])
    t_zero = truth[iz][0]
    print("SIGTERM: applied torque exactly 0 on every joint from truth t = %.4f s, %.1f ms after "
          "armd's exit (bound %g ms), until the end (%.2f s later)" %
          (t_zero, 1e3 * (t_zero - t_exit), 1e3 * ZERO_WITHIN, truth[-1][0] - t_zero))
    check(t_zero - t_exit <= ZERO_WITHIN, "torque reached zero %.1f ms after armd's exit" %
          (1e3 * (t_zero - t_exit)))
    check(t_zero >= t_sig - 0.002 - late, "torque was already zero %.1f ms before SIGTERM "
          "(allowed: 2 ms + the worst tick lateness %.1f ms)" % (1e3 * (t_sig - t_zero),
                                                                 1e3 * late))
    check(truth[-1][0] - t_zero >= 0.3, "too little truth after the zero onset")

    # negative control: SIGKILL leaves the last torque applied (no watchdog to save the arm)
    truth, t_exit, _, _, _, _, _ = interrupt(args, signal.SIGKILL)
    iz = zero_onset(truth)
    late = truth[iz][0] - t_exit if iz < len(truth) else None
    print("SIGKILL (control): torque %s" % ("never went to zero" if late is None else
                                              "zero %.1f ms after the kill" % (1e3 * late)))
    check(late is None or late > ZERO_WITHIN,
          "the check cannot tell: torque went to zero %.1f ms after SIGKILL too" %
          (1e3 * (late or 0)))


if __name__ == "__main__":
    run(main)
