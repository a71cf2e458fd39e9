#!/usr/bin/env python3
"""Lockstep: every fault path injected through armsim ends with zero torque in armsim's truth
(every joint, exactly 0, from a moment after the fault until the end) and the right reason in
`status.fault` and in the `fault` event pushed to a subscriber. armd --lockstep --paused
(armsim's PUMA 560 in process, simulated time) at 1 kHz with the example's read-gap limit and
bus watchdog, through the socket; every figure is the same at every run.

Cases: a device alert (--alert-after, names the servo), a silent device (--silent-after,
consecutive failed reads), corrupted replies (--corrupt-crc 1.0 --faults-after, CRC), each at
the exact simulated time FAULT_AT, with the arm holding since the enable; following error from
a heavier simulated arm (--mass-scale) with on_fault = torque_off, the same with
on_fault = damp (truth: tau = -D qd + G(q) while moving, then exactly 0 once still or after
damp_timeout), and enabling an arm that fell onto its j2 hard stop just past the soft limit.
(test_lockstep.c pins the tick a silent bus faults at, in C; here the same fault path runs
through armsim's options, the socket and the truth.)

Clocks: exact (rig.clock_offset: armd's time and the truth's are both the simulated clock);
armsim's option times are the truth's t.
"""
import configparser
import math

from test_api_lib import (LOCKSTEP_DROPIN, READY_POSE, Rig, check, event, first_torque, run,
                          zero_onset)

# armsim's simulated XM430-W350 has the factory Current Limit 1193 x 2.69 mA or, if larger, what
# the joint's torque limit needs (tools/armsim/dxl2_device.c sized_current_limit; the example's
# comment: servos sized for the torque limits); armd's driver clamps the goal current there.
FACTORY_CURRENT_LIMIT = 1193 * 2.69e-3


def torque_clamp(jt):
    """|applied torque| bound of joint jt [N m]: its torque limit, or what the servo's Current
    Limit allows when that is lower."""
    limit_a = max(FACTORY_CURRENT_LIMIT, jt["torque"] / jt["torque_per_amp"])
    return min(jt["torque"], jt["torque_per_amp"] * limit_a)


FAULT_AT = 1.0  # s, armsim's time (the truth's t): the injected faults start, the arm holding
TICK = 0.001  # s: the loop's period (LOCKSTEP_DROPIN: 1 kHz)
READ_GAP = 0.020  # s: the example's [safety] max_read_gap_ms (the default)
BUS_WATCHDOG = 0.100  # s: the example's [driver] bus_watchdog_ms
DAMP_TIMEOUT = 1.0  # s: the damping stop's timeout in the damp case's drop-in
# Bounds on the times, in ticks or from the configuration where the path sets the time, else
# about twice what is measured (the same at every run; the real-time rig allowed 100 ms plus
# the longest hold-up of armd's control thread in the run for every torque-off). Measured: the
# alert faults 0.2 ms after it, every torque 0 0.8 ms after the fault; silence and corrupt
# replies fault 19.2 ms after their start (the read gap used up), the silent servos' torque 0
# by their watchdog 100.0 ms after the silence, after corrupt replies armd's torque-off 3.8 ms
# after the fault; following error: torque 0 0.8 ms after it; damping stop 999.8 ms, at the
# timeout.
# The damp case judges each applied torque against the law at the states of the HOLD_S before
# it, one tick (the real-time rig: 5 ms + the longest lateness + the longest read gap of the
# run), and allows DAMP_TAU_MAX: about twice the 0.151 N m measured (j3; with the state of the
# row itself alone 0.180; real time 0.231 with a bound of 0.5).
HOLD_S = TICK
DAMP_TAU_MAX = 0.3  # N m
DRIFT_MAX = 1e-4  # rad: holding after the move off the end stop (measured 0; 4 encoder counts)
ENDSTOP_FALL = 5.0  # s for the PUMA to fall onto j2's stop and come to rest (j3 swings down to 4 s)
ENDSTOP_BACK = 2.0  # s after the enable by which it holds inside the soft limits


