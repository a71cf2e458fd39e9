#!/usr/bin/env python3
"""Integration: armd's socket survives garbage, malformed JSON, unknown methods, wrong params
(an error object each, connection kept), oversized lines (error, then closed), hundreds of
connects/disconnects, too many clients, and a subscriber that never reads (dropped after
stall_timeout; others keep being served and the control loop ticks on as it does serving a client
that reads, measured in the same run). Real armd + armsim on a pty."""
import socket
import threading
import time

from test_api_lib import Client, Rig, check, judge_loop_windows, run

STALL_TIMEOUT_S = 2.0  # [socket] stall_timeout, the default
BASELINE_S = 2.0       # length of one baseline window (a subscriber that reads) [s]
STALL_MARGIN_S = 8.0   # time to fill the socket buffers + scheduling slack on a loaded machine [s]
ROUNDS = 3             # baseline / slow-client window pairs

def expect_error(c, raw, code, words=()):
    c.send_raw(raw)
    m = c.read_message()
    check(m is not None, "connection closed after %r" % raw[:40])
    check("error" in m, "no error for %r: %s" % (raw[:40], m))
    check(m["error"]["code"] == code, "for %r expected %s, got %s" % (raw[:40], code, m["error"]))
    for w in words:
        check(w in m["error"]["message"], "message %r does not name %r" % (m["error"]["message"], w))


def wait_clients(c, want, timeout, what):
    """Polls status until armd counts `want` clients (deadline timeout [s]); returns the time
    that took [s]. armd sees closes and connects asynchronously, so no fixed sleep."""
    t0 = time.time()
    while True:
        got = c.call("status")["clients"]
        if got == want:
            return time.time() - t0
        check(time.time() - t0 < timeout, "%s: %d clients counted after %g s, expected %d" %
              (what, got, timeout, want))
        time.sleep(0.02)


def window_result(loop0, loop1, seconds):
    """What the control loop did between two status "loop" objects (stats reset before loop0)."""
    return {"seconds": seconds, "ticks": loop1["ticks"] - loop0["ticks"],
            "overruns": loop1["overruns"] - loop0["overruns"],
            "late_ticks": loop1["late_ticks"] - loop0["late_ticks"],
            "late_per_s": (loop1["late_ticks"] - loop0["late_ticks"]) / seconds,
            "p50": loop1["lateness_us"]["p50"], "p99": loop1["lateness_us"]["p99"],
            "max": loop1["lateness_us"]["max"]}


def loop_window_reading(c, path, rate_hz, seconds):
    """The control loop's late ticks and lateness p99 over `seconds` while a subscriber at
    `rate_hz` reads everything armd sends (the same telemetry load as the slow client's, served);
    stats.reset first. Returns the window and the number of bytes the reader took."""
    reader = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    reader.connect(path)
    reader.sendall(b'{"id": 1, "method": "subscribe", "params": {"rate_hz": %d}}\n' % rate_hz)
    reader.settimeout(0.2)
    got = [0]
    stop = threading.Event()

    def drain():
        while not stop.is_set():
            try:
                data = reader.recv(65536)
            except socket.timeout:
                continue
            if not data:
                return
            got[0] += len(data)

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    deadline = time.monotonic() + 5.0
    while got[0] == 0:  # the subscription is being served
        check(time.monotonic() < deadline, "the reading subscriber got nothing in 5 s")
        time.sleep(0.01)
    c.call("stats.reset")
    loop0 = c.call("status")["loop"]
    t0 = time.monotonic()
    time.sleep(seconds)
    w = window_result(loop0, c.call("status")["loop"], time.monotonic() - t0)
    stop.set()
    t.join()
    reader.close()
    return w, got[0]


