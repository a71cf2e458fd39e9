#!/usr/bin/env python3
"""Integration: armd's clock stamps. Telemetry samples, events and `status` carry `mono` (the
CLOCK_MONOTONIC time of their control time `time`) and `wall` (CLOCK_REALTIME); armsim's truth
log carries `mono` of each physics step. Checked on a real armd + armsim, the PUMA 560 moving
joints 1-3 for 1.5 s:
 - mono - time is one constant over every sample, event and status (one clock, no drift);
 - mono lies within this machine's CLOCK_MONOTONIC (Python's time.monotonic) around the run, and
   wall - mono is the realtime clock's offset from it (to 0.5 s);
 - joined by mono alone, armd's measured positions meet armsim's true ones: the time offset that
   matching positions finds (what the demo and the tests used to fit) agrees with the one mono
   gives, to 5 ms plus the rig's read time (the servos report the state of the moment they
   answer, a little after the tick's deadline)."""
import time

from test_api_lib import (Recorder, Rig, align_offset, check, run, truth_column)


def main(args):
    t_start = time.monotonic()
    with Rig(args, "clocks") as rig:
        c = rig.client()
        rec = Recorder(rig.sock, 1000)
        c.call("enable")
        q0 = c.call("status")["q"]
        target = [q + (0.3 if j < 3 else 0.0) for j, q in enumerate(q0)]
        r = c.call("move_to", {"q": target, "duration": 1.5})
        end = time.monotonic() + r["duration"] + 1.0
        while time.monotonic() < end:
            rec.collect(0.1)
        st = c.call("status")
        c.call("disable")
        rec.collect(0.2)
        rec.client.close()
        c.close()
        rig.stop_sim()
        t_end = time.monotonic()
        offset = time.time() - time.monotonic()

        stamped = rec.samples + [e["params"] for e in rec.events] + [st]
        k = [s["mono"] - s["time"] for s in stamped]
        print("mono - time over %d samples, %d events and status: %.6f .. %.6f s" %
              (len(rec.samples), len(rec.events), min(k), max(k)))
        check(max(k) - min(k) < 1e-5, "mono - time is not constant: %.6f .. %.6f" % (min(k), max(k)))
        check(t_start <= min(s["mono"] for s in stamped) and
              max(s["mono"] for s in stamped) <= t_end,
              "mono outside the run's CLOCK_MONOTONIC span %.3f .. %.3f" % (t_start, t_end))
        w = [s["wall"] - s["mono"] - offset for s in stamped]
        check(max(abs(x) for x in w) < 0.5, "wall - mono differs from the realtime clock's offset "
              "by up to %.3f s" % max(abs(x) for x in w))
        check(any(e["method"] == "trajectory_done" for e in rec.events), "no trajectory_done event")

        head, rows = rig.read_truth_columns()
        it, im = truth_column(head, "t"), truth_column(head, "mono")
        n = len(q0)
        iq = [truth_column(head, "q%d" % (j + 1)) for j in range(n)]
        km = [v[im] - v[it] for v in rows]
        check(max(km) - min(km) < 1e-6, "truth mono - t is not constant")
        truth = [(v[it], [v[i] for i in iq]) for v in rows]
        d_fit = align_offset(rec.samples, truth)  # truth t = armd time + d
        d_mono = k[0] - km[0]
        read_ms = st["loop"]["read_us"]["p99"] / 1e3
        diff_ms = (d_fit - d_mono) * 1e3
        print("truth t = armd time + %.4f s by matching positions, + %.4f s by mono: %+.2f ms "
              "apart (allowed 5 + read p99 %.2f ms)" % (d_fit, d_mono, diff_ms, read_ms))
        check(abs(diff_ms) <= 5.0 + read_ms, "armd's and armsim's mono disagree by %.2f ms" % diff_ms)


if __name__ == "__main__":
    run(main)
