#!/usr/bin/env python3
"""Lockstep: the tool hits a wall (armsim --wall, a one-sided spring of 10 kN/m on the tool
point) at 0.2 m/s, PUMA 560 at 1 kHz, computed torque, `collision = react`, `stop`, on simulated
time (armd --lockstep --paused). Two rigs run the same shoulder move (joint 2 by 0.5 rad in
2.5 s from the ready pose), with the same requests at the same simulated instants:
 1. without a wall, `collision = detect` with thresholds out of reach: no event; the thresholds
    (2 x each joint's largest |external torque|, at least 1 N m, as in test_api_collision) and,
    from armsim's truth (tool_x..z), the axis the tool moves along most and the place on it
    where the tool passes 0.2 m/s;
 2. with the wall there (the half-space beyond that place), react/stop with those thresholds.
Judged on armsim's truth, on the one simulated clock (truth time = armd time +
rig.clock_offset(), exactly): the tool meets the wall at 0.2 m/s (within SPEED_TOL: the second
run repeats the first up to the contact), one collision event, reaction stop, the move aborted,
detected while the tool is in the wall and within DETECT_MS of the contact, and the wall's force
in the second after the detection stays below FORCE_RATIO x its value at the detection (the
issue's target is 3 x)."""
import bisect

from test_api_collision import CAL_FACTOR, CAL_FLOOR, DROPIN, collisions
from test_api_lib import READY_POSE, Rig, check, run, truth_column

MOVE_J2 = 0.5        # rad
MOVE_S = 2.5         # s
SPEED = 0.2          # m/s: the tool's speed into the wall
STIFFNESS = 1e4      # N/m
AXES = ("x", "y", "z")
# armsim's truth at every physics step (10 kHz): the contact is over in a few of them
TRUTH_DECIMATE = 1
# Bounds on simulated time, about twice what lockstep measures: the tool meets the wall at
# 0.1991 m/s, the collision is detected 0.5 ms after the first truth row in contact, at a wall
# force of 24.7 N, and the force after it peaks at 1.062 x that (the bound: twice the 6 % rise).
# The real-time rig judged 0.05 m/s, the wall at the detection and the 3 x, and measured
# 0.199 m/s, 1.7-2.9 ms, 26.0-27.5 N, 1.00-1.02 x (thresholds at least 2 or 4 N m, not 1).
SPEED_TOL = 0.002    # m/s
DETECT_MS = 1.0      # after the first truth row with a wall force
FORCE_RATIO = 1.13   # the force after the detection stays below this x its value at it


def shoulder_move(rig, c, info, tail):
    """Enables, moves joint 2 by MOVE_J2 (towards its farther limit) in MOVE_S with a 1 kHz
    recorder, on simulated time until the move's end + 1.5 s (or `tail` s after a collision
    event, looked for every 0.1 s). Returns (recorder, result, collision events)."""
    c.call("enable")
    q0 = c.call("status")["q"]
    lim = info["limits"]
    sign = 1 if lim["upper"][1] - q0[1] > q0[1] - lim["lower"][1] else -1
    goal = list(q0)
    goal[1] += sign * MOVE_J2
    rec = rig.recorder(1000)
    r = c.call("move_to", {"q": goal, "duration": MOVE_S})
    for _ in range(int(round((r["duration"] + 1.5) / 0.1))):
        rec.collect(0.1)
        if collisions(rec):
            rec.collect(tail)
            break
    rec.close()
    done = [e["params"]["result"] for e in rec.events if e["method"] == "trajectory_done"
            and e["params"]["id"] == r["id"]]
    return rec, done[0] if done else "not finished", collisions(rec)


def tool_track(rig):
    """(times, tool positions [x, y, z], wall forces) from the truth file."""
    head, rows = rig.read_truth_columns()
    it, iw = truth_column(head, "t"), truth_column(head, "wall_force")
    ix = [truth_column(head, "tool_" + a) for a in AXES]
    return [v[it] for v in rows], [[v[i] for i in ix] for v in rows], [v[iw] for v in rows]


def speed_along(times, tool, k, axis, sign):
    """The tool's speed along sign x axis at row k [m/s] (a difference over 10 rows)."""
    a, b = max(k - 5, 0), min(k + 5, len(times) - 1)
    return sign * (tool[b][axis] - tool[a][axis]) / (times[b] - times[a])


