#!/usr/bin/env python3
"""Lockstep: `armctl resonance` and the ZVD input shaper on config/examples/flexarm2.ini (issue
13, part 4). armd --lockstep --paused runs armsim's arm with its flexible tubes (dynamics/flex.h,
--rate 5000) in process on a simulated clock, and controls it with the rigid model at the INI's
500 Hz, through the socket. The arm starts hanging (--q0 -1.5708,0, as tools/demo).

Simulated time advances only when this test says so (rig.run), also while armctl runs: the
same requests give the same telemetry, so every figure below is the same at every run.

1. `armctl resonance shoulder` (no options but --plot: what a user runs first) reports the
   first mode and writes the plot (the PNG where gnuplot is installed); its natural frequency
   must be within FREQ_ERR_MAX of the model's mode of the arm as armd's loop holds it at that
   pose (tests/tools/flex_loop_mode: the flexible model linearised with the rigid
   computed-torque law closed around the joints), and its damping ratio within ZETA_ERR_MAX of
   the model's. The locked-joint mode is printed beside it.
2. A demo-style move (the shoulder 0.3 rad as fast as its limits allow, move_to) with
   shaper = none, then back, then the same move after `reload` with shaper = zvd at the
   measured frequency and damping: the residual tool deflection (armsim's truth defl_x/defl_y,
   RMS about each window's linear trend, from 0.1 s after the move's end for 2 s) must fall at
   least RATIO_MIN times, and stay below ZVD_RMS_MAX.
3. The shaped move takes ZVD's length longer: one damped period at the shaper's frequency and
   damping, within the durations' rounding (and so the issue's target: at most one period 1 / f
   of the mode longer, + 1 ms).
Every measurement runs on an undisturbed loop (no late tick, failed read or read gap: there
is no host stall on simulated time), checked, not retried.
"""
import math
import os
import re
import shutil
import subprocess

from test_api_lib import Rig, arg_parser, check, run, truth_column

POSE = "-1.5708,0"
SIM_ARGS = ("--q0", POSE, "--rate", "5000")
STEP = 0.3  # rad, the shoulder's move
WINDOW = (0.1, 2.1)  # s after the move's planned end
RESONANCE_SECONDS = 3.0  # armctl resonance's default recording [s]
SETTLE = 4.0  # s after a move back before the next measurement: the ring decays e^-8.5
# Bounds: about twice what lockstep measures, where that is tighter than the targets
# (3 %, 10 x, one period 1/f + 1 ms). Measured (the same at every run): the mode 10.406 Hz,
# -0.06 % off the model's 10.412 Hz in the loop, damping ratio 0.0323 against the model's 0.0325
# (-0.6 %); residual tool deflection none 0.0749 mm, zvd 0.0048 mm RMS: 15.6 x; the shaped move
# ZVD's length longer to 2e-11 s. (Real time, armsim on a pty: -0.20 %, zeta 0.0326,
# 0.0781 / 0.0048 mm: 16.1 x.)
FREQ_ERR_MAX = 0.0012  # relative
ZETA_ERR_MAX = 0.015  # relative (armctl and flex_loop_mode print 4 decimals: 0.0001 is 0.3 %)
RATIO_MIN = 10.0  # the target (half of the 15.6 x measured would be looser)
ZVD_RMS_MAX = 0.010e-3  # m
DURATION_SLACK = 1e-6  # s: the planned durations are rounded to 1e-10 s
QUIET_LOOP = ("late_ticks", "read_gaps", "failed_reads", "failed_writes")


def parse():
    p = arg_parser()
    p.add_argument("--loop-mode", required=True, help="tests/tools/flex_loop_mode")
    p.add_argument("--plot-dir", help="write the tool deflection after both moves and its plot "
                   "(deflection-none.dat, deflection-zvd.dat, deflection.gp, deflection.png) here")
    return p.parse_args()


