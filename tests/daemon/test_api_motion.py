#!/usr/bin/env python3
"""Integration: replacing a running trajectory, appending one and cancelling never make a jump:
the desired velocity is continuous tick to tick (within the acceleration limit), the true
acceleration in armsim's truth stays bounded, cancel decelerates within the acceleration limits
and holds, and each trajectory ends with the right result. Real armd + armsim on a pty.

The splice instants are the times of the `trajectory_done` events of the replaced trajectory
(replace) and of the replacing one (append: the appended one starts on the next tick) and of
the cancelled one; the desired-velocity check must actually have compared the ticks on both
sides of each. The true acceleration is judged in a window around each splice (mapped onto the
truth by the enable instant), so that what is measured is the splice, not a late tick caused by
a loaded machine at some other moment."""
import bisect
import time

from test_api_lib import Recorder, Rig, check, enable_clock_offset, event, run, truth_times

SPLICE_WINDOW = (-0.02, 0.15)  # s around a splice instant where the true acceleration is judged
ACC_WINDOW = 0.005  # s: acceleration from the velocity change over this time


def offset(q0, d):
    return [q + d[j % len(d)] for j, q in enumerate(q0)]


def main(args):
    with Rig(args, "motion") as rig:
        c = rig.client()
        info = c.call("info")
        n, acc = info["dof"], info["limits"]["acceleration"]
        dt = 1.0 / info["rate_hz"]
        q0 = c.call("status")["q"]
        rec = Recorder(rig.sock, info["rate_hz"])  # before enable: sees the holding event
        c.call("enable")
        a = c.call("trajectory", {"points": [
            {"t": 2.0, "q": offset(q0, [0.4, 0.3, -0.3, 0.5, 0.4, 0.5])},
            {"t": 4.0, "q": offset(q0, [-0.3, 0.5, -0.6, -0.4, -0.3, -0.4])}]})
        rec.collect(1.0)  # mid-motion, at speed
        b = c.call("trajectory", {"mode": "replace", "points": [
            {"t": 1.5, "q": offset(q0, [0.2, 0.1, -0.1, 0.2, 0.2, 0.2])},
            {"t": 3.0, "q": q0}]})
        cc = c.call("trajectory", {"mode": "append", "points": [
            {"t": 1.5, "q": offset(q0, [-0.3, 0.3, -0.3, -0.3, 0.3, -0.3])}]})
        rec.collect(b["duration"] + 0.7)  # into the appended trajectory
        check(c.call("status")["state"] == "moving", "not moving in the appended trajectory")
        c.call("cancel")
        rec.collect(1.5)
        st = c.call("status")
        check(st["state"] == "holding" and st["trajectory"] is None,
              "after cancel: %s, trajectory %s" % (st["state"], st["trajectory"]))
        results = {e["params"]["id"]: e["params"]["result"] for e in rec.events
                   if e["method"] == "trajectory_done"}
        print("results:", results)
        check(results.get(a["id"]) == "replaced", "first trajectory: %s" % results.get(a["id"]))
        check(results.get(b["id"]) == "done", "replacing trajectory: %s" % results.get(b["id"]))
        check(results.get(cc["id"]) == "cancelled", "appended trajectory: %s" % results.get(cc["id"]))

        splices = {}
        for name, tid, res in (("replace", a["id"], "replaced"), ("append", b["id"], "done"),
                               ("cancel", cc["id"], "cancelled")):
            ev = event(rec, "trajectory_done", lambda p: p["id"] == tid and p["result"] == res)
            check(ev is not None, "no trajectory_done event for the %s" % name)
            splices[name] = ev["time"]

        # desired velocity: continuous through replace, append and cancel (pairs of samples
        # with consecutive ticks; the pairs around each splice must be among them)
        s = rec.samples
        check(len(s) > 3000, "only %d telemetry samples" % len(s))
        worst = 0.0
        seen = dict.fromkeys(splices, 0)
        for p, q in zip(s, s[1:]):
            if q["tick"] != p["tick"] + 1:
                continue
            for name, t in splices.items():
                if p["time"] - dt / 2 <= t <= q["time"] + dt / 2:
                    seen[name] += 1
            # over the time the trajectory clock really advanced: a late tick skips the missed
            # periods (an overrun), so consecutive ticks can be two or more periods apart
            step = max(q["time"] - p["time"], dt)
            for j in range(n):
                worst = max(worst, abs(q["qd_des"][j] - p["qd_des"][j]) / (step * acc[j]))
        print("largest desired-velocity step: %.2f x (acceleration limit x time step); splices at "
              "armd t = %s, tick pairs compared there %s" %
              (worst, {k: round(v, 4) for k, v in splices.items()}, seen))
        for name, k in seen.items():
            check(k > 0, "the ticks around the %s were not compared (telemetry gap)" % name)
        check(worst <= 1.5, "desired velocity jumps: %.2f x the acceleration limit" % worst)

        # the truth: acceleration over 5 ms stays within 2 x the limit around the replace and
        # append splices (no jump)
        rig_truth = rig.read_truth(cover=time.monotonic())
        d = enable_clock_offset(rec, rig_truth)
        times = truth_times(rig_truth)
        for name in ("replace", "append"):
            t0 = splices[name] + d
            lo = bisect.bisect_left(times, t0 + SPLICE_WINDOW[0])
            hi = bisect.bisect_right(times, t0 + SPLICE_WINDOW[1])
            peak, rows = 0.0, 0
            for i in range(lo, hi):
                k = bisect.bisect_left(times, times[i] + ACC_WINDOW)
                if k >= len(rig_truth):
                    break
                r0, r1 = rig_truth[i], rig_truth[k]
                rows += 1
                for j in range(n):
                    peak = max(peak, abs(r1[2][j] - r0[2][j]) / (r1[0] - r0[0]) / acc[j])
            print("%s: largest true acceleration from %+g to %+g ms around it: %.2f x the limit "
                  "(%d truth rows)" % (name, 1e3 * SPLICE_WINDOW[0], 1e3 * SPLICE_WINDOW[1], peak,
                                       rows))
            check(rows > 100, "too little truth around the %s" % name)
            check(peak <= 2.0, "true acceleration %.2f x the limit at the %s: a jump" %
                  (peak, name))
        c.call("disable")
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
