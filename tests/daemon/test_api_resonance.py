#!/usr/bin/env python3
"""Integration: `armctl resonance` and the ZVD input shaper on config/examples/flexarm2.ini
(issue 13, part 4). armsim --rate 5000 simulates the flexible tubes (dynamics/flex.h); armd
controls with the rigid model at the INI's 500 Hz. The arm starts hanging (--q0 -1.5708,0, as
tools/demo).

1. `armctl resonance shoulder` (no options but --plot: what a user runs first) reports the
   first mode and writes the plot (the PNG where gnuplot is installed);
   its natural frequency must be within 3 % of the model's mode of the arm as armd's loop holds
   it at that pose (tests/tools/flex_loop_mode: the flexible model linearised with the rigid
   computed-torque law closed around the joints). The locked-joint mode is printed beside it.
2. A demo-style move (the shoulder 0.3 rad as fast as its limits allow, move_to) with
   shaper = none, then back, then the same move after `reload` with shaper = zvd at the
   measured frequency and damping: the residual tool-deflection oscillation (armsim's truth
   defl_x/defl_y, RMS about each window's linear trend, from 0.1 s after the move's end for
   2 s) must fall at least 10 x.
3. The shaped move may take at most one period of the mode (1 / f) longer (+ 1 ms).

A measurement during which armd's loop ran late or lost reads (the 2-core CI VM stalls now and
then) is taken again, at most 3 times in all, and the output says so."""
import math
import os
import re
import shutil
import subprocess
import time

from test_api_lib import (Recorder, Rig, align_offset, arg_parser, check, run, truth_column,
                          truth_rows)

POSE = "-1.5708,0"
SIM_ARGS = ("--q0", POSE, "--rate", "5000")
# the INI's own 500 Hz loop and read-gap limits (its board watchdog is 50 ms); FIFO priority
DROPIN = "[realtime]\npriority = 50\n"
STEP = 0.3  # rad, the shoulder's move
WINDOW = (0.1, 2.1)  # s after the move's planned end
TRIES = 3
DISTURBED = 10  # late ticks + read gaps + failed reads that make a measurement not count


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


def stalls(c, loop0):
    """Late ticks, read gaps and failed reads since the status loop block loop0."""
    loop1 = c.call("status")["loop"]
    return sum(loop1[k] - loop0[k] for k in ("late_ticks", "read_gaps", "failed_reads"))


def resonance(args, rig, c):
    """`armctl resonance shoulder`, taken again (at most TRIES in all) when the loop stalled
    meanwhile. Returns (f natural, f damped, zeta)."""
    for i in range(TRIES):
        loop0 = c.call("status")["loop"]
        plot = os.path.join(rig.dir, "resonance")
        p = subprocess.run([args.armctl, "-s", rig.sock, "resonance", "shoulder", "--plot", plot],
                           capture_output=True, text=True, timeout=60)
        late = stalls(c, loop0)
        print(p.stderr.strip())
        print(p.stdout.strip())
        check(p.returncode == 0, "armctl resonance shoulder failed (exit %d)" % p.returncode)
        m = re.search(r"mode ([0-9.]+) Hz \(damped ([0-9.]+) Hz\), damping ratio ([0-9.]+)",
                      p.stdout)
        check(m is not None, "no mode line in armctl's output")
        for suffix in (".dat", ".gp") + ((".png",) if shutil.which("gnuplot") else ()):
            check(os.path.getsize(plot + suffix) > 0, "%s%s missing or empty" % (plot, suffix))
        if late <= DISTURBED:
            break
        print("resonance: %d late ticks / read gaps meanwhile; measuring again (try %d of %d)"
              % (late, i + 2, TRIES) if i + 1 < TRIES else
              "resonance: %d late ticks / read gaps meanwhile; the last try counts" % late)
    return tuple(float(m.group(k)) for k in (1, 2, 3))


def settle(c, seconds):
    """Waits until the arm holds again, then seconds more (the ring dies out meanwhile)."""
    deadline = time.time() + 30
    while c.call("status")["state"] != "holding" and time.time() < deadline:
        time.sleep(0.05)
    check(c.call("status")["state"] == "holding", "the arm does not hold after a move")
    time.sleep(seconds)


