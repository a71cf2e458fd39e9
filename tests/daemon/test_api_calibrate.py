#!/usr/bin/env python3
"""Integration: `armctl collision calibrate` against a real armd + armsim (PUMA 560, 1 kHz,
computed torque, friction smoothed over 0.01 rad/s as in test_api_collision.py). First the
refusals: bad arguments (exit 2 naming the value), the arm disabled (exit 1, saying to enable
it). A calibration that meets a contact: `collision = react` (a warning), armsim pushes joint 2
during the run: exit 1 naming the joint and saying what a detection means. Then, with
`collision = detect` and thresholds out of reach, a 2 s trajectory file moving every joint and
returning to its start is calibrated twice (--runs 2 --json) while the test records 1 kHz
telemetry itself: the proposal must be max(factor x the largest reported peak, floor) per
joint, and each run's reported peaks must agree with the largest |ext| the test's own recorder
saw in that run's window (up to trajectory_done + 0.2 s). Then the human-readable form (one run:
a table and the INI lines) and collision off (exit 1, saying what to set). No timing is judged
(the machine may be loaded); the push is timed on armsim's clock with seconds of margin."""
import json
import math
import os
import subprocess
import time

from test_api_collision import wait_sim
from test_api_armctl import armctl
from test_api_lib import DEFAULT_DROPIN, READY_POSE, Recorder, Rig, TestFailure, check, run

FACTOR = 2.0    # armctl's defaults
FLOOR = 1.0     # N m
TAIL_S = 0.2    # s after trajectory_done "done" that a run's window covers
# the recorder's peak over a run's window against armctl's: at most this much above it (the
# recorder's window also covers the hold between runs), at least LOWER x it
UPPER_REL, UPPER_ABS, LOWER = 0.10, 0.2, 0.5
DROPIN = DEFAULT_DROPIN.replace("[arm]\n", "[arm]\nfriction_smoothing = 0.01\n").replace(
    "[safety]\n", "[safety]\ncollision = detect\ncollision_threshold = 1000\n")
PUSH_JOINT = 2          # 1-based
PUSH_AT = 8.0           # s of armsim time
PUSH_S = 0.3            # s, of 15 N m
REACT_START_AT = 6.5    # s of armsim time: the calibration meeting the push starts (1.5 s before)
REACT_THRESHOLD = 10.0  # N m on the pushed joint (out of reach on the others)
# offsets from the start [rad] at t = 0.7 s and 1.4 s; back at the start at 2.0 s
WAYPOINTS = ((0.7, [0.20, -0.15, 0.20, 0.35, 0.30, 0.35]),
             (1.4, [-0.10, 0.10, -0.10, -0.25, -0.20, -0.25]),
             (2.0, [0.0] * 6))


def write_trajectory(rig, info, q0):
    """A CSV trajectory file (header row, t,q1..qn) that moves every joint and returns to q0."""
    path = os.path.join(rig.dir, "calib.csv")
    with open(path, "w") as f:
        f.write("t," + ",".join(info["joints"]) + "\n")
        for t, off in WAYPOINTS:
            q = [q0[j] + off[j % 6] for j in range(info["dof"])]
            f.write("%g," % t + ",".join("%.6f" % x for x in q) + "\n")
    return path


def set_collision(rig, c, text):
    """Replaces the test's collision drop-in with text and reloads; returns the new mode."""
    with open(os.path.join(rig.dropin_dir, "20-calibrate.ini"), "w") as f:
        f.write(text)
    c.call("reload")
    return c.call("status")["collision"]["mode"]


def move_back(c, q0):
    """Moves the arm to q0 in 1 s and waits (polling status) until it holds there."""
    c.call("move_to", {"q": q0, "duration": 1.0})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        st = c.call("status")
        if st["state"] == "holding" and st["trajectory"] is None:
            return
        check(st["state"] in ("holding", "moving"), "moving back: %s" % st["state"])
        time.sleep(0.05)
    raise TestFailure("the move back did not end")


