#!/usr/bin/env python3
"""Integration: collision detection with a wrong model. armsim's link masses and inertias are
10 % above the model's (`--mass-scale 1.1`), with the example's Coulomb and viscous friction in
the plant (smoothed over 0.01 rad/s, as in the model); PUMA 560 at 1 kHz, computed torque. As in
test_api_collision: thresholds calibrated on two contact-free demo moves (2 x the smaller peak,
at least 4 N m: the model error raises them), `collision = react`, `stop`; one more contact-free
move (false detections counted and reported, not judged); then a 15 N m push on joint 2 for
0.3 s during the demo move, detected within 20 ms (the issue's target for this case) plus the
rig's latency, naming joint 2, the arm at rest afterwards (time reported). The estimate during
the push is reported: the mass error adds its share of the gravity and inertia torques to it.
Real armd + armsim on a pty."""
from test_api_collision import (DROPIN, PUSH_INTO_MOVE, PUSH_JOINT, PUSH_S, PUSH_TORQUE,
                                calibrate, judge_push, run_move, set_reaction, wait_sim)
from test_api_lib import READY_POSE, Rig, check, run
from test_api_tracking import make_points

PUSH_AT = 33.0     # s of armsim time: 3 moves of 8.5 s after the start, and a margin
DETECT_MS = 20.0   # target with the model 10 % off, before the rig's latency allowance
MASS_SCALE = 1.1


def main(args):
    sim = READY_POSE + ("--mass-scale", "%g" % MASS_SCALE,
                        "--push", "%g,%d,%g,%g" % (PUSH_AT, PUSH_JOINT, PUSH_TORQUE, PUSH_S))
    with Rig(args, "collision_model", sim_args=sim, dropin=DROPIN) as rig:
        c = rig.client()
        info = c.call("info")
        c.call("enable")
        points = make_points(info, c.call("status")["q"])
        thr = calibrate(rig, c, points, info["dof"])
        set_reaction(rig, c, thr, "stop")
        check(c.call("status")["collision"]["mode"] == "react", "collision mode not react")
        rec, result, _ = run_move(rig, c, points, "contact-free move")
        false_hits = [e["params"] for e in rec.events if e["method"] == "collision"]
        wait_sim(rig, PUSH_AT - PUSH_INTO_MOVE, "the move with the push")
        rec, result, _ = run_move(rig, c, points, "move with a push", until_collision=True)
        st = c.call("status")
        hits = [e["params"] for e in rec.events if e["method"] == "collision"]
        check(hits, "the push was not detected")
        c.call("disable")
        c.close()
        rig.stop_sim()
        before, mean = judge_push(rig, rec, hits, st, result, info, "stop", DETECT_MS,
                                  rest_ms=None)
        false_hits += before
        print("plant masses x %g: false detections without contact: %d in 1 move and the push "
              "move's first %.1f s%s" % (MASS_SCALE, len(false_hits), PUSH_INTO_MOVE,
                                          "".join("\n  %s" % h for h in false_hits)))
        print("estimate during the push %.2f N m for a true %.1f N m (the mass error adds to it)"
              % (mean, PUSH_TORQUE))


if __name__ == "__main__":
    run(main)
