#!/usr/bin/env python3
"""Integration: estop ends with zero torque in armsim's truth (within ESTOP_WITHIN of the reply)
and state estop; reset and enable again; killing armsim ends in a fault whose reason names the
failed reads. Real armd + armsim on a pty.

The servos' bus watchdog is off in this rig ([driver] bus_watchdog_ms = 0): with it on they go
limp 100 ms after armd's last packet, which would hide an estop that does not zero the torque.
Truth rows are selected by time: armd's clock maps onto the truth's by the enable instant
(enable_clock_offset); the estop instant in armd time is bounded by the status time stamps
taken just before and just after the estop request."""
import signal
import time

from test_api_lib import (NO_WATCHDOG_DROPIN, Recorder, Rig, check, enable_clock_offset, run,
                          rows_between)

ESTOP_WITHIN = 0.010  # s after the estop reply by which the applied torque must be exactly 0


def main(args):
    with Rig(args, "faults", dropin=NO_WATCHDOG_DROPIN) as rig:
        rec = Recorder(rig.sock, 10)
        c = rig.client()
        c.call("enable")
        rec.collect(0.5)
        rec.client.close()
        t_before = c.call("status")["time"]
        check(c.call("estop")["state"] == "estop", "estop did not report estop")
        t_after = c.call("status")["time"]  # armd time at (or just after) the estop reply
        time.sleep(0.5)
        st = c.call("status")
        check(st["state"] == "estop", "state after estop: %s" % st["state"])
        truth = rig.read_truth(cover=time.monotonic())
        d = enable_clock_offset(rec, truth)
        held = rows_between(truth, t_before + d - 0.2, t_before + d)
        after = rows_between(truth, t_after + d + ESTOP_WITHIN, t_after + d + 0.4)
        check(len(held) > 100 and len(after) > 100, "too little truth around the estop (%d, %d "
              "rows)" % (len(held), len(after)))
        holding = max(max(abs(x) for x in row[3]) for row in held)
        worst = max(max(abs(x) for x in row[3]) for row in after)
        print("estop: state %s; max |tau| in the truth: %.3f N m in the 0.2 s before, %g from "
              "%g ms after the reply for 0.4 s" % (st["state"], holding, worst, 1e3 * ESTOP_WITHIN))
        check(holding > 0.1, "no holding torque before the estop (nothing to test)")
        check(worst == 0.0, "torque not zero %g ms after estop: %g" % (1e3 * ESTOP_WITHIN, worst))
        m = c.call_full("enable")
        check("error" in m, "enable accepted in estop without reset")
        check(c.call("reset")["state"] == "disabled", "reset did not disable")
        check(c.call("enable")["state"] == "holding", "enable after reset failed")
        time.sleep(0.3)

        rig.sim.send_signal(signal.SIGKILL)
        rig.sim.wait()
        deadline = time.time() + 5
        while time.time() < deadline:
            st = c.call("status")
            if st["state"] == "fault":
                break
            time.sleep(0.05)
        print("armsim killed: state %s, fault %r, failed reads %d" %
              (st["state"], st["fault"], st["loop"]["failed_reads"]))
        check(st["state"] == "fault", "no fault after the arm went silent: %s" % st["state"])
        check(st["fault"] and ("read" in st["fault"] or "timeout" in st["fault"]),
              "fault reason does not name the failed reads: %r" % st["fault"])
        check(all(x == 0 for x in st["tau"]), "commanded torque not zero after the fault: %s" % st["tau"])
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0 after a fault")


if __name__ == "__main__":
    run(main)
