#!/usr/bin/env python3
"""Integration: the gripper end to end (issue 33), through the Python client, armctl and the
example: real armd + armsim on a pseudo-terminal (the Rig of tests/daemon/test_api_lib.py) with
the OpenManipulator-X example (its [tool gripper], 400 Hz; the drop-in widens the read-gap and
bus-watchdog bounds, as for every real-time rig, and takes gravity away: see DROPIN), armsim
holding a 30 mm object of stiffness 1e5 N/m between the fingers (--object 0.03,1e5).

With the object: info and status describe the tool; enabled, release opens to the stroke's
upper end (reached); grasp(width = 0.030, force = 10) answers grasped with |opening - 0.030| <
1 mm and a squeezing force above 0 and no larger than max_force, status then says grasped and
telemetry carries the tool; a slow move stopped by tool.stop from a second connection answers
stopped there and stopped where it was; armctl tool grasp prints the outcome in mm and N and
exits 0, armctl tool shows the tool, armctl record writes the tool's columns; the example
pick_and_place.py runs its cycle through (exit 0, the grasp grasped, the tool's columns in its
CSV); disabled, a tool command is refused (BadState). Without an object (a second armsim): the
same grasp answers no_object (not ok), and armctl exits 1 for it."""
import csv
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
PYTHONPATH = os.path.join(TOP, "tools", "python")
EXAMPLE = os.path.join(PYTHONPATH, "examples", "pick_and_place.py")
sys.path[:0] = [PYTHONPATH, os.path.join(TOP, "tests", "daemon")]
import armd  # noqa: E402
from test_api_lib import Rig, check, run  # noqa: E402

UPRIGHT = ("--q0", "0,0,-1.4,0")  # upright, the forearm raised, inside every limit
OBJECT = ("--object", "0.03,1e5")  # 30 mm wide, 1e5 N/m
# The example's loop rate (400 Hz) and bus; the real-time rig's tolerance of host stalls
# (test_api_lib.DEFAULT_DROPIN says why); no gravity for armsim and armd alike (the drop-in is
# read by both): the OpenManipulator-X has no pose where the limp arm stays put (no Coulomb
# friction), and a loaded machine may take seconds from armsim's start to the enable.
DROPIN = ("[arm]\ngravity = 0 0 0\n[safety]\nmax_read_gap_ms = 400\n"
          "[driver]\nbus_watchdog_ms = 500\n[realtime]\npriority = 50\n")
# [m], [N]: the grasp (the 20 mm is this gripper's closed end, where empty fingers stop
# too: armd refuses a grasp there; tests/daemon/test_api_tool.py grasps 20 mm on a wider one)
WIDTH, FORCE = 0.030, 10.0


def raises(cls, fn, *args, **kw):
    """The cls exception fn raises; fails the test otherwise."""
    try:
        fn(*args, **kw)
    except cls as e:
        return e
    except armd.Error as e:
        check(False, "expected %s, got %s: %s" % (cls.__name__, type(e).__name__, e))
    check(False, "expected %s, nothing raised" % cls.__name__)


def enable(c):
    """Enables the arm and waits until it holds."""
    state = c.enable()
    deadline = time.monotonic() + 10
    while state != "holding":
        check(state == "moving" and time.monotonic() < deadline, "enable: the arm is %s" % state)
        time.sleep(0.05)
        state = c.status().state


def armctl(args, rig, *words):
    r = subprocess.run([args.armctl, "-s", rig.sock] + list(words), capture_output=True,
                       text=True, timeout=60)
    print("$ armctl %s -> %d\n%s%s" % (" ".join(words), r.returncode, r.stdout, r.stderr))
    return r


