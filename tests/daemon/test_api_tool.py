#!/usr/bin/env python3
"""Lockstep: the tool servo ([tool NAME], a gripper in Dynamixel current-based position control
on the joints' bus) driven through the socket, against armsim's gripper (`--object WIDTH,
STIFFNESS`: an object between the fingers pushing back while the opening is below WIDTH).
armd --lockstep --paused, the examples as shipped unless said.

OpenManipulator-X (400 Hz, [tool gripper] ID 15, stroke 20-75 mm, max_force 20 N), a rigid
30 mm object (1e5 N/m):
- release ends "reached" at the open end; a grasp of 30 mm at 10 N ends "grasped" with the
  opening within 1 mm of 30 mm and the force within 10 % of 10 N; at max_force the telemetry's
  force never passes max_force (+ one current step); a force above it is refused;
- joint tracking during tool motion: the same move twice from the same pose, once with the tool
  still and once opening and closing all along; armd's RMS following error (mean over the joints)
  with the tool moving within TRACK_RATIO of the one without (printed: both figures);
- a grasp without an object (another armsim) ends "no_object" at the closed end;
- the tool servo going silent (armsim --silent-id 15), or raising a hardware alert (--alert-id
  15), faults the arm, the reason naming servo 15.
PUMA 560 with a parallel gripper of 0-80 mm on ID 7 (a test drop-in) and a rigid 20 mm object:
- a grasp of 20 mm ends "grasped" within 1 mm of 20 mm (the OpenManipulator-X's stroke ends at
  20 mm, where its fingers cannot press on a 20 mm object).
Each request is sent once and gets exactly one answer; simulated time, no host stall judged."""
import argparse
import os
import threading

from test_api_lib import Rig, check, run
from test_api_identify_omx import START, omx_points
from test_api_payload import move_back, move_rms

OBJECT = "0.030,100000"
TRACK_RATIO = 1.05  # tracking with the tool moving / without (measured: see the printout)
PUMA_GRIPPER = """[tool gripper]
id = 7
opening_at_zero = 0.040
m_per_rad = 0.020
torque_per_amp = 1.5
lower = 0
upper = 0.080
velocity = 0.1
max_force = 40
"""


def omx_rig(args, name, sim):
    return Rig(args, name, sim_args=("--q0", START) + sim, lockstep="paused", dropin="")


def grasp_and_release(rig, c, info):
    tool = info["tool"]
    check(tool and tool["name"] == "gripper" and tool["id"] == 15,
          "info's tool: %r" % (tool,))
    r = c.call("tool.release")
    print("release:", r)
    check(r["outcome"] == "reached" and abs(r["opening"] - tool["upper"]) < 0.001,
          "release: %r" % r)
    r = c.call("tool.grasp", {"width": 0.030, "force": 10})
    print("grasp 30 mm at 10 N:", r)
    check(r["outcome"] == "grasped", "grasp at 10 N: %r" % r)
    check(abs(r["opening"] - 0.030) < 0.001, "grasped at %.4f m, not 0.030 +- 0.001" % r["opening"])
    check(abs(r["force"] - 10) < 1.0, "grasp force %.3f N, not 10 +- 1" % r["force"])
    st = c.call("status")["tool"]
    check(st["grasped"] and st["command"] == "idle", "status after the grasp: %r" % st)
    # the object holds the fingers short of the grasp's goal (the closed end): stalled, still,
    # the current that of the force (59.3 N/A: 1.78 N m/A over 0.030 m/rad)
    check(st["stalled"] and not st["moving"] and abs(st["current"] * 1.78 / 0.030 - st["force"])
          < 1e-6 * max(1.0, st["force"]), "status of the held grasp: %r" % st)
    c.call("tool.release")
    st = c.call("status")["tool"]
    check(not st["stalled"] and not st["moving"] and not st["grasped"],
          "status after the release: %r" % st)
    rec = rig.recorder(info["rate_hz"])
    r = c.call("tool.grasp", {"width": 0.030, "force": tool["max_force"]})
    rec.collect(0.2)
    rec.close()
    forces = [s["tool"]["force"] for s in rec.samples if "tool" in s]
    check(any(s["tool"]["moving"] for s in rec.samples if "tool" in s),
          "telemetry never showed the fingers moving during the grasp")
    step = 0.00269 * 1.78 / 0.030  # one Goal Current unit as a force [N]
    print("grasp at max_force %g N: %r; largest telemetry force %.3f N (%d samples)"
          % (tool["max_force"], r, max(forces), len(forces)))
    check(r["outcome"] == "grasped", "grasp at max_force: %r" % r)
    check(max(forces) <= tool["max_force"] + step, "force %.3f N past max_force %g N"
          % (max(forces), tool["max_force"]))
    e = c.call_full("tool.grasp", {"width": 0.030, "force": tool["max_force"] * 1.5})
    check("error" in e and e["error"]["code"] == "invalid_params", "force past max_force: %r" % e)


