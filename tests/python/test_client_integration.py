#!/usr/bin/env python3
"""Integration: the Python client (tools/python/armd) against real armd + armsim on a pty (the
Rig of tests/daemon/test_api_lib.py): a refused trajectory while disabled (BadState), enable, a
trajectory outside the limits (Limits, connection kept), a trajectory recorded through subscribe
by a second client (every sample, one decimation apart, the desired path through the waypoint,
events moving/holding and the trajectory's end; a call in the middle of the stream loses no
sample) and its wait_done, a move_to waited for with wait_done (at the target afterwards), an
estop in the middle of a move (TrajectoryAborted, state estop), reset, the example script
refusing an arm without a gripper (the PUMA; it runs on the OpenManipulator-X in
test_tool_e2e.py) and `python3 -m armd status`, and ConnectionClosed once armd is gone."""
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
PYTHONPATH = os.path.join(TOP, "tools", "python")
EXAMPLE = os.path.join(PYTHONPATH, "examples", "pick_and_place.py")
sys.path[:0] = [PYTHONPATH, os.path.join(TOP, "tests", "daemon")]
import armd  # noqa: E402
from test_api_lib import Rig, check, run  # noqa: E402

RATE_HZ = 100  # telemetry rate asked for [Hz]


def offset(q0, d):
    return [q + d[j % len(d)] for j, q in enumerate(q0)]


def raises(cls, fn, *args, **kw):
    """The cls exception fn raises; fails the test if it raises nothing or another error."""
    try:
        fn(*args, **kw)
    except cls as e:
        return e
    except armd.Error as e:
        check(False, "expected %s, got %s: %s" % (cls.__name__, type(e).__name__, e))
    check(False, "expected %s, nothing raised" % cls.__name__)


def check_windows(samples, step, what):
    """One sample per window of `step` loop periods (1 kHz): consecutive windows, a window passed
    over only where the loop skipped every period of it (a late wake-up: the time between the
    two samples then holds more periods than the ticks between them)."""
    for a, b in zip(samples, samples[1:]):
        wa, wb = round(a.time * 1000) // step, round(b.time * 1000) // step
        periods, ticks = round((b.time - a.time) * 1000), b.tick - a.tick
        check(wb == wa + 1 or (wb > wa + 1 and periods > ticks),
              "%s at %.3f s then %.3f s (ticks %d, %d): windows of %d periods %d then %d"
              % (what, a.time, b.time, a.tick, b.tick, step, wa, wb))


def recorded_until_done(sub, tid, seconds):
    """Telemetry records and events from sub until trajectory tid's end and the state event
    that follows it (the state its tick left: armd sends it last; at most seconds)."""
    samples, events = [], []
    done = False
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rec = next(sub)
        if isinstance(rec, armd.Telemetry):
            samples.append(rec)
        else:
            events.append(rec)
            if rec.method == "trajectory_done" and rec["id"] == tid:
                done = True
            elif done and rec.method == "state":
                return samples, events
    check(False, "no trajectory_done for %d within %g s" % (tid, seconds))


def run_example(rig):
    """The example script against an arm without a gripper: exit 1, saying so, the arm left as
    it was (disabled: the example enables only an arm it can run its cycle on)."""
    out = os.path.join(rig.dir, "pick")
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    r = subprocess.run([sys.executable, EXAMPLE, "-s", rig.sock, "--out", out], env=env,
                       capture_output=True, text=True, timeout=120)
    print(r.stderr.strip())
    check(r.returncode == 1 and "no gripper" in r.stderr and "[tool]" in r.stderr,
          "example on an arm without a tool (%d): %s %s" % (r.returncode, r.stdout, r.stderr))