# ----------------------------------------------------------------------------- the model
def load_model(path):
    """Joints of the INI at path: standard DH (a, alpha, d, theta), mass, com (link frame),
    limits, damping and following_error lists from [safety]."""
    cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    cp.read(path)

    def num(text):
        return float(eval(text, {"__builtins__": {}}, {"pi": math.pi}))

    joints = []
    for sec in cp.sections():
        if not sec.startswith("joint "):
            continue
        s = cp[sec]
        joints.append({"name": sec[6:], "a": num(s["a"]), "alpha": num(s["alpha"]),
                       "d": num(s["d"]), "theta": num(s["theta"]), "mass": num(s["mass"]),
                       "com": [num(x) for x in s["com"].split()],
                       "lower": num(s["lower"]), "upper": num(s["upper"]),
                       "torque": num(s["torque"]),
                       "torque_per_amp": num(s["torque_per_amp"])})
    damping = [float(x) for x in cp["safety"]["damping"].split()]
    g = [float(x) for x in cp["arm"]["gravity"].split()]
    return joints, damping, g


def dh_chain(joints, q):
    """Origins and rotations (base frame) of every link frame of a standard-DH revolute arm at
    q [rad]: frame i is at the distal end of link i; its z axis is joint i+1's axis."""
    R = [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]
    o = [0.0, 0.0, 0.0]
    frames = [(R, o)]
    for jt, qi in zip(joints, q):
        th = jt["theta"] + qi
        ct, st = math.cos(th), math.sin(th)
        ca, sa = math.cos(jt["alpha"]), math.sin(jt["alpha"])
        A = [[ct, -st * ca, st * sa], [st, ct * ca, -ct * sa], [0, sa, ca]]
        p = [jt["a"] * ct, jt["a"] * st, jt["d"]]
        o = [o[r] + sum(R[r][k] * p[k] for k in range(3)) for r in range(3)]
        R = [[sum(R[r][k] * A[k][c] for k in range(3)) for c in range(3)] for r in range(3)]
        frames.append((R, o))
    return frames


def gravity_torque(joints, g, q):
    """G(q) [N m]: the joint torques holding the arm still against gravity g [m/s^2],
    tau_i = -z_{i-1} . sum_{k>=i} (c_k - o_{i-1}) x m_k g (static Newton-Euler)."""
    frames = dh_chain(joints, q)
    coms = []
    for k, jt in enumerate(joints):
        R, o = frames[k + 1]
        coms.append([o[r] + sum(R[r][c] * jt["com"][c] for c in range(3)) for r in range(3)])
    tau = []
    for i in range(len(joints)):
        R, o = frames[i]
        z = [R[0][2], R[1][2], R[2][2]]
        m = [0.0, 0.0, 0.0]
        for k in range(i, len(joints)):
            r = [coms[k][x] - o[x] for x in range(3)]
            f = [joints[k]["mass"] * gx for gx in g]
            m = [m[0] + r[1] * f[2] - r[2] * f[1], m[1] + r[2] * f[0] - r[0] * f[2],
                 m[2] + r[0] * f[1] - r[1] * f[0]]
        tau.append(-sum(z[x] * m[x] for x in range(3)))
    return tau


