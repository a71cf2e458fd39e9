#!/usr/bin/env python3
"""Lockstep: collision detection on the PUMA 560 at 1 kHz (computed torque), armsim pushing
joint 2, on simulated time (armd --lockstep --paused, armsim's arm in process). As a user tunes
it: with `collision = detect` and no contact, the demo move is run twice and each joint's
threshold set to CAL_FACTOR x its largest |external torque| over both runs, at least CAL_FLOOR
(armctl collision calibrate's defaults); then `collision = react`, `collision_reaction = stop` by
reload; two more moves without contact, with no collision event (on simulated time no host
stall feeds the observer stale states: a false detection is a failure); in a fifth move armsim
pushes joint 2 with 15 N m for 0.3 s, 2.5 s into the move; a second push checks the `damp`
reaction. Judged on armsim's truth, on the one simulated clock (truth time = armd time +
rig.clock_offset(), exactly; the push starts at its --push time): one event, after the onset,
naming joint 2, detected within DETECT_MS, the trajectory aborted, the arm stopped (every |qd|
below REST_QD) within STOP_MS of the detection and at rest (so from then on) within REST_MS, the
estimate in the push's last 100 ms within ESTIMATE_REL of the true 15 N m; the damp push
detected within DETECT_MS as well, the arm then in fault. The model is the plant's (friction
smoothed over 0.01 rad/s in both).

The helpers (calibrate, run_move, set_reaction, wait_sim, judge_detection, ...) are shared with
test_api_collision_model, _react, _wall and test_api_calibrate; they need a lockstep rig."""
import os

from test_api_lib import LOCKSTEP_DROPIN, READY_POSE, Rig, check, run, truth_column
from test_api_tracking import make_points

PUSH_JOINT = 2            # 1-based
PUSH_TORQUE = 15.0        # N m
PUSH_S = 0.3              # s
PUSH_INTO_MOVE = 2.5      # s after the fifth move starts
# s of armsim's clock: after the enable and 4 moves of 8.5 s (34.0 s), the fifth move starts at
# PUSH_AT - PUSH_INTO_MOVE; a second push, with collision_reaction = damp, DAMP_AT
PUSH_AT = 37.0
DAMP_AT = 40.0
CAL_FACTOR = 2.0          # as armctl collision calibrate proposes: the largest peak x 2,
CAL_FLOOR = 1.0           # at least 1 N m
# Bounds on simulated time, about twice what lockstep measures: detected 1.23 ms after the onset,
# every |qd| < REST_QD 34.8 ms after the detection, the estimate 0.18 % off. The arm is at rest
# (every |qd| < REST_QD from then on) 131.8 ms after it: the wrist (j6), braked from 0.81 rad/s,
# creeps back to where it is held at up to 0.065 rad/s; twice that is beyond the 200 ms,
# which bounds it. The real-time rig judged the targets (10 ms plus its own latency,
# 200 ms to the first instant below REST_QD, 5 %) and measured 1.5-8.4 ms, 56 ms, 0.2-0.5 %.
DETECT_MS = 2.5
STOP_MS = 70.0
REST_MS = 200.0
ESTIMATE_REL = 0.004
REST_QD = 0.05            # rad/s: "at rest"
DROPIN = (LOCKSTEP_DROPIN.replace("[arm]\n", "[arm]\nfriction_smoothing = 0.01\n")
          + "[safety]\ncollision = detect\ncollision_threshold = 1000\n")


def collisions(rec):
    """The params of the collision events a Recorder received."""
    return [e["params"] for e in rec.events if e["method"] == "collision"]


def run_move(rig, c, points, label, until_collision=False):
    """Runs the demo trajectory once with a 1 kHz recorder, on simulated time: until its end +
    1.5 s (the goal check is over), or with until_collision until 0.5 s after a collision event
    (looked for every 0.1 s). Returns (recorder, trajectory result, start time in armd's
    clock)."""
    rec = rig.recorder(1000)
    r = c.call("trajectory", {"points": points, "mode": "replace"})
    t0 = c.call("status")["time"]
    if until_collision:
        for _ in range(int(round((r["duration"] + 1.5) / 0.1))):
            rec.collect(0.1)
            if collisions(rec):
                rec.collect(0.5)
                break
    else:
        rec.collect(r["duration"] + 1.5)
    rec.close()
    done = [e for e in rec.events if e["method"] == "trajectory_done"
            and e["params"]["id"] == r["id"]]
    result = done[0]["params"]["result"] if done else "not finished"
    print("%s: %s" % (label, result))
    return rec, result, t0


def wait_sim(rig, t, what):
    """Lets simulated time run until armsim's clock (the truth's t, the clock of its --push
    options) reaches t [s] (at most a tick past it); fails when it is past t already (the test's
    moves took longer than the times given to armsim at start allow)."""
    c = rig.client()
    now = c.call("status")["time"] + rig.clock_offset()
    c.close()
    check(now <= t, "%s should start at %.3f s of armsim's clock; it is %.3f s" % (what, t, now))
    if t - now >= 0.001:
        rig.run(t - now)


