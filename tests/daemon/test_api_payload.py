#!/usr/bin/env python3
"""Integration: the payload methods on the PUMA 560 (armsim on a pty, real socket, 1 kHz,
computed torque). armsim's tool holds a 2.0 kg point mass 0.1 m off the tool axis
(`--payload 2,0.1,0,0.05`) that armd's model does not know.

- payload.get/set: the config's payload (none) at start; a bad payload is refused over the
  real socket and changes nothing.
- Tracking of the demo-style move with no payload in the model, then with the exact one
  (payload.set): the RMS of armd's following error (telemetry q_des - q at 1 kHz, each
  joint's largest 5 % left out, a move with more than 10 late ticks run again).
- payload.estimate from the ready pose: mass within 5 % and centre within 5 mm of the truth
  (the issue's targets), its motion time reported, and the arm back at the pose it held. The
  fit leaves out samples a host stall spoiled (its robust refit); an estimate whose residual is
  still above 0.08 N m is run again, as the README tells users (up to 3 times in all).
- payload.estimate --apply, then the same move: tracking within 1.2 x the exact payload's RMS
  (the issue's target) and clearly better than with no payload (the test can fail). Each
  compared move follows a warm-up move with the same payload: a payload change moves the arm's
  equilibrium, and the arm creeps to the new one through the friction band for many seconds.
- Safety: an estimate refused while another runs (busy); an estop from another client during
  an estimate ends it with an error reply naming the estop, and the arm stays in estop."""
import math
import time

from test_api_calibrate import move_back
from test_api_lib import READY_POSE, Recorder, Rig, check, run
from test_api_tracking import make_points

MASS, COM = 2.0, (0.1, 0.0, 0.05)
# [N m]: a good estimate on this rig leaves 0.005-0.008 N m unexplained; before the fit left out
# the samples host stalls spoil, the ones that came out 5-7 mm off left 0.12-0.20
RESIDUAL_REPEAT = 0.08


def move_rms(rig, c, points, label, must_finish=True):
    """Runs the trajectory; the mean over joints of the RMS of armd's following error while
    moving [rad] (each joint's largest 5 % of samples left out), and the late ticks and read
    gaps the loop counted meanwhile. Without the payload in the model the move may end aborted (goal tolerance):
    then armd holds where it is, and the next move starts from there."""
    loop0 = c.call("status")["loop"]
    rec = Recorder(rig.sock, 1000)
    r = c.call("trajectory", {"points": points, "mode": "replace"})
    rec.collect(r["duration"] + 1.0)
    rec.client.close()
    done = [e for e in rec.events if e["method"] == "trajectory_done"
            and e["params"]["id"] == r["id"]]
    result = done[0]["params"]["result"] if done else "not finished"
    check(result == "done" or not must_finish, "%s: move %s" % (label, result))
    win = [s for s in rec.samples if s["state"] == "moving"]
    check(len(win) > 1000, "%s: only %d moving samples" % (label, len(win)))
    n = len(win[0]["q"])
    rms = []
    for j in range(n):  # the largest 5 % dropped: a host stall's spike, not the model
        sq = sorted((s["q_des"][j] - s["q"][j]) ** 2 for s in win)[:int(0.95 * len(win))]
        rms.append(math.sqrt(sum(sq) / len(sq)))
    loop1 = c.call("status")["loop"]
    late = sum(loop1[k] - loop0[k] for k in ("late_ticks", "read_gaps"))
    print("%-22s RMS following error [mrad]: %s (mean %.3f); %s%s"
          % (label, " ".join("%.3f" % (1e3 * x) for x in rms), 1e3 * sum(rms) / n, result,
             "; %d late ticks or read gaps" % late if late else ""))
    return sum(rms) / n, late


def compared_move(rig, c, points, label, tries=3):
    """move_rms for a move whose figure is compared with another's: a move during which the
    loop ran late or lost reads more than 10 times (this machine stalls now and then, see
    test_api_lib; a few late ticks per move are its normal) measures the stalls, not the model,
    so it is run again, up to tries times in all (the last one counts whatever happened)."""
    for i in range(tries):
        rms, late = move_rms(rig, c, points, label)
        if late <= 10:
            break
    return rms


def estimate_errors(r, what, late):
    """Prints the estimate and returns its (mass error [fraction], centre error [m])."""
    com = r["com"]
    check(com is not None, "%s: no centre: %s" % (what, r))
    err_m = abs(r["mass"] - MASS) / MASS
    err_c = math.sqrt(sum((a - b) ** 2 for a, b in zip(com, COM)))
    print("%s: %.4f kg (sd %.4f, error %.2f %%) at %.4f %.4f %.4f m (sd %s, error %.2f mm); "
          "residual %.3g N m, %d rows (%d left out), cond %.3g, %d poses, motion %.1f s; "
          "%d late ticks or read gaps"
          % (what, r["mass"], r["sd_mass"], 100 * err_m, com[0], com[1], com[2],
             " ".join("%.4f" % x for x in r["sd_com"]), 1e3 * err_c, r["residual_rms"],
             r["rows"], r["rows_left_out"], r["cond"], r["poses"], r["duration"], late))
    check(r["warnings"] == [], "%s: warnings on a well-shown payload: %s" % (what, r["warnings"]))
    return err_m, err_c


