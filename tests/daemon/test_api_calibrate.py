#!/usr/bin/env python3
"""Lockstep: `armctl collision calibrate` against armd --lockstep --paused (PUMA 560, 1 kHz,
computed torque, friction smoothed over 0.01 rad/s as in test_api_collision.py), on simulated
time. First the refusals: bad arguments (exit 2 naming the value), the arm disabled (exit 1,
saying to enable it). A calibration that meets a contact: `collision = react` (a warning), armsim
pushes joint 2 1.5 s into the run: exit 1 naming the joint and saying what a detection means.
Then, with `collision = detect` and thresholds out of reach, a 2 s trajectory file moving every
joint and returning to its start is calibrated twice (--runs 2 --json) while the test records
1 kHz telemetry itself: the proposal must be max(factor x the largest reported peak, floor) per
joint, and each run's reported peaks must equal the largest |ext| the test's own recorder saw in
the same window (armctl's: from its request, or the sample that closed the run before, to
trajectory_done + 0.2 s): on simulated time both subscribers get every sample. Then the
human-readable form (one run: a table and the INI lines) and collision off (exit 1, saying what
to set).

Paused rather than free: armctl waits for events, so the test lets simulated time run while
armctl waits on it (its trajectory running, then the 0.2 s after "done" up to the first sample
past them: run_armctl) and stands it still while armctl starts, requests or exits. The push
then lands where its --push time puts it, 1.5 s into the run meeting it, and armctl's requests
come at the same simulated instants in every run; in free mode simulated time would run on
while the test and armctl start up, by however long the host takes."""
import json
import math
import os
import subprocess
import time

from test_api_armctl import armctl
from test_api_collision import DROPIN, wait_sim
from test_api_lib import READY_POSE, Rig, check, run
from test_api_payload import move_back

FACTOR = 2.0    # armctl's defaults
FLOOR = 1.0     # N m
TAIL_S = 0.2    # s after trajectory_done "done" that a run's window covers (armctl's CAL_TAIL_S)
STEP_S = 0.1    # s of simulated time per step while armctl's trajectory runs (below TAIL_S)
PUSH_JOINT = 2          # 1-based
PUSH_AT = 8.0           # s of armsim's clock
PUSH_S = 0.3            # s, of 15 N m
REACT_START_AT = 6.5    # s of armsim's clock: the calibration meeting the push starts
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


def armctl_waits(c, rec):
    """How much simulated time [s] armctl waits for now: STEP_S while a trajectory runs; after
    the last trajectory_done "done" the rest of TAIL_S, to the first tick past it (armctl closes
    a run on the first sample past done + TAIL_S); else 0 (armctl starts, requests or exits, and
    simulated time stands still meanwhile). rec: a recorder that has every sample up to now."""
    st = c.call("status")
    if st["trajectory"] is not None:
        return STEP_S
    dones = [e["params"]["time"] for e in rec.events if e["method"] == "trajectory_done"
             and e["params"]["result"] == "done"]
    if dones and st["time"] <= dones[-1] + TAIL_S:
        return dones[-1] + TAIL_S - st["time"] + 0.0005  # half a tick: to the first tick past
    return 0


