#!/usr/bin/env python3
"""Lockstep: the collision reactions retract and float on the PUMA 560 at 1 kHz (computed
torque), armsim pushing joint 2 with 15 N m for 0.3 s during the demo move, on simulated time
(armd --lockstep --paused; the pushes land where their --push times put them). Thresholds:
10 N m on joint 2, out of reach on the others (what is judged here is the reaction, not the
detection: test_api_collision judges detection with calibrated thresholds).
 - retract (collision_retract = 0.2 rad): the trajectory aborted, the event says "retract", the arm
   goes back along the path it executed and holds (state holding within RETRACT_S of the
   detection, every |qd| < REST_QD from RETRACT_REST_S on) where that path is 0.2 rad (joint
   space) back from where the collision was detected: within RETRACT_MISS of that point, and
   within RETRACT_OFF of the executed path;
 - float (reloaded): the event says "float", the controller becomes gravity_comp, the arm comes to
   rest within FLOAT_REST_S of the push's end (damped by the [joint] damping gains, not coasting
   on); a reload that would set a damping gain to 0 is refused while it floats; a second push
   while it floats is one more "float" event and moves it (hand-guiding: joint 2 yields in the
   push's direction by more than GUIDE_MIN), and it comes to rest again within FLOAT_REST_S of
   that push's end, still floating;
   `controller.set computed_torque` then holds it where it is (within HOLD_DRIFT over 0.5 s).
Positions from armd's telemetry and status (armsim's encoders), rest from armsim's truth."""
import math
import os

from test_api_collision import REST_QD, collisions, stop_and_rest, wait_sim
from test_api_lib import LOCKSTEP_DROPIN, READY_POSE, Rig, check, run
from test_api_tracking import make_points

PUSH_JOINT = 2            # 1-based
PUSH_TORQUE = 15.0        # N m
PUSH_S = 0.3              # s
RETRACT_AT = 8.0          # s of armsim's clock: the push during the first move
FLOAT_AT = 18.0           # ... during the second
GUIDE_AT = 23.0           # ... while floating, holding
RETRACT = 0.2             # rad of path
THRESHOLDS = "1000 10 1000 1000 1000 1000"
# Bounds on simulated time, about twice what lockstep measures (in brackets). The real-time rig
# allowed 0.02 and 0.01 rad for where the retract ends, 3 s of wall-clock polling for each rest,
# 0.02 rad for the guided move and 5 mrad of drift, and measured 0.4 mrad, 0.3 mrad, -, 0.14 rad
# and 1.2 mrad.
RETRACT_S = 1.7           # s from the detection to holding at the retract's end (0.841 s)
RETRACT_REST_S = 1.5      # s from the detection to at rest from then on (0.758 s)
RETRACT_MISS = 0.0003     # rad from the point RETRACT back along the path (0.13 mrad)
RETRACT_OFF = 0.0002      # rad off the executed path (0.10 mrad)
FLOAT_REST_S = 0.75       # s from a push's end to at rest from then on (0.378 s; guided 0.361 s)
GUIDE_MIN = 0.075         # rad that joint 2 yields to the push while floating (0.1526 rad)
HOLD_DRIFT = 0.00012      # rad within 0.5 s of computed_torque taking over (0.061 mrad)
DROPIN = (LOCKSTEP_DROPIN.replace("[arm]\n", "[arm]\nfriction_smoothing = 0.01\n")
          + "[safety]\ncollision = react\ncollision_reaction = retract\ncollision_retract = %g\n"
          "collision_threshold = %s\n" % (RETRACT, THRESHOLDS))


