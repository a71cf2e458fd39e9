#!/usr/bin/env python3
"""pick_and_place.py — an armd client example: a pick-and-place cycle in joint space with the
arm's gripper (its [tool] section), recorded.

From the arm's present position ("home") the gripper opens (arm.tool.release()), the arm goes
above a pick point and down, the gripper closes on the object (arm.tool.grasp(width=0.030,
force=10): a 30 mm object, squeezed with 10 N) and the cycle goes on only when it answers
"grasped"; then up, over to a place point, down, the gripper opens, up and back home. The
waypoints are offsets from home on the first joints (waist, shoulder, elbow, wrist), clamped
0.1 rad inside the position limits, and the arm comes to rest at each one. While it moves,
telemetry is recorded to CSV (t, q_<joint>..., q_des_<joint>..., tau_<joint>...,
tool_opening, tool_force; SI units) and, when gnuplot is installed, plotted to a PNG of desired
vs measured joint positions and the gripper's opening.

Against the simulated OpenManipulator-X (armsim + armd, see tools/python/README.md), its
gripper closing on a simulated 30 mm object (armsim --object 0.03,1e5):

    PYTHONPATH=tools/python python3 tools/python/examples/pick_and_place.py \\
        -s /tmp/armd.sock --out /tmp/pick

It enables a disabled arm (which then holds where it is) and leaves the arm holding at home
with the gripper open; a grasp that does not answer "grasped" opens the gripper again and takes
the arm home. Ctrl-C cancels the motion and stops the gripper (the arm decelerates within its
limits and holds). Exit status 0 when the cycle ran through with the object grasped, 1
otherwise (also for an arm without a gripper).
"""
import argparse
import csv
import itertools
import os
import shutil
import subprocess
import sys

import armd

GRASP_WIDTH = 0.030  # [m] the object's width
GRASP_FORCE = 10.0  # [N] squeezing it
# The cycle in three motions with the gripper between them: (duration of the leg [s], offset
# from home per joint [rad]) — above pick, down | grasp | up, over to place, down | release |
# up, home
TO_PICK = [
    (1.6, [0.5, 0.3, -0.2, 0.0, 0.3, 0.0]),
    (0.8, [0.5, 0.45, -0.35, 0.0, 0.45, 0.0]),
]
TO_PLACE = [
    (0.8, [0.5, 0.3, -0.2, 0.0, 0.3, 0.0]),
    (1.8, [-0.5, 0.3, -0.2, 0.0, 0.3, 0.5]),
    (0.8, [-0.5, 0.45, -0.35, 0.0, 0.45, 0.5]),
]
TO_HOME = [
    (0.8, [-0.5, 0.3, -0.2, 0.0, 0.3, 0.5]),
    (1.6, [0.0] * 6),
]
MARGIN = 0.1  # [rad or m] kept from each position limit


def waypoints(legs, home, lower, upper):
    """One motion of the cycle as armd.points: times from the legs' durations, positions
    home + offset clamped MARGIN inside the limits, at rest at every waypoint (qd = 0: each leg
    starts and stops, as a pick or a place needs)."""
    qs = []
    for _, off in legs:
        q = [h + (off[j] if j < len(off) else 0.0) for j, h in enumerate(home)]
        qs.append([min(max(x, lo + MARGIN), hi - MARGIN) for x, lo, hi in zip(q, lower, upper)])
    return armd.points(itertools.accumulate(d for d, _ in legs), qs,
                       qd=[[0.0] * len(home)] * len(qs))


class Recording:
    """The CSV of the whole cycle: one row per telemetry sample, the largest |q_des - q| per
    joint."""

    def __init__(self, path, names):
        self.file = open(path, "w", newline="")
        self.csv = csv.writer(self.file)
        self.csv.writerow(["t"] + ["%s_%s" % (g, j) for g in ("q", "q_des", "tau")
                                   for j in names] + ["tool_opening", "tool_force"])
        self.rows = 0
        self.worst = [0.0] * len(names)

    def sample(self, rec):
        tool = rec.tool or armd.ToolState(float("nan"), float("nan"), float("nan"))
        self.csv.writerow(["%.6f" % rec.time] +
                          ["%.9g" % x for x in rec.q + rec.q_des + rec.tau] +
                          ["%.9g" % tool.opening, "%.9g" % tool.force])
        self.rows += 1
        self.worst = [max(m, abs(a - b)) for m, a, b in zip(self.worst, rec.q_des, rec.q)]

    def close(self):
        self.file.close()


def run_motion(arm, sub, rec, pts, what):
    """Sends one motion of the cycle and records telemetry (also what was queued while the
    gripper worked) until its trajectory_done; returns its result."""
    motion = arm.trajectory(pts, blocking=False)  # returns once armd accepted it
    print("%s: trajectory %d, %d waypoints, %.2f s" % (what, motion.id, len(pts),
                                                      motion.duration))
    for r in sub:
        if isinstance(r, armd.Telemetry):
            rec.sample(r)
        elif r.method == "trajectory_done" and r["id"] == motion.id:
            return r["result"]
        elif r.method == "fault":
            print("fault: %s" % r["reason"], file=sys.stderr)
        elif r.method == "state":
            print("state: %s" % r["state"])


