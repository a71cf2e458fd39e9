#!/usr/bin/env python3
"""Lockstep as a user meets it: `armd --lockstep` (armsim's arm in armd's process, simulated time)
through the socket, the Python client and armctl.
 - Deterministic: two `--paused` runs given the same requests (enable, the demo move, a gains
   change mid-move, a reload, sim.run) with encoder noise send the same telemetry and events,
   line for line (a checksum over every notification, all 1 kHz samples); a third run with
   another noise seed differs.
 - sim.run: refused with a clear error for a missing, non-finite, zero, negative or absurd
   duration; answered with the control time reached; simulated time stands still between
   requests in a paused rig.
 - armctl against a free-running lockstep armd: enable, move and wait, status; its telemetry
   `mono` and `wall` are the simulated clock (the truth file's mono column)."""
import hashlib
import json
import os
import subprocess

from test_api_lib import Rig, check, run
from test_api_tracking import make_points


def scripted(args, seed):
    """One paused run of the script; the checksum of every notification and the sample count."""
    with Rig(args, "lockstep-%s" % seed, lockstep="paused",
             sim_args=("--q0", "0,1.5708,-1.5708,0,0,0", "--noise", "1", "--seed", seed)) as rig:
        rec = rig.recorder(1000)
        c = rig.client()
        c.call("enable")
        q0 = c.call("status")["q"]
        r = c.call("trajectory", {"points": make_points(c.call("info"), q0)})
        rig.run(2.0)
        c.call("gains.set", {"kd": 35})
        rig.run(1.0)
        with open(os.path.join(rig.dropin_dir, "20-kp.ini"), "w") as f:
            f.write("[joint j2]\nkp = 380\n")
        check(c.call("reload")["changed"] != "", "the reload changed nothing")
        rec.collect(r["duration"] + 1.0)
        rec.close()
        c.close()
        h = hashlib.sha256()
        for m in rec.samples + rec.events:
            h.update(json.dumps(m, sort_keys=True).encode())
        print("seed %s: %d samples, %d events up to t = %.3f s, checksum %s"
              % (seed, len(rec.samples), len(rec.events), rec.samples[-1]["time"],
                 h.hexdigest()[:16]))
        return h.hexdigest(), len(rec.samples)


def sim_run_refusals(args):
    with Rig(args, "lockstep-sim-run", lockstep="paused") as rig:
        c = rig.client()
        for params, word in (({}, "missing"), ({"seconds": "NaN"}, "a number"),
                             ({"seconds": 0}, "outside"), ({"seconds": -1}, "outside"),
                             ({"seconds": 1e300}, "outside"), ({"seconds": 1, "x": 1}, "x")):
            m = c.call_full("sim.run", params)
            check("error" in m and m["error"]["code"] == "invalid_params" and
                  word in m["error"]["message"], "sim.run %r: %r" % (params, m))
        t0 = c.call("status")["time"]
        t1 = c.call("status")["time"]
        check(t1 == t0, "simulated time moved between two status requests of a paused rig "
              "(%.3f -> %.3f)" % (t0, t1))
        t2 = c.call("sim.run", {"seconds": 0.25})["time"]
        check(abs(t2 - (t1 + 0.25)) <= 0.001 + 1e-9, "sim.run 0.25 s from %.3f reached %.3f" % (t1, t2))
        print("sim.run: refusals named; %.3f -> %.3f s" % (t1, t2))


def armctl_free(args):
    with Rig(args, "lockstep-armctl", lockstep="free") as rig:
        def ctl(*a):
            p = subprocess.run([args.armctl, "-s", rig.sock] + list(a), capture_output=True,
                               text=True, timeout=60)
            check(p.returncode == 0, "armctl %s: %s%s" % (" ".join(a), p.stdout, p.stderr))
            return p.stdout
        ctl("enable")
        st = json.loads(ctl("--json", "status"))
        goal = list(st["q"])
        goal[0] += 0.3
        ctl("move", *["%.6f" % v for v in goal])
        ctl("wait", "holding", "--timeout", "30")
        st = json.loads(ctl("--json", "status"))
        check(abs(st["q"][0] - goal[0]) < 0.005, "armctl move: j1 at %.4f, goal %.4f"
              % (st["q"][0], goal[0]))
        check(st["mono"] == st["wall"], "lockstep's wall stamp is not the simulated clock")
        head, rows = rig.read_truth_columns()
        mono = rows[-1][head.index("mono")]
        check(abs(st["mono"] - mono) < 1.0, "status mono %.3f is not the truth's clock (%.3f)"
              % (st["mono"], mono))
        print("armctl: enable, move, wait and status on a free-running lockstep armd (t = %.2f s)"
              % st["time"])


def main(args):
    a, n = scripted(args, "7")
    b, _ = scripted(args, "7")
    c, _ = scripted(args, "8")
    check(n > 9000, "only %d samples" % n)
    check(a == b, "two runs of the same script sent different telemetry")
    check(a != c, "another noise seed sent the same telemetry")
    sim_run_refusals(args)
    armctl_free(args)


if __name__ == "__main__":
    run(main)