def set_reaction(rig, c, thr, reaction):
    """collision = react with reaction and the thresholds thr, by a drop-in and a reload."""
    with open(os.path.join(rig.dropin_dir, "20-collision.ini"), "w") as f:
        f.write("[safety]\ncollision = react\ncollision_reaction = %s\n"
                "collision_threshold = %s\n" % (reaction, " ".join("%.6g" % t for t in thr)))
    return c.call("reload")["changed"]


def max_abs_ext(rec, n):
    return [max(abs(s["ext"][j]) for s in rec.samples) for j in range(n)]


def calibrate(rig, c, points, n):
    """Thresholds as a user finds them (what armctl collision calibrate does): two contact-free
    demo moves in detect mode (thresholds out of reach: no event), each joint's threshold
    CAL_FACTOR x its largest |external torque| over both runs, at least CAL_FLOOR [N m]."""
    peaks = []
    for k in range(2):
        rec, result, _ = run_move(rig, c, points, "calibration move %d" % (k + 1))
        check(result == "done", "calibration move: %s" % result)
        check(not collisions(rec), "a collision event with thresholds of 1000 N m")
        peaks.append(max_abs_ext(rec, n))
    thr = [max(CAL_FACTOR * max(p), CAL_FLOOR) for p in zip(*peaks)]
    for k, p in enumerate(peaks):
        print("largest |external torque| without contact, run %d [N m]: %s" %
              (k + 1, " ".join("%.3f" % x for x in p)))
    print("thresholds [N m]: %s" % " ".join("%.3f" % t for t in thr))
    return thr


def contact_free(rig, c, points, moves):
    """`moves` demo moves in react mode with the calibrated thresholds: each must end "done",
    with no collision event."""
    for k in range(moves):
        rec, result, _ = run_move(rig, c, points, "contact-free move %d" % (k + 1))
        peak = max_abs_ext(rec, len(rec.samples[0]["ext"]))
        print("  largest |external torque| [N m]: %s" % " ".join("%.3f" % x for x in peak))
        check(result == "done" and not collisions(rec), "contact-free move %d: %s, collision "
              "events %s (a false detection)" % (k + 1, result, collisions(rec)))


def truth_push(rig, at):
    """armsim's truth around the push at `at` [s of its clock]: (header, rows); checks that the
    push shows in the truth where its --push option puts it (the first row with external torque
    on PUSH_JOINT after at - 1 s is within one row of at)."""
    head, rows = rig.read_truth_columns()
    it, iext = truth_column(head, "t"), truth_column(head, "ext%d" % PUSH_JOINT)
    first = next((v[it] for v in rows if v[it] > at - 1 and v[iext] != 0.0), None)
    check(first is not None, "no push in the truth after %.3f s" % (at - 1))
    check(at - 1e-9 <= first <= at + 0.0011, "the push at %.3f s shows in the truth at %.4f s"
          % (at, first))
    return head, rows


def judge_detection(rig, info, hits, at, reaction, detect_ms):
    """The collision events of a move in which armsim pushes at `at` [s of its clock]: exactly
    one, not before the onset, naming PUSH_JOINT with `reaction`, detected within detect_ms of
    the onset. Returns (the event, its time on the truth clock [s])."""
    d = rig.clock_offset()  # truth time = armd time + d
    check(len(hits) == 1, "expected one collision event, got %d: %s" % (len(hits), hits[:3]))
    hit = hits[0]
    print("collision event: %s" % hit)
    check(hit["joint"] == info["joints"][PUSH_JOINT - 1], "the event names joint %s" %
          hit["joint"])
    check(hit["reaction"] == reaction, "reaction %s, expected %s" % (hit["reaction"], reaction))
    latency_ms = (hit["time"] + d - at) * 1e3
    print("push onset %.4f s (armsim's clock), detected %.2f ms later (bound %g ms)" %
          (at, latency_ms, detect_ms))
    check(latency_ms >= 0, "detected %.2f ms before the push began" % -latency_ms)
    check(latency_ms <= detect_ms, "detected %.2f ms after the push (at most %g)" %
          (latency_ms, detect_ms))
    return hit, hit["time"] + d


def stop_and_rest(columns, t_from, n):
    """From armsim's truth after t_from [s]: (stopped, rest), the first truth time at which every
    |qd| < REST_QD and the one from which that holds to the end of the truth (at least 0.4 s
    after t_from: past the end of a push there); None when there is none."""
    head, rows = columns
    it = truth_column(head, "t")
    iqd = [truth_column(head, "qd%d" % (j + 1)) for j in range(n)]
    check(rows[-1][it] >= t_from + 0.4, "the truth ends %.3f s after %.3f s (0.4 s needed)" %
          (rows[-1][it] - t_from, t_from))
    stopped = rest = None
    for v in rows:
        if v[it] < t_from:
            continue
        if max(abs(v[i]) for i in iqd) >= REST_QD:
            rest = None
            continue
        if stopped is None:
            stopped = v[it]
        if rest is None:
            rest = v[it]
    return stopped, rest


