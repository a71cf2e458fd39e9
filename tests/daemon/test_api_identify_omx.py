#!/usr/bin/env python3
"""Integration: `armctl identify` on the OpenManipulator-X (config/examples/open_manipulator_x.ini
as shipped: 400 Hz, computed torque) on simulated time (armd --lockstep --paused, the test running
time while armctl records, as in test_api_identify.py), played by armsim `--perturb 3` (every
link's mass, COM and principal moments up to 30 % and its friction up to 50 % off the
configuration; armd is not told), from an upright pose with the forearm raised (paused, the arm
does not fall from it before the enable). test_api_identify.py's steps on the PUMA, with the
demo move scaled to 0.4 x its amplitude and 1.5 x its duration for the light arm:

- the configured model completes the warm-up move (before viscous_velocity = desired in the
  example, the arm oscillated and faulted here);
- armctl identify exits 0 with no gap in the telemetry and no late tick; its validation torque
  error is within VALIDATION_MAX and at least VALIDATION_CFG_MIN times below the configured
  model's;
- tracking of the move with the configured, identified and exact models (reloaded in turn, one
  move each after a warm-up): the identified model's RMS following error within
  ID_OVER_EXACT_MAX x the exact model's and at least CFG_OVER_ID_MIN times below the configured
  model's. armd's following error has a floor here: the XM430's 12-bit encoder quantises q to
  1.53 mrad, 0.44 mrad RMS, which joints 1 and 2 sit at with every model; joints 3 and 4 show
  the model. The quantisation also makes a move's figure depend on where the arm starts: three
  moves in a row with one model differ by up to 5 % (joint 4 by 20 %), so the bound on the ratio
  is wider than the PUMA's. Each run gives the same figures."""
from test_api_identify import (check_tracking, check_validation, exact_model, identify,
                               print_tracking, track_identified_exact, validation_figures)
from test_api_lib import Rig, check, run
from test_api_payload import move_back, move_rms
from test_api_tracking import make_points

SEED = "3"
START = "0,0,-1.4,0"
# Bounds, about twice what lockstep gives (3 runs, the same figures each): validation torque
# error 1.04 %, the configured model's 18.14 %; tracking with the identified model 1.089 x the
# exact model's, the configured model's 1.68 x. Over seven moves from different starts the
# identified model gave 0.534-0.561 mrad and the exact one 0.515-0.532: the ratio of one move
# each lies in 1.00-1.09 whatever the start, and its bound is 1.15. The 5 % and 1.2 x are
# the outer bounds; the real-time rig measured 0.99-1.01 x (3 runs, each the mean of two moves
# per model).
VALIDATION_MAX = 2.0      # [% of the torque RMS]
VALIDATION_CFG_MIN = 8    # the configured model's validation error / the identified one's
ID_OVER_EXACT_MAX = 1.15  # tracking with the identified model / with the exact one
CFG_OVER_ID_MIN = 1.3     # tracking with the configured model / with the identified one


def omx_points(info, q0):
    """make_points at 0.4 x the amplitude and 1.5 x the time."""
    pts = make_points(info, q0)
    return [{"t": 1.5 * p["t"], "q": [a + 0.4 * (b - a) for a, b in zip(q0, p["q"])]}
            for p in pts]


def main(args):
    sim = ("--q0", START, "--perturb", SEED)
    exact = exact_model(args, SEED)
    # the example as shipped (400 Hz): no drop-in
    with Rig(args, "identify-omx", sim_args=sim, lockstep="paused", dropin="") as rig:
        out = rig.dir + "/identified.ini"
        report = rig.dir + "/identify"
        c = rig.client()
        info = c.call("info")
        check(abs(info["rate_hz"] - 400) < 1e-6, "the example runs at 400 Hz, not %g" %
              info["rate_hz"])
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        q0 = c.call("status")["q_des"]
        points = omx_points(info, q0)
        move_rms(rig, c, points, "warm-up (configured)")
        move_back(rig, c, q0)
        rms_cfg = move_rms(rig, c, points, "configured model", must_finish=False)
        move_back(rig, c, q0)

        text = identify(args, rig, out, report)
        err_id, err_cfg = validation_figures(text)
        check_validation(err_id, err_cfg, VALIDATION_MAX, VALIDATION_CFG_MIN)
        move_back(rig, c, q0)

        rms_id, rms_exact = track_identified_exact(rig, c, points, q0, out, exact)
        c.close()
        print_tracking(rms_id, rms_exact, rms_cfg, err_id, err_cfg)
        check_tracking(rms_id, rms_exact, rms_cfg, ID_OVER_EXACT_MAX, CFG_OVER_ID_MIN)
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
