#!/usr/bin/env python3
"""Integration: the collision reactions retract and float on the PUMA 560 at 1 kHz (computed
torque), armsim pushing joint 2 with 15 N m for 0.3 s during the demo move. Thresholds: 10 N m on
joint 2, out of reach on the others (what is judged here is the reaction, not the detection:
test_api_collision judges detection with calibrated thresholds).
 - retract (collision_retract = 0.2 rad): the trajectory aborted, the event says "retract", the arm
   goes back along the path it executed and holds where that path is 0.2 rad (joint space) back
   from where the collision was detected: within 0.02 rad of that point, and within 0.01 rad of
   the executed path; at rest, state holding;
 - float (reloaded): the event says "float", the controller becomes gravity_comp, the arm comes to
   rest after the push (damped by the [joint] damping gains, not coasting on); a reload that would
   set a damping gain to 0 is refused while it floats; a second push while
   it floats moves it (hand-guiding: joint 2 yields in the push's direction by more than 0.02 rad)
   and it comes to rest again; `controller.set computed_torque` then holds it where it is (within
   5 mrad over 0.5 s).
Real armd + armsim on a pty; positions from armd's telemetry and status (armsim's encoders)."""
import math
import os
import time

from test_api_collision import wait_sim
from test_api_lib import DEFAULT_DROPIN, READY_POSE, Recorder, Rig, check, run
from test_api_tracking import make_points

PUSH_JOINT = 2            # 1-based
PUSH_TORQUE = 15.0        # N m
PUSH_S = 0.3              # s
RETRACT_AT = 8.0          # s of armsim time: the push during the first move
FLOAT_AT = 18.0           # ... during the second
GUIDE_AT = 23.0           # ... while floating, holding
RETRACT = 0.2             # rad of path
REST_QD = 0.05            # rad/s: "at rest"
THRESHOLDS = "1000 10 1000 1000 1000 1000"
DROPIN = DEFAULT_DROPIN.replace("[arm]\n", "[arm]\nfriction_smoothing = 0.01\n").replace(
    "[safety]\n", "[safety]\ncollision = react\ncollision_reaction = retract\n"
    "collision_retract = %g\ncollision_threshold = %s\n" % (RETRACT, THRESHOLDS))


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
    """The demo move started 1.5 s before armsim's push at `at`; telemetry until `tail` s after
    the collision event. Returns (recorder, the trajectory's result, collision events)."""
    wait_sim(rig, at - 1.5, label)
    rec = Recorder(rig.sock, 1000)
    r = c.call("trajectory", {"points": points, "mode": "replace"})
    end = time.monotonic() + r["duration"] + 1.5
    while time.monotonic() < end:
        rec.collect(0.1)
        if [e for e in rec.events if e["method"] == "collision"]:
            rec.collect(tail)
            break
    rec.client.close()
    done = [e["params"]["result"] for e in rec.events if e["method"] == "trajectory_done"
            and e["params"]["id"] == r["id"]]
    hits = [e["params"] for e in rec.events if e["method"] == "collision"]
    print("%s: %s; collision events %s" % (label, done[0] if done else "not finished", hits))
    return rec, done[0] if done else "not finished", hits


