#!/usr/bin/env python3
"""Lockstep: `hold` during a move is a controlled stop (IEC 60204-1 category 2), as `cancel`:
the desired state decelerates within the joints' acceleration limits, then holds where it
stopped. armd --lockstep --paused (armsim's PUMA 560 in process, simulated time) at 1 kHz.

The same move (j1-j3 by 0.75 rad in 1.5 s, about 0.75 rad/s at its middle) is stopped twice from
the same pose at the same instant, first by `cancel`, then by `hold`. For each: the desired
acceleration (from the desired velocity tick to tick, every sample on simulated time) must stay
within the acceleration limit; the largest change of the commanded torque from the instant of
the request (what the stop adds to the gravity and motion torques) must stay within
TAU_FACTOR x cancel's; the reply says `moving` (the stop is under way), the trajectory ends
"cancelled: hold" when the stop ends, and the arm then holds at rest (status) where the stop
ended. Before this, `hold` froze the desired state at full speed: a velocity step of 0.75 rad/s
in one tick (750 rad/s^2 against 5)."""
from test_api_lib import Rig, check, event, run

MOVE = (0.75, 0.75, -0.75, 0.0, 0.0, 0.0)  # rad per joint, in MOVE_T
MOVE_T = 1.5  # s
QDD_MAX = 1.0 + 1e-6  # x the acceleration limit (and the rounding of qd_des in the JSON)
TAU_FACTOR = 1.5  # hold's largest torque change / cancel's (measured 1.00; before: ~4)
REST_QD = 0.01  # rad/s: at rest after the stop
REST_Q = 0.005  # rad: holding within this of where the stop ended


def stop_once(rig, c, info, q0, method):
    """Moves from q0, sends method at the middle of the move; returns (reply state, largest
    desired acceleration / limit, largest torque change / torque limit, the trajectory's result,
    the holding status, the desired position where the stop ended)."""
    n, lim = info["dof"], info["limits"]
    dt = 1.0 / info["rate_hz"]
    rec = rig.recorder(info["rate_hz"])
    goal = [q0[j] + MOVE[j % 6] for j in range(n)]
    r = c.call("trajectory", {"points": [{"t": MOVE_T, "q": goal}]})
    rec.collect(MOVE_T / 2)
    t_cmd = c.call("status")["time"]  # the method's tick follows (time stands still meanwhile)
    state = c.call(method)["state"]
    rec.collect(1.0)
    st = c.call("status")
    rec.close()
    s = [x for x in rec.samples if t_cmd - 2 * dt <= x["time"] <= t_cmd + 0.6]
    check(len(s) > 500, "%s: only %d samples around the stop" % (method, len(s)))
    speed = max(abs(v) for v in s[0]["qd_des"])
    tau0 = s[0]["tau"]
    acc = tau = 0.0
    for p, q in zip(s, s[1:]):
        check(q["tick"] == p["tick"] + 1, "%s: a sample lost at tick %d" % (method, p["tick"]))
        for j in range(n):
            acc = max(acc, abs(q["qd_des"][j] - p["qd_des"][j]) / dt / lim["acceleration"][j])
            tau = max(tau, abs(q["tau"][j] - tau0[j]) / lim["torque"][j])
    ev = event(rec, "trajectory_done", lambda p: p["id"] == r["id"])
    check(ev is not None, "%s: no trajectory_done" % method)
    end = [x for x in rec.samples if x["time"] <= ev["time"]][-1]["q_des"]
    print("%s at %.2f rad/s: reply %s, largest desired acceleration %.6f x the limit, largest "
          "torque change %.4f x the torque limit, result %r after %.3f s"
          % (method, speed, state, acc, tau, ev["result"], ev["time"] - t_cmd))
    check(speed > 0.7, "%s: the move was at %.2f rad/s, not ~0.75" % (method, speed))
    return state, acc, tau, ev["result"], st, end


def main(args):
    with Rig(args, "hold", lockstep="paused") as rig:
        c = rig.client()
        info = c.call("info")
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        q0 = c.call("status")["q"]
        res = {}
        for method in ("cancel", "hold"):
            res[method] = stop_once(rig, c, info, q0, method)
            c.call("trajectory", {"points": [{"t": MOVE_T, "q": q0}]})  # back, from rest
            rig.run(MOVE_T + 1.0)
            check(c.call("status")["state"] == "holding", "not back at q0 after the %s" % method)
        state, acc, tau, result, st, end = res["hold"]
        check(state == "moving", "hold while moving replied %s, not moving (the stop)" % state)
        check(result == "cancelled: hold", "hold ended the trajectory with %r" % result)
        check(acc <= QDD_MAX, "hold: desired acceleration %.1f x the limit (cancel: %.3f x)"
              % (acc, res["cancel"][1]))
        check(tau <= TAU_FACTOR * res["cancel"][2], "hold: torque change %.4f x the limit, "
              "%.2f x cancel's %.4f (bound %g x)" % (tau, tau / res["cancel"][2],
                                                    res["cancel"][2], TAU_FACTOR))
        worst_qd = max(abs(v) for v in st["qd"])
        off = max(abs(a - b) for a, b in zip(st["q"], end))
        print("after hold: %s, |qd| <= %.4f rad/s, %.4f rad from where the stop ended"
              % (st["state"], worst_qd, off))
        check(st["state"] == "holding" and st["trajectory"] is None,
              "after hold: %s, trajectory %s" % (st["state"], st["trajectory"]))
        check(worst_qd <= REST_QD, "after hold: still moving at %.4f rad/s" % worst_qd)
        check(off <= REST_Q, "after hold: %.4f rad from where the stop ended" % off)
        c.call("disable")
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