def judge_rest(columns, t_hit, n, stop_ms, rest_ms):
    """The arm stopped (every |qd| < REST_QD) within stop_ms of the detection at t_hit [s, truth
    clock] and at rest (so from then on) within rest_ms."""
    stopped, rest = stop_and_rest(columns, t_hit, n)
    check(rest is not None, "the arm never came to rest after the detection")
    stop_ms_got, rest_ms_got = (stopped - t_hit) * 1e3, (rest - t_hit) * 1e3
    print("every |qd| < %g rad/s %.1f ms after the detection (bound %g ms), from then on %.1f "
          "ms after it (bound %g ms)" % (REST_QD, stop_ms_got, stop_ms, rest_ms_got, rest_ms))
    check(stop_ms_got <= stop_ms, "stopped only %.1f ms after the detection" % stop_ms_got)
    check(rest_ms_got <= rest_ms, "at rest only %.1f ms after the detection" % rest_ms_got)


def push_estimate(rig, rec, at):
    """The mean estimate on PUSH_JOINT over the last 100 ms of the push at `at` (the arm held,
    the observer settled) [N m]."""
    d = rig.clock_offset()
    during = [s["ext"][PUSH_JOINT - 1] for s in rec.samples
              if at + PUSH_S - 0.1 <= s["time"] + d <= at + PUSH_S - 0.01]
    check(len(during) >= 80, "only %d telemetry samples in the push's last 100 ms" % len(during))
    mean = sum(during) / len(during)
    print("external torque estimate on joint %d in the push's last 100 ms: %.3f N m "
          "(true %.1f)" % (PUSH_JOINT, mean, PUSH_TORQUE))
    return mean


def main(args):
    pushes = ()
    for at in (PUSH_AT, DAMP_AT):
        pushes += ("--push", "%g,%d,%g,%g" % (at, PUSH_JOINT, PUSH_TORQUE, PUSH_S))
    with Rig(args, "collision", sim_args=READY_POSE + pushes, dropin=DROPIN,
             lockstep="paused") as rig:
        c = rig.client()
        info = c.call("info")
        n = info["dof"]
        c.call("enable")
        q0 = c.call("status")["q"]
        points = make_points(info, q0)
        check(c.call("status")["collision"]["mode"] == "detect", "collision mode not detect")

        thr = calibrate(rig, c, points, n)
        changed = set_reaction(rig, c, thr, "stop")
        check("collision" in changed, "reload did not switch collision: %s" % changed)
        check(c.call("status")["collision"]["mode"] == "react", "collision mode not react")
        contact_free(rig, c, points, 2)
        check(c.call("status")["collision"]["detected"] == 0, "status counts %d detections "
              "without contact" % c.call("status")["collision"]["detected"])

        # the push: the move starts so that armsim's push lands PUSH_INTO_MOVE s into it
        wait_sim(rig, PUSH_AT - PUSH_INTO_MOVE, "the move with the push")
        rec, result, _ = run_move(rig, c, points, "move with a push", until_collision=True)
        st = c.call("status")
        columns = truth_push(rig, PUSH_AT)
        _, t_hit = judge_detection(rig, info, collisions(rec), PUSH_AT, "stop", DETECT_MS)
        check(result.startswith("aborted: collision on joint %s" % info["joints"][PUSH_JOINT - 1]),
              "the move with the push ended: %s" % result)
        check(st["state"] == "holding", "state after the stop: %s" % st["state"])
        check(st["collision"]["detected"] == 1, "status counts %d detections" %
              st["collision"]["detected"])
        judge_rest(columns, t_hit, n, STOP_MS, REST_MS)
        mean = push_estimate(rig, rec, PUSH_AT)
        print("estimate %.2f %% off the true torque (bound %g %%)" %
              (100 * abs(mean - PUSH_TORQUE) / PUSH_TORQUE, 100 * ESTIMATE_REL))
        check(abs(mean - PUSH_TORQUE) <= ESTIMATE_REL * PUSH_TORQUE,
              "estimate %.3f N m, true %.1f" % (mean, PUSH_TORQUE))

        # damp: a fault ending in the damping stop, reset and enable recover
        set_reaction(rig, c, thr, "damp")
        wait_sim(rig, DAMP_AT - 1.5, "the damp move")
        _, result_d, _ = rec_d = run_move(rig, c, points, "damp move", until_collision=True)
        st_d = c.call("status")
        truth_push(rig, DAMP_AT)
        judge_detection(rig, info, collisions(rec_d[0]), DAMP_AT, "damp", DETECT_MS)
        print("damp: %s; then %s: %s" % (result_d, st_d["state"], st_d["fault"]))
        check(st_d["state"] == "fault" and
              st_d["fault"].startswith("collision on joint %s" % info["joints"][PUSH_JOINT - 1]),
              "damp reaction: %s, %s" % (st_d["state"], st_d["fault"]))
        check(c.call("reset")["state"] == "disabled", "reset after the collision fault")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