def run_armctl(rig, c, args, expect=0):
    """Runs armctl with args against the rig while a 1 kHz recorder of the test's own collects
    telemetry, letting simulated time run exactly while armctl waits on it (armctl_waits).
    Returns (the process's stdout, stderr, recorder)."""
    rec = rig.recorder(1000)
    p = subprocess.Popen([rig.args.armctl, "-s", rig.sock] + list(args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60  # not a judgement: only so that a hang cannot hang the test
    while p.poll() is None and time.monotonic() < deadline:
        wait = armctl_waits(c, rec)
        if wait > 0:
            rec.collect(wait)
        else:
            time.sleep(0.005)  # wall clock: armctl is busy, simulated time stands
    if p.poll() is None:
        p.kill()
    out, err = p.communicate()
    rec.close()
    print("armctl %s: exit %s\nstderr:\n%sstdout:\n%s" % (" ".join(args), p.returncode, err, out))
    check(p.returncode == expect, "armctl %s exited %s (expected %d): %s" %
          (" ".join(args), p.returncode, expect, err))
    return out, err, rec


def recorded_peaks(rec, n):
    """Per run (trajectory_done "done" in the recorder's events), the largest |ext| per joint the
    recorder saw in armctl's window of that run (after the sample that closed the run before, up
    to this done + TAIL_S), and the sample count."""
    dones = [e["params"]["time"] for e in rec.events if e["method"] == "trajectory_done"]
    results = [e["params"]["result"] for e in rec.events if e["method"] == "trajectory_done"]
    check(results and all(r == "done" for r in results), "trajectory results: %s" % results)
    peaks, t_from = [], -math.inf
    for t_done in dones:
        t_end = t_done + TAIL_S
        window = [s for s in rec.samples if t_from < s["time"] <= t_end]
        check(len(window) > 100, "only %d recorded samples in a run's window" % len(window))
        peaks.append(([max(abs(s["ext"][j]) for s in window) for j in range(n)], len(window)))
        t_from = min((s["time"] for s in rec.samples if s["time"] > t_end),  # closed the run
                     default=math.inf)
    return peaks


def main(args):
    push = ("--push", "%g,%d,15,%g" % (PUSH_AT, PUSH_JOINT, PUSH_S))
    with Rig(args, "calibrate", sim_args=READY_POSE + push, dropin=DROPIN,
             lockstep="paused") as rig:
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
        _, err, rec = run_armctl(rig, c, cal + (path, "--runs", "1"), expect=1)
        joint = info["joints"][PUSH_JOINT - 1]
        check("warning: collision = react" in err, "no react warning: %s" % err)
        check("collision on joint %s" % joint in err and "touched something" in err,
              "the contact is not reported: %s" % err)
        hits = [e["params"] for e in rec.events if e["method"] == "collision"]
        d = rig.clock_offset()
        if hits:
            print("the push at %g s (armsim's clock) detected %.2f ms later" %
                  (PUSH_AT, (hits[0]["time"] + d - PUSH_AT) * 1e3))
        check(len(hits) == 1 and PUSH_AT <= hits[0]["time"] + d <= PUSH_AT + PUSH_S,
              "collision events of the run meeting the push at %g s (armsim's clock; armd's "
              "+ %.4f s): %s" % (PUSH_AT, d, hits))
        st = c.call("status")
        check(st["state"] == "holding" and st["trajectory"] is None,
              "after the detection: %s, trajectory %s" % (st["state"], st["trajectory"]))

        # calibrate in detect mode, thresholds out of reach, recorded independently
        mode = set_collision(rig, c, "[safety]\ncollision = detect\n")
        check(mode == "detect", "collision mode after the reload: %s" % mode)
        wait_sim(rig, PUSH_AT + PUSH_S + 0.5, "calibration after the push")
        move_back(rig, c, q0, limit=5.0)
        out, _, rec = run_armctl(rig, c, cal + (path, "--runs", "2", "--json"))
        res = json.loads(out)
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
                  (k + 1, count, " ".join("%.6f" % x for x in mine),
                   " ".join("%.6f" % x for x in theirs)))
            for j in range(n):
                check(mine[j] == theirs[j], "run %d joint %s: the recorder's largest |ext| %r, "
                      "armctl's %r" % (k + 1, info["joints"][j], mine[j], theirs[j]))

        # the human-readable form: a table, then the INI lines
        out, _, _ = run_armctl(rig, c, cal + (path, "--runs", "1"))
        lines = out.splitlines()
        check("[safety]" in lines, "no [safety] line:\n%s" % out)
        ini = [ln for ln in lines if ln.startswith("collision_threshold =")]
        check(len(ini) == 1, "no collision_threshold line:\n%s" % out)
        thr = [float(x) for x in ini[0].split("=")[1].split()]
        check(len(thr) == n and all(math.isfinite(x) and x >= FLOOR for x in thr),
              "INI thresholds: %s" % thr)
        check(all(jn in out for jn in info["joints"]) and "run 1 of 1" in out,
              "the table lacks joints or the run line:\n%s" % out)

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