def model_modes(args):
    """The helper's figures: {label: (f natural, f damped, zeta)} for "in the loop ...",
    "continuous loop" and "joints locked"."""
    p = subprocess.run([args.loop_mode, args.config, POSE], capture_output=True, text=True,
                       timeout=60)
    print(p.stdout.strip())
    check(p.returncode == 0, "flex_loop_mode failed: %s" % p.stderr)
    out = {}
    for m in re.finditer(r"^([^:\n]+): f = ([0-9.]+) Hz \(damped ([0-9.]+) Hz\), zeta = ([0-9.]+)",
                         p.stdout, re.M):
        out[m.group(1).split(" (")[0]] = tuple(float(m.group(k)) for k in (2, 3, 4))
    check({"in the loop", "joints locked"} <= set(out), "flex_loop_mode printed %r" % out)
    return out


def check_quiet(c, loop0, what):
    """Fails unless the loop ran every tick on time with every read and write good since the
    status loop block loop0 (on simulated time nothing else can happen)."""
    loop1 = c.call("status")["loop"]
    moved = {k: loop1[k] - loop0[k] for k in QUIET_LOOP if loop1[k] != loop0[k]}
    check(not moved, "%s: the loop was disturbed: %s" % (what, moved))


def resonance(args, rig, c):
    """`armctl resonance shoulder --plot`, with simulated time advanced for it: armctl steps the
    joint (move_to) and records the tracking error until the first sample after its window
    (the step's planned end + RESONANCE_SECONDS); simulated time is run exactly to that sample,
    so that armctl's move back starts with time standing still, at the same tick every run.
    Returns (f natural, f damped, zeta)."""
    loop0 = c.call("status")["loop"]
    plot = os.path.join(rig.dir, "resonance")
    p = subprocess.Popen([args.armctl, "-s", rig.sock, "resonance", "shoulder", "--plot", plot],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        err = []
        while not err or "recording" not in err[-1]:  # the step is under way
            line = p.stderr.readline()
            check(line, "armctl resonance ended before its step: %s" % "".join(err))
            err.append(line)
        st = c.call("status")
        check(st["trajectory"] is not None, "no trajectory running after armctl's step")
        t_to = st["time"] + st["trajectory"]["remaining"] + RESONANCE_SECONDS
        t = rig.run(t_to + 1e-6 - st["time"])
        period = 1.0 / c.call("info")["rate_hz"]
        check(t_to < t <= t_to + period, "simulated time ran to %.6f s, not to the first tick "
              "after armctl's window (%.6f s)" % (t, t_to))
        out, rest = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    print(("".join(err) + rest).strip())
    print(out.strip())
    check(p.returncode == 0, "armctl resonance shoulder failed (exit %d)" % p.returncode)
    m = re.search(r"mode ([0-9.]+) Hz \(damped ([0-9.]+) Hz\), damping ratio ([0-9.]+)", out)
    check(m is not None, "no mode line in armctl's output")
    for suffix in (".dat", ".gp") + ((".png",) if shutil.which("gnuplot") else ()):
        check(os.path.getsize(plot + suffix) > 0, "%s%s missing or empty" % (plot, suffix))
    check_quiet(c, loop0, "armctl resonance")
    return tuple(float(m.group(k)) for k in (1, 2, 3))


def settle(rig, c):
    """Lets SETTLE seconds of simulated time pass after a move back; the arm must then hold,
    the move done."""
    rig.run(SETTLE)
    st = c.call("status")
    check(st["state"] == "holding" and st["trajectory"] is None,
          "not holding %g s after a move: %s, trajectory %s, fault %s"
          % (SETTLE, st["state"], st["trajectory"], st["fault"]))


def residual(head, rows, d, t_end):
    """RMS [m] of the tool deflection (defl_x, defl_y, each about its least-squares line) over
    WINDOW after t_end (armd time; truth time = armd time + d), and its largest excursion, from
    the truth file's header and rows."""
    it, ix, iy = (truth_column(head, k) for k in ("t", "defl_x", "defl_y"))
    t0, t1 = t_end + d + WINDOW[0], t_end + d + WINDOW[1]
    win = [r for r in rows if t0 <= r[it] <= t1]
    # the truth at every 10th physics step (the rig's default): 500 rows/s, one per tick
    check(len(win) >= 1000, "only %d truth rows in the residual window" % len(win))
    tot, peak = 0.0, 0.0
    for col in (ix, iy):
        ts = [r[it] - t0 for r in win]
        ys = [r[col] for r in win]
        n = len(ts)
        mt, my = sum(ts) / n, sum(ys) / n
        stt = sum((t - mt) ** 2 for t in ts)
        b = sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / stt
        res = [y - my - b * (t - mt) for t, y in zip(ts, ys)]
        tot += sum(e * e for e in res) / n
        peak = max(peak, max(abs(e) for e in res))
    return math.sqrt(tot), peak


def dump_deflection(path, head, rows, d, t_end):
    """Writes t - t_end [s] (armd time), defl_x, defl_y [mm] from 1 s before the move's end to
    the end of WINDOW: the data of the plot that --plot-dir writes (tests/README.md)."""
    it, ix, iy = (truth_column(head, k) for k in ("t", "defl_x", "defl_y"))
    with open(path, "w") as fh:
        for r in rows:
            t = r[it] - d - t_end
            if -1.0 <= t <= WINDOW[1]:
                fh.write("%.5f %.6f %.6f\n" % (t, 1e3 * r[ix], 1e3 * r[iy]))


def write_figure(plot_dir):
    """The gnuplot script (and the PNG where gnuplot is installed) of the tool deflection after
    the move with shaper = none and zvd."""
    gp = os.path.join(plot_dir, "deflection.gp")
    with open(gp, "w") as fh:
        fh.write("set terminal pngcairo noenhanced size 1000,420 font ',9'\n"
                 "set output '%s'\nset grid\nset xlabel \"t after the move's planned end [s]\"\n"
                 "set ylabel 'tool deflection along x [mm]'\n"
                 "set title 'flexarm2 on armsim: the shoulder 0.3 rad, shaper none and zvd'\n"
                 "plot '%s' using 1:2 with lines title 'shaper = none', '%s' using 1:2 with lines "
                 "lw 2 title 'shaper = zvd at the measured mode'\n"
                 % (os.path.join(plot_dir, "deflection.png"),
                    os.path.join(plot_dir, "deflection-none.dat"),
                    os.path.join(plot_dir, "deflection-zvd.dat")))
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot", gp], check=True)


def move(rig, c, q_start, label, dump=None):
    """The shoulder STEP from q_start as fast as the limits allow, simulated time run to the end
    of its residual WINDOW; back to q_start and settled. Returns (duration [s], residual RMS
    [m], residual peak [m])."""
    goal = [q_start[0] + STEP] + list(q_start[1:])
    loop0 = c.call("status")["loop"]
    r = c.call("move_to", {"q": goal})
    st = c.call("status")
    check(st["trajectory"] is not None, "%s: no trajectory running after move_to" % label)
    t_end = st["time"] + st["trajectory"]["remaining"]
    rig.run(st["trajectory"]["remaining"] + WINDOW[1] + 0.01)
    check_quiet(c, loop0, label)
    head, rows = rig.read_truth_columns()
    rms, peak = residual(head, rows, rig.clock_offset(), t_end)
    if dump:
        dump_deflection(dump, head, rows, rig.clock_offset(), t_end)
    print("%s: duration %.4f s, residual tool deflection RMS %.4f mm, largest %.4f mm "
          "(%.1f-%.1f s after the end)"
          % (label, r["duration"], 1e3 * rms, 1e3 * peak, WINDOW[0], WINDOW[1]))
    c.call("move_to", {"q": list(q_start)})
    settle(rig, c)
    return r["duration"], rms, peak


def reload_shaper(rig, c, f, zeta):
    """[trajectory] shaper = zvd at f [Hz], zeta (as armctl prints them), as the drop-in
    arm.d/60-shaper.ini + reload. Returns ZVD's length [s] at the values written: one damped
    period, 1 / (f sqrt(1 - zeta^2))."""
    f_text, zeta_text = "%.3f" % f, "%.4f" % zeta
    with open(os.path.join(rig.dropin_dir, "60-shaper.ini"), "w") as fh:
        fh.write("[trajectory]\nshaper = zvd\nshaper_freq = %s\nshaper_damping = %s\n"
                 % (f_text, zeta_text))
    r = c.call("reload")
    print("reload: changed %r" % r["changed"])
    check("shaper" in r["changed"] and "shaper_freq" in r["changed"],
          "reload did not switch the shaper on: %r" % r["changed"])
    check(c.call("status")["state"] == "holding", "not holding after the reload")
    return 1 / (float(f_text) * math.sqrt(1 - float(zeta_text) ** 2))


def main(args):
    model = model_modes(args)
    f_loop, zeta_loop = model["in the loop"][0], model["in the loop"][2]
    f_lock = model["joints locked"][0]
    # the INI as it is: its 500 Hz loop, read-gap limit and board watchdog (dropin "")
    with Rig(args, "resonance", sim_args=SIM_ARGS, dropin="", lockstep="paused") as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        rig.run(1.0)
        q_start = c.call("status")["q_des"]

        f, f_d, zeta = resonance(args, rig, c)
        settle(rig, c)
        err = (f - f_loop) / f_loop
        zeta_err = (zeta - zeta_loop) / zeta_loop
        print("first mode: measured %.3f Hz (damped %.3f Hz, zeta %.4f); model in the loop "
              "%.3f Hz (%+.2f %%), zeta %.4f (%+.1f %%); joints locked %.3f Hz (%+.2f %%)"
              % (f, f_d, zeta, f_loop, 100 * err, zeta_loop, 100 * zeta_err, f_lock,
                 100 * (f - f_lock) / f_lock))

        dumps = [os.path.join(args.plot_dir, "deflection-%s.dat" % k) if args.plot_dir else None
                 for k in ("none", "zvd")]
        dur_none, rms_none, peak_none = move(rig, c, q_start, "shaper = none", dumps[0])
        zvd_len = reload_shaper(rig, c, f, zeta)
        dur_zvd, rms_zvd, peak_zvd = move(rig, c, q_start, "shaper = zvd", dumps[1])
        if args.plot_dir:
            write_figure(args.plot_dir)
        ratio = rms_none / rms_zvd if rms_zvd > 0 else float("inf")
        longer = dur_zvd - dur_none
        print("residual: none %.4f mm RMS (largest %.4f), zvd %.4f mm RMS (largest %.4f): "
              "%.1f x; durations %.4f / %.4f s: +%.6f s, ZVD's length (one damped period) "
              "%.6f s, one period 1/f %.6f s"
              % (1e3 * rms_none, 1e3 * peak_none, 1e3 * rms_zvd, 1e3 * peak_zvd, ratio,
                 dur_none, dur_zvd, longer, zvd_len, 1 / f))
        print("to full precision (the same at every run): residual none %r m, zvd %r m; longer "
              "than ZVD's length by %.3g s" % (rms_none, rms_zvd, longer - zvd_len))
        c.close()
        missed = []  # every target judged, all misses named
        if abs(err) > FREQ_ERR_MAX:
            missed.append("measured mode %.3f Hz is %.2f %% off the model's %.3f Hz in the loop "
                          "(bound %g %%)" % (f, 100 * err, f_loop, 100 * FREQ_ERR_MAX))
        if abs(zeta_err) > ZETA_ERR_MAX:
            missed.append("measured damping ratio %.4f is %.1f %% off the model's %.4f (bound "
                          "%g %%)" % (zeta, 100 * zeta_err, zeta_loop, 100 * ZETA_ERR_MAX))
        if ratio < RATIO_MIN:
            missed.append("ZVD cut the residual only %.1f x (target >= %g)" % (ratio, RATIO_MIN))
        if rms_zvd > ZVD_RMS_MAX:
            missed.append("the residual after the shaped move is %.4f mm RMS (bound %.4f)"
                          % (1e3 * rms_zvd, 1e3 * ZVD_RMS_MAX))
        if abs(longer - zvd_len) > DURATION_SLACK:
            missed.append("the shaped move took %.6f s longer, not ZVD's length %.6f s (one "
                          "damped period at the shaper's values)" % (longer, zvd_len))
        if longer > 1 / f + 0.001:
            missed.append("the shaped move took %.4f s longer, more than one period 1/f = %.4f s"
                          % (longer, 1 / f))
        check(not missed, "; ".join(missed))
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main, parse)
