#!/usr/bin/env python3
"""Integration: reload through the socket and SIGHUP changes gains (drop-in file) and a link's
dynamics (mass: the holding torque follows), and refuses a structural change (the loop rate)
naming the key while keeping the running gains, and a torque limit the servos cannot deliver.
Real armd + armsim on a pty."""
import os
import signal
import time

from test_api_lib import Rig, check, run


def hold_torque(c):
    """The joint torques while holding, averaged over 0.3 s, after 0.5 s to settle [N m]."""
    time.sleep(0.5)
    taus = []
    for _ in range(30):
        taus.append(c.call("status")["tau"])
        time.sleep(0.01)
    return [sum(t[j] for t in taus) / len(taus) for j in range(len(taus[0]))]


def main(args):
    with Rig(args, "reload") as rig:
        c = rig.client()
        info = c.call("info")
        j0, j1 = info["joints"][0], info["joints"][1]
        g = c.call("gains.get")
        dropdir = rig.dropin_dir
        kp_new = g["kp"][0] * 1.5 + 1
        with open(os.path.join(dropdir, "50-gains.ini"), "w") as f:
            f.write("[joint %s]\nkp = %.6g\n" % (j0, kp_new))
        r = c.call("reload")
        print("reload:", r)
        check("kp" in r["changed"], "reload did not report the kp change: %r" % r["changed"])
        g2 = c.call("gains.get")
        check(abs(g2["kp"][0] - kp_new) < 1e-9 * kp_new, "kp not applied: %s" % g2["kp"][0])
        check(g2["kp"][1:] == g["kp"][1:], "other joints' kp changed")

        # a structural change is refused, the running configuration stays
        with open(os.path.join(dropdir, "60-rate.ini"), "w") as f:
            f.write("[arm]\nrate_hz = 500\n")
        m = c.call_full("reload")
        check("error" in m, "a loop rate change was accepted by reload")
        print("refused:", m["error"])
        check("rate_hz" in m["error"]["message"], "refusal does not name the key: %s" % m["error"])
        check(c.call("gains.get")["kp"][0] == g2["kp"][0], "gains changed by a refused reload")
        os.unlink(os.path.join(dropdir, "60-rate.ini"))

        # a link's dynamics change live: the holding torques follow (a heavier forearm whose
        # centre of mass is moved 0.2 m off its axes: the shoulder and elbow carry it)
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        tau0 = hold_torque(c)
        with open(os.path.join(dropdir, "60-mass.ini"), "w") as f:
            f.write("[joint %s]\nmass = 12\ncom = 0.2 0.2 0.2\n" % info["joints"][2])
        r = c.call("reload")
        print("reload:", r)
        check("mass" in r["changed"], "reload did not report the mass change: %r" % r["changed"])
        tau1 = hold_torque(c)
        print("holding torques [N m]: %s before, %s with the heavier forearm" %
              (" ".join("%.3f" % t for t in tau0), " ".join("%.3f" % t for t in tau1)))
        check(max(abs(a - b) for a, b in zip(tau0, tau1)) > 1.0,
              "the holding torques did not follow the reloaded mass")
        os.unlink(os.path.join(dropdir, "60-mass.ini"))
        check("mass" in c.call("reload")["changed"], "the mass did not change back")
        c.call("disable")

        # a torque limit beyond what the servos' Current Limit delivers is refused by name
        # (armsim sizes its servos for the configured limit; 1.5 x that is out of reach)
        tau_max = info["limits"]["torque"][1]
        with open(os.path.join(dropdir, "65-torque.ini"), "w") as f:
            f.write("[joint %s]\ntorque = %.6g\n" % (j1, 1.5 * tau_max))
        m = c.call_full("reload")
        check("error" in m, "a torque limit the servos cannot deliver was accepted")
        print("refused:", m["error"])
        check(m["error"]["code"] == "limits" and j1 in m["error"]["message"]
              and "Current Limit" in m["error"]["message"],
              "refusal does not name the joint and the servo limit: %s" % m["error"])
        check(c.call("info")["limits"]["torque"][1] == tau_max, "torque limit changed anyway")
        os.unlink(os.path.join(dropdir, "65-torque.ini"))

        # SIGHUP takes the same path
        kd_new = g["kd"][0] * 1.25 + 0.5
        with open(os.path.join(dropdir, "70-kd.ini"), "w") as f:
            f.write("[joint %s]\nkd = %.6g\n" % (j0, kd_new))
        rig.armd.send_signal(signal.SIGHUP)
        deadline = time.time() + 5
        while time.time() < deadline:
            if abs(c.call("gains.get")["kd"][0] - kd_new) < 1e-9 * kd_new:
                break
            time.sleep(0.05)
        check(abs(c.call("gains.get")["kd"][0] - kd_new) < 1e-9 * kd_new, "SIGHUP did not apply kd")
        print("SIGHUP applied kd = %g" % kd_new)
        c.call("gains.set", {"kp": g["kp"]})
        check(c.call("gains.get")["kp"] == g["kp"], "gains.set did not apply")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
