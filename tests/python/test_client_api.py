#!/usr/bin/env python3
"""Integration: the typed replies, blocking= and the asyncio client (tools/python/armd) against
real armd with armsim's arm in process, paused lockstep (tests/daemon/test_api_lib.py): simulated
time advances only by rig.run(), so "still moving" and "done" are states, not timings.

- status() and info() are armd.Status / armd.Info with every member armd sends in a typed field
  (nothing left in ``extra``), the dict reading of the reply kept;
- move_to(blocking=False) returns an armd.Motion while armd reports that very motion running;
  move_to(blocking=True) / trajectory(blocking=True) return the armd.Done only once simulated
  time has passed the motion's end, the arm then holding at the goal; an estop under a blocking
  motion raises TrajectoryAborted;
- armd.aio: 24 concurrent requests of four kinds, each answered with its own reply (unknown
  methods named in their own errors); telemetry as an async iterator while a motion runs, a
  status call in the middle of the stream; a blocking aio move_to;
- move_linear: refused at a singularity (armd.Unreachable or Limits naming it, also from
  armd.aio), 5 cm down and
  back by position and orientation, each ending within 1 mm; the client's own checks.
"""
import asyncio
import json
import math
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
sys.path[:0] = [os.path.join(TOP, "tools", "python"), os.path.join(TOP, "tests", "daemon")]
import armd  # noqa: E402
import armd.aio  # noqa: E402
from test_api_lib import Rig, check, run  # noqa: E402


def offset(q0, d):
    return [q + d[j % len(d)] for j, q in enumerate(q0)]


def floats(v, n, what):
    check(isinstance(v, list) and len(v) == n and all(type(x) is float for x in v),
          "%s: expected %d floats, got %r" % (what, n, v))


def typed_replies(c):
    """status() and info() typed, every member of armd's reply in a field."""
    info = c.info()
    check(isinstance(info, armd.Info), "info() returned %s" % type(info).__name__)
    check(info.extra == {}, "info members without a field: %s" % sorted(info.extra))
    check(info.dof == 6 and info.joints == ["j%d" % i for i in range(1, 7)]
          and info.types == ["revolute"] * 6, "info: %r" % (info,))
    for k in ("lower", "upper", "velocity", "acceleration", "torque"):
        floats(getattr(info.limits, k), 6, "info.limits." + k)
    check(all(lo < hi for lo, hi in zip(info.limits.lower, info.limits.upper)), "limits order")
    check(isinstance(info.driver, armd.Driver) and info.driver.extra == {}
          and info.limits.extra == {}, "info.driver: %r" % (info.driver,))
    check(info.rate_hz == 1000.0 and info.max_clients > 0 and info.config.endswith("arm.ini")
          and info.version and info.socket.endswith("armd.sock"), "info: %r" % (info,))
    check(info["joints"] == info.joints and info.to_dict()["dof"] == 6, "info as a dict")

    st = c.status()
    check(isinstance(st, armd.Status), "status() returned %s" % type(st).__name__)
    check(st.extra == {} and st.loop.extra == {} and st.collision.extra == {},
          "status members without a field: %s %s %s" % (sorted(st.extra), sorted(st.loop.extra),
                                                        sorted(st.collision.extra)))
    check(st.state == "disabled" and st.fault is None and st.trajectory is None
          and st.controller == info.controller and st.clients >= 1, "status: %r" % (st,))
    for k in ("q", "qd", "tau", "q_des", "qd_des", "error"):
        floats(getattr(st, k), 6, "status." + k)
    floats(st.collision.external_torque, 6, "status.collision.external_torque")
    check(st.collision.mode in ("off", "detect", "react"), "collision mode %r" % st.collision.mode)
    check(all(math.isfinite(x) for x in (st.time, st.mono, st.wall)), "clocks: %r" % (st,))
    check(type(st.loop.ticks) is int and st.loop.ticks > 0 and st.loop.rate_hz == 1000.0,
          "loop: %r" % (st.loop,))
    check(isinstance(st.loop.lateness_us, armd.Timing) and st.loop.lateness_us.extra == {},
          "loop.lateness_us: %r" % (st.loop.lateness_us,))
    check(st["state"] == st.state and st.get("trajectory") is None and "q" in st
          and json.loads(json.dumps(st.to_dict()))["q"] == st["q"], "status as a dict")
    print("status and info typed: %d + %d fields" % (len(st.raw), len(info.raw)))
    return info, st


