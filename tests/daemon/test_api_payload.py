#!/usr/bin/env python3
"""Integration: the payload methods on the PUMA 560 on simulated time (armd --lockstep --paused:
armsim's arm in armd's own process, 1 kHz, computed torque, real socket; simulated time runs only
when the test runs it). armsim's tool holds a 2.0 kg point mass 0.1 m off the tool axis
(`--payload 2,0.1,0,0.05`) that armd's model does not know.

- payload.get/set: the config's payload (none) at start; a bad payload is refused over the
  real socket and changes nothing.
- Tracking of the demo-style move with no payload in the model, then with the exact one
  (payload.set): the RMS of armd's following error (telemetry q_des - q at the loop rate, every
  moving sample). No late tick, overrun or read gap during a move: on simulated time none can
  happen, so one is a failure (the enable's bus writes overrun two ticks; that is before).
- payload.estimate from the ready pose, run once: mass and centre within MASS_ERR_MAX and
  COM_ERR_MAX of the truth (the issue's 5 % and 5 mm are the outer bounds), its residual below
  RESIDUAL_MAX, no warning, no late tick meanwhile, its motion time reported, and the arm back
  at the pose it held. payload.estimate is armd's own procedure (a 5 ms main-loop step reads
  the samples and sends the next move); the test runs simulated time while its reply is
  outstanding (call_running), and the estimate comes out the same run after run.
- payload.estimate --apply, then the same move: tracking within EST_TRACK_MAX x the exact
  payload's RMS (the issue's 1.2 x the outer bound) and at least NONE_OVER_EST_MIN times
  better than with no payload in the model (the test is not blind). Each compared move follows
  a warm-up move with the same payload: a payload change moves the arm's equilibrium, and the
  arm creeps to the new one through the friction band for many seconds.
- Safety: an estimate refused while another runs (busy); an estop from another client during
  an estimate ends it with an error reply naming the estop, and the arm stays in estop.

Also the helpers the identify tests share: move_rms, move_back, loop_counts."""
import math
import threading
import time

from test_api_lib import READY_POSE, Rig, TestFailure, check, run
from test_api_tracking import make_points

MASS, COM = 2.0, (0.1, 0.0, 0.05)
# Bounds, about twice what lockstep gives (3 runs, the same estimates each: the first 0.28 %
# heavy, centre 0.33 mm off, residual 0.0082 N m; the one applied 0.26 %, 0.36 mm, 0.0083 N m;
# tracking with it 1.005 x the exact payload's, without a payload 160 x). The targets
# (5 %, 5 mm, 1.2 x) are the outer bounds. On a pty in real time the mass came within 0.11 %
# with a residual of 0.005-0.008 N m; host stalls that spoiled samples put the centre 5-7 mm
# off with a residual of 0.12-0.20 N m.
MASS_ERR_MAX = 0.006    # [fraction of MASS]
COM_ERR_MAX = 0.00075   # [m]
RESIDUAL_MAX = 0.016    # [N m]
EST_TRACK_MAX = 1.02    # tracking with the estimate / with the exact payload
NONE_OVER_EST_MIN = 80  # tracking without the payload in the model / with the estimate
# the loop's counters that only a late or failed tick moves (status loop)
LOOP_COUNTS = ("late_ticks", "overruns", "read_gaps")


def loop_counts(c):
    """The loop's counters of late ticks, overruns and read gaps (status loop)."""
    loop = c.call("status")["loop"]
    return {k: loop[k] for k in LOOP_COUNTS}


def check_loop_kept(c, before, what):
    """Fails if the loop counted a late tick, an overrun or a read gap since before
    (loop_counts): on simulated time no host stall reaches the loop, so one would be armd's."""
    after = loop_counts(c)
    grown = ["%d %s" % (after[k] - before[k], k) for k in LOOP_COUNTS if after[k] != before[k]]
    check(not grown, "%s: the loop counted %s on simulated time" % (what, ", ".join(grown)))


