#!/usr/bin/env python3
"""Integration: `armctl identify` on the PUMA 560 on simulated time (armd --lockstep --paused:
armsim's arm in armd's own process, 1 kHz, computed torque, real socket). armsim plays an arm
that differs from the config: `--perturb 3` changes every link's mass, COM and principal moments
by up to 30 % and its friction by up to 50 % (armd is not told).

Paused, the test running time: armctl identify sends a motion and has armd record it up to
the motion's end; the test runs simulated time only while armctl records (identify()), so each
of armctl's requests meets the arm at the same tick and the test gives the same figures run
after run (the identified model bit for bit).

- Refusals: identify while disabled (exit 1, says to enable), a bad option (exit 2).
- armctl identify (the default 5 x 10 s excitation, a 10 s validation excitation) exits 0 and
  writes the INI fragment, the report, the samples and the plot's data and script (and the PNG
  when gnuplot is installed); it fitted the servos' torque reports; no gap in the telemetry it
  recorded and no late tick, overrun or read gap meanwhile (none can happen on simulated time);
  its validation torque error is within VALIDATION_MAX and at least VALIDATION_CFG_MIN times
  below the configured model's.
- The fragment is a drop-in that `reload` applies while the arm holds.
- Tracking of the demo-style move with the configured model, the identified one and the exact
  one (armsim --print-model of the same perturbed arm), each reloaded in turn into the same
  armd, one move each after a warm-up: the identified model tracks at least CFG_OVER_ID_MIN
  times better than the configured one and within ID_OVER_EXACT_MAX x the exact one. One move
  is enough: three moves in a row with one model agree within 0.5 % here (they start from what
  the move back left, not from the same state); on the real-time rig two differed by up to
  10 %, and the test averaged two per model."""
import os
import queue
import re
import shutil
import subprocess
import threading
import time

from test_api_lib import READY_POSE, Rig, TestFailure, check, run
from test_api_payload import check_loop_kept, loop_counts, move_back, move_rms
from test_api_tracking import make_points

SEED = "3"
# Bounds, about twice what lockstep gives (3 runs, the same figures each): the identified
# model's validation torque error 0.02 % (the report's resolution), the configured model's
# 24.48 %; tracking with the identified model 0.969 x the exact model's (0.967-0.982 x with
# other orders of moves and on the free-running rig: a move's figure varies by 0.5 % with where
# it starts), with the configured model 89 x. The targets, 5 % and 1.2 x, are the outer
# bounds. The real-time rig measured 0.96-1.18 x with one move per model (1.07-1.14 x before
# identify fitted the torque's timing, 1.5-1.9 x while it fitted the commanded torque).
VALIDATION_MAX = 0.05     # [% of the torque RMS]
VALIDATION_CFG_MIN = 500  # the configured model's validation error / the identified one's
ID_OVER_EXACT_MAX = 1.03  # tracking with the identified model / with the exact one
CFG_OVER_ID_MIN = 40      # tracking with the configured model / with the identified one
ID_TAIL_S = 0.2      # [s] armctl records a motion up to its last trajectory_done + this
                     # (tools/armctl/ident_record.c, ID_TAIL_S)
MOTION_MAX_S = 120   # [s] of simulated time for a motion of armctl's (50 s by default)
ARMCTL_WAIT_S = 120  # [s] of wall-clock time for armctl to go on (a bound only)


