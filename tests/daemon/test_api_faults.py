#!/usr/bin/env python3
"""Integration: estop ends with zero torque in armsim's truth and state estop; reset and enable
again; killing armsim ends in a fault whose reason names the failed reads. Real armd + armsim on
a pty."""
import signal
import time

from test_api_lib import Rig, check, run


def main(args):
    with Rig(args, "faults") as rig:
        c = rig.client()
        c.call("enable")
        time.sleep(0.5)
        check(c.call("estop")["state"] == "estop", "estop did not report estop")
        time.sleep(0.5)
        st = c.call("status")
        check(st["state"] == "estop", "state after estop: %s" % st["state"])
        truth = rig.read_truth()
        tail = truth[-2000:-200]  # well after the estop (the file is written in chunks)
        worst = max(max(abs(x) for x in row[3]) for row in tail)
        print("estop: state %s, max |tau| in truth afterwards %g" % (st["state"], worst))
        check(worst == 0.0, "torque not zero after estop: %g" % worst)
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