def move_rms(rig, c, points, label, must_finish=True):
    """Runs the trajectory on simulated time (its duration + 1 s: the goal check), recording
    telemetry at the loop rate; returns the mean over joints of the RMS of armd's following
    error q_des - q over the moving samples [rad]. Fails on a late tick, an overrun or a read
    gap meanwhile. Without the payload (or with the configured model of a perturbed arm) the
    move may end aborted (goal tolerance): then armd holds where it is, and the next move starts
    from there."""
    before = loop_counts(c)
    rate = c.call("info")["rate_hz"]
    rec = rig.recorder(rate)
    r = c.call("trajectory", {"points": points, "mode": "replace"})
    rec.collect(r["duration"] + 1.0)
    rec.close()
    done = [e for e in rec.events if e["method"] == "trajectory_done"
            and e["params"]["id"] == r["id"]]
    result = done[0]["params"]["result"] if done else "not finished"
    check(result == "done" or not must_finish, "%s: move %s" % (label, result))
    dec = round(rec.period * rate)  # ticks between samples
    lost = [(a["tick"], b["tick"]) for a, b in zip(rec.samples, rec.samples[1:])
            if b["tick"] != a["tick"] + dec]
    check(not lost, "%s: samples lost between ticks %s (a lockstep subscriber loses none)"
          % (label, lost[:5]))
    win = [s for s in rec.samples if s["state"] == "moving"]
    check(len(win) > 1000, "%s: only %d moving samples" % (label, len(win)))
    n = len(win[0]["q"])
    rms = [math.sqrt(sum((s["q_des"][j] - s["q"][j]) ** 2 for s in win) / len(win))
           for j in range(n)]
    print("%-22s RMS following error [mrad]: %s (mean %.4f); %s"
          % (label, " ".join("%.4f" % (1e3 * x) for x in rms), 1e3 * sum(rms) / n, result))
    check_loop_kept(c, before, label)
    return sum(rms) / n


def move_back(rig, c, q0, limit=10.0):
    """Moves the arm to q0 in 1 s and runs simulated time (0.1 s at a time, at most limit s)
    until it holds there."""
    c.call("move_to", {"q": q0, "duration": 1.0})
    ran = 0.0
    while ran < limit:
        rig.run(0.1)
        ran += 0.1
        st = c.call("status")
        if st["state"] == "holding" and st["trajectory"] is None:
            return
        check(st["state"] in ("holding", "moving"), "moving back: %s" % st["state"])
    raise TestFailure("the move back did not end within %g s" % limit)


def wait_started(other, what, asker=None):
    """Waits until status (on another connection than the one waiting for the reply) shows
    the procedure's first move: armd has taken the request (or until the thread asker, which
    waits for the reply, has it: a refusal comes at once). A wait for armd to read a request,
    bounded by 10 s of wall-clock time; no time is judged."""
    deadline = time.monotonic() + 10
    while other.call("status")["trajectory"] is None:
        if asker is not None and not asker.is_alive():
            return
        check(time.monotonic() < deadline, "%s: no move within 10 s of the request" % what)
        time.sleep(0.01)


def call_running(rig, c, method, params, what, step=1.0, limit=300.0):
    """The whole reply to c's request `method` (payload.estimate), which armd answers after a
    procedure on simulated time: the request is sent from a thread, and once armd has started
    the procedure (its first move) the test runs simulated time in steps of step [s] (rig.run)
    until the reply came, at most limit s of it. The procedure's 5 ms main-loop timer is on
    the wall clock: it looks at the arm between two batches of 200 ticks, and at every such
    boundary when a batch takes 5 ms or more (the PUMA runs at 10-25 x real time: 8-20 ms), so
    the estimate is the same run after run."""
    box = {}

    def ask():
        try:
            box["reply"] = c.call_full(method, params)
        except Exception as e:  # raised again below, in the test's thread
            box["error"] = e

    c.sock.settimeout(limit)  # a bound only: the reply comes once time has run
    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    other = rig.client()
    wait_started(other, what, asker)
    other.close()
    ran = 0.0
    while asker.is_alive():
        check(ran < limit, "%s: no reply after %g s of simulated time" % (what, limit))
        rig.run(step)
        ran += step
    asker.join()
    c.sock.settimeout(10)
    if "error" in box:
        raise box["error"]
    return box["reply"]


def estimate(rig, c, params, what):
    """payload.estimate, run once, judged against MASS_ERR_MAX and COM_ERR_MAX; its residual
    below RESIDUAL_MAX, no warning and no late tick meanwhile."""
    before = loop_counts(c)
    m = call_running(rig, c, "payload.estimate", params, what)
    check("result" in m, "%s failed: %s" % (what, m.get("error")))
    r = m["result"]
    com = r["com"]
    check(com is not None, "%s: no centre: %s" % (what, r))
    err_m = abs(r["mass"] - MASS) / MASS
    err_c = math.sqrt(sum((a - b) ** 2 for a, b in zip(com, COM)))
    print("%s: %.5f kg (sd %.4f, error %.3f %%) at %.5f %.5f %.5f m (sd %s, error %.3f mm); "
          "residual %.3g N m, %d rows (%d left out), cond %.3g, %d poses, motion %.1f s"
          % (what, r["mass"], r["sd_mass"], 100 * err_m, com[0], com[1], com[2],
             " ".join("%.4f" % x for x in r["sd_com"]), 1e3 * err_c, r["residual_rms"],
             r["rows"], r["rows_left_out"], r["cond"], r["poses"], r["duration"]))
    check_loop_kept(c, before, what)
    check(r["warnings"] == [], "%s: warnings on a well-shown payload: %s" % (what, r["warnings"]))
    check(r["duration"] > 0, "%s: no motion time reported" % what)
    check(err_m <= MASS_ERR_MAX, "%s: mass %.4f kg is %.3f %% off %.1f (bound %.2f %%)"
          % (what, r["mass"], 100 * err_m, MASS, 100 * MASS_ERR_MAX))
    check(err_c <= COM_ERR_MAX, "%s: centre %.3f mm off (bound %.2f mm)"
          % (what, 1e3 * err_c, 1e3 * COM_ERR_MAX))
    check(r["residual_rms"] <= RESIDUAL_MAX, "%s: residual %.4f N m (bound %.3f)"
          % (what, r["residual_rms"], RESIDUAL_MAX))
    return r


