#!/usr/bin/env python3
"""Property test: every request gets exactly one answer, whatever the other clients or signals
do at the same time (issue 31, point 2).

N_CLIENTS connections each send random batches of requests, pipelined (a batch goes out before
any of its replies is read, now and then split mid-line over several writes; one batch in 200
a flood of 100 to 400), drawn from every method of the API (the method table of
daemon/api_methods.c: info, status, the state commands, trajectory, move_to, gains,
controller, reload, sim.run, subscribe, unsubscribe, stats.reset, payload.get/set/estimate),
with unknown methods, bad params, requests without an id, an id of null, malformed lines (not
JSON, not an object, a duplicate key, invalid UTF-8) and blank lines among them. Ids are
random: small numbers that repeat within and across connections, big and negative integers,
reals of up to 17 significant digits, strings (empty, escaped, non-ASCII), booleans, arrays
and objects. Meanwhile a thread sends SIGHUP to armd at random moments (a reload each; now and
then SIGUSR1, an estop), and now and then a client closes its connection with requests
unanswered and opens a new one. Checked, per connection:
 - every request with an id gets exactly one reply carrying that id, the replies in the order
   of the requests; a line that is no request (malformed, not an object) gets one reply with
   "id": null; a request without an id and a blank line get none (notifications are skipped);
 - every reply is {"id", "result"} or {"id", "error": {"code", "message"}};
 - at the end a last `status` on every connection answers, and after a half close armd closes
   the connection with nothing more to say (no reply left over);
 - armd is still running, answers a fresh connection and counts no other connection.
Motion is not judged: moves get refused, estopped, cancelled, replaced; the arm stays inside
its limits because every target is a few centiradians from the ready pose.

The requests are drawn by a seeded RNG (--seed, default: from the clock; printed, so that a
failing run can be replayed: which requests; their interleaving across connections and signals
depends on timing). --rig lockstep: `armd --lockstep --paused`, a command's tick run as soon as
it is sent and simulated time advanced by a clock connection's short sim.run requests (--pace
free: time runs as fast as the host computes, answers come after each batch of 200 ticks, about
20 times fewer requests per second), at least --requests (default 20,000) checked requests;
--rig realtime: armsim on a pty and armd's control thread on the wall clock, as many requests
as fit in --seconds.
"""
import json
import os
import random
import signal
import socket
import threading
import time

from test_api_lib import DEFAULT_DROPIN, Rig, arg_parser, check, run

N_CLIENTS = 8
ANSWER_WAIT_S = 20.0  # a batch's replies must all have come within this [s] (a liveness bound)
READY = [0.0, 1.5708, -1.5708, 0.0, 0.0, 0.0]  # the PUMA's ready pose (READY_POSE) [rad]
MAX_CLIENTS = 16
HUP_GAP_S = 0.05  # SIGHUPs come 0 to this far apart [s]

# ---------------------------------------------------------------------------------- the ids


def random_id(rng):
    """An id of any JSON type, small numbers most often (so that ids repeat)."""
    k = rng.random()
    if k < 0.35:
        return rng.randint(0, 20)
    if k < 0.45:
        return rng.choice([-1, 2**31, 2**53, -(2**62), 9007199254740993, 0])
    if k < 0.60:
        return rng.choice([0.5, 1.0, -2.25, 1e-7, 123456.789012345, 0.1, 3.141592653589793,
                           1e300, rng.uniform(-1e6, 1e6)])
    if k < 0.85:
        return rng.choice(["", "a", "1", "id with \"quotes\" and \\ and \n newline",
                           "\u00e9t\u00e9 \u2603", "x" * rng.randint(1, 300),
                           "dup"]) + (str(rng.randint(0, 3)) if rng.random() < 0.5 else "")
    if k < 0.90:
        return rng.choice([True, False])
    if k < 0.95:
        return [rng.randint(0, 3), "a", None]
    return {"k": rng.randint(0, 3), "v": [1.5, "s"]}


def canon(v):
    """A value's canonical text, to compare an id sent with the one received (1 and 1.0
    differ; two reals are equal when they parse to the same double)."""
    return json.dumps(v, sort_keys=True, ensure_ascii=True)