def blocking_motion(rig, c, q0):
    """blocking=False returns while the motion runs; blocking=True once it has ended."""
    target = offset(q0, [0.2, -0.1, 0.1, 0.2, 0.2, 0.2])
    m = c.move_to(target, 2.0, blocking=False)
    check(isinstance(m, armd.Motion), "blocking=False returned %r" % (m,))
    st = c.status()
    check(st.state == "moving" and st.trajectory is not None and st.trajectory.id == m.id,
          "after move_to(blocking=False) armd must still run motion %d: %r" % (m.id, st))
    rig.run(2.5)
    d = c.wait_done(traj=m)
    check(d.ok and d.id == m.id, "the non-blocking motion ended %r" % (d,))

    # blocking=True in a thread: it must not return before the motion's end has run
    watch = armd.Client(rig.sock)
    out = {}

    def blocked(fn, *args, **kw):
        try:
            out["r"] = fn(*args, **kw)
        except armd.Error as e:
            out["e"] = e

    for name, fn, args in (("move_to", c.move_to, (q0, 2.0)),
                           ("trajectory", c.trajectory, ([(1.0, target), (2.0, q0)],))):
        out.clear()
        t = threading.Thread(target=blocked, args=(fn,) + args, kwargs={"blocking": True})
        t.start()
        for _ in range(200):  # until armd runs it (each status is answered on the next tick)
            st = watch.status()
            if st.trajectory is not None or not t.is_alive():
                break
        check(st.trajectory is not None, "%s(blocking=True): armd never ran it (%r)" %
              (name, out))
        rig.run(1.0)
        t.join(0.5)
        check(t.is_alive() and not out and watch.status().state == "moving",
              "%s(blocking=True) returned %r half way through the motion" % (name, out))
        rig.run(1.5)
        t.join(20)
        check(not t.is_alive() and isinstance(out.get("r"), armd.Done) and out["r"].ok,
              "%s(blocking=True) after the motion: %r" % (name, out))
        st = watch.status()
        err = max(abs(a - b) for a, b in zip(st.q, q0))
        check(st.state == "holding" and st.trajectory is None and err < 0.01,
              "%s(blocking=True) returned %r with the arm %s, %.4f rad off" %
              (name, out["r"], st.state, err))
        print("%s(blocking=True) -> %r" % (name, out["r"]))

    # an estop under a blocking motion: TrajectoryAborted
    out.clear()
    t = threading.Thread(target=blocked, args=(c.move_to, target, 2.0),
                         kwargs={"blocking": True})
    t.start()
    for _ in range(200):
        if watch.status().trajectory is not None:
            break
    rig.run(0.5)
    check(watch.estop() == "estop", "estop")
    t.join(20)
    e = out.get("e")
    check(isinstance(e, armd.TrajectoryAborted) and e.done.result == "aborted: estop",
          "blocking move_to under an estop: %r" % (out,))
    check(watch.reset() == "disabled" and c.enable() == "holding", "reset, enable")
    watch.close()


def linear_moves(rig, c, q0):
    """move_linear: refused at the ready pose (q5 = 0, a singularity) with armd.Unreachable;
    from a pose with the elbow up and the wrist bent, 5 cm down at 0.1 m/s (0.9375 s, the
    quintic at its peak speed) and back to the start pose by position and orientation; the
    client's own checks (one of offset and position, the frame) raise InvalidParams unsent."""
    try:  # at the singularity (Unreachable) or next to it (Limits): either names it
        c.move_linear([0, 0, -0.05])
        check(False, "move_linear at the ready pose was accepted")
    except (armd.Unreachable, armd.Limits) as e:
        check("singularity" in e.message, "move_linear at the ready pose: %s" % e)
    for kw in ({}, {"offset": [0, 0, 1], "position": [0, 0, 1]},
               {"offset": [0, 0, 1], "frame": "world"}, {"offset": [0, float("nan"), 0]}):
        try:
            c.move_linear(**kw)
            check(False, "move_linear(%r) was sent" % (kw,))
        except armd.InvalidParams:
            pass
    m = c.move_to([0.2, 0.9, -2.4, 0.1, 0.8, 0.2], 3.0)
    rig.run(3.5)
    check(c.wait_done(traj=m).ok, "move_to the bent pose")
    start = c.pose()
    m = c.move_linear([0, 0, -0.05], speed=0.1)
    check(isinstance(m, armd.Motion) and abs(m.duration - 0.9375) < 1e-6,
          "move_linear returned %r" % (m,))
    rig.run(1.5)
    check(c.wait_done(traj=m).ok, "move_linear down")
    p = c.pose().position
    d = [b - a for a, b in zip(start.position, p)]
    check(abs(d[0]) < 1e-3 and abs(d[1]) < 1e-3 and abs(d[2] + 0.05) < 1e-3,
          "move_linear([0, 0, -0.05]) moved the tool by %s" % d)
    m = c.move_linear(position=start.position, orientation=start.orientation, speed=0.1,
                      frame="base")
    rig.run(1.5)
    check(c.wait_done(traj=m).ok, "move_linear back")
    back = c.pose()
    err = max(abs(a - b) for a, b in zip(back.position, start.position))
    check(err < 1e-3, "move_linear(position=...) ended %.4f m from it" % err)
    print("move_linear: down by (%.4f, %.4f, %.4f) m, back within %.5f m" % (*d, err))
    m = c.move_to(q0, 3.0)
    rig.run(3.5)
    check(c.wait_done(traj=m).ok, "move_to back to q0")