def show(what, result):
    print("%s: %s, opening %.1f mm, force %.1f N" % (what, result.outcome, 1e3 * result.opening,
                                                     result.force))
    return result.ok


def cycle(arm, sub, rec, home, lim):
    """The pick-and-place cycle; True when it ran through with the object grasped."""
    if not show("open", arm.tool.release()):
        return False
    result = run_motion(arm, sub, rec, waypoints(TO_PICK, home, lim.lower, lim.upper), "to pick")
    if result != "done":
        return False
    if not show("grasp", arm.tool.grasp(width=GRASP_WIDTH, force=GRASP_FORCE)):
        print("not grasped: opening the gripper and going home", file=sys.stderr)
        arm.tool.release()
        arm.move_to(home, blocking=True)
        return False
    result = run_motion(arm, sub, rec, waypoints(TO_PLACE, home, lim.lower, lim.upper),
                        "to place")
    if result != "done":
        return False
    if not show("release", arm.tool.release()):
        return False
    result = run_motion(arm, sub, rec, waypoints(TO_HOME, home, lim.lower, lim.upper), "home")
    return result == "done"


def plot(out_csv, names, png):
    """desired (dashed) vs measured joint positions, one panel per joint, and the gripper's
    opening, with gnuplot; False when gnuplot is missing or fails."""
    if not shutil.which("gnuplot"):
        return False
    n = len(names)
    rows = (n + 2) // 2
    script = ["set terminal pngcairo size 1400,900 font ',10'", "set output '%s'" % png,
              "set datafile separator ','", "set termoption noenhanced",
              "set multiplot layout %d,2 title 'pick and place: desired (dashed) vs measured'"
              % rows, "set xlabel 't [s]'; set grid; set key tmargin horizontal"]
    for j, name in enumerate(names):
        script.append("set title '%s'" % name)
        script.append("plot '%s' every ::1 using 1:%d with lines dt 2 lw 2 title 'desired', "
                      "'' every ::1 using 1:%d with lines title 'measured'" %
                      (out_csv, 2 + n + j, 2 + j))
    script.append("set title 'gripper opening [mm]'")
    script.append("plot '%s' every ::1 using 1:($%d*1000) with lines title 'opening'" %
                  (out_csv, 2 + 3 * n))
    script.append("unset multiplot")
    r = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True,
                       capture_output=True)
    if r.returncode != 0:
        print("gnuplot failed: %s" % r.stderr.strip(), file=sys.stderr)
    return r.returncode == 0


def stop_everything(path):
    """Ctrl-C: cancels the motion and stops the gripper, on a new connection (the old one may
    wait for an answer still)."""
    with armd.Client(path) as arm:
        print("interrupted: cancelling the motion -> %s" % arm.cancel())
        print("stopping the gripper -> %s" % arm.tool.stop().outcome)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-s", "--socket", help="armd's socket (default: $ARMD_SOCKET, else "
                   "/run/armd/armd.sock)")
    p.add_argument("--out", default=".", help="directory for pick_and_place.csv/.png")
    p.add_argument("--rate", type=float, default=100.0, help="telemetry rate [Hz] (default 100)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    out_csv = os.path.join(args.out, "pick_and_place.csv")
    png = os.path.join(args.out, "pick_and_place.png")
    try:
        with armd.Client(args.socket) as arm:
            info = arm.info()  # an armd.Info
            if info.tool is None:
                sys.exit("pick_and_place: the arm %s has no gripper (no [tool] section in its "
                         "configuration): the example grasps with it; run it against an arm "
                         "that has one, e.g. config/examples/open_manipulator_x.ini" % info.name)
            names, lim = info.joints, info.limits
            st = arm.status()  # an armd.Status
            if st.state in ("fault", "estop"):
                sys.exit("the arm is in %s (%s): reset it first (armctl reset)" %
                         (st.state, st.fault))
            if st.state == "disabled":
                print("enabling: %s" % arm.enable())
            home = arm.status().q_des
            rec = Recording(out_csv, names)
            try:
                with arm.subscribe(args.rate) as sub:  # before sending: no sample missed
                    ok = cycle(arm, sub, rec, home, lim)
            except KeyboardInterrupt:
                stop_everything(arm.path)
                return 1
            finally:
                rec.close()
    except armd.Error as e:
        sys.exit("pick_and_place: %s" % e)
    print("cycle: %s; %d samples at %g Hz in %s" % ("done" if ok else "failed", rec.rows,
                                                    sub.rate_hz, out_csv))
    print("largest |q_des - q| per joint [rad or m]: " +
          " ".join("%s %.4f" % (j, w) for j, w in zip(names, rec.worst)))
    if plot(out_csv, names, png):
        print("plot: %s" % png)
    else:
        print("no plot (gnuplot not installed or failed); the CSV has the data")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