# ------------------------------------------------------------------------------- the requests


def near_ready(rng, n, spread=0.03):
    return [READY[j] + rng.uniform(-spread, spread) for j in range(n)]


def params_for(rng, method, n, gains, lockstep):
    """Valid (mostly) params for method, or None for none."""
    if method == "move_to":
        p = {"q": near_ready(rng, n)}
        if rng.random() < 0.7:
            p["duration"] = rng.uniform(0.05, 0.6)
        return p
    if method == "trajectory":
        t1 = rng.uniform(0.05, 0.4)
        p = {"points": [{"t": t1, "q": near_ready(rng, n)},
                        {"t": t1 + rng.uniform(0.05, 0.4), "q": near_ready(rng, n)}]}
        if rng.random() < 0.4:
            p["mode"] = rng.choice(["append", "replace"])
        return p
    if method == "gains.set":
        key = rng.choice(["kp", "kd", "ki"])
        scale = rng.uniform(0.9, 1.1)
        if key == "ki":
            return {"ki": 0}
        return {key: [g * scale for g in gains[key]]}
    if method == "controller.set":
        return {"name": rng.choice(["computed_torque", "pd_gravity", "computed_torque"])}
    if method == "sim.run":
        return {"seconds": rng.uniform(0.001, 0.05 if lockstep else 0.2)}
    if method == "subscribe":
        return {"rate_hz": rng.choice([1, 5, 20, 50])} if rng.random() < 0.8 else None
    if method == "payload.set":
        return {"mass": rng.choice([0, 0, rng.uniform(0, 0.5)]),
                "com": [rng.uniform(-0.02, 0.02) for _ in range(3)]}
    if method == "payload.estimate":
        return {"poses": [near_ready(rng, n, 0.02)], "move_time": rng.uniform(0.1, 0.3),
                "apply": False}
    return None


METHODS = [  # (method, weight); the method table of daemon/api_methods.c, every entry
    ("info", 2), ("status", 6), ("enable", 5), ("disable", 2), ("hold", 2), ("estop", 1),
    ("reset", 3), ("cancel", 2), ("trajectory", 3), ("move_to", 4), ("gains.get", 2),
    ("gains.set", 2), ("controller.set", 1), ("reload", 3), ("sim.run", 2), ("subscribe", 1),
    ("unsubscribe", 1), ("stats.reset", 1), ("payload.get", 2), ("payload.set", 2),
    ("payload.estimate", 1)]
MALFORMED = [  # (line, a reply with id null expected)
    (b"{", True), (b"[1, 2]", True), (b"nonsense", True), (b"\"a string\"", True),
    (b"{\"id\": 1, \"id\": 2, \"method\": \"status\"}", True), (b"{\"id\": \"\xff\xfe\"}", True),
    (b"", False), (b"   \t", False), (b"42", True), (b"{\"method\": \"status\"", True)]


def random_request(rng, n, gains, lockstep):
    """(line bytes, what: method name or a label, expect) with expect the id a reply must carry
    (canon text), canon(None) for a reply with id null, or None for no reply."""
    k = rng.random()
    if k < 0.05:
        line, answered = rng.choice(MALFORMED)
        return line, "malformed", canon(None) if answered else None
    names, weights = zip(*METHODS)
    method = rng.choices(names, weights)[0]
    req = {"method": method}
    params = params_for(rng, method, n, gains, lockstep)
    if params is not None:
        req["params"] = params
    what = method
    if k < 0.08:
        req["method"] = rng.choice(["nosuch", "status.", "Status", "payload", "", "estop "])
        what = "unknown"
    elif k < 0.11:
        req["params"] = rng.choice([[1], "x", 3, {"bogus": 1}])
        what = method + " (bad params)"
    elif k < 0.12:
        req["extra"] = 1
        what = "extra member"
    elif k < 0.13:
        req["method"] = 7
        what = "method not a string"
    has_id = rng.random() >= 0.08
    rid = random_id(rng) if has_id else None
    if has_id and rng.random() < 0.02:
        rid = None  # "id": null is an id: the reply carries null
    if has_id:
        req["id"] = rid
        if rng.random() < 0.3:
            req = dict(reversed(list(req.items())))  # id last
    line = json.dumps(req, ensure_ascii=rng.random() < 0.5).encode()
    if rng.random() < 0.05:
        line += b"\r"
    if rng.random() < 0.05:
        line = b"  " + line
    return line, what if has_id else what + " (no id)", canon(rid) if has_id else None