# -------------------------------------------------------------------------- the harness
def fault_case(args, name, sim_args, dropin, words, provoke=None, run_for=1.5):
    """Runs one fault path on simulated time: enable (holding), provoke(c) (a move) or a fault
    armsim's options place at an exact simulated time, run_for seconds of simulated time; then
    checks the state (fault), the reason (status and the subscriber's fault event, the same),
    zero commanded torque in status, and exactly zero applied torque in the truth from some row
    to the end, at least 0.3 s of it. Returns (truth, fault time in truth seconds, zero onset
    index, fault status); the case judges the times."""
    with Rig(args, name, sim_args=sim_args, dropin=dropin, lockstep="paused") as rig:
        rec = rig.recorder(10)
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "%s: enable did not hold" % name)
        if provoke:
            provoke(c)
        rec.collect(run_for)
        st = c.call("status")
        rec.close()
        check(st["state"] == "fault", "%s: state %s after %g s" % (name, st["state"], run_for))
        check(all(x == 0 for x in st["tau"]),
              "%s: commanded torque not zero after the fault: %s" % (name, st["tau"]))
        for w in words:
            check(w in st["fault"], "%s: fault reason %r does not name %r" % (name, st["fault"], w))
        ev = event(rec, "fault")
        check(ev is not None, "%s: no fault event reached the subscriber" % name)
        check(ev["reason"] == st["fault"], "%s: fault event %r differs from status %r" %
              (name, ev["reason"], st["fault"]))
        check(event(rec, "state", lambda p: p["state"] == "holding") is not None,
              "%s: no holding event reached the subscriber" % name)
        truth = rig.read_truth()
        d = rig.clock_offset()
        c.close()
        check(rig.stop_armd() == 0, "%s: armd did not exit 0 after the fault" % name)
    t_fault = ev["time"] + d
    iz = zero_onset(truth)
    check(iz < len(truth), "%s: applied torque not zero at the end of the truth: %s" %
          (name, truth[-1][3]))
    check(iz > 0 and first_torque(truth) is not None, "%s: no torque before the fault" % name)
    t_zero = truth[iz][0]
    print("%s: fault %r at truth t = %.4f s; torque exactly 0 on every joint from t = %.4f s "
          "(%.1f ms after the fault) to the end (%.2f s later)" %
          (name, st["fault"], t_fault, t_zero, 1e3 * (t_zero - t_fault), truth[-1][0] - t_zero))
    check(truth[-1][0] - t_zero >= 0.3, "%s: too little truth after the zero onset" % name)
    return truth, t_fault, iz, st


def check_within(name, what, got, lo, hi):
    """Fails unless lo <= got <= hi [s]; what names the interval."""
    print("%s: %s %.1f ms (bounds %.1f to %.1f ms)" % (name, what, 1e3 * got, 1e3 * lo, 1e3 * hi))
    check(lo <= got <= hi, "%s: %s %.1f ms, outside %.1f to %.1f ms" %
          (name, what, 1e3 * got, 1e3 * lo, 1e3 * hi))


def move(c, dq, duration):
    q = c.call("status")["q"]
    c.call("move_to", {"q": [a + b for a, b in zip(q, dq)], "duration": duration})


# ---------------------------------------------------------------------------------- cases
def case_alert(args):
    """Servo 2 raises a hardware alert at FAULT_AT (and switches its own torque off): armd
    faults naming it and switches the others off."""
    truth, t_fault, iz, _ = fault_case(
        args, "alert", READY_POSE + ("--alert-after", str(FAULT_AT), "--alert-id", "2"),
        None, ["device alert", "device 2"])
    check_within("alert", "fault after the alert", t_fault - FAULT_AT, 0, TICK)
    check_within("alert", "every torque 0 after the fault", truth[iz][0] - t_fault, 0, 2 * TICK)


def case_silent(args):
    """armsim stops answering and obeying at FAULT_AT: armd faults on the failed reads
    ([safety] max_read_gap_ms, the example's 20 ms); the servos' bus watchdog (the example's
    100 ms) is what zeroes the torque of a device that no longer listens, so the zero comes
    that long after the silence, after armd's fault."""
    truth, t_fault, iz, _ = fault_case(
        args, "silent", READY_POSE + ("--silent-after", str(FAULT_AT)), None,
        ["consecutive failed reads"])
    check_within("silent", "fault after the silence", t_fault - FAULT_AT, 0, 2 * READ_GAP)
    check_within("silent", "every torque 0 after the silence", truth[iz][0] - FAULT_AT,
                 BUS_WATCHDOG - TICK, BUS_WATCHDOG + 2 * TICK)


