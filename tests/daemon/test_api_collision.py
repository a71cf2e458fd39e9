#!/usr/bin/env python3
"""Integration: collision detection on the PUMA 560 at 1 kHz (computed torque), armsim pushing
joint 2. As a user tunes it: with `collision = detect` and no contact, the demo move is run
twice and each joint's threshold set to 2 x its largest |external torque| (the smaller of the two
runs' peaks: a host stall that spikes one run does not set it), at least 4 N m; then
`collision = react`, `collision_reaction = stop` by reload; two more moves without contact
(their detections are false ones: counted and reported, not judged, since on this shared
machine a host stall can feed the observer stale states); in a fifth move armsim pushes joint 2
with 15 N m for 0.3 s; a second push checks the `damp` reaction. Judged on
armsim's truth (push onset, joint velocities): detected within 10 ms (plus the rig's own
latency, measured by armd in the same run), naming joint 2, the trajectory aborted, the arm at
rest within 200 ms of the detection, the estimate during the push within 5 % of the true
15 N m. The model is the plant's (friction smoothed over 0.01 rad/s in both). Real armd +
armsim on a pty."""
import os
import time

from test_api_lib import (DEFAULT_DROPIN, READY_POSE, Recorder, Rig, align_offset, check,
                          rows_between, run, truth_column)
from test_api_tracking import make_points

PUSH_JOINT = 2            # 1-based
PUSH_TORQUE = 15.0        # N m
PUSH_S = 0.3              # s
PUSH_AT = 42.0            # s of armsim time: 4 moves of 8.5 s after the start, and a margin
PUSH_INTO_MOVE = 2.5      # s after the fifth move starts
DAMP_AT = 46.0            # s of armsim time: a second push, with collision_reaction = damp
CAL_FACTOR = 2.0
CAL_FLOOR = 4.0           # N m: a host stall here once fed the observer a 5.1 N m spike
                          # in a contact-free move (2 N m thresholds); 4 leaves a 15 N m push
                          # detected in ~3 ms (8 N m after a hold-up: ~8 ms)
DETECT_MS = 10.0          # target, before the rig's latency allowance
REST_MS = 200.0
REST_QD = 0.05            # rad/s: "at rest"
DROPIN = DEFAULT_DROPIN.replace("[arm]\n", "[arm]\nfriction_smoothing = 0.01\n").replace(
    "[safety]\n", "[safety]\ncollision = detect\ncollision_threshold = 1000\n")


def run_move(rig, c, points, label, until_collision=False):
    """Runs the demo trajectory once with a 1 kHz recorder (until its end + 1.5 s, or with
    until_collision until 0.5 s after a collision event); returns (recorder, trajectory result,
    start time in armd's clock)."""
    rec = Recorder(rig.sock, 1000)
    r = c.call("trajectory", {"points": points, "mode": "replace"})
    t0 = c.call("status")["time"]
    end = time.monotonic() + r["duration"] + 1.5
    while time.monotonic() < end:
        rec.collect(0.1)
        if until_collision and [e for e in rec.events if e["method"] == "collision"]:
            rec.collect(0.5)
            break
    rec.client.close()
    done = [e for e in rec.events if e["method"] == "trajectory_done"
            and e["params"]["id"] == r["id"]]
    result = done[0]["params"]["result"] if done else "not finished"
    print("%s: %s" % (label, result))
    return rec, result, t0


def wait_sim(rig, t, what):
    """Sleeps until armsim's clock (to a few ms) reaches t [s]; fails when it is already past
    t - 0.5 (the rig was too slow for the pushes armsim was given at start)."""
    sim_now = time.monotonic() - rig.sim_ready
    check(sim_now < t - 0.5, "the rig was too slow: %s should start at %.1f s of armsim time, "
          "it is %.1f s" % (what, t, sim_now))
    time.sleep(t - sim_now)


def set_reaction(rig, c, thr, reaction):
    """collision = react with reaction and the thresholds thr, by a drop-in and a reload."""
    with open(os.path.join(rig.dropin_dir, "20-collision.ini"), "w") as f:
        f.write("[safety]\ncollision = react\ncollision_reaction = %s\n"
                "collision_threshold = %s\n" % (reaction, " ".join("%.6g" % t for t in thr)))
    return c.call("reload")["changed"]