# -------------------------------------------------------------------------------- a client


class Conn:
    """A raw connection: lines in, bytes out."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""

    def send_split(self, rng, data):
        """Sends data in one write, or split at random places (partial lines)."""
        if rng.random() < 0.8 or len(data) < 4:
            self.sock.sendall(data)
            return
        cuts = sorted(rng.sample(range(1, len(data)), min(3, len(data) - 1)))
        last = 0
        for c in cuts + [len(data)]:
            self.sock.sendall(data[last:c])
            last = c
            time.sleep(rng.uniform(0, 0.002))

    def read_line(self, deadline):
        """The next line (bytes, without the newline), None at end of connection; raises
        socket.timeout after deadline (time.monotonic())."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def close(self):
        self.sock.close()


class Worker(threading.Thread):
    """One client: batches of random requests until its share is sent (or time is up), each
    batch's replies checked before the next batch; a last status; a half close."""

    def __init__(self, k, seed, path, n, gains, lockstep, quota, t_end):
        super().__init__(daemon=True)
        self.k = k
        self.rng = random.Random("%s/%d" % (seed, k))
        self.path, self.n, self.gains, self.lockstep = path, n, gains, lockstep
        self.quota, self.t_end = quota, t_end
        self.checked = 0       # requests whose answer (or its absence) was checked
        self.replies = 0       # replies matched to a request
        self.abandoned = 0     # requests sent on a connection closed before their answers
        self.notifications = 0
        self.by_what = {}
        self.outcomes = {}  # (what, "ok" or the error code): replies
        self.failure = None

    def fail(self, msg):
        raise AssertionError("client %d: %s" % (self.k, msg))

    def expect_replies(self, conn, pending, where):
        """Reads until every reply in pending ((expect, what, line)) has come, in order."""
        deadline = time.monotonic() + ANSWER_WAIT_S
        i = 0
        while i < len(pending):
            while pending[i][0] is None:  # no reply owed: checked by the next one's order
                i += 1
                if i == len(pending):
                    return
            try:
                line = conn.read_line(deadline)
            except socket.timeout:
                self.fail("%s: no answer within %.0f s to request %d of the batch (%s, id %s): "
                          "%r; still owed: %d" % (where, ANSWER_WAIT_S, i, pending[i][1],
                                                  pending[i][0], pending[i][2][:200],
                                                  sum(1 for p in pending[i:] if p[0])))
            if line is None:
                self.fail("%s: armd closed the connection with %d answers owed (next: %s, id "
                          "%s)" % (where, sum(1 for p in pending[i:] if p[0]), pending[i][1],
                                   pending[i][0]))
            msg = json.loads(line)
            check(isinstance(msg, dict), "client %d: a line that is not an object: %r" %
                  (self.k, line[:200]))
            if "id" not in msg:
                check("method" in msg, "client %d: a line with neither id nor method: %r" %
                      (self.k, line[:200]))
                self.notifications += 1
                continue
            expect, what, sent = pending[i]
            got = canon(msg["id"])
            if got != expect:
                self.fail("%s: reply %s where the answer to request %d of the batch (%s, id %s) "
                          "was due: %r (sent: %r)" % (where, got[:120], i, what, expect[:120],
                                                      line[:300], sent[:300]))
            ok = ("result" in msg) != ("error" in msg) and set(msg) <= {"id", "result", "error"}
            if ok and "error" in msg:
                e = msg["error"]
                ok = isinstance(e, dict) and isinstance(e.get("code"), str) and isinstance(
                    e.get("message"), str) and e["code"] != ""
            check(ok, "client %d: malformed reply to %s: %r" % (self.k, what, line[:300]))
            self.replies += 1
            outcome = "ok" if "result" in msg else msg["error"]["code"]
            key = (what.split(" (")[0], outcome)
            self.outcomes[key] = self.outcomes.get(key, 0) + 1
            i += 1

    def run(self):
        try:
            self.body()
        except BaseException as e:  # reported by the main thread
            self.failure = "%s: %s" % (type(e).__name__, e)

    def body(self):
        rng = self.rng
        conn = Conn(self.path)
        sent = 0
        while self.checked < self.quota and time.monotonic() < self.t_end:
            size = rng.choice([1, 1, 2, 3, 4, 6, 8]) if rng.random() > 0.005 else \
                rng.randint(100, 400)  # a flood: armd runs 8 per turn, the rest wait their turn
            batch = [random_request(rng, self.n, self.gains, self.lockstep) for _ in range(size)]
            data = b"".join(line + b"\n" for line, _, _ in batch)
            conn.send_split(rng, data)
            sent += len(batch)
            if rng.random() < 0.01:  # gone with answers owed; a new connection
                conn.close()
                self.abandoned += len(batch)
                conn = Conn(self.path)
                continue
            pending = [(expect, what, line.decode(errors="replace")) for line, what, expect in batch]
            self.expect_replies(conn, pending, "batch at request %d" % sent)
            self.checked += len(batch)
            for _, what, _ in batch:
                what = what.split(" (")[0]
                self.by_what[what] = self.by_what.get(what, 0) + 1
            if rng.random() < 0.02:
                time.sleep(rng.uniform(0, 0.02))
        # the end: a last status answers; after a half close armd closes with nothing owed
        final = {"id": "final-%d" % self.k, "method": "status"}
        conn.sock.sendall(json.dumps(final).encode() + b"\n")
        self.expect_replies(conn, [(canon(final["id"]), "final status", "")], "end")
        self.checked += 1
        conn.sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + ANSWER_WAIT_S
        while True:
            try:
                line = conn.read_line(deadline)
            except socket.timeout:
                self.fail("armd did not close the connection within %.0f s of the half close "
                          "with nothing owed" % ANSWER_WAIT_S)
            if line is None:
                break
            msg = json.loads(line)
            check("id" not in msg, "client %d: a reply after the last one owed: %r" %
                  (self.k, line[:300]))
        conn.close()


