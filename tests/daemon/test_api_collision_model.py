#!/usr/bin/env python3
"""Lockstep: collision detection with a wrong model, on simulated time (armd --lockstep
--paused). armsim's link masses and inertias are 10 % above the model's (`--mass-scale 1.1`),
with the example's Coulomb and viscous friction in the plant (smoothed over 0.01 rad/s, as in
the model); PUMA 560 at 1 kHz, computed torque. As in test_api_collision: thresholds calibrated
on two contact-free demo moves (2 x the largest peak, at least 1 N m: the model error raises
them), `collision = react`, `stop`; one more contact-free move, with no collision event (a false
detection is a failure); then a 15 N m push on joint 2 for 0.3 s, 2.5 s into the demo move:
one event, after the onset, naming joint 2, within DETECT_MS, the move aborted, the arm stopped
(every |qd| below REST_QD) within STOP_MS of the detection and at rest (so from then on) within
REST_MS, and the estimate in the push's last 100 ms within ESTIMATE_RANGE (above the true
15 N m: the mass error adds its share of the gravity and inertia torques to it). Judged on
armsim's truth, on the one simulated clock, as in test_api_collision."""
from test_api_collision import (DROPIN, PUSH_INTO_MOVE, PUSH_JOINT, PUSH_S, PUSH_TORQUE,
                                calibrate, collisions, contact_free, judge_detection,
                                judge_rest, push_estimate, run_move, set_reaction, truth_push,
                                wait_sim)
from test_api_lib import READY_POSE, Rig, check, run
from test_api_tracking import make_points

PUSH_AT = 28.5     # s of armsim's clock: after the enable and 3 moves of 8.5 s (25.5 s)
MASS_SCALE = 1.1
# Bounds on simulated time, about twice what lockstep measures: detected 3.23 ms after the onset,
# every |qd| < REST_QD 38.8 ms after the detection, at rest from then on 132.8 ms after it (as
# with the exact model: the wrist creeps back; bounded by the 200 ms, as there), the
# estimate 17.12 N m (within twice its 2.12 N m excess over the true torque). The target
# for this case, 20 ms, is far outside. The real-time rig judged 20 ms plus its own latency only
# and measured 2.8-10.4 ms, at rest (the first instant) 190-193 ms, the estimate 17.1-17.2 N m.
DETECT_MS = 6.5
STOP_MS = 80.0
REST_MS = 200.0
ESTIMATE_RANGE = (PUSH_TORQUE, PUSH_TORQUE + 2 * (17.12 - PUSH_TORQUE))


def main(args):
    sim = READY_POSE + ("--mass-scale", "%g" % MASS_SCALE,
                        "--push", "%g,%d,%g,%g" % (PUSH_AT, PUSH_JOINT, PUSH_TORQUE, PUSH_S))
    with Rig(args, "collision_model", sim_args=sim, dropin=DROPIN, lockstep="paused") as rig:
        c = rig.client()
        info = c.call("info")
        n = info["dof"]
        c.call("enable")
        points = make_points(info, c.call("status")["q"])
        thr = calibrate(rig, c, points, n)
        set_reaction(rig, c, thr, "stop")
        check(c.call("status")["collision"]["mode"] == "react", "collision mode not react")
        contact_free(rig, c, points, 1)

        wait_sim(rig, PUSH_AT - PUSH_INTO_MOVE, "the move with the push")
        rec, result, _ = run_move(rig, c, points, "move with a push", until_collision=True)
        st = c.call("status")
        columns = truth_push(rig, PUSH_AT)
        _, t_hit = judge_detection(rig, info, collisions(rec), PUSH_AT, "stop", DETECT_MS)
        check(result.startswith("aborted: collision on joint %s" % info["joints"][PUSH_JOINT - 1]),
              "the move with the push ended: %s" % result)
        check(st["state"] == "holding", "state after the stop: %s" % st["state"])
        judge_rest(columns, t_hit, n, STOP_MS, REST_MS)
        mean = push_estimate(rig, rec, PUSH_AT)
        print("plant masses x %g: estimate during the push %.2f N m for a true %.1f N m "
              "(bound %.2f to %.2f)" % (MASS_SCALE, mean, PUSH_TORQUE, *ESTIMATE_RANGE))
        check(ESTIMATE_RANGE[0] <= mean <= ESTIMATE_RANGE[1], "estimate %.3f N m, outside "
              "%.2f to %.2f" % (mean, *ESTIMATE_RANGE))
        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