def dist(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def point_back(path, length):
    """The point `length` back along the polyline path (newest point last)."""
    left = length
    for k in range(len(path) - 1, 0, -1):
        d = dist(path[k], path[k - 1])
        if d >= left:
            f = left / d
            return [a + f * (b - a) for a, b in zip(path[k], path[k - 1])]
        left -= d
    return path[0]


def off_path(path, q):
    """The distance from q to the polyline path."""
    best = math.inf
    for a, b in zip(path, path[1:]):
        ab = [y - x for x, y in zip(a, b)]
        den = sum(x * x for x in ab)
        f = 0 if den == 0 else max(0, min(1, sum((y - x) * z for x, y, z in zip(a, q, ab)) / den))
        best = min(best, dist([x + f * z for x, z in zip(a, ab)], q))
    return best


def move_with_push(rig, c, points, at, label, tail):
    """The demo move started 1.5 s before armsim's push at `at` [s of its clock]; telemetry
    until `tail` s after the collision event (looked for every 0.1 s). Returns (recorder, the
    trajectory's result, collision events)."""
    wait_sim(rig, at - 1.5, label)
    rec = rig.recorder(1000)
    r = c.call("trajectory", {"points": points, "mode": "replace"})
    for _ in range(int(round((r["duration"] + 1.5) / 0.1))):
        rec.collect(0.1)
        if collisions(rec):
            rec.collect(tail)
            break
    rec.close()
    done = [e["params"]["result"] for e in rec.events if e["method"] == "trajectory_done"
            and e["params"]["id"] == r["id"]]
    hits = collisions(rec)
    print("%s: %s; collision events %s" % (label, done[0] if done else "not finished", hits))
    return rec, done[0] if done else "not finished", hits


def rest_from(rig, t_from, n, what, bound):
    """Checks on armsim's truth that the arm is at rest (every |qd| < REST_QD to the end of the
    truth) within bound [s] of t_from [s, armd's clock]; returns that time [s, armd's clock]."""
    d = rig.clock_offset()
    _, rest = stop_and_rest(rig.read_truth_columns(), t_from + d, n)
    check(rest is not None, "the arm did not come to rest %s" % what)
    print("at rest (every |qd| < %g rad/s from then on) %.3f s %s (bound %g s)" %
          (REST_QD, rest - d - t_from, what, bound))
    check(rest - d - t_from <= bound, "the arm at rest only %.3f s %s" % (rest - d - t_from,
                                                                          what))
    return rest - d


def check_retract(rig, c, rec, result, hits, n):
    check(len(hits) == 1 and hits[0]["reaction"] == "retract" and
          hits[0]["joint"] == "j%d" % PUSH_JOINT, "retract: collision events %s" % hits)
    check(result.startswith("aborted: collision on joint"), "the move ended: %s" % result)
    t_hit = hits[0]["time"]
    path = [s["q"] for s in rec.samples if s["time"] <= t_hit]
    check(len(path) > 100, "too little telemetry before the collision (%d samples)" % len(path))
    target = point_back(path, RETRACT)
    held = [e["params"]["time"] for e in rec.events if e["method"] == "state" and
            e["params"]["state"] == "holding" and e["params"]["time"] > t_hit]
    check(held, "the retract did not end (no holding event within the telemetry)")
    print("retract: holding %.3f s after the detection (bound %g s)" % (held[0] - t_hit,
                                                                         RETRACT_S))
    check(held[0] - t_hit <= RETRACT_S, "the retract ended %.3f s after the detection" %
          (held[0] - t_hit))
    rest_from(rig, t_hit, n, "after the detection", RETRACT_REST_S)
    st = c.call("status")
    check(st["state"] == "holding" and st["trajectory"] is None,
          "after the retract: state %s, trajectory %s" % (st["state"], st["trajectory"]))
    q_end = st["q"]
    miss, off = dist(q_end, target), off_path(path, q_end)
    back = dist(q_end, path[-1])
    print("retract: from %s to %s (%.3f rad from the detection point); the point %.2f rad back "
          "along the path is %s: missed by %.5f rad (bound %g), %.5f rad off the executed path "
          "(bound %g)" % (" ".join("%.3f" % v for v in path[-1]),
                          " ".join("%.3f" % v for v in q_end), back, RETRACT,
                          " ".join("%.3f" % v for v in target), miss, RETRACT_MISS, off,
                          RETRACT_OFF))
    check(miss <= RETRACT_MISS, "the retract ended %.4f rad from the point %.2f rad back (at "
          "most %g)" % (miss, RETRACT, RETRACT_MISS))
    check(off <= RETRACT_OFF, "the retract ended %.4f rad off the executed path (at most %g)" %
          (off, RETRACT_OFF))


def check_float(rig, c, hits, n):
    check(len(hits) == 1 and hits[0]["reaction"] == "float", "float: collision events %s" % hits)
    st = c.call("status")
    check(st["controller"] == "gravity_comp" and st["state"] == "holding",
          "after float: controller %s, state %s" % (st["controller"], st["state"]))
    d = rig.clock_offset()
    rest_from(rig, FLOAT_AT + PUSH_S - d, n, "after the push's end", FLOAT_REST_S)
    # a reload may not take the float's damping away (on_fault and the reaction no longer
    # needing it, the loader alone would accept damping = 0)
    undamp = os.path.join(rig.dropin_dir, "30-undamp.ini")
    with open(undamp, "w") as f:
        f.write("[safety]\non_fault = torque_off\ncollision_reaction = stop\n"
                "[joint j2]\ndamping = 0\n")
    m = c.call_full("reload")
    os.unlink(undamp)
    err = m.get("error") or {}
    print("reload with damping 0 while floating: %s" % err)
    check(err.get("code") == "bad_state" and "damping" in err.get("message", ""),
          "a reload setting damping 0 while floating was not refused: %s" % m)
    check(c.call("status")["controller"] == "gravity_comp", "the refused reload ended the float")
    # hand-guiding: a push while it floats moves it, and it comes to rest again
    wait_sim(rig, GUIDE_AT - 0.3, "the push while floating")
    q_before = c.call("status")["q"]
    rec = rig.recorder(1000)
    rec.collect(0.3 + PUSH_S + 1.0)
    rec.close()
    rest_from(rig, GUIDE_AT + PUSH_S - d, n, "after the push while floating", FLOAT_REST_S)
    st = c.call("status")
    hits = collisions(rec)
    print("the push while floating: collision events %s; controller %s" % (hits,
                                                                         st["controller"]))
    check(len(hits) == 1 and hits[0]["reaction"] == "float" and
          st["controller"] == "gravity_comp" and st["state"] == "holding",
          "the push while floating: events %s, then %s, %s" % (hits, st["controller"],
                                                               st["state"]))
    moved = st["q"][PUSH_JOINT - 1] - q_before[PUSH_JOINT - 1]
    print("float: joint %d moved %.4f rad under a %.1f N m push of %.1f s, then at rest (at "
          "least %g in its direction)" % (PUSH_JOINT, moved, PUSH_TORQUE, PUSH_S, GUIDE_MIN))
    check(moved * math.copysign(1, PUSH_TORQUE) > GUIDE_MIN,
          "the floating joint %d moved %.4f rad under the push (yielding needs > %g in its "
          "direction)" % (PUSH_JOINT, moved, GUIDE_MIN))
    # back to computed torque: holds where the arm is
    rec = rig.recorder(1000)
    q_switch = c.call("status")["q"]
    c.call("controller.set", {"name": "computed_torque"})
    rec.collect(0.5)
    rec.close()
    st = c.call("status")
    check(st["controller"] == "computed_torque" and st["state"] == "holding",
          "after controller.set computed_torque: %s, %s" % (st["controller"], st["state"]))
    drift = max(dist(s["q"], q_switch) for s in rec.samples)
    print("computed_torque again: the arm stayed within %.6f rad of where it floated to "
          "(bound %g)" % (drift, HOLD_DRIFT))
    check(drift <= HOLD_DRIFT, "the arm moved %.6f rad when computed_torque took over" % drift)


def main(args):
    pushes = ()
    for at in (RETRACT_AT, FLOAT_AT, GUIDE_AT):
        pushes += ("--push", "%g,%d,%g,%g" % (at, PUSH_JOINT, PUSH_TORQUE, PUSH_S))
    with Rig(args, "collision_react", sim_args=READY_POSE + pushes, dropin=DROPIN,
             lockstep="paused") as rig:
        c = rig.client()
        info = c.call("info")
        n = info["dof"]
        c.call("enable")
        points = make_points(info, c.call("status")["q"])
        rec, result, hits = move_with_push(rig, c, points, RETRACT_AT, "retract move", 2.0)
        check_retract(rig, c, rec, result, hits, n)
        with open(os.path.join(rig.dropin_dir, "20-float.ini"), "w") as f:
            f.write("[safety]\ncollision_reaction = float\n")
        changed = c.call("reload")["changed"]
        check("collision_reaction" in changed, "reload did not switch the reaction: %s" % changed)
        _, result, hits = move_with_push(rig, c, points, FLOAT_AT, "float move", 1.5)
        check(result.startswith("aborted: collision on joint"), "the move ended: %s" % result)
        check_float(rig, c, hits, n)
        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