def push_move(rig, c, points, at, label):
    """The demo move started so that armsim's push at `at` [s] lands 1.5 s into it; returns
    (recorder, result, the collision events)."""
    wait_sim(rig, at - 1.5, label)
    rec, result, _ = run_move(rig, c, points, label, until_collision=True)
    return rec, result, [e["params"] for e in rec.events if e["method"] == "collision"]


def max_abs_ext(rec, n):
    return [max(abs(s["ext"][j]) for s in rec.samples) for j in range(n)]


def calibrate(rig, c, points, n):
    """Thresholds as a user finds them: two contact-free demo moves in detect mode (thresholds
    out of reach, no event), each joint's threshold CAL_FACTOR x the smaller of the two runs'
    peak |external torque|, at least CAL_FLOOR [N m]."""
    peaks = []
    for k in range(2):
        rec, result, _ = run_move(rig, c, points, "calibration move %d" % (k + 1))
        check(result == "done", "calibration move: %s" % result)
        peaks.append(max_abs_ext(rec, n))
        check(not [e for e in rec.events if e["method"] == "collision"],
              "a collision event with thresholds of 1000 N m")
    peak = [min(a, b) for a, b in zip(*peaks)]
    thr = [max(CAL_FACTOR * p, CAL_FLOOR) for p in peak]
    for k, p in enumerate(peaks):
        print("largest |external torque| without contact, run %d [N m]: %s" %
              (k + 1, " ".join("%.3f" % x for x in p)))
    print("thresholds [N m]: %s" % " ".join("%.3f" % t for t in thr))
    return thr


def judge_push(rig, rec, hits, st, result, info, reaction, detect_ms, rest_ms=REST_MS):
    """Judges the first push (armsim's truth, the armd run stopped): one collision event after
    its onset naming the pushed joint with `reaction`, detected within detect_ms plus the rig's
    latency, the arm at rest within rest_ms of it (None: reported only); the estimate (whether
    it is within 5 % of the true torque) is the caller's to judge. rec: the push move's recorder; hits: its collision events; st: the
    status after it. Returns the events before the onset (false detections) and the mean
    estimate on the pushed joint in the push's last 100 ms [N m]."""
    n = info["dof"]
    head, rows = rig.read_truth_columns()
    it, iext = truth_column(head, "t"), truth_column(head, "ext%d" % PUSH_JOINT)
    iqd = [truth_column(head, "qd%d" % (j + 1)) for j in range(n)]
    onset = next(v[it] for v in rows if v[iext] != 0.0)  # the first push
    truth = [(v[it], [v[truth_column(head, "q%d" % (j + 1))] for j in range(n)])
             for v in rows if onset - 3 <= v[it] <= onset + 2]
    d = align_offset(rec.samples, truth)  # truth time = armd time + d
    before = [h for h in hits if h["time"] + d < onset]
    hits = [h for h in hits if h["time"] + d >= onset]
    check(len(hits) == 1, "expected one collision event after the push began, got %d: %s" %
          (len(hits), hits[:3]))
    hit = hits[0]
    print("collision event: %s" % hit)
    check(hit["joint"] == info["joints"][PUSH_JOINT - 1], "the event names joint %s" %
          hit["joint"])
    check(hit["reaction"] == reaction and (result.startswith("aborted: collision") or before),
          "reaction %s, trajectory %s" % (hit["reaction"], result))
    check(st["state"] == "holding", "state after the stop: %s" % st["state"])
    latency_ms = (hit["time"] + d - onset) * 1e3
    loop = st["loop"]
    rig_ms = 2 * (loop["read_us"]["p99"] + loop["write_us"]["p99"] +
                  loop["lateness_us"]["p99"]) / 1e3
    print("push onset %.4f s (truth), detected %.1f ms later (armd event, clocks aligned "
          "by position: offset %.4f s); allowed %.1f ms (%g + rig %.1f)" %
          (onset, latency_ms, d, detect_ms + rig_ms, detect_ms, rig_ms))
    check(latency_ms > -2.0, "detected %.1f ms before the push began" % latency_ms)
    check(latency_ms <= detect_ms + rig_ms, "detected %.1f ms after the push (at most %.1f)"
          % (latency_ms, detect_ms + rig_ms))
    t_hit = hit["time"] + d
    rest = None
    for v in rows:
        if v[it] < t_hit:
            continue
        if max(abs(v[i]) for i in iqd) < REST_QD:
            rest = v[it]
            break
    check(rest is not None, "the arm never came to rest after the detection")
    rest_after = (rest - t_hit) * 1e3
    print("at rest (every |qd| < %g rad/s) %.1f ms after the detection" % (REST_QD, rest_after))
    check(rest_ms is None or rest_after <= rest_ms, "at rest only %.1f ms after the detection"
          % rest_after)
    # the estimate during the push, in its last 100 ms (the arm held, the observer settled)
    during = [s["ext"][PUSH_JOINT - 1] for s in rec.samples
              if onset + PUSH_S - 0.1 <= s["time"] + d <= onset + PUSH_S - 0.01]
    check(during, "no telemetry during the push")
    mean = sum(during) / len(during)
    print("external torque estimate on joint %d in the push's last 100 ms: %.3f N m "
          "(true %.1f)" % (PUSH_JOINT, mean, PUSH_TORQUE))
    return before, mean


