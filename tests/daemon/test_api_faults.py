#!/usr/bin/env python3
"""Integration: estop ends with zero torque in armsim's truth and state estop; enable is refused
until reset, then holds again; killing armsim ends in a fault whose reason names the failed
reads. PUMA 560, dxl2, 1 kHz.

 - estop: lockstep (armd --lockstep --paused, armsim's arm in process, simulated time), a
   question of armd's own fault handling: the estop lands at a known tick, the clocks are the
   same (rig.clock_offset), and the applied torque must be exactly 0 from ESTOP_WITHIN after
   that tick to the end, and not before it. The servos' bus watchdog is off in this rig ([driver]
   bus_watchdog_ms = 0): with it on they go limp 100 ms after armd's last packet, which would
   hide an estop that does not zero the torque.
 - armsim killed: real time (armsim a process on a pty), the I/O path: the pty hangs up under
   armd's driver. The rig's 400 ms read gap (DEFAULT_DROPIN) is there so that a host stall
   while the arm holds before the kill does not fault it; the fault must come after the kill
   (holding just before it), and the gap it names must be at least that long.
"""
import signal
import time

from test_api_lib import LOCKSTEP_DROPIN, Rig, check, rows_between, run, zero_onset

# lockstep: the example's values but the servos' bus watchdog off (only armd can zero the torque)
ESTOP_DROPIN = LOCKSTEP_DROPIN + "[driver]\nbus_watchdog_ms = 0\nallow_no_watchdog = true\n"
# s after the estop's tick from which the applied torque must be exactly 0 (the truth at every
# physics step, 0.1 ms): measured 0.2 ms, the tick's own write after its read; about twice that
# (the real-time rig allowed 10 ms after the reply)
ESTOP_WITHIN = 0.0005
READ_GAP_MS = 400  # DEFAULT_DROPIN's [safety] max_read_gap_ms


def case_estop(args):
    with Rig(args, "faults-estop", dropin=ESTOP_DROPIN, lockstep="paused",
             truth_decimate=1) as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        rig.run(0.5)
        t_before = c.call("status")["time"]  # the last tick before the estop
        check(c.call("estop")["state"] == "estop", "estop did not report estop")
        t_after = c.call("status")["time"]  # the estop's tick
        rig.run(0.5)
        st = c.call("status")
        check(st["state"] == "estop", "state after estop: %s" % st["state"])
        truth = rig.read_truth()
        d = rig.clock_offset()
        held = rows_between(truth, t_before + d - 0.2, t_before + d)
        check(len(held) >= 2000, "too little truth before the estop (%d rows)" % len(held))
        holding = max(max(abs(x) for x in row[3]) for row in held)
        iz = zero_onset(truth)
        check(iz < len(truth), "torque in the truth 0.5 s after the estop: %s" % (truth[-1][3],))
        t_zero = truth[iz][0] - d  # armd time
        print("estop: requested after the tick at armd t = %.3f s, its tick %.3f s; state %s; "
              "max |tau| in the truth %.3f N m in the 0.2 s before; every torque exactly 0 from "
              "%.1f ms after the estop's tick (bound %.1f ms) to the end (%.2f s)"
              % (t_before, t_after, st["state"], holding, 1e3 * (t_zero - t_after),
                 1e3 * ESTOP_WITHIN, truth[-1][0] - truth[iz][0]))
        check(holding > 0.1, "no holding torque before the estop (nothing to test)")
        check(t_before < t_zero <= t_after + ESTOP_WITHIN, "torque exactly 0 from %.1f ms after "
              "the estop's tick, not within %.1f ms of it" % (1e3 * (t_zero - t_after),
                                                             1e3 * ESTOP_WITHIN))
        check(truth[-1][0] - truth[iz][0] >= 0.49, "the zero torque lasted only %.3f s"
              % (truth[-1][0] - truth[iz][0]))
        m = c.call_full("enable")
        check("error" in m, "enable accepted in estop without reset")
        check(c.call("reset")["state"] == "disabled", "reset did not disable")
        check(c.call("enable")["state"] == "holding", "enable after reset failed")
        rig.run(0.3)
        check(c.call("status")["state"] == "holding", "not holding 0.3 s after the new enable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0 after estop, reset and enable")


def case_sim_killed(args):
    with Rig(args, "faults-kill") as rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        time.sleep(0.3)
        st = c.call("status")
        check(st["state"] == "holding", "not holding before the kill: %s (%s)"
              % (st["state"], st["fault"]))
        rig.sim.send_signal(signal.SIGKILL)
        rig.sim.wait()
        deadline = time.monotonic() + 5  # a bound on a hang, not on a figure
        while time.monotonic() < deadline:
            st = c.call("status")
            if st["state"] == "fault":
                break
            time.sleep(0.05)
        print("armsim killed: state %s, fault %r, failed reads %d" %
              (st["state"], st["fault"], st["loop"]["failed_reads"]))
        check(st["state"] == "fault", "no fault after the arm went silent: %s" % st["state"])
        check(st["fault"] and ("read" in st["fault"] or "timeout" in st["fault"]),
              "fault reason does not name the failed reads: %r" % st["fault"])
        check("no state for " in st["fault"], "the reason %r names no gap" % st["fault"])
        gap_ms = float(st["fault"].split("no state for ")[1].split(" ms")[0])
        check(gap_ms >= READ_GAP_MS, "faulted after %.1f ms without a state, before "
              "max_read_gap_ms = %d" % (gap_ms, READ_GAP_MS))
        check(all(x == 0 for x in st["tau"]), "commanded torque not zero after the fault: %s" %
              st["tau"])
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0 after a fault")


def main(args):
    for case in (case_estop, case_sim_killed):
        case(args)


if __name__ == "__main__":
    run(main)