def armctl(args, rig, *cmd, timeout=30):
    """Runs armctl on the rig's socket; (exit status, stdout, stderr). timeout [s, wall] only
    bounds a hang."""
    p = subprocess.run([args.armctl, "-s", rig.sock] + list(cmd), capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def reload_with(rig, c, name, text):
    """Puts text in as the drop-in arm.d/60-NAME.ini in place of the last one and reloads, as
    tools/armctl/README.md tells users to: the arm holds meanwhile."""
    for f in os.listdir(rig.dropin_dir):
        if f.startswith("60-"):
            os.remove(os.path.join(rig.dropin_dir, f))
    with open(os.path.join(rig.dropin_dir, "60-%s.ini" % name), "w") as f:
        f.write(text)
    r = c.call("reload")
    check("mass" in r["changed"] and "inertia" in r["changed"],
          "reload with the %s model changed only %r" % (name, r["changed"]))
    check(c.call("status")["state"] == "holding", "not holding after the reload")


def track_identified_exact(rig, c, points, q0, identified_path, exact):
    """The move's RMS following error with the identified model (the INI fragment at
    identified_path) and then the exact one (INI text), each reloaded into the same armd, warmed
    up once (a model change moves the arm's equilibrium: it creeps to the new one through the
    friction band) and then measured once; back at q0 after each model. Returns (identified,
    exact) [rad]."""
    out = []
    for name, text in (("identified", open(identified_path).read()), ("exact", exact)):
        reload_with(rig, c, name, text)
        move_rms(rig, c, points, "warm-up (%s)" % name)
        out.append(move_rms(rig, c, points, "%s model" % name))
        move_back(rig, c, q0)
    return tuple(out)


def _lines(stream, into, keep):
    """In a thread: each line of stream into the queue into and the list keep; None at its end."""
    for line in stream:
        keep.append(line)
        into.put(line)
    into.put(None)


def _next_motion(lines, what):
    """Waits (wall clock, a bound only) for armctl's line saying its next motion was sent and it
    now records it ("... motion: 50 s (5 x 10 s)"); None when armctl ended first."""
    while True:
        try:
            line = lines.get(timeout=ARMCTL_WAIT_S)
        except queue.Empty:
            raise TestFailure("%s: armctl said nothing for %d s" % (what, ARMCTL_WAIT_S))
        if line is None:
            return None
        if re.match(r"armctl: identify: \w+ motion: ", line):
            return line


def _run_motion(rig, c, rec, period, what):
    """Runs simulated time through the motion armctl just sent (its trajectories and their goal
    check: until status shows none, in 0.1 s steps, less than armctl's tail) and then to
    exactly one period past its last trajectory_done + ID_TAIL_S, where armctl stops reading."""
    ran, last = 0.0, None
    while True:
        st = c.call("status")
        if st["trajectory"] is None:
            break
        last = st["trajectory"]["id"]  # the motion's last trajectory is 10 s long: seen here
        check(ran < MOTION_MAX_S, "%s: still moving after %g s" % (what, MOTION_MAX_S))
        rig.run(0.1)
        ran += 0.1
    check(last is not None, "%s: no trajectory running" % what)
    deadline = time.monotonic() + 10  # the recorder's thread reads the event it was sent
    while True:
        done = [e["params"] for e in list(rec.events) if e["method"] == "trajectory_done"
                and e["params"]["id"] == last]
        if done:
            break
        check(time.monotonic() < deadline, "%s: trajectory %d's end did not reach the recorder"
              % (what, last))
        time.sleep(0.01)
    left = done[0]["time"] + ID_TAIL_S + period - st["time"]
    check(left > 0, "%s: ran %.3f s past armctl's tail" % (what, -left))
    rig.run(left)


def start_identify(args, rig, out, report, extra=()):
    """armctl identify started, its stderr lines in a queue as they come (and kept in err), its
    stdout kept in text: (process, lines, err, text, the two reader threads)."""
    p = subprocess.Popen([args.armctl, "-s", rig.sock, "identify", "--out", out, "--report",
                          report] + list(extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, err, text = queue.Queue(), [], []
    readers = [threading.Thread(target=_lines, args=a, daemon=True)
               for a in ((p.stderr, lines, err), (p.stdout, queue.Queue(), text))]
    for t in readers:
        t.start()
    return p, lines, err, text, readers


def identify(args, rig, out, report):
    """Runs armctl identify (the defaults) on paused simulated time and checks what every run
    must show: exit 0, no late tick, overrun or read gap meanwhile and no gap in the telemetry
    it recorded, the report's files. Returns its stdout (printed, with its stderr).

    Time runs only while armctl records a motion: once it says it sent the motion (its
    trajectories each took the tick armd needs to answer them), the test runs the motion through
    and then exactly to where armctl stops recording (_run_motion); armctl then computes and
    sends the next motion with time standing still. So each of armctl's requests meets the arm
    at the same tick, run after run (armd records each motion from the tick after armctl's
    record.start). A recorder of the test's own (10 Hz) sees the motion's end."""
    c = rig.client()
    rec = rig.recorder(10)
    period = 1.0 / c.call("info")["rate_hz"]
    before = loop_counts(c)
    p, lines, err, text, readers = start_identify(args, rig, out, report)
    try:
        for what in ("identification", "validation"):
            if _next_motion(lines, what) is None:
                break
            _run_motion(rig, c, rec, period, what + " motion")
        rc = p.wait(ARMCTL_WAIT_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for t in readers:
            t.join(5)
        rec.close()
    err, text = "".join(err), "".join(text)
    print(err.strip())
    print(text.strip())
    check(rc == 0, "armctl identify failed (exit %d)" % rc)
    check_loop_kept(c, before, "armctl identify")
    c.close()
    check("gaps in the telemetry" not in err,
          "armctl identify saw gaps in the telemetry on simulated time (none can happen)")
    for suffix in (".txt", ".dat", ".gp", ".csv") + ((".png",) if shutil.which("gnuplot") else ()):
        check(os.path.getsize(report + suffix) > 0, "%s%s missing or empty" % (report, suffix))
    return text


def validation_figures(text):
    """(identified, configured) validation torque error [% of the torque RMS] from armctl
    identify's report."""
    m = re.search(r"all joints: ([0-9.]+) % of the torque RMS \(configured model ([0-9.]+) %\)",
                  text)
    check(m is not None, "no validation line in the report")
    return float(m.group(1)), float(m.group(2))


def check_validation(err_id, err_cfg, bound, cfg_min):
    """The validation torque error [%] within bound and at least cfg_min times below the
    configured model's."""
    check(err_id <= bound, "validation torque error %.2f %% (bound %.2f %%)" % (err_id, bound))
    check(err_id * cfg_min <= err_cfg, "identified %.2f %% is not %g x below the configured "
          "%.2f %%" % (err_id, cfg_min, err_cfg))


def print_tracking(rms_id, rms_exact, rms_cfg, err_id, err_cfg):
    print("tracking: identified %.4f mrad = %.4f x the exact model's %.4f; configured model "
          "%.4f (%.1f x the identified); validation torque error %.3f %% (configured %.2f %%)"
          % (1e3 * rms_id, rms_id / rms_exact, 1e3 * rms_exact, 1e3 * rms_cfg, rms_cfg / rms_id,
             err_id, err_cfg))


def check_tracking(rms_id, rms_exact, rms_cfg, exact_max, cfg_min):
    """Tracking with the identified model within exact_max x the exact model's and at least
    cfg_min times better than the configured model's."""
    check(rms_id <= exact_max * rms_exact, "tracking with the identified model: %.4f mrad, "
          "%.4f x the exact model's %.4f (bound %.3f x)"
          % (1e3 * rms_id, rms_id / rms_exact, 1e3 * rms_exact, exact_max))
    check(rms_cfg >= cfg_min * rms_id, "tracking with the identified model (%.4f mrad) is only "
          "%.2f x better than with the configured one (%.4f mrad; at least %g x)"
          % (1e3 * rms_id, rms_cfg / rms_id, 1e3 * rms_cfg, cfg_min))


def exact_model(args, seed=SEED):
    """The perturbed arm's dynamics as an INI drop-in (armsim --print-model)."""
    exact = subprocess.run([args.armsim, "-c", args.config, "--print-model", "--perturb", seed],
                           capture_output=True, text=True, check=True).stdout
    check("[joint" in exact, "armsim --print-model printed no joints:\n" + exact)
    return exact


def main(args):
    sim = READY_POSE + ("--perturb", SEED)
    exact = exact_model(args)
    with Rig(args, "identify", sim_args=sim, lockstep="paused") as rig:
        out = os.path.join(rig.dir, "identified.ini")
        report = os.path.join(rig.dir, "identify")
        c = rig.client()
        info = c.call("info")
        check(os.path.samefile(info["config"], rig.config), "info.config: %s" % info["config"])
        rc, _, err = armctl(args, rig, "identify", "--out", out, "--report", report)
        check(rc == 1 and "enable" in err, "identify while disabled: %d %s" % (rc, err))
        rc, _, err = armctl(args, rig, "identify", "--periods", "0")
        check(rc == 2 and "'0'" in err, "identify --periods 0: exit %d (want 2): %s" % (rc, err))

        check(c.call("enable")["state"] == "holding", "enable did not hold")
        q0 = c.call("status")["q_des"]
        points = make_points(info, q0)
        # the configured model may miss the goal tolerance at the end (an aborted move, armd
        # then holds where it is): its figure is only the comparison's reference
        move_rms(rig, c, points, "warm-up (configured)", must_finish=False)
        move_back(rig, c, q0)
        rms_cfg = move_rms(rig, c, points, "configured model", must_finish=False)
        move_back(rig, c, q0)

        text = identify(args, rig, out, report)
        check("torque fitted: the servos' reports" in text,
              "identify did not fit the servos' torque reports (tau_meas)")
        err_id, err_cfg = validation_figures(text)
        motion = re.search(r"([0-9.]+) s of motion recorded", text)
        check(motion and float(motion.group(1)) <= 60.5,
              "identification motion: %s (target <= 60 s)" % (motion and motion.group(1)))
        check_validation(err_id, err_cfg, VALIDATION_MAX, VALIDATION_CFG_MIN)

        rms_id, rms_exact = track_identified_exact(rig, c, points, q0, out, exact)
        c.close()
        print_tracking(rms_id, rms_exact, rms_cfg, err_id, err_cfg)
        check_tracking(rms_id, rms_exact, rms_cfg, ID_OVER_EXACT_MAX, CFG_OVER_ID_MIN)
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