def case_crc(args):
    """Every reply corrupted from FAULT_AT: armd faults on the failed reads, naming the CRC;
    the servos still obey, so its torque-off reaches them."""
    truth, t_fault, iz, _ = fault_case(
        args, "crc", READY_POSE + ("--corrupt-crc", "1.0", "--faults-after", str(FAULT_AT)),
        None, ["consecutive failed reads", "CRC"])
    check_within("crc", "fault after the first corrupt reply", t_fault - FAULT_AT, 0,
                 2 * READ_GAP)
    check_within("crc", "every torque 0 after the fault", truth[iz][0] - t_fault, 0, 8 * TICK)


def dropin(safety):
    """LOCKSTEP_DROPIN (1 kHz, the example's other values) with a [safety] section."""
    return LOCKSTEP_DROPIN + "[safety]\n" + safety


FOLLOW_DROPIN = dropin("following_error = 0.01 0.01 0.01 0.01 0.01 0.01\non_fault = torque_off\n")


def case_following(args):
    """A heavier simulated arm (--mass-scale 3) misses its move by more than following_error:
    on_fault = torque_off."""
    truth, t_fault, iz, _ = fault_case(
        args, "following", READY_POSE + ("--mass-scale", "3"), FOLLOW_DROPIN,
        ["following error", "joint j"], provoke=lambda c: move(c, [0, -0.6, 0.6, 0, 0, 0], 1.0))
    check_within("following", "every torque 0 after the fault", truth[iz][0] - t_fault, 0,
                 2 * TICK)


DAMP_DROPIN = dropin("following_error = 0.01 0.01 0.01 0.01 0.01 0.01\non_fault = damp\n"
                     "damping = 20 30 10 2 2 2\ndamp_stop_velocity = 0.05\n"
                     "damp_timeout = %g\n" % DAMP_TIMEOUT)


def case_damp(args):
    """Following error while moving, on_fault = damp: while the damping stop runs, the applied
    torque is -D qd + G(q) of armd's (nominal) model at the true state (within the device's
    current resolution and the tick's lag), then exactly 0 once every |qd| < 0.05 rad/s or
    after damp_timeout."""
    truth, t_fault, iz, st = fault_case(
        args, "damp", READY_POSE + ("--mass-scale", "3"), DAMP_DROPIN,
        ["following error", "joint j"], provoke=lambda c: move(c, [0, -0.6, 0.6, 0, 0, 0], 1.0),
        run_for=DAMP_TIMEOUT + 1.5)
    joints, _, g = load_model(args.config)
    damping = [20, 30, 10, 2, 2, 2]
    t_zero = truth[iz][0]
    rows = [r for r in truth[:iz] if t_fault + 0.005 <= r[0] <= t_zero - 0.003]
    check(len(rows) > 20, "damp: too few truth rows in the damping stop (%d)" % len(rows))
    worst = [0.0] * len(joints)
    moving = max(max(abs(v) for v in r[2]) for r in rows)
    # the servos hold each written torque until the next write, so the torque applied at a truth
    # row is the law at the state of the tick that wrote it: each torque is judged from the row
    # where it was first applied (a segment of equal applied torques: one write), against the
    # law at the states of the HOLD_S before that row (the read, the compute and the write of
    # its tick: one tick on simulated time, where the truth rows are a tick apart)
    lims = [torque_clamp(jt) for jt in joints]
    wants = []
    for r in rows:
        gq = gravity_torque(joints, g, r[1])
        wants.append([max(-lims[j], min(lims[j], gq[j] - damping[j] * r[2][j]))
                      for j in range(len(joints))])
    lo, start, writes = 0, 0, 0
    for i, r in enumerate(rows):
        if i == 0 or r[3] != rows[i - 1][3]:
            start = i  # first applied here: judged against the states before this row
            writes += 1
            while rows[lo][0] < r[0] - HOLD_S:
                lo += 1
        for j in range(len(joints)):
            err = min(abs(r[3][j] - wants[k][j]) for k in range(lo, start + 1))
            worst[j] = max(worst[j], err)
    last = truth[iz - 1]
    print("damp: stop lasted %.1f ms (timeout %g s), max |qd| during it %.3f rad/s, |qd| at the "
          "end %.4f rad/s; max |tau - (-D qd + G(q))| per joint %s N m (%d torques, each "
          "against the states of the %.1f ms before it was applied)" %
          (1e3 * (t_zero - t_fault), DAMP_TIMEOUT, moving, max(abs(v) for v in last[2]),
           " ".join("%.3f" % w for w in worst), writes, 1e3 * HOLD_S))
    check(moving > 0.05, "damp: the arm was not moving during the damping stop")
    for j, w in enumerate(worst):
        check(w <= DAMP_TAU_MAX, "damp: joint %s torque differs from -D qd + G(q) by %.3f N m "
              "(bound %g)" % (joints[j]["name"], w, DAMP_TAU_MAX))
    # the stop ends once still (on armd's reading, a tick behind) or at damp_timeout: here the
    # arm, 3 x heavier than armd's model, still falls at the timeout
    still = max(abs(v) for v in last[2]) < 0.06
    check_within("damp", "torque off after the fault (%s)" % ("still" if still else "timeout"),
                 t_zero - t_fault, 0 if still else DAMP_TIMEOUT - TICK, DAMP_TIMEOUT + TICK)


