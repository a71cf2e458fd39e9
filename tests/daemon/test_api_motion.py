#!/usr/bin/env python3
"""Integration: replacing a running trajectory, appending one and cancelling never make a jump:
the desired velocity is continuous tick to tick (within the acceleration limit), the true
acceleration in armsim's truth stays bounded, cancel decelerates within the acceleration limits
and holds, and each trajectory ends with the right result. Real armd + armsim on a pty."""
import time

from test_api_lib import Recorder, Rig, check, run


def offset(q0, d):
    return [q + d[j % len(d)] for j, q in enumerate(q0)]


def main(args):
    with Rig(args, "motion") as rig:
        c = rig.client()
        info = c.call("info")
        n, acc = info["dof"], info["limits"]["acceleration"]
        dt = 1.0 / info["rate_hz"]
        q0 = c.call("status")["q"]
        c.call("enable")
        rec = Recorder(rig.sock, info["rate_hz"])
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

        # desired velocity: continuous through replace, append and cancel
        s = rec.samples
        check(len(s) > 3000, "only %d telemetry samples" % len(s))
        worst = 0.0
        for p, q in zip(s, s[1:]):
            if q["tick"] != p["tick"] + 1:
                continue
            for j in range(n):
                worst = max(worst, abs(q["qd_des"][j] - p["qd_des"][j]) / (dt * acc[j]))
        print("largest desired-velocity step: %.2f x (acceleration limit x period)" % worst)
        check(worst <= 1.5, "desired velocity jumps: %.2f x the acceleration limit" % worst)

        # the truth: acceleration over 5 ms windows stays within 2 x the limit (no jump)
        rig_truth = rig.read_truth()
        step = 50  # 5 ms at 10 kHz
        peak = 0.0
        for r0, r1 in zip(rig_truth[::step], rig_truth[step::step]):
            if r1[0] <= r0[0]:
                continue
            for j in range(n):
                peak = max(peak, abs(r1[2][j] - r0[2][j]) / (r1[0] - r0[0]) / acc[j])
        print("largest true acceleration: %.2f x the limit" % peak)
        check(peak <= 2.0, "true acceleration %.2f x the limit: a jump" % peak)
        c.call("disable")
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
