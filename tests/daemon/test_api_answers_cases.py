#!/usr/bin/env python3
"""One answer per request, the named cases (issue 31, point 2), on lockstep simulation
(`armd --lockstep --paused`: a command's tick runs when it is sent, nothing else moves time):
 - reloads at the same time: ROUNDS rounds of two connections each sending `reload` twice in
   one write, a SIGHUP sent between them, and a third connection sending `gains.set` (a change
   that queues with the reloads): every request gets exactly one reply with its id, in order,
   and armd logs one outcome for every reload it ran (the SIGHUP's included);
 - answers owed at the stop: a subscriber that never reads holds simulated time (its backlog),
   so a `sim.run` and an `enable` wait for ticks that do not come; on SIGTERM both get an
   error "stopping" before the connection closes (a client is never left without its answer
   and without an end of file).
"""
import json
import os
import signal
import socket
import time

from test_api_lib import Rig, check, run

ROUNDS = 40


class Conn:
    """A raw connection: lines in, bytes out."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""

    def send(self, *reqs):
        self.sock.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in reqs))

    def line(self, timeout=10.0):
        """The next line as JSON; None at end of connection; fails after timeout [s]."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            check(left > 0, "no line within %.0f s" % timeout)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                return None
            self.buf += chunk
        text, self.buf = self.buf.split(b"\n", 1)
        return json.loads(text)

    def reply(self, timeout=10.0):
        """The next reply (notifications skipped); None at end of connection."""
        while True:
            m = self.line(timeout)
            if m is None or "id" in m:
                return m


def reloads_at_once(rig):
    a, b, g = Conn(rig.sock), Conn(rig.sock), Conn(rig.sock)
    g.send({"id": 0, "method": "gains.get"})
    kp = g.reply()["result"]["kp"]
    reloads = 0
    for k in range(ROUNDS):
        a.send({"id": "a%d" % k, "method": "reload"}, {"id": "a%d'" % k, "method": "reload"})
        rig.armd.send_signal(signal.SIGHUP)
        b.send({"id": "b%d" % k, "method": "reload"}, {"id": "b%d'" % k, "method": "reload"})
        g.send({"id": "g%d" % k, "method": "gains.set", "params": {"kp": kp}})
        reloads += 4
        for conn, ids in ((a, ["a%d" % k, "a%d'" % k]), (b, ["b%d" % k, "b%d'" % k]),
                          (g, ["g%d" % k])):
            for rid in ids:
                m = conn.reply()
                check(m is not None, "round %d: the connection closed before %s's answer" %
                      (k, rid))
                check(m["id"] == rid, "round %d: reply %r where %s's was due" % (k, m, rid))
                check("result" in m, "round %d: %s refused: %r" % (k, rid, m))
    for conn in (a, b, g):
        conn.send({"id": "last", "method": "status"})
        m = conn.reply()
        check(m and m["id"] == "last", "the last status answered %r" % m)
        conn.sock.shutdown(socket.SHUT_WR)
        m = conn.reply()
        check(m is None, "a reply after the last one owed: %r" % m)
    time.sleep(0.2)  # the last SIGHUP's reload
    log = rig.armd_log()
    hups = log.count("SIGHUP: reloading")
    outcomes = log.count(">reload: ")  # "<5>reload: nothing changed" (or what changed)
    refused = log.count("reload refused")
    print("%d socket reloads answered, %d SIGHUP reloads run (of %d signals; signals sent "
          "before the first is handled merge), %d outcomes logged, %d refused" %
          (reloads, hups, ROUNDS, outcomes, refused))
    check(hups >= 1, "no SIGHUP reload ran")
    check(outcomes + refused == reloads + hups,
          "%d reload outcomes logged for %d reloads (%d from the socket, %d SIGHUPs)" %
          (outcomes + refused, reloads + hups, reloads, hups))


def answers_at_stop(rig):
    sub, clock, a = Conn(rig.sock), Conn(rig.sock), Conn(rig.sock)
    sub.send({"id": 1, "method": "subscribe", "params": {"rate_hz": 1000}})
    check(sub.reply()["id"] == 1, "subscribe not answered")
    # never read from sub again: once its unsent telemetry passes 256 KiB, time stands still
    clock.send({"id": "run", "method": "sim.run", "params": {"seconds": 600}})
    last, still = None, 0
    deadline = time.monotonic() + 20
    while still < 3:
        check(time.monotonic() < deadline, "simulated time never stood still")
        a.send({"id": "st", "method": "status"})
        t = a.reply()["result"]["time"]
        still = still + 1 if t == last else 0
        last = t
        time.sleep(0.03)
    print("simulated time held at %.3f s by the subscriber that does not read" % last)
    a.send({"id": "en", "method": "enable"})
    time.sleep(0.2)  # under the answer timeout (1 s) and the stall timeout (2 s)
    rig.armd.send_signal(signal.SIGTERM)
    for conn, rid, what in ((a, "en", "enable"), (clock, "run", "sim.run")):
        m = conn.reply()
        check(m is not None, "%s: armd closed the connection without answering" % what)
        check(m["id"] == rid and "error" in m and m["error"]["code"] == "stopping",
              "%s: answered %r at the stop (wanted the error 'stopping')" % (what, m))
        print("%s at the stop: %s" % (what, m["error"]))
        check(conn.reply() is None, "%s: more after the answer at the stop" % what)
    check(rig.armd.wait(10) == 0, "armd exited with %s" % rig.armd.returncode)


def main(args):
    with Rig(args, "answers-reload", lockstep="paused") as rig:
        reloads_at_once(rig)
    with Rig(args, "answers-stop", lockstep="paused") as rig:
        answers_at_stop(rig)


if __name__ == "__main__":
    run(main)