def with_object(args):
    with Rig(args, "tool-object", sim_args=UPRIGHT + OBJECT, dropin=DROPIN) as rig:
        c = armd.Client(rig.sock)
        enable(c)
        info = c.info()
        check(info.tool is not None, "info has no tool: is [tool gripper] in %s?" % args.config)
        tool = info.tool
        print("tool %s (servo %d): stroke %g ... %g m, max_force %g N" %
              (tool.name, tool.id, tool.lower, tool.upper, tool.max_force))
        check(abs(tool.lower - 0.020) < 1e-9 and abs(tool.upper - 0.075) < 1e-9,
              "the OpenManipulator-X's stroke is 20 ... 75 mm, info says %s" % (tool,))
        st = c.tool.state()
        check(st.name == tool.name and st.command == "idle" and not st.grasped,
              "status's tool at start: %s" % (st,))

        r = c.tool.release()
        print("release: %s" % (r,))
        check(r.outcome == "reached" and r.ok and abs(r.opening - tool.upper) < 0.002,
              "release: %s" % (r,))

        r = c.tool.grasp(width=WIDTH, force=FORCE)
        print("grasp %g m, %g N: %s" % (WIDTH, FORCE, r))
        check(r.outcome == "grasped" and r.ok, "grasp on the object: %s" % (r,))
        check(abs(r.opening - WIDTH) < 0.001, "grasped at %.4f m, the object is %.3f m wide" %
              (r.opening, WIDTH))
        check(0 < r.force <= tool.max_force, "grasp force %.2f N (max_force %g N)" %
              (r.force, tool.max_force))
        st = c.tool.state()
        check(st.grasped and st.command == "idle" and abs(st.opening - WIDTH) < 0.001,
              "status's tool after the grasp: %s" % (st,))
        with c.subscribe(50) as sub:
            sample = next(s for s in sub if isinstance(s, armd.Telemetry))
        check(sample.tool is not None and abs(sample.tool.opening - WIDTH) < 0.001 and
              0 < sample.tool.force <= tool.max_force,
              "telemetry's tool while holding the object: %s" % (sample.tool,))

        # a slow opening, stopped from a second connection: both answer stopped
        got = {}
        mover = threading.Thread(target=lambda: got.setdefault(
            "r", c.tool.move(tool.upper, speed=0.02)))
        mover.start()
        time.sleep(0.8)
        with armd.Client(rig.sock) as c2:
            stop = c2.tool.stop()
        mover.join(10)
        moved = got.get("r")
        print("move stopped after 0.8 s: %s; tool.stop: %s" % (moved, stop))
        check(moved is not None and moved.outcome == "stopped" and not moved.ok,
              "the move stopped by tool.stop: %s" % (moved,))
        check(stop.outcome == "stopped" and WIDTH + 0.002 < stop.opening < tool.upper - 0.002,
              "tool.stop: %s" % (stop,))

        p = armctl(args, rig, "tool", "grasp", "0.03", "--force", "10")
        check(p.returncode == 0 and p.stdout.startswith("grasped: opening 2") and
              " mm, force " in p.stdout, "armctl tool grasp: %d %r" % (p.returncode, p.stdout))
        p = armctl(args, rig, "tool")
        check(p.returncode == 0 and "grasped     yes" in p.stdout and "stroke 20.00 ... 75.00 mm"
              in p.stdout, "armctl tool: %d %r" % (p.returncode, p.stdout))
        p = armctl(args, rig, "record", "-", "--seconds", "0.2", "--rate", "50")
        head = p.stdout.splitlines()[0] if p.stdout else ""
        check(p.returncode == 0 and head.endswith(",tool_opening,tool_speed,tool_force,mono,wall"),
              "armctl record's header: %r" % head)

        out = os.path.join(rig.dir, "pick")
        r = subprocess.run([sys.executable, EXAMPLE, "-s", rig.sock, "--out", out],
                           env=dict(os.environ, PYTHONPATH=PYTHONPATH), capture_output=True,
                           text=True, timeout=120)
        print(r.stdout.strip())
        check(r.returncode == 0 and "grasp: grasped" in r.stdout and "cycle: done" in r.stdout,
              "the example (%d): %s %s" % (r.returncode, r.stdout, r.stderr))
        with open(os.path.join(out, "pick_and_place.csv")) as f:
            rows = list(csv.reader(f))
        check(rows[0][:2] == ["t", "q_joint1"] and rows[0][-2:] == ["tool_opening", "tool_force"]
              and len(rows[0]) == 1 + 3 * 4 + 2, "the example's CSV header: %s" % rows[0])
        openings = [float(x[-2]) for x in rows[1:]]
        check(min(openings) < WIDTH + 0.001 and max(openings) > tool.upper - 0.002,
              "the example's CSV: the opening from %.4f to %.4f m" % (min(openings),
                                                                        max(openings)))
        check(c.disable() == "disabled", "disable")
        e = raises(armd.BadState, c.tool.release)
        print("release while disabled: %s" % e)
        c.close()


def without_object(args):
    with Rig(args, "tool-empty", sim_args=UPRIGHT, dropin=DROPIN) as rig:
        c = armd.Client(rig.sock)
        enable(c)
        check(c.tool.release().ok, "release before the empty grasp")
        r = c.tool.grasp(width=WIDTH, force=FORCE)
        print("grasp %g m with nothing between the fingers: %s" % (WIDTH, r))
        check(r.outcome == "no_object" and not r.ok, "grasp without an object: %s" % (r,))
        c.tool.release()
        p = armctl(args, rig, "tool", "grasp", "0.03")
        check(p.returncode == 1 and p.stdout.startswith("no_object: ") and
              "nothing" in p.stderr, "armctl tool grasp without an object: %d" % p.returncode)
        check(c.disable() == "disabled", "disable")
        c.close()


def main(args):
    with_object(args)
    without_object(args)


if __name__ == "__main__":
    run(main)