BAD = [  # (method, params): each answered invalid_params, nothing sent to the servo
    ("tool.move", {}), ("tool.move", {"opening": "wide"}), ("tool.move", {"opening": 1e300}),
    ("tool.move", {"opening": -0.03}), ("tool.move", {"opening": 0}),
    ("tool.move", {"opening": 0.05, "speed": 0}), ("tool.move", {"opening": 0.05, "speed": -1}),
    ("tool.move", {"opening": 0.05, "speed": 1e300}), ("tool.move", {"opening": 0.05, "x": 1}),
    ("tool.grasp", {"width": 0.03, "force": 1e-300 * 0}), ("tool.grasp", {"width": 0.03,
                                                                           "force": 1e300}),
    ("tool.grasp", {"width": 0.03, "epsilon_inner": -1e-300}),
    ("tool.grasp", {"width": 0.03, "epsilon_outer": 1e300}),
    ("tool.grasp", {"width": 0.020}),  # empty fingers stop at 20 mm: not told apart
    ("tool.grasp", {"width": [0.03]}), ("tool.release", {"speed": None, "force": 1}),
    ("tool.stop", {"now": True}),
]


def bad_params(c):
    """Every BAD request gets one error object, invalid_params, naming what is wrong."""
    for method, params in BAD:
        r = c.call_full(method, params)
        check("error" in r and r["error"]["code"] == "invalid_params",
              "%s %r: %r (expected invalid_params)" % (method, params, r))
    print("%d bad tool requests refused, e.g. %r" % (len(BAD), r["error"]["message"]))


def tracking(rig, c, info, q0):
    points = omx_points(info, q0)
    still = move_rms(rig, c, points, "tool still")
    move_back(rig, c, q0)
    other = rig.client()
    c.call("tool.release")
    # the tool opens and closes while the arm moves: commands from another connection, one
    # after the other (each waits for the previous one's answer), run by the lockstep's ticks
    done = []

    def cycle():
        for k in range(4):
            r = other.call("tool.grasp", {"width": 0.030, "force": 10}) if k % 2 else \
                other.call("tool.move", {"opening": 0.060})
            done.append(r["outcome"])
    t = threading.Thread(target=cycle)
    t.start()
    moving = move_rms(rig, c, points, "tool moving")
    t.join(60)
    check(not t.is_alive(), "the tool commands did not end")
    print("tracking, mean RMS following error: tool still %.4f mrad, tool moving %.4f mrad "
          "(%.3f x); tool outcomes %s" % (still * 1e3, moving * 1e3, moving / still, done))
    check(done == ["reached", "grasped", "reached", "grasped"], "tool outcomes %s" % done)
    check(moving <= TRACK_RATIO * still, "tracking with the tool moving %.4f mrad > %.2f x %.4f"
          % (moving * 1e3, TRACK_RATIO, still * 1e3))


def main(args):
    with omx_rig(args, "tool", ("--object", OBJECT)) as rig:
        c = rig.client()
        info = c.call("info")
        check(c.call("enable")["state"] == "holding", "enable")
        q0 = c.call("status")["q_des"]
        grasp_and_release(rig, c, info)
        bad_params(c)
        tracking(rig, c, info, q0)
    with omx_rig(args, "tool-none", ()) as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable")
        r = c.call("tool.grasp", {"width": 0.030, "force": 10})
        print("grasp without an object:", r)
        check(r["outcome"] == "no_object" and abs(r["opening"] - 0.020) < 0.001,
              "grasp without an object: %r" % r)
    with omx_rig(args, "tool-silent", ("--object", OBJECT, "--silent-id", "15",
                                       "--silent-after", "3")) as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable")
        rig.run(3.5)
        st = c.call("status")
        print("tool servo silent after 3 s: state %s, fault %r" % (st["state"], st["fault"]))
        check(st["state"] == "fault" and "15" in (st["fault"] or ""),
              "the silent tool servo: state %s, fault %r" % (st["state"], st["fault"]))
    with omx_rig(args, "tool-alert", ("--object", OBJECT, "--alert-id", "15",
                                      "--alert-after", "3")) as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable")
        rig.run(3.5)
        st = c.call("status")
        print("tool servo's hardware alert at 3 s: state %s, fault %r" % (st["state"], st["fault"]))
        check(st["state"] == "fault" and "15" in (st["fault"] or ""),
              "the tool servo's alert: state %s, fault %r" % (st["state"], st["fault"]))
    puma = argparse.Namespace(**vars(args))
    puma.config = os.path.join(os.path.dirname(args.config), "puma560.ini")
    with Rig(puma, "tool-puma", sim_args=("--q0", "0,1.5708,-1.5708,0,0,0", "--object",
                                          "0.020,100000"),
             lockstep="paused", dropin="[arm]\nrate_hz = 1000\n" + PUMA_GRIPPER) as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable")
        c.call("tool.release")
        r = c.call("tool.grasp", {"width": 0.020, "force": 20})
        print("PUMA, grasp of 20 mm at 20 N:", r)
        check(r["outcome"] == "grasped" and abs(r["opening"] - 0.020) < 0.001,
              "PUMA grasp of 20 mm: %r" % r)


if __name__ == "__main__":
    run(main)