def case_endstop(args):
    """The PUMA starting at the zero pose falls onto j2's hard stop just past the soft limit;
    enable is accepted there (within limit - following_error) without a jump, moves the arm
    back inside the soft limits within the velocity and acceleration limits, and holds."""
    joints, _, _ = load_model(args.config)
    with Rig(args, "endstop", sim_args=(), lockstep="paused") as rig:
        c = rig.client()
        lo = joints[1]["lower"]
        rig.run(ENDSTOP_FALL)
        st = c.call("status")
        q2, qd = st["q"][1], max(abs(v) for v in st["qd"])
        print("endstop: after %g s j2 rests at %.6f rad (|qd| %.2g rad/s), soft limit %.6f rad"
              % (ENDSTOP_FALL, q2, qd, lo))
        check(q2 < lo, "endstop: j2 at %.6f is not past its soft limit %.6f (nothing to test)" %
              (q2, lo))
        check(qd < 0.01, "endstop: the arm still moves (|qd| %.3f rad/s) %g s after the start"
              % (qd, ENDSTOP_FALL))
        r = c.call_full("enable")
        check("result" in r, "endstop: enable refused on the hard stop: %s" % r.get("error"))
        st = c.call("status")
        jump = max(abs(a - b) for a, b in zip(st["q_des"], st["q"]))
        check(jump < 0.005, "endstop: the hold target is %.4f rad away from the arm" % jump)
        rig.run(ENDSTOP_BACK)
        st = c.call("status")
        check(st["state"] == "holding" and not st["trajectory"],
              "endstop: not holding %g s after the enable: %s (%s), trajectory %s"
              % (ENDSTOP_BACK, st["state"], st["fault"], st["trajectory"]))
        for j, (qd_, jt) in enumerate(zip(st["q_des"], joints)):
            check(jt["lower"] <= qd_ <= jt["upper"],
                  "endstop: joint %d holds at %.6f outside [%g, %g]"
                  % (j, qd_, jt["lower"], jt["upper"]))
        rig.run(0.5)
        st2 = c.call("status")
        drift = max(abs(a - b) for a, b in zip(st2["q"], st["q"]))
        print("endstop: enabled; |q_des - q| at enable %.2g rad, j2 holds at %.6f inside the "
              "limit; drift over 0.5 s %.2g rad" % (jump, st["q_des"][1], drift))
        check(st2["state"] == "holding", "endstop: %s (%s) after 0.5 s holding" %
              (st2["state"], st2["fault"]))
        check(drift < DRIFT_MAX, "endstop: the arm drifted %.5f rad while holding (bound %g)"
              % (drift, DRIFT_MAX))
        c.close()


def main(args):
    for case in (case_alert, case_silent, case_crc, case_following, case_damp, case_endstop):
        case(args)


if __name__ == "__main__":
    run(main)