def slow_client_window(c, path, rate_hz, base_clients):
    """Connects a subscriber at `rate_hz` that never reads (4 kB receive buffer) and polls
    status until armd drops it (state must stay holding); returns the control loop's window
    over that time (stats.reset first)."""
    c.call("stats.reset")
    loop0 = c.call("status")["loop"]
    t0 = time.monotonic()
    lazy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lazy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    lazy.connect(path)
    lazy.sendall(b'{"id": 1, "method": "subscribe", "params": {"rate_hz": %d}}\n' % rate_hz)
    wait_clients(c, base_clients + 1, 5.0, "the never-reading subscriber connecting")
    dropped = False
    while time.monotonic() - t0 < 60:
        st = c.call("status")
        check(st["state"] == "holding", "state changed while a client stalls: %s" % st["state"])
        if st["clients"] == base_clients:
            dropped = True
            break
        time.sleep(0.05)
    took = time.monotonic() - t0
    check(dropped, "the never-reading client was not dropped within 60 s")
    w = window_result(loop0, c.call("status")["loop"], took)
    lazy.close()
    check(took >= STALL_TIMEOUT_S, "the stalled client was dropped after %.1f s, before "
          "stall_timeout (%g s)" % (took, STALL_TIMEOUT_S))
    check(took < STALL_TIMEOUT_S + STALL_MARGIN_S, "the stalled client was dropped only after "
          "%.1f s (stall_timeout %g s)" % (took, STALL_TIMEOUT_S))
    check(w["ticks"] > 0, "control loop did not tick")
    return w


def describe(w):
    return ("%d ticks in %.1f s, %d overruns in %d late ticks, lateness p50 %.1f us, "
            "p99 %.1f us, max %.0f us" % (w["ticks"], w["seconds"], w["overruns"],
                                         w["late_ticks"], w["p50"], w["p99"], w["max"]))