def calibrate_recorded(rig, path, runs):
    """Runs `armctl collision calibrate path --runs runs --json` while a 1 kHz recorder of the
    test's own collects telemetry; returns (process result, parsed JSON, recorder)."""
    rec = Recorder(rig.sock, 1000)
    p = subprocess.Popen([rig.args.armctl, "-s", rig.sock, "collision", "calibrate", path,
                          "--runs", str(runs), "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90  # not a judgement: only so that a hang cannot hang the test
    while p.poll() is None and time.monotonic() < deadline:
        rec.collect(0.1)
    if p.poll() is None:
        p.kill()
    out, err = p.communicate()
    rec.collect(0.3)  # the last samples of the tail
    rec.client.close()
    print("armctl collision calibrate --runs %d --json: exit %s\nstderr:\n%sstdout:\n%s" %
          (runs, p.returncode, err, out))
    check(p.returncode == 0, "calibrate exited %s: %s" % (p.returncode, err))
    return p, json.loads(out), rec


def recorded_peaks(rec, n):
    """Per run (trajectory_done "done" in the recorder's events), the largest |ext| per joint the
    recorder saw from the previous window's end to this done + TAIL_S, and the sample count."""
    dones = [e["params"]["time"] for e in rec.events if e["method"] == "trajectory_done"]
    results = [e["params"]["result"] for e in rec.events if e["method"] == "trajectory_done"]
    check(results and all(r == "done" for r in results), "trajectory results: %s" % results)
    peaks, t_from = [], -math.inf
    for t_done in dones:
        window = [s for s in rec.samples if t_from < s["time"] <= t_done + TAIL_S]
        check(len(window) > 100, "only %d recorded samples in a run's window" % len(window))
        peaks.append(([max(abs(s["ext"][j]) for s in window) for j in range(n)], len(window)))
        t_from = t_done + TAIL_S
    return peaks


def main(args):
    push = ("--push", "%g,%d,15,%g" % (PUSH_AT, PUSH_JOINT, PUSH_S))
    with Rig(args, "calibrate", sim_args=READY_POSE + push, dropin=DROPIN) as rig:
        c = rig.client()
        info = c.call("info")
        n = info["dof"]
        path = write_trajectory(rig, info, c.call("status")["q"])
        cal = ("collision", "calibrate")

        # usage errors: exit 2, naming the bad value
        for bad_args, named in ((("--runs", "0"), "'0'"), (("--runs", "2.5"), "'2.5'"),
                                (("--factor", "nan"), "'nan'"), (("--factor", "-2"), "'-2'"),
                                (("--factor", "inf"), "'inf'"), (("--floor", "0"), "'0'")):
            p = armctl(rig, *cal, path, *bad_args, expect=2)
            check(named in p.stderr, "%s: stderr does not name %s: %s" %
                  (" ".join(bad_args), named, p.stderr))
        missing = os.path.join(rig.dir, "nothing.csv")
        p = armctl(rig, *cal, missing, expect=2)
        check(missing in p.stderr, "missing file not named: %s" % p.stderr)
        armctl(rig, *cal, expect=2)
        armctl(rig, "collision", "fly", path, expect=2)

        # the arm disabled: exit 1, saying to enable it
        p = armctl(rig, *cal, path, expect=1)
        check("disabled" in p.stderr and "armctl enable" in p.stderr, "disabled: %s" % p.stderr)

        c.call("enable")
        q0 = c.call("status")["q"]
        path = write_trajectory(rig, info, q0)  # from where it holds

        # a contact during calibration (react: warned, the move stopped): exit 1, saying so
        thr = ["1000"] * n
        thr[PUSH_JOINT - 1] = "%g" % REACT_THRESHOLD
        mode = set_collision(rig, c, "[safety]\ncollision = react\ncollision_threshold = %s\n" %
                             " ".join(thr))
        check(mode == "react", "collision mode after the reload: %s" % mode)
        wait_sim(rig, REACT_START_AT, "the calibration meeting the push")
        p = armctl(rig, *cal, path, "--runs", "1", expect=1, timeout=60)
        print("react, armsim pushing joint %d:\n%s" % (PUSH_JOINT, p.stderr))
        joint = info["joints"][PUSH_JOINT - 1]
        check("warning: collision = react" in p.stderr, "no react warning: %s" % p.stderr)
        check("collision on joint %s" % joint in p.stderr and "touched something" in p.stderr,
              "the contact is not reported: %s" % p.stderr)
        st = c.call("status")
        check(st["state"] == "holding" and st["trajectory"] is None,
              "after the detection: %s, trajectory %s" % (st["state"], st["trajectory"]))

        # calibrate in detect mode, thresholds out of reach, recorded independently
        mode = set_collision(rig, c, "[safety]\ncollision = detect\n")
        check(mode == "detect", "collision mode after the reload: %s" % mode)
        wait_sim(rig, PUSH_AT + PUSH_S + 1.0, "calibration after the push")
        move_back(c, q0)
        _, res, rec = calibrate_recorded(rig, path, 2)
        check(res["factor"] == FACTOR, "factor %s" % res["factor"])
        runs = [r["peak"] for r in res["runs"]]
        check(len(runs) == 2 and all(len(p) == n for p in runs), "runs: %s" % res["runs"])
        for k, peak in enumerate(runs):
            check(all(math.isfinite(x) and x > 0 for x in peak),
                  "run %d: a peak not finite and > 0 on a moving joint: %s" % (k + 1, peak))
        for j in range(n):
            want = max(FACTOR * max(p[j] for p in runs), FLOOR)
            check(abs(res["threshold"][j] - want) <= 1e-8 * want,
                  "joint %s: threshold %r, expected max(%g x %r, %g) = %r" %
                  (info["joints"][j], res["threshold"][j], FACTOR, max(p[j] for p in runs),
                   FLOOR, want))
        recorded = recorded_peaks(rec, n)
        check(len(recorded) == 2, "the recorder saw %d trajectory_done events" % len(recorded))
        for k, ((mine, count), theirs) in enumerate(zip(recorded, runs)):
            print("run %d: recorder (%d samples) %s; armctl %s" %
                  (k + 1, count, " ".join("%.3f" % x for x in mine),
                   " ".join("%.3f" % x for x in theirs)))
            for j in range(n):
                check(LOWER * theirs[j] <= mine[j] <= theirs[j] * (1 + UPPER_REL) + UPPER_ABS,
                      "run %d joint %s: the recorder's largest |ext| %.4f, armctl's %.4f" %
                      (k + 1, info["joints"][j], mine[j], theirs[j]))

        # the human-readable form: a table, then the INI lines
        p = armctl(rig, *cal, path, "--runs", "1", timeout=60)
        print("armctl collision calibrate --runs 1:\n" + p.stdout)
        lines = p.stdout.splitlines()
        check("[safety]" in lines, "no [safety] line:\n%s" % p.stdout)
        ini = [ln for ln in lines if ln.startswith("collision_threshold =")]
        check(len(ini) == 1, "no collision_threshold line:\n%s" % p.stdout)
        thr = [float(x) for x in ini[0].split("=")[1].split()]
        check(len(thr) == n and all(math.isfinite(x) and x >= FLOOR for x in thr),
              "INI thresholds: %s" % thr)
        check(all(jn in p.stdout for jn in info["joints"]) and "run 1 of 1" in p.stdout,
              "the table lacks joints or the run line:\n%s" % p.stdout)

        # collision off: exit 1, saying what to set
        mode = set_collision(rig, c, "[safety]\ncollision = off\n")
        check(mode == "off", "collision mode after the reload: %s" % mode)
        p = armctl(rig, *cal, path, expect=1)
        check("collision detection is off" in p.stderr and "collision = detect" in p.stderr,
              "collision off: %s" % p.stderr)

        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