def wait_rest(c, seconds):
    """Polls status until every |qd| < REST_QD (returns it) or `seconds` pass (None)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        st = c.call("status")
        if max(abs(v) for v in st["qd"]) < REST_QD:
            return st
        time.sleep(0.02)
    return None


def check_retract(c, rec, result, hits, n):
    check(hits and hits[0]["reaction"] == "retract" and hits[0]["joint"] == "j%d" % PUSH_JOINT,
          "retract: collision events %s" % hits)
    check(result.startswith("aborted: collision on joint"), "the move ended: %s" % result)
    t_hit = hits[0]["time"]
    path = [s["q"] for s in rec.samples if s["time"] <= t_hit]
    check(len(path) > 100, "too little telemetry before the collision (%d samples)" % len(path))
    target = point_back(path, RETRACT)
    st = wait_rest(c, 3.0)
    check(st is not None, "the arm did not come to rest after the retract")
    st = c.call("status")
    check(st["state"] == "holding" and st["trajectory"] is None,
          "after the retract: state %s, trajectory %s" % (st["state"], st["trajectory"]))
    q_end = st["q"]
    miss, off = dist(q_end, target), off_path(path, q_end)
    back = dist(q_end, path[-1])
    print("retract: from %s to %s (%.3f rad from the detection point); the point %.2f rad back "
          "along the path is %s: missed by %.4f rad, %.4f rad off the executed path" %
          (" ".join("%.3f" % v for v in path[-1]), " ".join("%.3f" % v for v in q_end), back,
           RETRACT, " ".join("%.3f" % v for v in target), miss, off))
    check(miss <= 0.02, "the retract ended %.4f rad from the point %.2f rad back (at most 0.02)"
          % (miss, RETRACT))
    check(off <= 0.01, "the retract ended %.4f rad off the executed path (at most 0.01)" % off)


def check_float(rig, c, hits):
    check(hits and hits[0]["reaction"] == "float", "float: collision events %s" % hits)
    st = c.call("status")
    check(st["controller"] == "gravity_comp" and st["state"] == "holding",
          "after float: controller %s, state %s" % (st["controller"], st["state"]))
    check(wait_rest(c, 3.0) is not None, "the floating arm did not come to rest after the push")
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
    time.sleep(GUIDE_AT + PUSH_S + 0.3 - (time.monotonic() - rig.sim_ready))
    st = wait_rest(c, 3.0)
    check(st is not None, "the floating arm did not come to rest after the second push")
    moved = st["q"][PUSH_JOINT - 1] - q_before[PUSH_JOINT - 1]
    print("float: joint %d moved %.4f rad under a %.1f N m push of %.1f s, then at rest" %
          (PUSH_JOINT, moved, PUSH_TORQUE, PUSH_S))
    check(moved * math.copysign(1, PUSH_TORQUE) > 0.02,
          "the floating joint %d moved %.4f rad under the push (yielding needs > 0.02 in its "
          "direction)" % (PUSH_JOINT, moved))
    # back to computed torque: holds where the arm is
    rec = Recorder(rig.sock, 1000)
    q_switch = c.call("status")["q"]
    c.call("controller.set", {"name": "computed_torque"})
    rec.collect(0.5)
    rec.client.close()
    st = c.call("status")
    check(st["controller"] == "computed_torque" and st["state"] == "holding",
          "after controller.set computed_torque: %s, %s" % (st["controller"], st["state"]))
    drift = max(dist(s["q"], q_switch) for s in rec.samples)
    print("computed_torque again: the arm stayed within %.4f rad of where it floated to" % drift)
    check(drift <= 0.005, "the arm moved %.4f rad when computed_torque took over" % drift)


def main(args):
    pushes = ()
    for at in (RETRACT_AT, FLOAT_AT, GUIDE_AT):
        pushes += ("--push", "%g,%d,%g,%g" % (at, PUSH_JOINT, PUSH_TORQUE, PUSH_S))
    with Rig(args, "collision_react", sim_args=READY_POSE + pushes, dropin=DROPIN) as rig:
        c = rig.client()
        info = c.call("info")
        c.call("enable")
        points = make_points(info, c.call("status")["q"])
        rec, result, hits = move_with_push(rig, c, points, RETRACT_AT, "retract move", 2.0)
        check_retract(c, rec, result, hits, info["dof"])
        with open(os.path.join(rig.dropin_dir, "20-float.ini"), "w") as f:
            f.write("[safety]\ncollision_reaction = float\n")
        changed = c.call("reload")["changed"]
        check("collision_reaction" in changed, "reload did not switch the reaction: %s" % changed)
        _, result, hits = move_with_push(rig, c, points, FLOAT_AT, "float move", 0.5)
        check(result.startswith("aborted: collision on joint"), "the move ended: %s" % result)
        check_float(rig, c, hits)
        c.call("disable")


if __name__ == "__main__":
    run(main)
