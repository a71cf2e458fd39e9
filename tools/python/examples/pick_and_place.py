#!/usr/bin/env python3
"""pick_and_place.py — an armd client example: a pick-and-place cycle in joint space, recorded.

From the arm's present position ("home") the arm goes above a pick point, down, dwells (the
gripper would close), up, swings over to a place point, down, dwells, up and back home. The
waypoints are offsets from home on the first six joints (a PUMA-like arm: waist, shoulder,
elbow, wrist), clamped 0.1 rad inside the position limits, and the arm comes to rest at each
one. While it moves, telemetry is
recorded to CSV (t, q_<joint>..., q_des_<joint>..., tau_<joint>...; SI units) and, when gnuplot
is installed, plotted to a PNG of desired vs measured joint positions.

Against the simulated PUMA 560 of tools/demo (armsim + armd, see tools/python/README.md):

    PYTHONPATH=tools/python python3 tools/python/examples/pick_and_place.py \\
        -s /tmp/armd.sock --out /tmp/pick

It enables a disabled arm (which then holds where it is) and leaves the arm holding at home;
Ctrl-C cancels the motion (the arm decelerates within its limits and holds). Exit status 0 when
the cycle ended "done", 1 otherwise.
"""
import argparse
import csv
import itertools
import os
import shutil
import subprocess
import sys

import armd

# (duration of the leg [s], offset from home per joint [rad]) — above pick, down, dwell, up,
# over to place, down, dwell, up, home
LEGS = [
    (1.6, [0.5, 0.3, -0.2, 0.0, 0.3, 0.0]),
    (0.8, [0.5, 0.45, -0.35, 0.0, 0.45, 0.0]),
    (0.4, [0.5, 0.45, -0.35, 0.0, 0.45, 0.0]),
    (0.8, [0.5, 0.3, -0.2, 0.0, 0.3, 0.0]),
    (1.8, [-0.5, 0.3, -0.2, 0.0, 0.3, 0.5]),
    (0.8, [-0.5, 0.45, -0.35, 0.0, 0.45, 0.5]),
    (0.4, [-0.5, 0.45, -0.35, 0.0, 0.45, 0.5]),
    (0.8, [-0.5, 0.3, -0.2, 0.0, 0.3, 0.5]),
    (1.6, [0.0] * 6),
]
MARGIN = 0.1  # [rad or m] kept from each position limit


def waypoints(home, lower, upper):
    """The cycle as armd.points: times from the legs' durations, positions home + offset
    clamped MARGIN inside the limits, at rest at every waypoint (qd = 0: each leg starts and
    stops, as a pick or a place needs)."""
    qs = []
    for _, off in LEGS:
        q = [h + (off[j] if j < len(off) else 0.0) for j, h in enumerate(home)]
        qs.append([min(max(x, lo + MARGIN), hi - MARGIN) for x, lo, hi in zip(q, lower, upper)])
    return armd.points(itertools.accumulate(d for d, _ in LEGS), qs,
                       qd=[[0.0] * len(home)] * len(qs))


def record(arm, sub, motion, out_csv, names):
    """Writes telemetry rows until the motion's trajectory_done (or a fault); returns
    (its result, the number of rows, the largest |q_des - q| per joint)."""
    n = len(names)
    worst = [0.0] * n
    rows = 0
    result = None
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t"] + ["%s_%s" % (g, j) for g in ("q", "q_des", "tau") for j in names])
        for rec in sub:
            if isinstance(rec, armd.Telemetry):
                w.writerow(["%.6f" % rec.time] + ["%.9g" % x for x in rec.q + rec.q_des + rec.tau])
                rows += 1
                worst = [max(m, abs(a - b)) for m, a, b in zip(worst, rec.q_des, rec.q)]
            elif rec.method == "trajectory_done" and rec["id"] == motion.id:
                result = rec["result"]
                break
            elif rec.method == "fault":
                print("fault: %s" % rec["reason"], file=sys.stderr)
            elif rec.method == "state":
                print("state: %s" % rec["state"])
    return result, rows, worst


def plot(out_csv, names, png):
    """desired (dashed) vs measured joint positions, one panel per joint, with gnuplot; False
    when gnuplot is missing or fails."""
    if not shutil.which("gnuplot"):
        return False
    n = len(names)
    cols = (n + 1) // 2
    script = ["set terminal pngcairo size 1400,900 font ',10'", "set output '%s'" % png,
              "set datafile separator ','", "set termoption noenhanced",
              "set multiplot layout %d,2 title 'pick and place: desired (dashed) vs measured'"
              % cols, "set xlabel 't [s]'; set grid; set key tmargin horizontal"]
    for j, name in enumerate(names):
        script.append("set title '%s'" % name)
        script.append("plot '%s' every ::1 using 1:%d with lines dt 2 lw 2 title 'desired', "
                      "'' every ::1 using 1:%d with lines title 'measured'" %
                      (out_csv, 2 + n + j, 2 + j))
    script.append("unset multiplot")
    r = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True,
                       capture_output=True)
    if r.returncode != 0:
        print("gnuplot failed: %s" % r.stderr.strip(), file=sys.stderr)
    return r.returncode == 0


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
            names, lim = info.joints, info.limits
            st = arm.status()  # an armd.Status
            if st.state in ("fault", "estop"):
                sys.exit("the arm is in %s (%s): reset it first (armctl reset)" %
                         (st.state, st.fault))
            if st.state == "disabled":
                print("enabling: %s" % arm.enable())
            home = arm.status().q_des
            pts = waypoints(home, lim.lower, lim.upper)
            with arm.subscribe(args.rate) as sub:  # before sending: no sample missed
                # blocking=False: returns once armd accepted it, so that the loop below
                # records the telemetry while the arm moves (blocking=True would return
                # the Done record at the end, with nothing recorded)
                motion = arm.trajectory(pts, blocking=False)
                print("trajectory %d: %d waypoints, %.2f s" % (motion.id, len(pts),
                                                               motion.duration))
                try:
                    result, rows, worst = record(arm, sub, motion, out_csv, names)
                except KeyboardInterrupt:
                    print("interrupted: cancelling the motion -> %s" % arm.cancel())
                    return 1
    except armd.Error as e:
        sys.exit("pick_and_place: %s" % e)
    print("result: %s; %d samples at %g Hz in %s" % (result, rows, sub.rate_hz, out_csv))
    print("largest |q_des - q| per joint [rad or m]: " +
          " ".join("%s %.4f" % (j, w) for j, w in zip(names, worst)))
    if plot(out_csv, names, png):
        print("plot: %s" % png)
    else:
        print("no plot (gnuplot not installed or failed); the CSV has the data")
    return 0 if result == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
