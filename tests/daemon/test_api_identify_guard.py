#!/usr/bin/env python3
"""Integration: what `armctl identify` must not do, on the PUMA 560 on simulated time (armd
--lockstep --paused, the test running time while armctl records, as in test_api_identify.py),
with a short excitation (1 x 4 s, and a 4 s validation motion) to keep it quick.

- A client that stops reading does not lose the recording: armctl is stopped (SIGSTOP) through
  the whole validation motion and for STOP_S of wall-clock time more, STOP_S / STALL_S times
  armd's [socket] stall_timeout (STALL_S); continued (SIGCONT), it completes: exit 0, no gap in
  what it recorded, a finite validation figure below the configured model's, the INI written.
  armd records at the loop rate (record.start) and armctl fetches the samples afterwards; a
  telemetry stream at the loop rate would have filled armd's output queue and got armctl
  dropped for not reading.
- A validation no better than the configured model's writes no parameters: on an arm that is
  the configuration exactly (no --perturb), the configured model is the truth, and the
  identified one comes out a little worse on the validation motion (0.2806 % against 0.2779 %
  of the torque RMS, the same each run): armctl exits 1, says so with both figures, and no INI
  (nor a temporary one) is left in its directory."""
import os
import re
import signal
import time

from test_api_identify import (ARMCTL_WAIT_S, _next_motion, _run_motion, start_identify,
                               validation_figures)
from test_api_lib import LOCKSTEP_DROPIN, READY_POSE, Rig, check, run

SEED = "3"
STALL_S = 0.3  # [s] armd's stall timeout in this rig ([socket] stall_timeout)
STOP_S = 1.5   # [s] of wall-clock time armctl stays stopped after the validation motion ran
SHORT = ("--periods", "1", "--period", "4")


def identify(args, rig, out, report, stop_in=None):
    """Runs armctl identify with SHORT on paused simulated time (the motions run by the
    test); with stop_in ("validation"), armctl is stopped from the moment it says that motion
    started until STOP_S after the motion ran. Returns (exit status, stderr, stdout)."""
    c = rig.client()
    rec = rig.recorder(10)
    period = 1.0 / c.call("info")["rate_hz"]
    p, lines, err, text, readers = start_identify(args, rig, out, report, SHORT)
    try:
        for what in ("identification", "validation"):
            if _next_motion(lines, what) is None:
                break
            stopped = what == stop_in
            if stopped:
                os.kill(p.pid, signal.SIGSTOP)
            _run_motion(rig, c, rec, period, what + " motion")
            if stopped:
                time.sleep(STOP_S)  # the injected stall: STOP_S / STALL_S stall timeouts
                os.kill(p.pid, signal.SIGCONT)
        rc = p.wait(ARMCTL_WAIT_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for t in readers:
            t.join(5)
        rec.close()
        c.close()
    err, text = "".join(err), "".join(text)
    print(err.strip())
    print(text.strip())
    return rc, err, text


def main(args):
    dropin = LOCKSTEP_DROPIN + "[socket]\nstall_timeout = %g\n" % STALL_S
    with Rig(args, "identify-slow", sim_args=READY_POSE + ("--perturb", SEED), dropin=dropin,
             lockstep="paused") as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        out = os.path.join(rig.dir, "slow.ini")
        rc, err, text = identify(args, rig, out, os.path.join(rig.dir, "slow"),
                                 stop_in="validation")
        check(rc == 0, "armctl identify stopped for %g s (%g x the stall timeout) during the "
              "validation motion failed (exit %d)" % (STOP_S, STOP_S / STALL_S, rc))
        check("gaps in the telemetry" not in err, "gaps in the recording of a stopped armctl")
        err_id, err_cfg = validation_figures(text)
        check(err_id < err_cfg, "validation %.2f %% not below the configured %.2f %%"
              % (err_id, err_cfg))
        check(os.path.getsize(out) > 0, "no INI written")
        check(c.call("status")["state"] == "holding", "not holding after identify")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")

    with Rig(args, "identify-bad", lockstep="paused") as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        out = os.path.join(rig.dir, "bad.ini")
        rc, err, text = identify(args, rig, out, os.path.join(rig.dir, "bad"))
        m = re.search(r"identified model's torque error ([0-9.]+) % is no better than the "
                      r"configured model's ([0-9.]+) %", err)
        check(rc == 1, "armctl identify with a validation worse than the configured model's "
              "exited %d (want 1)" % rc)
        check(m is not None, "armctl did not say the validation was worse: %s" % err)
        check(float(m.group(1)) >= float(m.group(2)), "refused a better model: %s" % m.group(0))
        check("no parameters written" in err, "armctl did not say nothing was written")
        check(not os.path.exists(out), "%s written" % out)
        left = [f for f in os.listdir(rig.dir) if f.startswith("bad.ini")]
        check(not left, "files left: %s" % left)
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