def estimate(c, params, what, tries=3):
    """payload.estimate judged against the issue's targets (mass within 5 %, centre within
    5 mm). An estimate whose own residual is above RESIDUAL_REPEAT is run again as the README
    tells users to, up to tries times in all; the last one is judged whatever happened. The
    late ticks and read gaps meanwhile are printed, not a reason to run it again: the fit is
    meant to cope with them."""
    for i in range(tries):
        loop0 = c.call("status")["loop"]
        r = c.call("payload.estimate", params)
        loop1 = c.call("status")["loop"]
        late = sum(loop1[k] - loop0[k] for k in ("late_ticks", "read_gaps"))
        err_m, err_c = estimate_errors(r, what, late)
        if r["residual_rms"] <= RESIDUAL_REPEAT:
            break
    check(err_m <= 0.05, "%s: mass %.4f kg is more than 5 %% off %.1f" % (what, r["mass"], MASS))
    check(err_c <= 0.005, "%s: centre %.1f mm off" % (what, 1e3 * err_c))
    return r


def main(args):
    sim = READY_POSE + ("--payload", "%g,%g,%g,%g" % ((MASS,) + COM))
    with Rig(args, "payload", sim_args=sim) as rig:
        c = rig.client()
        info = c.call("info")
        p = c.call("payload.get")
        check(p["mass"] == 0 and p["com"] == [0, 0, 0], "the config has no payload: %s" % p)
        for bad, name in (({"mass": -2}, "params.mass"), ({"mass": 2, "com": [0, 0]}, "params.com"),
                          ({"mass": 2, "inertia": [1, 0, 0, -1, 0, 1]}, "payload.inertia"),
                          ({"mass": 2, "com": [0, 0, 1e200]}, "params.com[2]")):
            m = c.call_full("payload.set", bad)
            check("error" in m and name in m["error"]["message"],
                  "payload.set %s: expected an error naming %s, got %s" % (bad, name, m))
        check(c.call("payload.get")["mass"] == 0, "a refused payload.set changed the payload")
        m = c.call_full("payload.estimate")
        check("error" in m and m["error"]["code"] == "bad_state",
              "payload.estimate while disabled: %s" % m)

        check(c.call("enable")["state"] == "holding", "enable did not hold")
        time.sleep(0.5)
        q0 = c.call("status")["q_des"]
        points = make_points(info, q0)
        rms_none, _ = move_rms(rig, c, points, "no payload in model", must_finish=False)
        c.call("payload.set", {"mass": MASS, "com": list(COM)})
        move_back(c, q0)
        move_rms(rig, c, points, "warm-up (exact)")
        rms_exact = compared_move(rig, c, points, "exact payload")
        c.call("payload.set", {"mass": 0})

        held = c.call("status")["q_des"]
        c.sock.settimeout(120)  # the reply comes after the estimate's motion
        r = estimate(c, {}, "estimate")
        check(not r["applied"], "applied without apply")
        check(c.call("payload.get")["mass"] == 0, "the estimate changed the payload without apply")
        st = c.call("status")
        back = max(abs(a - b) for a, b in zip(st["q_des"], held))
        check(st["state"] == "holding" and back < 1e-9,
              "not back at the held pose: %s, %.3g rad" % (st["state"], back))

        r = estimate(c, {"apply": True}, "estimate --apply")
        check(r["applied"], "not applied")
        p = c.call("payload.get")
        check(abs(p["mass"] - r["mass"]) < 1e-12 and
              all(abs(a - b) < 1e-12 for a, b in zip(p["com"], r["com"])),
              "payload.get %s is not the applied estimate" % p)
        move_rms(rig, c, points, "warm-up (estimated)")
        rms_est = compared_move(rig, c, points, "estimated payload")
        print("tracking: estimated %.3f mrad = %.2f x the exact payload's %.3f (target <= 1.2); "
              "no payload %.3f" % (1e3 * rms_est, rms_est / rms_exact, 1e3 * rms_exact,
                                   1e3 * rms_none))
        check(rms_est <= 1.2 * rms_exact, "tracking with the estimate is %.2f x the exact "
              "payload's" % (rms_est / rms_exact))
        check(rms_none > 5 * rms_est, "the payload does not change tracking: the test is blind")

        # busy, then an estop from another client ends the estimate with an error
        c.send_raw(b'{"id": 77, "method": "payload.estimate"}\n')
        time.sleep(0.3)
        other = rig.client()
        m = other.call_full("payload.estimate")
        check("error" in m and m["error"]["code"] == "busy", "second estimate: %s" % m)
        time.sleep(0.7)
        other.call("estop")
        c.sock.settimeout(10)
        reply = c.read_message()
        while reply is not None and reply.get("id") != 77:
            reply = c.read_message()
        check(reply is not None and "error" in reply and reply["error"]["code"] == "aborted" and
              "estop" in reply["error"]["message"], "estimate during an estop: %s" % reply)
        print("estop during an estimate: %s" % reply["error"]["message"])
        q_stop = other.call("status")["q"]
        time.sleep(1.0)
        st = other.call("status")
        check(st["state"] == "estop", "not in estop: %s" % st["state"])
        moved = max(abs(a - b) for a, b in zip(st["q"], q_stop))
        print("after the estop: state %s, moved %.4f rad in 1 s" % (st["state"], moved))
        other.close()
        c.close()


if __name__ == "__main__":
    run(main)