def main(args):
    with Rig(args, "pyclient") as rig:
        c = armd.Client(rig.sock)
        info = c.info()
        check(info["dof"] == 6 and len(info["joints"]) == 6, "info: %s" % info)
        upper = info["limits"]["upper"]
        st = c.status()
        check(st["state"] == "disabled", "armd must start disabled, is %s" % st["state"])
        q0 = st["q"]
        pose = c.pose()
        check(st.pose is not None and max(abs(a - b) for a, b in zip(pose.position, st.pose.position)) < 1e-4
              and abs(sum(v * v for v in pose.orientation) - 1) < 1e-9,
              "arm.pose() %s vs status().pose %s" % (pose, st.pose))

        e = raises(armd.BadState, c.trajectory, [(1.0, offset(q0, [0.1]))])
        check(e.code == "bad_state" and e.method == "trajectory", "BadState: %r" % e)
        check(c.enable() == "holding", "enable did not hold")

        far = list(q0)
        far[1] = upper[1] + 0.5
        e = raises(armd.Limits, c.trajectory, [(2.0, far)])
        check(e.code == "limits" and "j2" in e.message, "Limits names the joint: %s" % e)
        check(c.status()["state"] == "holding", "the connection or the arm after Limits")

        rec = armd.Client(rig.sock)
        sub = rec.subscribe(RATE_HZ)
        check(abs(sub.rate_hz - RATE_HZ) < 1e-9, "subscribe granted %g Hz" % sub.rate_hz)
        via = offset(q0, [0.3, 0.2, -0.2, 0.3, 0.3, 0.3])
        m = c.trajectory(armd.points([1.0, 2.0], [via, q0]))
        samples, events = recorded_until_done(sub, m.id, 20)
        d = c.wait_done()
        print("trajectory %d: %.2f s planned, %s" % (m.id, m.duration, d.result))
        check(d == armd.Done(m.id, "done", d.time) and d.ok, "wait_done: %s" % (d,))
        step = round(1000 / sub.rate_hz)
        check_windows(samples, step, "telemetry")
        check(len(samples) >= 0.9 * RATE_HZ * m.duration,
              "%d samples for %.2f s at %d Hz" % (len(samples), m.duration, RATE_HZ))
        closest = min(max(abs(a - b) for a, b in zip(s.q_des, via)) for s in samples)
        check(closest < 0.01, "the desired path misses the waypoint by %.4f rad" % closest)
        check(all(s.pose is not None and all(math.isfinite(v) for v in s.pose.position)
                  for s in samples) and len({s.pose.position for s in samples}) > len(samples) // 2,
              "telemetry's pose does not follow the arm")
        worst = max(max(abs(a - b) for a, b in zip(s.q_des, s.q)) for s in samples)
        check(worst < 0.2, "|q_des - q| %.4f rad in telemetry" % worst)
        names = [(ev.method, ev.get("state")) for ev in events]
        check(("state", "moving") in names and ("state", "holding") in names,
              "events: %s" % names)
        print("recorded %d samples, events %s, largest |q_des - q| %.4f rad" %
              (len(samples), names, worst))

        # a call in the middle of the stream: the 30 or so samples read while waiting for its
        # reply are queued, none lost, none taken for the reply
        time.sleep(0.3)
        check(rec.status()["state"] == "holding", "status on the subscribed connection")
        more = []
        while len(more) < 40:
            r = next(sub)
            if isinstance(r, armd.Telemetry):
                more.append(r)
        check_windows(more, step, "samples around a call")

        target = offset(q0, [-0.2, 0.1, -0.1, 0.2, -0.2, 0.2])
        mv = c.move_to(target)
        d = c.wait_done()
        q = c.status()["q"]
        err = max(abs(a - b) for a, b in zip(q, target))
        print("move_to %d: %.2f s by the limits, %s, off the target by %.4f rad" %
              (mv.id, mv.duration, d.result, err))
        check(d.ok and d.id == mv.id and err < 0.01, "move_to: %s, error %.4f" % (d, err))

        # estop in the middle of a move: the move ends aborted, the arm is in estop
        mv = c.move_to(q0, duration=3.0)
        time.sleep(0.5)
        check(c.estop() == "estop", "estop")
        e = raises(armd.TrajectoryAborted, c.wait_done, 5.0)
        check(e.done.id == mv.id and e.done.result == "aborted: estop", "estop end: %s" % e.done)
        check(c.status()["state"] == "estop", "state after estop")
        raises(armd.BadState, c.enable)
        check(c.reset() == "disabled", "reset after estop")
        sub.close()
        rec.close()

        run_example(rig)
        r = subprocess.run([sys.executable, "-m", "armd", "-s", rig.sock, "status"],
                           env=dict(os.environ, PYTHONPATH=PYTHONPATH), capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 0 and "disabled" in r.stdout.split("\n")[0], "python3 -m armd "
              "status: %d %s %s" % (r.returncode, r.stdout, r.stderr))

        check(c.disable() == "disabled", "disable")
        rig.stop_armd()
        e = raises(armd.ConnectionClosed, c.status)
        print("after armd stopped: %s" % e)
        c.close()


if __name__ == "__main__":
    run(main)