async def aio_part(rig, q0):
    """Concurrent requests answered by id, telemetry as an async iterator, blocking move_to."""
    async with await armd.aio.connect(rig.sock) as arm:
        jobs = []
        for i in range(6):
            jobs += [arm.status(), arm.info(), arm.call("gains.get"),
                     arm.call("no.such.method.%d" % i)]
        res = await asyncio.gather(*jobs, return_exceptions=True)
        for i in range(6):
            st, info, gains, bad = res[4 * i:4 * i + 4]
            check(isinstance(st, armd.Status) and st.state == "holding", "aio status: %r" % (st,))
            check(isinstance(info, armd.Info) and info.dof == 6, "aio info: %r" % (info,))
            check(isinstance(gains, dict) and len(gains.get("kp", [])) == 6,
                  "aio gains.get: %r" % (gains,))
            check(isinstance(bad, armd.UnknownMethod) and "no.such.method.%d'" % i in bad.message,
                  "aio request %d: the unknown method's own error, got %r" % (i, bad))
        print("aio: 24 concurrent requests answered by id")
        try:
            await arm.move_linear([0, 0, -0.05])
            check(False, "aio move_linear at the ready pose was accepted")
        except (armd.Unreachable, armd.Limits) as e:
            check("singularity" in e.message, "aio move_linear: %s" % e)

        target = offset(q0, [-0.2, 0.1, -0.1, -0.2, -0.2, -0.2])
        async with arm.subscribe(100) as sub:
            check(sub.rate_hz == 100.0, "aio subscribe: %r" % sub.rate_hz)
            m = await arm.move_to(target, 1.0)
            runner = asyncio.ensure_future(asyncio.to_thread(rig.run, 1.5))
            samples, events, mid = [], [], None
            async for rec in sub:
                if isinstance(rec, armd.Telemetry):
                    samples.append(rec)
                    if len(samples) == 20:
                        mid = await arm.status()
                elif rec.method == "trajectory_done" and rec["id"] == m.id:
                    events.append(rec)
                    break
                else:
                    events.append(rec)
            await runner
        check(isinstance(mid, armd.Status) and mid.state in ("moving", "holding"),
              "aio status in the middle of the stream: %r" % (mid,))
        check(len(samples) >= 90, "aio telemetry: %d samples for a 1 s motion at 100 Hz" %
              len(samples))
        check(all(b.tick > a.tick for a, b in zip(samples, samples[1:])), "ticks increase")
        check(any(e.method == "state" and e["state"] == "moving" for e in events),
              "aio events: %s" % [e.method for e in events])
        check(events[-1]["result"] == "done", "aio trajectory_done: %r" % events[-1].params)
        print("aio telemetry: %d samples, events %s" % (len(samples),
                                                         [e.method for e in events]))

        task = asyncio.ensure_future(arm.move_to(q0, 1.0, blocking=True))
        await asyncio.sleep(0.2)
        check(not task.done(), "aio move_to(blocking=True) returned before time ran: %r" %
              (task.result() if task.done() else None))
        await asyncio.to_thread(rig.run, 1.5)
        d = await asyncio.wait_for(task, 20)
        st = await arm.status()
        check(isinstance(d, armd.Done) and d.ok and st.state == "holding" and
              st.trajectory is None, "aio blocking move_to: %r, %r" % (d, st.state))


def main(args):
    with Rig(args, "pyclient-api", lockstep="paused") as rig:
        c = armd.Client(rig.sock, timeout=30)
        info, st = typed_replies(c)
        check(c.enable() == "holding", "enable")
        q0 = c.status().q_des
        blocking_motion(rig, c, q0)
        linear_moves(rig, c, q0)
        asyncio.run(aio_part(rig, q0))
        c.close()


if __name__ == "__main__":
    run(main)