def main(args):
    with Rig(args, "socket") as rig:
        c = rig.client()
        info = c.call("info")
        n = info["dof"]
        expect_error(c, b"\x00\xff\xfe garbage \x01\n", "parse_error")
        expect_error(c, b'{"id": 1, "method": "status"\n', "parse_error")
        expect_error(c, b'{"id": 2, "method": "teleport"}\n', "unknown_method", ["teleport"])
        expect_error(c, b'{"id": 3, "method": 5}\n', "invalid_request", ["method"])
        expect_error(c, b'{"id": 4, "method": "move_to", "params": {"q": [1]}}\n',
                     "invalid_params", ["params.q", str(n)])
        expect_error(c, b'{"id": 5, "method": "gains.set", "params": {"kp": "high"}}\n',
                     "invalid_params", ["params.kp"])
        expect_error(c, b'{"id": 6, "method": "trajectory", "params": {"points": []}}\n',
                     "invalid_params", ["points"])
        expect_error(c, b'{"id": 7, "method": "subscribe", "params": {"rate_hz": -1}}\n',
                     "invalid_params", ["rate_hz"])
        expect_error(c, b'{"id": 8, "method": "subscribe", "params": {"rate_hz": 1e-300}}\n',
                     "invalid_params", ["rate_hz"])  # a decimation of 0 once killed armd
        expect_error(c, b'{"id": 9, "method": "subscribe", "params": {"rate_hz": 100000}}\n',
                     "invalid_params", ["rate_hz", "loop rate"])
        # a request without id gets no reply: the next reply belongs to the next request
        c.send_raw(b'{"method": "status"}\n')
        check(c.call("status")["state"] == "disabled", "the arm must start disabled")
        print("errors: one per bad request, connection kept")

        # oversized line: error, then closed
        big = Client(rig.sock)
        big.sock.settimeout(20)
        try:
            big.send_raw(b"[" + b"1," * (600 * 1024))
        except OSError:
            pass
        m = big.read_message()
        check(m is not None and m.get("error", {}).get("code") == "line_too_long",
              "oversized line: expected line_too_long, got %s" % m)
        try:
            closed = big.read_message() is None
        except ConnectionResetError:  # the unread rest of the line makes the close a reset
            closed = True
        check(closed, "oversized line: connection not closed")
        big.close()
        print("oversized line: rejected and closed")

        # hundreds of connects and disconnects, some mid-request
        base_clients = c.call("status")["clients"]
        check(base_clients == 1, "%d clients counted with only this test's connection" %
              base_clients)
        refused = 0
        for i in range(300):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(rig.sock)
            try:
                if i % 3 == 1:
                    s.sendall(b'{"id": 1, "method": "sta')
                elif i % 3 == 2:
                    s.sendall(b'{"id": 1, "method": "info"}\n')
            except OSError:
                refused += 1  # over max_clients while armd has not yet seen earlier closes
            s.close()
        took = wait_clients(c, base_clients, 5.0,
                            "connections leaked after 300 connects/disconnects")
        print("300 connects/disconnects: ok, back to %d client %.2f s later (%d refused while "
              "over max_clients)" % (base_clients, took, refused))

        # max_clients, then connections beyond it: one request each, estop, status or disable
        extra = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                 for _ in range(info["max_clients"] + 1)]
        for s in extra:
            s.connect(rig.sock)
        # this test's connection + max_clients - 1 extra ones; the last two are beyond it
        wait_clients(c, info["max_clients"], 5.0, "max_clients")
        op = Client.from_socket(extra[-2])
        op.sock.settimeout(5)
        m = op.call_full("enable")
        check(m.get("error", {}).get("code") == "restricted",
              "a connection beyond max_clients accepted enable: %s" % m)
        check(op.read_message() is None, "a connection beyond max_clients was not closed after "
              "its one request")
        op = Client.from_socket(extra[-1])
        op.sock.settimeout(5)
        check(op.call("status")["state"] == "disabled", "a connection beyond max_clients cannot "
              "read status")
        check(op.read_message() is None, "a connection beyond max_clients was not closed after "
              "its status")
        for s in extra:
            s.close()
        wait_clients(c, base_clients, 5.0, "closing the extra clients")
        print("max_clients = %d enforced; beyond it one request, estop, status or disable, "
              "then closed" % info["max_clients"])

        # a subscriber that never reads is dropped once its output has not moved for
        # stall_timeout (2 s); the others are served; the control loop ticks on, undelayed.
        # "Undelayed" is judged against the same rig serving a subscriber that reads at the same
        # rate (the same telemetry to encode), measured in this run, because this machine misses
        # periods on its own, in bursts (10-150 late ticks, every 10-20 s) that can fall into
        # any one window. So: ROUNDS pairs of windows (baseline, slow client), and the best of
        # the slow windows against the median of the baselines. A client that delays the loop
        # does so in every round; a host burst does not hit every round.
        # - late ticks (overrun episodes) at most 2 x the baselines' rate over the same time
        #   + 10. Episodes, not skipped periods: one 20 ms host stall skips 20 periods in one
        #   late tick, while a loop held up by a client would be late tick after tick;
        # - lateness p50 at most 2 x the baselines' + 50 us and p99 at most 2 x + 100 us.
        c.call("enable")
        rate = int(info["rate_hz"])
        bases, slows = [], []
        for k in range(ROUNDS):
            base, nbytes = loop_window_reading(c, rig.sock, rate, BASELINE_S)
            print("round %d: baseline with a subscriber that reads (%d kB taken): %s" %
                  (k + 1, nbytes // 1024, describe(base)))
            wait_clients(c, base_clients, 5.0, "closing the reading subscriber")
            slow = slow_client_window(c, rig.sock, rate, base_clients)
            print("round %d: never-reading client dropped after %.1f s; meanwhile %s" %
                  (k + 1, slow["seconds"], describe(slow)))
            bases.append(base)
            slows.append(slow)
        check("not reading" in rig.armd_log(), "armd did not log why it dropped the client")

        print("judged: " + judge_loop_windows(bases, slows, "the slow client"))
        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0 on SIGTERM")


if __name__ == "__main__":
    run(main)