def estop_during_estimate(rig, c):
    """Busy, then an estop from another client ends the estimate with an error reply naming
    the estop; the arm stays in estop."""
    c.send_raw(b'{"id": 77, "method": "payload.estimate"}\n')
    other = rig.client()
    wait_started(other, "the estimate to stop")
    rig.run(0.3)
    m = other.call_full("payload.estimate")
    check("error" in m and m["error"]["code"] == "busy", "second estimate: %s" % m)
    rig.run(0.7)
    other.call("estop")
    reply = c.read_message()  # within the socket's 10 s: the estimate's next step sees the estop
    while reply is not None and reply.get("id") != 77:
        reply = c.read_message()
    check(reply is not None and "error" in reply and reply["error"]["code"] == "aborted" and
          "estop" in reply["error"]["message"], "estimate during an estop: %s" % reply)
    print("estop during an estimate: %s" % reply["error"]["message"])
    q_stop = other.call("status")["q"]
    rig.run(1.0)
    st = other.call("status")
    check(st["state"] == "estop", "not in estop: %s" % st["state"])
    moved = max(abs(a - b) for a, b in zip(st["q"], q_stop))
    print("after the estop: state %s, moved %.4f rad in 1 s" % (st["state"], moved))
    other.close()


def main(args):
    sim = READY_POSE + ("--payload", "%g,%g,%g,%g" % ((MASS,) + COM))
    with Rig(args, "payload", sim_args=sim, lockstep="paused") as rig:
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
        rig.run(0.5)
        q0 = c.call("status")["q_des"]
        points = make_points(info, q0)
        rms_none = move_rms(rig, c, points, "no payload in model", must_finish=False)
        c.call("payload.set", {"mass": MASS, "com": list(COM)})
        move_back(rig, c, q0)
        move_rms(rig, c, points, "warm-up (exact)")
        rms_exact = move_rms(rig, c, points, "exact payload")
        c.call("payload.set", {"mass": 0})

        held = c.call("status")["q_des"]
        r = estimate(rig, c, {}, "estimate")
        check(not r["applied"], "applied without apply")
        check(c.call("payload.get")["mass"] == 0, "the estimate changed the payload without apply")
        st = c.call("status")
        back = max(abs(a - b) for a, b in zip(st["q_des"], held))
        check(st["state"] == "holding" and back < 1e-9,
              "not back at the held pose: %s, %.3g rad" % (st["state"], back))

        r = estimate(rig, c, {"apply": True}, "estimate --apply")
        check(r["applied"], "not applied")
        p = c.call("payload.get")
        check(abs(p["mass"] - r["mass"]) < 1e-12 and
              all(abs(a - b) < 1e-12 for a, b in zip(p["com"], r["com"])),
              "payload.get %s is not the applied estimate" % p)
        move_rms(rig, c, points, "warm-up (estimated)")
        rms_est = move_rms(rig, c, points, "estimated payload")
        print("tracking: estimated %.4f mrad = %.4f x the exact payload's %.4f (bound %.2f); "
              "no payload %.4f" % (1e3 * rms_est, rms_est / rms_exact, 1e3 * rms_exact,
                                   EST_TRACK_MAX, 1e3 * rms_none))
        check(rms_est <= EST_TRACK_MAX * rms_exact, "tracking with the estimate is %.4f x the "
              "exact payload's (bound %.2f)" % (rms_est / rms_exact, EST_TRACK_MAX))
        check(rms_none > NONE_OVER_EST_MIN * rms_est, "tracking without the payload in the model "
              "is only %.0f x worse than with the estimate (at least %d): the test is blind"
              % (rms_none / rms_est, NONE_OVER_EST_MIN))

        estop_during_estimate(rig, c)
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