def signal_thread(proc, rng, stop, count):
    """SIGHUP to armd at random moments (0 to HUP_GAP_S apart), one in 20 a SIGUSR1 (an estop
    without a connection) instead, until stop is set."""
    while not stop.wait(rng.uniform(0, HUP_GAP_S)):
        if proc.poll() is not None:
            return
        usr1 = rng.random() < 0.05
        proc.send_signal(signal.SIGUSR1 if usr1 else signal.SIGHUP)
        count[usr1] += 1


def clock_thread(path, rng, stop, out):
    """Lockstep (paused): simulated time advances by short sim.run requests, 0 to 20 ms of wall
    time apart, so that moves and payload estimates go on while every other command is answered
    after the one tick it needs. Each sim.run's one answer is checked as the clients' are."""
    try:
        conn = Conn(path)
        while not stop.wait(rng.uniform(0, 0.02)):
            rid = rng.randint(0, 3)
            req = {"id": rid, "method": "sim.run", "params": {"seconds": rng.uniform(0.005, 0.03)}}
            conn.sock.sendall(json.dumps(req).encode() + b"\n")
            while True:
                line = conn.read_line(time.monotonic() + ANSWER_WAIT_S)
                check(line is not None, "the clock connection was closed")
                msg = json.loads(line)
                if "id" in msg:
                    break
            check(msg["id"] == rid and "result" in msg, "sim.run answered %r" % line[:200])
            out[0] += 1
        conn.close()
    except BaseException as e:  # reported by the main thread
        out[1] = "clock: %s: %s" % (type(e).__name__, e)


