#!/usr/bin/env python3
"""Integration: every connection armd allows is squatted, and a new connection's estop still
lands: answered, status says estop, and zero torque in armsim's truth within the same-run
baseline + 20 ms of sending it. Real armd + armsim on a pty, PUMA 560 holding under gravity,
servos' bus watchdog off (only armd can zero the torque).

 - baseline: holding, no other client: estop on a fresh connection (reply time, and the
   latency from sending to the first truth row of the all-zero torque that follows);
 - squat: reset, enable; max_clients connections each hold a partial request line and send a
   byte (never a newline) every 50 ms; RESTRICTED_MAX + 8 more connections (armd restricts every
   connection beyond max_clients, keeping at most RESTRICTED_MAX of them and evicting the
   oldest) hold partial lines too; no squatter ever reads. Once armd has evicted the surplus
   (its log), a new connection sends estop. Checked: the reply says estop and the connection
   is closed after it (restricted), status on another new connection says estop (and through
   `armctl --json status`, whose one request is the status: wall with its fraction), and the reply
   time and the latency to zero torque are within the baseline's + 20 ms.
Clocks as in test_api_estop_flood (whose helpers this uses)."""
import json
import re
import socket
import subprocess
import threading
import time

from test_api_estop_flood import armd_clock_offset, enable, latency
from test_api_lib import NO_WATCHDOG_DROPIN, Client, Rig, check, run

RESTRICTED_MAX = 32  # daemon/api_internal.h API_RESTRICTED_MAX
EXTRA = RESTRICTED_MAX + 8
SLACK = 0.020  # [s] over the baseline
PARTIAL = b'{"id": 1, "method": "sta'


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def read_line(s, timeout):
    """The first line s receives (b"" if it is closed first)."""
    s.settimeout(timeout)
    data = b""
    while b"\n" not in data:
        try:
            got = s.recv(4096)
        except ConnectionResetError:
            got = b""
        if not got:
            break
        data += got
    return data.split(b"\n")[0]


def estop_raw(path, restricted):
    """estop on a new connection: (send time, reply time [monotonic s], reply, what followed
    it: b"" when armd closed the connection, as it does a restricted one's; None when not
    restricted: not read)."""
    s = connect(path)
    t_send = time.monotonic()
    try:
        s.sendall(b'{"id": "stop", "method": "estop"}\n')
    except OSError as e:  # closed by armd first: what it said, if anything
        print("estop not sent: %s" % e)
    line = read_line(s, 5)
    t_reply = time.monotonic()
    rest = None
    if restricted:
        s.settimeout(5)
        try:
            rest = s.recv(4096)
        except ConnectionResetError:
            rest = b""
    s.close()
    return t_send, t_reply, line, rest


def main(args):
    with Rig(args, "estop-squat", dropin=NO_WATCHDOG_DROPIN) as rig:
        c = rig.client()
        max_clients = c.call("info")["max_clients"]
        o = armd_clock_offset(c)

        # baseline
        t_hold = enable(rig, c)
        time.sleep(0.3)
        t_send, t_reply, line, _ = estop_raw(rig.sock, False)
        check(json.loads(line).get("result", {}).get("state") == "estop",
              "baseline estop: %r" % line)
        base_reply = t_reply - t_send
        late = c.call("status")["loop"]["lateness_us"]["max"] * 1e-6
        base, t_zero = latency(rig, t_hold, -1.0, t_send, o, late)
        print("baseline: estop reply after %.1f ms, zero torque in the truth %.1f ms after the "
              "request was sent" % (1e3 * base_reply, 1e3 * base))
        check(c.call("reset")["state"] == "disabled", "reset after the baseline estop")
        t_hold = enable(rig, c)
        c.close()
        probe = Client(rig.sock)
        deadline = time.monotonic() + 5
        while probe.call("status")["clients"] != 1:  # armd has seen c close
            check(time.monotonic() < deadline, "armd still counts the closed client")
            time.sleep(0.01)
        probe.close()
        time.sleep(0.05)

        # squat every slot
        normal = [connect(rig.sock) for _ in range(max_clients)]
        for s in normal:
            s.sendall(PARTIAL)
        stop = threading.Event()

        def keep_alive():  # a byte now and then, never a complete line
            while not stop.wait(0.05):
                for s in normal:
                    try:
                        s.send(b" ", socket.MSG_DONTWAIT)
                    except OSError:
                        pass

        alive = threading.Thread(target=keep_alive, daemon=True)
        alive.start()
        n_log = rig.armd_log().count("evicted")
        extra = []
        for _ in range(EXTRA):
            s = connect(rig.sock)
            try:
                s.sendall(PARTIAL)
            except OSError:
                pass  # refused already (armd before restricted connections)
            extra.append(s)
        deadline = time.monotonic() + 0.8  # within the restricted connections' 1 s
        while (rig.armd_log().count("evicted") - n_log < EXTRA - RESTRICTED_MAX
               and time.monotonic() < deadline):
            time.sleep(0.01)
        evicted = rig.armd_log().count("evicted") - n_log
        try:
            t_send, t_reply, line, rest = estop_raw(rig.sock, True)
            print("squat: %d normal connections with partial lines, %d more (%d evicted before "
                  "the estop was sent)" % (len(normal), len(extra), evicted))
            m = json.loads(line) if line else {}
            check(m.get("result", {}).get("state") == "estop",
                  "estop with every slot squatted: %r" % line)
            probe = Client(rig.sock)  # beyond max_clients too
            st = probe.call("status")
            probe.close()
            # armctl status on a connection beyond max_clients: its one request is the status
            p = subprocess.run([args.armctl, "-s", rig.sock, "--json", "status"],
                               capture_output=True, text=True, timeout=10)
        finally:
            stop.set()
            alive.join()
        late = st["loop"]["lateness_us"]["max"] * 1e-6
        check(rest == b"", "the estop's connection was not closed after its reply: %r" % rest)
        check(st["state"] == "estop", "status after the estop: %s" % st["state"])
        check(p.returncode == 0 and json.loads(p.stdout or "{}").get("state") == "estop",
              "armctl status with every slot squatted: exit %d\nstdout: %s\nstderr: %s" %
              (p.returncode, p.stdout, p.stderr))
        check(re.search(r'"wall": \d+\.\d{2,}', p.stdout),
              "armctl --json status: wall without its fraction: %s" % p.stdout[:300])
        check(evicted >= EXTRA - RESTRICTED_MAX, "armd evicted %d of the %d squatters beyond "
              "max_clients before the estop (the restricted connections were not all taken)" %
              (evicted, len(extra)))
        squat, _ = latency(rig, t_hold, t_zero + 0.01, t_send, o, late)
        reply = t_reply - t_send
        print("estop with every slot squatted: reply after %.1f ms (baseline %.1f ms), zero "
              "torque in the truth %.1f ms after the request was sent (baseline %.1f ms; bounds "
              "baseline + %g ms)" % (1e3 * reply, 1e3 * base_reply, 1e3 * squat, 1e3 * base,
                                     1e3 * SLACK))
        check(reply <= base_reply + SLACK, "the estop's reply took %.1f ms, more than the "
              "baseline's %.1f ms + 20 ms" % (1e3 * reply, 1e3 * base_reply))
        check(squat <= max(base, 0.0) + SLACK, "the estop took %.1f ms to zero torque, more "
              "than the baseline's %.1f ms + 20 ms" % (1e3 * squat, 1e3 * base))
        for s in normal + extra:
            s.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
