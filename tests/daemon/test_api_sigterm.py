#!/usr/bin/env python3
"""Integration: SIGTERM in the middle of a trajectory stops the arm (zero torque in armsim's
truth), removes the socket and armd exits 0. Real armd + armsim on a pty."""
import os
import time

from test_api_lib import Rig, check, run
from test_api_tracking import make_points


def main(args):
    with Rig(args, "sigterm") as rig:
        c = rig.client()
        info = c.call("info")
        q0 = c.call("status")["q"]
        c.call("enable")
        r = c.call("trajectory", {"points": make_points(info, q0)})
        time.sleep(1.5)
        st = c.call("status")
        check(st["state"] == "moving", "expected moving before SIGTERM, got %s" % st["state"])
        c.close()
        code = rig.stop_armd()
        check(code == 0, "armd exited %s on SIGTERM" % code)
        check(not os.path.exists(rig.sock), "socket file left behind")
        time.sleep(0.5)
        rig.stop_sim()
        truth = rig.read_truth()
        tail = truth[-2000:]  # the last 0.2 s at 10 kHz, all after armd had exited
        worst = max(max(abs(x) for x in row[3]) for row in tail)
        print("trajectory %d interrupted; max |tau| in the last %d truth rows: %g N m" %
              (r["id"], len(tail), worst))
        check(worst == 0.0, "torque not zero after SIGTERM: %g" % worst)
        check("stopped" in rig.armd_log(), "armd did not log its stop")


if __name__ == "__main__":
    run(main)