def probe(args):
    """Run 1: info, thresholds, and the wall (axis name, position [m]) the tool meets at SPEED."""
    with Rig(args, "wall-probe", sim_args=READY_POSE, dropin=DROPIN, lockstep="paused",
             truth_decimate=TRUTH_DECIMATE) as rig:
        c = rig.client()
        info = c.call("info")
        rec, result, hits = shoulder_move(rig, c, info, 0)
        check(result == "done" and not hits, "the move without a wall: %s, %s" % (result, hits))
        n = info["dof"]
        peak = [max(abs(s["ext"][j]) for s in rec.samples) for j in range(n)]
        thr = [max(CAL_FACTOR * p, CAL_FLOOR) for p in peak]
        times, tool, _ = tool_track(rig)
        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")
    moved = [tool[-1][a] - tool[0][a] for a in range(3)]
    axis = max(range(3), key=lambda a: abs(moved[a]))
    sign = 1 if moved[axis] > 0 else -1
    k = next((k for k in range(len(times)) if speed_along(times, tool, k, axis, sign) >= SPEED),
             None)
    check(k is not None, "the tool never reached %.2f m/s along %s" % (SPEED, AXES[axis]))
    name = ("" if sign > 0 else "-") + AXES[axis]
    print("without a wall: largest |external torque| %s N m; the tool moves %.3f m along %s, "
          "passing %.2f m/s at %s = %.4f m (t = %.3f s)" %
          (" ".join("%.2f" % p for p in peak), moved[axis], AXES[axis], SPEED, AXES[axis],
           tool[k][axis], times[k]))
    return info, thr, name, tool[k][axis], axis, sign


def main(args):
    info, thr, wall_axis, wall_pos, axis, sign = probe(args)
    dropin = DROPIN.replace("collision = detect\ncollision_threshold = 1000\n",
                            "collision = react\ncollision_reaction = stop\n"
                            "collision_threshold = %s\n" % " ".join("%.6g" % t for t in thr))
    wall = ("--wall", "%s,%.6f,%g" % (wall_axis, wall_pos, STIFFNESS))
    with Rig(args, "wall", sim_args=READY_POSE + wall, dropin=dropin, lockstep="paused",
             truth_decimate=TRUTH_DECIMATE) as rig:
        c = rig.client()
        rec, result, hits = shoulder_move(rig, c, info, 1.0)
        print("with the wall (%s, %.4f m, %g N/m): %s; collision events %s" %
              (wall_axis, wall_pos, STIFFNESS, result, hits))
        check(len(hits) == 1 and hits[0]["reaction"] == "stop",
              "not one stop on hitting the wall: %s" % hits)
        check(result.startswith("aborted: collision"), "the move ended: %s" % result)
        d = rig.clock_offset()  # truth time = armd time + d
        times, tool, force = tool_track(rig)
        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")
    contact = next((k for k in range(len(times)) if force[k] > 0), None)
    check(contact is not None, "the tool never touched the wall")
    v_in = speed_along(times, tool, contact, axis, sign)
    t_hit = hits[0]["time"] + d
    check(times[-1] >= t_hit + 1.0, "the truth ends %.3f s after the detection" %
          (times[-1] - t_hit))
    k_hit = min(bisect.bisect_left(times, t_hit), len(times) - 1)
    f_hit = force[k_hit]
    f_max = max(f for t, f in zip(times, force) if t_hit <= t <= t_hit + 1.0)
    latency_ms = (t_hit - times[contact]) * 1e3
    print("contact at t = %.4f s at %.5f m/s (bound %g +- %g); detected %.2f ms later (bound %g "
          "ms) at a wall force of %.1f N; largest force after it %.1f N (%.3f x; bound %g x, "
          "the issue's 3 x)" % (times[contact], v_in, SPEED, SPEED_TOL, latency_ms, DETECT_MS,
                                f_hit, f_max, f_max / f_hit if f_hit > 0 else float("inf"),
                                FORCE_RATIO))
    check(abs(v_in - SPEED) <= SPEED_TOL, "the tool met the wall at %.5f m/s, not %.2f" %
          (v_in, SPEED))
    check(f_hit > 0, "detected at t = %.4f s, outside the wall (the contact began at %.4f s)" %
          (t_hit, times[contact]))
    check(latency_ms <= DETECT_MS, "detected %.2f ms after the contact" % latency_ms)
    check(f_max < FORCE_RATIO * f_hit, "the wall force rose to %.1f N after the detection, "
          "%.3f x its %.1f N at it" % (f_max, f_max / f_hit, f_hit))


if __name__ == "__main__":
    run(main)