def residual(head, rows, d, t_end):
    """RMS [m] of the tool deflection (defl_x, defl_y, each about its least-squares line) over
    WINDOW after t_end (armd time; truth time = armd time + d, from align_offset on the move's
    telemetry), and its largest excursion, from the truth file's header and rows."""
    it, ix, iy = (truth_column(head, k) for k in ("t", "defl_x", "defl_y"))
    t0, t1 = t_end + d + WINDOW[0], t_end + d + WINDOW[1]
    win = [r for r in rows if t0 <= r[it] <= t1]
    check(len(win) > 1000, "only %d truth rows in the residual window" % len(win))
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
    the end of WINDOW: the data of the README's figure."""
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
    """The shoulder STEP from q_start as fast as the limits allow; back to q_start. Taken again
    (at most TRIES in all) when the loop stalled during the move or its window. Returns
    (duration [s], residual RMS [m], residual peak [m])."""
    goal = [q_start[0] + STEP] + list(q_start[1:])
    for i in range(TRIES):
        settle(c, 1.0)
        loop0 = c.call("status")["loop"]
        rec = Recorder(rig.sock, 100)
        t_call = time.monotonic() - rig.sim_ready  # truth time at most this at the call
        r = c.call("move_to", {"q": goal})
        st = c.call("status")
        check(st["trajectory"] is not None, "%s: no trajectory running after move_to" % label)
        t_end = st["time"] + st["trajectory"]["remaining"]
        rec.collect(st["trajectory"]["remaining"] + WINDOW[1] + 0.3)
        rec.client.close()
        late = stalls(c, loop0)
        head, rows = rig.read_truth_columns(cover=time.monotonic())
        # the clocks aligned on this move alone (the arm passes the same angles on other moves)
        it = truth_column(head, "t")
        d = align_offset(rec.samples, truth_rows((head, [x for x in rows if x[it] >= t_call - 1])))
        rms, peak = residual(head, rows, d, t_end)
        if dump:
            dump_deflection(dump, head, rows, d, t_end)
        print("%s: duration %.4f s, residual tool deflection RMS %.4f mm, largest %.4f mm "
              "(%.1f-%.1f s after the end); %d late ticks / read gaps"
              % (label, r["duration"], 1e3 * rms, 1e3 * peak, WINDOW[0], WINDOW[1], late))
        c.call("move_to", {"q": list(q_start)})
        if late <= DISTURBED:
            break
        if i + 1 < TRIES:
            print("%s: the loop stalled during the measurement; measuring again (try %d of %d)"
                  % (label, i + 2, TRIES))
        else:
            print("%s: the loop stalled during the measurement; the last try counts" % label)
    settle(c, 1.0)
    return r["duration"], rms, peak


def reload_shaper(rig, c, f, zeta):
    """[trajectory] shaper = zvd at f [Hz], zeta, as the drop-in arm.d/60-shaper.ini + reload."""
    with open(os.path.join(rig.dropin_dir, "60-shaper.ini"), "w") as fh:
        fh.write("[trajectory]\nshaper = zvd\nshaper_freq = %.3f\nshaper_damping = %.4f\n"
                 % (f, zeta))
    r = c.call("reload")
    print("reload: changed %r" % r["changed"])
    check("shaper" in r["changed"] and "shaper_freq" in r["changed"],
          "reload did not switch the shaper on: %r" % r["changed"])
    check(c.call("status")["state"] == "holding", "not holding after the reload")


def main(args):
    model = model_modes(args)
    f_loop, f_lock = model["in the loop"][0], model["joints locked"][0]
    with Rig(args, "resonance", sim_args=SIM_ARGS, dropin=DROPIN) as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        q_start = c.call("status")["q_des"]

        f, f_d, zeta = resonance(args, rig, c)
        err = (f - f_loop) / f_loop
        print("first mode: measured %.3f Hz (damped %.3f Hz, zeta %.4f); model in the loop "
              "%.3f Hz (%+.2f %%); joints locked %.3f Hz (%+.2f %%)"
              % (f, f_d, zeta, f_loop, 100 * err, f_lock, 100 * (f - f_lock) / f_lock))

        dumps = [os.path.join(args.plot_dir, "deflection-%s.dat" % k) if args.plot_dir else None
                 for k in ("none", "zvd")]
        dur_none, rms_none, peak_none = move(rig, c, q_start, "shaper = none", dumps[0])
        reload_shaper(rig, c, f, zeta)
        dur_zvd, rms_zvd, peak_zvd = move(rig, c, q_start, "shaper = zvd", dumps[1])
        if args.plot_dir:
            write_figure(args.plot_dir)
        ratio = rms_none / rms_zvd if rms_zvd > 0 else float("inf")
        print("residual: none %.4f mm RMS (largest %.4f), zvd %.4f mm RMS (largest %.4f): "
              "%.1f x; durations %.4f / %.4f s: +%.4f s, one period 1/f = %.4f s"
              % (1e3 * rms_none, 1e3 * peak_none, 1e3 * rms_zvd, 1e3 * peak_zvd, ratio,
                 dur_none, dur_zvd, dur_zvd - dur_none, 1 / f))
        c.close()
        missed = []  # every target judged, all misses named
        if abs(err) > 0.03:
            missed.append("measured mode %.3f Hz is %.2f %% off the model's %.3f Hz in the loop "
                          "(target 3 %%)" % (f, 100 * err, f_loop))
        if ratio < 10:
            missed.append("ZVD cut the residual only %.1f x (target >= 10)" % ratio)
        if dur_zvd - dur_none > 1 / f + 0.001:
            missed.append("the shaped move took %.4f s longer, more than one period 1/f = %.4f s"
                          % (dur_zvd - dur_none, 1 / f))
        check(not missed, "; ".join(missed))


if __name__ == "__main__":
    run(main, parse)
