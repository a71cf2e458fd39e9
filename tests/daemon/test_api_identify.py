#!/usr/bin/env python3
"""Integration: `armctl identify` on the PUMA 560 (armsim on a pty, real socket, 1 kHz, computed
torque). armsim plays an arm that differs from the config: `--perturb 3` changes every link's
mass, COM and principal moments by up to 30 % and its friction by up to 50 % (armd is not
told).

- Refusals: identify while disabled (exit 1, says to enable), a bad option (exit 2).
- armctl identify (the default 5 x 10 s excitation, a 10 s validation excitation) exits 0 and
  writes the INI fragment, the report and the plot's data and script (and the PNG when gnuplot
  is installed); its validation torque error is within the issue's 5 % of the torque RMS and
  well below the configured model's.
- The fragment is a drop-in that `reload` applies while the arm holds.
- Tracking of the demo-style move with the configured model, the identified one and the exact
  one (armsim --print-model of the same perturbed arm), each reloaded in turn into the same
  armd: the identified model tracks at least 10 x better than the configured one and within the
  issue's 1.2 x of the exact one (each the mean of two moves; 0.96-1.18 x with one move each in
  4 runs when this was written; 1.07-1.14 x before identify fitted the torque's timing and
  solved for consistent parameters exactly; 1.5-1.9 x while it fitted the commanded torque,
  which the servos round to 0.018 N m at the wrist)."""
import os
import re
import shutil
import subprocess

from test_api_calibrate import move_back
from test_api_lib import READY_POSE, Rig, check, run
from test_api_payload import compared_move, move_rms
from test_api_tracking import make_points

SEED = "3"


def armctl(args, rig, *cmd, timeout=30):
    p = subprocess.run([args.armctl, "-s", rig.sock] + list(cmd), capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def reload_with(rig, c, name, text):
    """Puts text in as the drop-in arm.d/60-NAME.ini in place of the last one and reloads, as
    the README tells users to: the arm holds meanwhile."""
    for f in os.listdir(rig.dropin_dir):
        if f.startswith("60-"):
            os.remove(os.path.join(rig.dropin_dir, f))
    with open(os.path.join(rig.dropin_dir, "60-%s.ini" % name), "w") as f:
        f.write(text)
    r = c.call("reload")
    check("mass" in r["changed"] and "inertia" in r["changed"],
          "reload with the %s model changed only %r" % (name, r["changed"]))
    check(c.call("status")["state"] == "holding", "not holding after the reload")


def track_identified_exact(rig, c, points, q0, identified_path, exact, moves=2):
    """The move's RMS following error with the identified model (the INI fragment at
    identified_path) and then the exact one (INI text), each reloaded into the same armd, warmed
    up once and then measured over `moves` moves, their mean: two moves with one model differ by
    up to 10 % on this VM, noise a single move of each would put into their ratio. Back at q0
    after each model. Returns (identified, exact) [rad]."""
    out = []
    for name, text in (("identified", open(identified_path).read()), ("exact", exact)):
        reload_with(rig, c, name, text)
        move_rms(rig, c, points, "warm-up (%s)" % name)
        rms = [compared_move(rig, c, points, "%s model" % name) for _ in range(moves)]
        out.append(sum(rms) / moves)
        move_back(c, q0)
    return tuple(out)


def validation_figures(text):
    """(identified, configured) validation torque error [% of the torque RMS] from armctl
    identify's report."""
    m = re.search(r"all joints: ([0-9.]+) % of the torque RMS \(configured model ([0-9.]+) %\)",
                  text)
    check(m is not None, "no validation line in the report")
    return float(m.group(1)), float(m.group(2))


def print_tracking(rms_id, rms_exact, rms_cfg, err_id, err_cfg):
    print("tracking: identified %.3f mrad = %.2f x the exact model's %.3f (target <= 1.2); "
          "configured model %.3f; validation torque error %.2f %% (configured %.2f %%)"
          % (1e3 * rms_id, rms_id / rms_exact, 1e3 * rms_exact, 1e3 * rms_cfg, err_id, err_cfg))


def main(args):
    sim = READY_POSE + ("--perturb", SEED)
    exact = subprocess.run([args.armsim, "-c", args.config, "--print-model", "--perturb", SEED],
                           capture_output=True, text=True, check=True).stdout
    check("[joint" in exact, "armsim --print-model printed no joints:\n" + exact)
    with Rig(args, "identify", sim_args=sim) as rig:
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
        move_back(c, q0)
        rms_cfg, _ = move_rms(rig, c, points, "configured model", must_finish=False)
        move_back(c, q0)

        rc, text, err = armctl(args, rig, "identify", "--out", out, "--report", report,
                               timeout=240)
        print(err.strip())
        print(text.strip())
        check(rc == 0, "armctl identify failed (exit %d)" % rc)
        check("torque fitted: the servos' reports" in text,
              "identify did not fit the servos' torque reports (tau_meas)")
        err_id, err_cfg = validation_figures(text)
        check(err_id <= 5.0, "validation torque error %.2f %% (target <= 5 %%)" % err_id)
        check(err_id * 3 < err_cfg, "identified %.2f %% is not well below the configured %.2f %%"
              % (err_id, err_cfg))
        for suffix in (".txt", ".dat", ".gp") + ((".png",) if shutil.which("gnuplot") else ()):
            check(os.path.getsize(report + suffix) > 0, "%s%s missing or empty" % (report, suffix))
        motion = re.search(r"([0-9.]+) s of motion recorded", text)
        check(motion and float(motion.group(1)) <= 60.5,
              "identification motion: %s (target <= 60 s)" % (motion and motion.group(1)))

        rms_id, rms_exact = track_identified_exact(rig, c, points, q0, out, exact)
        c.close()
        print_tracking(rms_id, rms_exact, rms_cfg, err_id, err_cfg)
        check(rms_cfg > 10 * rms_id, "tracking with the identified model (%.3f mrad) is not 10 x "
              "better than with the configured one (%.3f mrad)" % (1e3 * rms_id, 1e3 * rms_cfg))
        check(rms_id <= 1.2 * rms_exact, "tracking with the identified model: %.3f mrad, %.2f x "
              "the exact model's %.3f (target <= 1.2 x)"
              % (1e3 * rms_id, rms_id / rms_exact, 1e3 * rms_exact))


if __name__ == "__main__":
    run(main)
