#!/usr/bin/env python3
"""Integration: `armctl identify` on the OpenManipulator-X (config/examples/open_manipulator_x.ini
as shipped: 400 Hz, computed torque) played by armsim `--perturb 3` (every link's mass, COM and
principal moments up to 30 % and its friction up to 50 % off the configuration; armd is not
told), from an upright pose with the forearm raised. test_api_identify.py's steps on the PUMA,
with the demo move scaled to 0.4 x its amplitude and 1.5 x its duration for the light arm:

- the configured model completes the warm-up move (before viscous_velocity = desired in the
  example, the arm oscillated and faulted here);
- armctl identify exits 0; its validation torque error is within 5 % and well below the
  configured model's;
- tracking of the move with the configured, identified and exact models (reloaded in turn):
  the identified model's RMS following error is within issue 11's 1.2 x the exact model's
  (measured 0.99-1.01 x, 3 runs). armd's following error has a floor here: the XM430's 12-bit
  encoder quantises q to 1.53 mrad, 0.44 mrad RMS, which joints 1 and 2 sit at with every model;
  joints 3 and 4 (configured model 0.75 and 1.78 mrad) show the model."""
import subprocess

import test_api_payload
from test_api_calibrate import move_back
from test_api_identify import (armctl, print_tracking, track_identified_exact,
                               validation_figures)
from test_api_lib import Recorder, Rig, check, run
from test_api_payload import move_rms
from test_api_tracking import make_points

SEED = "3"
START = "0,0,-1.4,0"
# the example as shipped (400 Hz), with the tests' tolerance of host stalls
DROPIN = "[safety]\nmax_read_gap_ms = 400\n[driver]\nbus_watchdog_ms = 500\n"


def recorder_400(sock, rate_hz):
    """move_rms subscribes at 1 kHz, the PUMA tests' rate: here the loop's 400 Hz."""
    return Recorder(sock, min(rate_hz, 400))


test_api_payload.Recorder = recorder_400


def omx_points(info, q0):
    """make_points at 0.4 x the amplitude and 1.5 x the time."""
    pts = make_points(info, q0)
    return [{"t": 1.5 * p["t"], "q": [a + 0.4 * (b - a) for a, b in zip(q0, p["q"])]}
            for p in pts]


def main(args):
    sim = ("--q0", START, "--perturb", SEED)
    exact = subprocess.run([args.armsim, "-c", args.config, "--print-model", "--perturb", SEED],
                           capture_output=True, text=True, check=True).stdout
    check("[joint" in exact, "armsim --print-model printed no joints:\n" + exact)
    with Rig(args, "identify-omx", sim_args=sim, dropin=DROPIN) as rig:
        out = rig.dir + "/identified.ini"
        report = rig.dir + "/identify"
        c = rig.client()
        info = c.call("info")
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        q0 = c.call("status")["q_des"]
        points = omx_points(info, q0)
        move_rms(rig, c, points, "warm-up (configured)")
        move_back(c, q0)
        rms_cfg, _ = move_rms(rig, c, points, "configured model", must_finish=False)
        move_back(c, q0)

        rc, text, err = armctl(args, rig, "identify", "--out", out, "--report", report,
                               timeout=240)
        print(err.strip())
        print(text.strip())
        check(rc == 0, "armctl identify failed (exit %d)" % rc)
        err_id, err_cfg = validation_figures(text)
        move_back(c, q0)

        rms_id, rms_exact = track_identified_exact(rig, c, points, q0, out, exact)
        c.close()
        print_tracking(rms_id, rms_exact, rms_cfg, err_id, err_cfg)
        check(err_id <= 5.0, "validation torque error %.2f %% (target <= 5 %%)" % err_id)
        check(err_id * 3 < err_cfg, "identified %.2f %% is not well below the configured %.2f %%"
              % (err_id, err_cfg))
        check(rms_id <= 1.2 * rms_exact, "tracking with the identified model %.3f mrad is %.2f x "
              "the exact model's %.3f (target <= 1.2)" % (1e3 * rms_id, rms_id / rms_exact,
                                                        1e3 * rms_exact))


if __name__ == "__main__":
    run(main)
