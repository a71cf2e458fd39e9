#!/usr/bin/env python3
"""Lockstep: requests the arm cannot physically follow are refused, saying why (PUMA 560 at
1 kHz, armd --lockstep --paused, the ready pose):
 - payload.set of a mass whose gravity torque, with the arm's own, exceeds a joint's torque limit
   at the present pose: refused (code "infeasible"), naming the joint and the N m needed against
   the limit; a mass above [arm] max_payload (2.5 kg, the example's rated load) refused naming
   the key; the 2 kg of test_api_payload accepted;
 - a move whose torque along the path (armd's model, with the payload) exceeds a joint's limit:
   refused naming the joint, the time and the N m;
 - gains.set past the sampled loop's stability bounds (kd dt < 2, kp dt < 2 kd): refused naming
   the bound and the numbers; ki > 0 on a joint whose i_limit is 0: refused;
 - a gain change that changes the law's character (kp x 5), or another control law, refused
   while the arm moves (code "bad_state"), accepted once it holds; a small one (kd 40 -> 35)
   accepted mid-move."""
import os

from test_api_lib import Rig, check, run
from test_api_tracking import make_points


def refused(c, method, params, code, words):
    """The error of a request that must be refused with code, its message containing words."""
    m = c.call_full(method, params)
    check("error" in m, "%s %s was accepted: %s" % (method, params, m))
    msg = m["error"]["message"]
    check(m["error"]["code"] == code and all(w in msg for w in words),
          "%s %s: expected %s naming %s, got %s" % (method, params, code, words, m["error"]))
    print("%s %s refused: %s" % (method, params, msg))
    return msg


def payload(c):
    refused(c, "payload.set", {"mass": 50, "com": [0.1, 0, 0]}, "infeasible",
            ["joint j", "N m", "limit"])
    refused(c, "payload.set", {"mass": 3.0}, "infeasible", ["max_payload", "2.5"])
    check(c.call("payload.get")["mass"] == 0, "a refused payload.set changed the payload")
    p = c.call("payload.set", {"mass": 2.0, "com": [0.1, 0, 0.05]})
    check(p["mass"] == 2.0, "a feasible payload was not applied: %s" % p)
    c.call("payload.set", {"mass": 0})


def gains(c):
    refused(c, "gains.set", {"kd": 2500}, "invalid_params", ["j1", "kd", "dt", "2"])
    refused(c, "gains.set", {"kp": 100000}, "invalid_params", ["j1", "kp", "dt", "kd"])
    refused(c, "gains.set", {"ki": 10}, "invalid_params", ["j1", "ki", "i_limit"])
    g = c.call("gains.get")
    check(g["kp"][0] == 400 and g["kd"][0] == 40 and g["ki"][0] == 0,
          "a refused gains.set changed the gains: %s" % g)


def dropin(rig, text):
    """The drop-in 30-physical.ini with text, or none (text None)."""
    path = os.path.join(rig.dropin_dir, "30-physical.ini")
    if text is None:
        os.remove(path)
        return
    with open(path, "w") as f:
        f.write(text)


def character(rig, c):
    info = c.call("info")
    q0 = c.call("status")["q_des"]
    c.call("trajectory", {"points": make_points(info, q0)})
    rig.run(1.0)
    check(c.call("status")["state"] == "moving", "the arm is not moving")
    refused(c, "gains.set", {"kp": 2000}, "bad_state", ["j1", "kp", "400", "2000", "moving"])
    refused(c, "controller.set", {"name": "pd_gravity"}, "bad_state",
            ["computed_torque -> pd_gravity", "moving"])
    check(c.call("gains.set", {"kd": 35})["kd"][0] == 35, "kd 40 -> 35 mid-move was refused")
    dropin(rig, "[joint j3]\nkp = 1000\n")
    refused(c, "reload", {}, "bad_state", ["j3", "kp 400 -> 1000", "moving"])
    check(c.call("cancel")["state"] in ("moving", "holding"), "cancel failed")
    rig.run(3.0)
    check(c.call("status")["state"] == "holding", "the arm did not come to hold")
    check(c.call("gains.set", {"kp": 2000})["kp"][0] == 2000, "kp 2000 while holding refused")
    check("[joint j3] kp" in c.call("reload")["changed"], "the reload of kp while holding")
    dropin(rig, "[joint j3]\nkd = 2500\n")
    refused(c, "reload", {}, "invalid_config", ["30-physical.ini:2: [joint j3] kd: kd dt"])
    dropin(rig, None)
    c.call("reload")
    c.call("gains.set", {"kp": 400, "kd": 40})
    check(c.call("controller.set", {"name": "pd_gravity"})["controller"] == "pd_gravity",
          "controller.set while holding refused")
    c.call("controller.set", {"name": "computed_torque"})
    print("kp 400 -> 2000: refused while moving, accepted while holding")


def reload_limits(rig, c):
    """A reload that leaves the payload in use above the new max_payload or torque: refused."""
    c.call("payload.set", {"mass": 2.0, "com": [0.1, 0, 0.05]})
    dropin(rig, "[arm]\nmax_payload = 1\n")
    refused(c, "reload", {}, "infeasible", ["2 kg is above [arm] max_payload = 1 kg"])
    dropin(rig, "[joint j5]\ntorque = 1\n")
    refused(c, "reload", {}, "infeasible", ["joint j5 needs", "torque limit of 1.00 N m"])
    dropin(rig, None)
    c.call("payload.set", {"mass": 0})


def trajectory_torque(rig, c):
    """A move whose inverse dynamics (armd's model) exceed a joint's torque limit: refused."""
    dropin(rig, "[joint j2]\ntorque = 30\n")
    c.call("reload")
    goal = list(c.call("status")["q_des"])
    goal[1] = 0.0  # the upper arm horizontal: ~46 N m of gravity on j2
    refused(c, "move_to", {"q": goal}, "limits", ["joint j2 needs", "torque limit of 30.00 N m"])
    dropin(rig, None)
    c.call("reload")


def main(args):
    with Rig(args, "physical", lockstep="paused") as rig:
        c = rig.client()
        payload(c)
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        rig.run(0.2)
        payload(c)
        gains(c)
        character(rig, c)
        reload_limits(rig, c)
        trajectory_torque(rig, c)
        c.close()


if __name__ == "__main__":
    run(main)
