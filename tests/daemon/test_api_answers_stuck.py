#!/usr/bin/env python3
"""One answer per request when the control loop never answers (issue 31, point 2): armd runs
with the hang_control shim (LD_PRELOAD), whose trigger file makes the control thread sleep for
an hour. Then three connections send, at once, settings changes (gains.set, reload, payload.set:
the first goes to the loop, the others queue behind it) and a fourth a state command (hold) and
a move. Every request gets exactly one reply with its id, an error "timeout", well within
ANSWER_BOUND_S (the answer timeout is 1 s: the queued changes are answered when the one in the
loop times out, not left waiting for a loop that never answers); `status` still answers; SIGTERM
stops armd (the thread cancelled after 2 s). Real armd + armsim on a pty. argv: the usual, plus
--shim PATH."""
import json
import os
import socket
import sys
import time

from test_api_lib import DEFAULT_DROPIN, Rig, check, run

ANSWER_BOUND_S = 5.0  # a liveness bound, 5 x the answer timeout [s]


def main(args):
    env = dict(os.environ, LD_PRELOAD=SHIM)
    rig = Rig(args, "answers-stuck", dropin=DEFAULT_DROPIN, armd_env=env)
    trigger = os.path.join(rig.dir, "hang")
    env["HANG_CONTROL_FILE"] = trigger
    with rig:
        c = rig.client()
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        kp = c.call("gains.get")["kp"]
        q = c.call("status")["q"]
        open(trigger, "w").close()
        deadline = time.monotonic() + 10
        while "stalled" not in rig.armd_log() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("stalled" in rig.armd_log(), "armd did not notice the stuck control thread")
        reqs = [[{"id": "gains", "method": "gains.set", "params": {"kp": kp}}],
                [{"id": "reload", "method": "reload"}],
                [{"id": "payload", "method": "payload.set", "params": {"mass": 0}},
                 {"id": "gains2", "method": "gains.set", "params": {"kd": 1}}],
                [{"id": "hold", "method": "hold"},
                 {"id": "move", "method": "move_to", "params": {"q": q, "duration": 1}}]]
        conns = []
        t0 = time.monotonic()
        for batch in reqs:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(rig.sock)
            s.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in batch))
            conns.append((s, [r["id"] for r in batch], b""))
        for s, ids, buf in conns:
            for rid in ids:
                while b"\n" not in buf:
                    left = t0 + ANSWER_BOUND_S - time.monotonic()
                    check(left > 0, "%s: no answer within %.0f s of the request (the control "
                          "thread is stuck)" % (rid, ANSWER_BOUND_S))
                    s.settimeout(left)
                    try:
                        chunk = s.recv(65536)
                    except socket.timeout:
                        continue
                    check(chunk, "%s: armd closed the connection without answering" % rid)
                    buf += chunk
                line, buf = buf.split(b"\n", 1)
                m = json.loads(line)
                check(m.get("id") == rid, "reply %r where %s's was due" % (m, rid))
                print("%-8s %.2f s: %s" % (rid, time.monotonic() - t0, m.get("error") or m))
                check("error" in m and m["error"]["code"] in ("timeout", "busy"),
                      "%s: %r (wanted an error: the loop cannot have applied it)" % (rid, m))
            s.close()
        check(c.call("status")["state"] is not None, "status did not answer")
        c.close()
        code = rig.stop_armd(timeout=20)
        check(code == 0, "armd exited %s" % code)


if __name__ == "__main__":
    i = sys.argv.index("--shim")
    SHIM = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    run(main)