def main(args):
    pushes = ()
    for at in (PUSH_AT, DAMP_AT):
        pushes += ("--push", "%g,%d,%g,%g" % (at, PUSH_JOINT, PUSH_TORQUE, PUSH_S))
    with Rig(args, "collision", sim_args=READY_POSE + pushes, dropin=DROPIN) as rig:
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

        # contact-free moves with the calibrated thresholds: detections are false ones
        false_hits = []
        for k in range(2):
            rec, result, _ = run_move(rig, c, points, "contact-free move %d" % (k + 1))
            false_hits += [e["params"] for e in rec.events if e["method"] == "collision"]
            check(result == "done" or result.startswith("aborted: collision"),
                  "contact-free move: %s" % result)
        check(c.call("status")["collision"]["detected"] == len(false_hits),
              "status counts %d detections, the events %d" %
              (c.call("status")["collision"]["detected"], len(false_hits)))

        # the push: start the move so that armsim's push lands PUSH_INTO_MOVE s into it
        wait_sim(rig, PUSH_AT - PUSH_INTO_MOVE, "the move with the push")
        rec, result, _ = run_move(rig, c, points, "move with a push", until_collision=True)
        st = c.call("status")
        hits = [e["params"] for e in rec.events if e["method"] == "collision"]
        check(hits, "the push was not detected")
        # damp: a fault ending in the damping stop, reset and enable recover
        set_reaction(rig, c, thr, "damp")
        _, result_d, hits_d = push_move(rig, c, points, DAMP_AT, "damp move")
        st_d = c.call("status")
        print("damp: %s; events %s; then %s: %s" % (result_d, hits_d, st_d["state"],
                                                    st_d["fault"]))
        check(hits_d and hits_d[-1]["reaction"] == "damp" and st_d["state"] == "fault" and
              st_d["fault"].startswith("collision on joint"), "damp reaction: %s, %s, %s" %
              (hits_d, st_d["state"], st_d["fault"]))
        check(c.call("reset")["state"] == "disabled", "reset after the collision fault")

        # the truth: push onset, latency, rest
        c.call("disable")
        c.close()
        rig.stop_sim()
        before, mean = judge_push(rig, rec, hits, st, result, info, "stop", DETECT_MS)
        false_hits += before
        print("false detections without contact: %d in 2 moves and the push move's first %.1f s%s"
              % (len(false_hits), PUSH_INTO_MOVE, "".join("\n  %s" % h for h in false_hits)))
        check(abs(mean - PUSH_TORQUE) <= 0.05 * PUSH_TORQUE, "estimate %.3f N m, true %.1f" %
              (mean, PUSH_TORQUE))


if __name__ == "__main__":
    run(main)