def main(args):
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % 10**9
    lockstep = args.rig == "lockstep"
    print("seed %d (replay: --seed %d --rig %s)" % (seed, seed, args.rig))
    dropin = ("[arm]\nrate_hz = 1000\n" if lockstep else DEFAULT_DROPIN) + \
        "[socket]\nmax_clients = %d\n" % MAX_CLIENTS
    with Rig(args, "answers-" + args.rig, dropin=dropin,
             lockstep=args.pace if lockstep else None) as rig:
        c = rig.client()
        n = c.call("info")["dof"]
        check(n == len(READY), "the test is written for the PUMA 560 (6 joints), got %d" % n)
        gains = c.call("gains.get")
        c.close()
        t0 = time.monotonic()
        t_end = t0 + args.seconds
        quota = -(-args.requests // N_CLIENTS) if args.requests else 10**9
        workers = [Worker(k, seed, rig.sock, n, gains, lockstep, quota, t_end)
                   for k in range(N_CLIENTS)]
        stop = threading.Event()
        hups = [0, 0]
        hup = threading.Thread(target=signal_thread,
                               args=(rig.armd, random.Random("%s/hup" % seed), stop, hups),
                               daemon=True)
        hup.start()
        clock = [0, None]
        if lockstep and args.pace == "paused":
            ticker = threading.Thread(target=clock_thread,
                                      args=(rig.sock, random.Random("%s/clock" % seed), stop,
                                            clock), daemon=True)
            ticker.start()
        for w in workers:
            w.start()
        for w in workers:
            w.join(args.seconds + 3 * ANSWER_WAIT_S)
        stop.set()
        hup.join()
        if lockstep and args.pace == "paused":
            ticker.join(ANSWER_WAIT_S)
            check(clock[1] is None, clock[1] or "")
            print("clock: %d sim.run answered" % clock[0])
        elapsed = time.monotonic() - t0
        failures = [w.failure for w in workers if w.failure]
        stuck = [w.k for w in workers if w.is_alive()]
        total = sum(w.checked for w in workers)
        by_what = {}
        for w in workers:
            for k, v in w.by_what.items():
                by_what[k] = by_what.get(k, 0) + v
        print("%d requests checked on %d connections in %.1f s (%d replies, %d notifications "
              "skipped, %d requests abandoned on closed connections), %d SIGHUPs, %d SIGUSR1s" %
              (total, N_CLIENTS, elapsed, sum(w.replies for w in workers),
               sum(w.notifications for w in workers), sum(w.abandoned for w in workers),
               hups[0], hups[1]))
        outcomes = {}
        for w in workers:
            for (what, how), v in w.outcomes.items():
                outcomes.setdefault(what, {})[how] = outcomes.get(what, {}).get(how, 0) + v
        print("requests sent and checked, and their replies (result or error code):")
        for what in sorted(by_what):
            print("  %-18s %5d  %s" % (what, by_what[what], ", ".join(
                "%s %d" % kv for kv in sorted(outcomes.get(what, {}).items()))))
        check(not stuck, "clients %s still waiting after %.0f s" % (stuck, elapsed))
        check(not failures, "seed %d: %s" % (seed, "; ".join(failures)))
        for m, _ in METHODS:
            check(by_what.get(m, 0) > 0, "method %s was never sent and checked" % m)
        if args.requests:
            check(total >= args.requests, "only %d requests checked within %.0f s (wanted %d)" %
                  (total, args.seconds, args.requests))
        check(rig.armd.poll() is None, "armd exited:\n" + rig.armd_log()[-3000:])
        c = rig.client()
        deadline = time.monotonic() + ANSWER_WAIT_S
        while True:  # every other connection was closed: armd lets them all go
            st = c.call("status")
            if st["clients"] == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        c.close()
        check(st["clients"] == 1, "armd still counts %d connections, 1 open" % st["clients"])
        print("armd alive, state %s, 1 connection; %d SIGHUP reloads logged" %
              (st["state"], rig.armd_log().count("SIGHUP: reloading")))


def parse():
    p = arg_parser()
    p.add_argument("--rig", choices=["lockstep", "realtime"], default="lockstep")
    p.add_argument("--pace", choices=["paused", "free"], default="paused",
                   help="lockstep: paused (time runs by sim.run, a command's tick at once) or "
                   "free (as fast as it computes; answers after each batch of ticks: slower)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--requests", type=int, default=20000,
                   help="checked requests to reach (0: as many as fit in --seconds)")
    p.add_argument("--seconds", type=float, default=30.0,
                   help="stop sending new batches after this long [s]")
    return p.parse_args()


if __name__ == "__main__":
    run(main, parse)
