#!/usr/bin/env python3
"""Integration: `armd --torque-off -c CONFIG --port LINK` (what systemd runs as ExecStopPost=).
Real armd + armsim on a pty.

1. While armd runs and holds the port, --torque-off refuses (non-zero, says the port is held by
   a running armd and to use armctl estop) and the running arm is left alone (still holding).
2. armd is SIGKILLed in the middle of a trajectory: with the servos' bus watchdog off (this rig)
   the torque stays applied (negative control), until --torque-off runs: it exits 0, every
   servo confirmed, and armsim's truth shows exactly zero torque from before it returned.
3. A configuration whose drop-in adds a servo the arm does not have (joint j6: id = 6 20; the
   drop-in also proves drop-ins are read) exits 1 naming servo 20, still confirms the six real
   servos, and the missing servo costs at most MISSING_COST s more than the run with all present
   (the driver's bounded attempts; measured against that baseline in the same run).

Clocks as in test_api_sigterm: armd's time maps onto the truth's by the enable instant; later
instants add CLOCK_MONOTONIC intervals measured from a status reply."""
import os
import select
import shutil
import signal
import subprocess
import time

from test_api_lib import (NO_WATCHDOG_DROPIN, Recorder, Rig, check, enable_clock_offset,
                          rows_between, run, zero_onset)
from test_api_tracking import make_points

KEPT = 0.2  # s after the kill: the torque must still be applied (no watchdog, armd gone)
ZERO_WITHIN = 0.020  # s after --torque-off returned: exactly zero torque from then on
MISSING_COST = 1.0  # s: bound on what one missing servo adds (the driver: 3 x <= 0.1 s)


def torque_off(args, config, link):
    """Runs armd --torque-off; returns (exit status, output, seconds it took)."""
    t0 = time.monotonic()
    p = subprocess.run([args.armd, "--torque-off", "-c", config, "--port", link],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    return p.returncode, p.stdout.decode(errors="replace"), time.monotonic() - t0


def main(args):
    with Rig(args, "torqueoff", dropin=NO_WATCHDOG_DROPIN) as rig:
        rec = Recorder(rig.sock, 10)
        c = rig.client()
        info = c.call("info")
        q0 = c.call("status")["q"]
        check(c.call("enable")["state"] == "holding", "enable did not hold")

        # 1. refused while armd holds the port
        code, out, _ = torque_off(args, rig.config, rig.link)
        print("--torque-off while armd runs: exit %d: %s" % (code, out.strip()))
        check(code != 0, "--torque-off succeeded on a port a running armd holds")
        check("held by a running armd" in out and "armctl estop" in out,
              "--torque-off did not say the port is held by armd: %r" % out)
        check(c.call("status")["state"] == "holding", "the running arm was disturbed")

        # 2. SIGKILL mid-trajectory, then --torque-off
        c.call("trajectory", {"points": make_points(info, q0)})
        rec.collect(1.0)
        rec.client.close()
        pidfd = os.pidfd_open(rig.armd.pid)
        st = c.call("status")
        w_status = time.monotonic()
        check(st["state"] == "moving", "expected moving before the kill, got %s" % st["state"])
        rig.armd.send_signal(signal.SIGKILL)
        ready, _, _ = select.select([pidfd], [], [], 10)
        w_kill = time.monotonic()
        os.close(pidfd)
        check(ready, "armd did not die within 10 s of SIGKILL")
        rig.armd.wait()
        c.close()
        time.sleep(KEPT + 0.1)
        w_off0 = time.monotonic()
        code, out, took = torque_off(args, rig.config, rig.link)
        w_off1 = time.monotonic()
        print("--torque-off after SIGKILL: exit %d in %.0f ms: %s" % (code, 1e3 * took,
                                                                       out.strip()))
        check(code == 0, "--torque-off exited %d with every servo present" % code)
        check("all 6 servos" in out, "--torque-off did not report all 6 servos: %r" % out)
        baseline = took

        # 3. a configuration with a servo the arm does not have
        missing_cfg = os.path.join(rig.dir, "missing.ini")
        shutil.copy(rig.config, missing_cfg)
        os.mkdir(os.path.join(rig.dir, "missing.d"))
        with open(os.path.join(rig.dir, "missing.d", "50-extra.ini"), "w") as f:
            f.write("[joint j6]\nid = 6 20\n")
        code, out, took = torque_off(args, missing_cfg, rig.link)
        print("--torque-off with servo 20 missing: exit %d in %.0f ms (all present: %.0f ms):\n%s"
              % (code, 1e3 * took, 1e3 * baseline, out.strip()))
        check(code == 1, "--torque-off exited %d with a servo missing" % code)
        check("servo 20 did not confirm" in out, "servo 20 not named: %r" % out)
        for sid in range(1, 7):
            check("servo %d did" % sid not in out, "servo %d reported missing" % sid)
        check("1 of 7 servos" in out, "summary does not count 1 of 7: %r" % out)
        check(took - baseline <= MISSING_COST, "a missing servo cost %.2f s (bound %g s)" %
              (took - baseline, MISSING_COST))

        time.sleep(0.4)
        rig.stop_sim()
        truth = rig.read_truth()
        d = enable_clock_offset(rec, truth)
        t_kill = st["time"] + (w_kill - w_status) + d
        t_off0 = st["time"] + (w_off0 - w_status) + d
        t_off1 = st["time"] + (w_off1 - w_status) + d
        kept = rows_between(truth, t_kill + 0.02, t_kill + KEPT)
        check(len(kept) > 100, "too little truth after the kill (%d rows)" % len(kept))
        check(all(any(x != 0.0 for x in r[3]) for r in kept),
              "the torque went to zero after SIGKILL by itself (the check could not tell)")
        iz = zero_onset(truth)
        check(iz < len(truth), "torque not zero at the end of the truth: %s" % truth[-1][3])
        t_zero = truth[iz][0]
        print("SIGKILL: torque kept for %.0f ms until --torque-off ran; exactly 0 from %.1f ms "
              "after it started (it returned after %.1f ms), until the end" %
              (1e3 * (t_off0 - t_kill), 1e3 * (t_zero - t_off0), 1e3 * (t_off1 - t_off0)))
        late = st["loop"]["lateness_us"]["max"] * 1e-6  # the enable tick's, at most
        check(t_zero >= t_off0 - 0.002 - late, "torque zero %.1f ms before --torque-off started "
              "(allowed: 2 ms + the worst tick lateness %.1f ms)" % (1e3 * (t_off0 - t_zero),
                                                                     1e3 * late))
        check(t_zero <= t_off1 + ZERO_WITHIN, "torque zero %.1f ms after --torque-off returned" %
              (1e3 * (t_zero - t_off1)))


if __name__ == "__main__":
    run(main)
