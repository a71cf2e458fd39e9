#!/usr/bin/env python3
"""Integration: armd's socket survives garbage, malformed JSON, unknown methods, wrong params
(an error object each, connection kept), oversized lines (error, then closed), hundreds of
connects/disconnects, too many clients, and a subscriber that never reads (dropped; others keep
being served and the control loop keeps ticking). Real armd + armsim on a pty."""
import socket
import time

from test_api_lib import Client, Rig, check, run


def expect_error(c, raw, code, words=()):
    c.send_raw(raw)
    m = c.read_message()
    check(m is not None, "connection closed after %r" % raw[:40])
    check("error" in m, "no error for %r: %s" % (raw[:40], m))
    check(m["error"]["code"] == code, "for %r expected %s, got %s" % (raw[:40], code, m["error"]))
    for w in words:
        check(w in m["error"]["message"], "message %r does not name %r" % (m["error"]["message"], w))


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
        time.sleep(0.3)
        st = c.call("status")
        check(st["clients"] <= 2, "connections leaked: %d clients still counted" % st["clients"])
        print("300 connects/disconnects: ok, %d clients left (%d refused while over "
              "max_clients)" % (st["clients"], refused))

        # max_clients
        extra = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(info["max_clients"])]
        for s in extra:
            s.connect(rig.sock)
        time.sleep(0.3)
        s = extra[-1]
        s.settimeout(5)
        data = s.recv(4096)
        check(b"too_many_clients" in data, "client over max_clients not refused: %r" % data)
        for s in extra:
            s.close()
        time.sleep(0.2)
        print("max_clients = %d enforced" % info["max_clients"])

        # a subscriber that never reads is dropped; the others are served; ticks advance
        c.call("enable")
        lazy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lazy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        lazy.connect(rig.sock)
        lazy.sendall(b'{"id": 1, "method": "subscribe", "params": {"rate_hz": 100000}}\n')
        t0 = time.time()
        ticks0 = c.call("status")["loop"]["ticks"]
        dropped = False
        while time.time() - t0 < 60:
            st = c.call("status")
            check(st["state"] == "holding", "state changed while a client stalls: %s" % st["state"])
            if "not reading" in rig.armd_log():
                dropped = True
                break
            time.sleep(0.2)
        check(dropped, "the never-reading client was not dropped within 60 s")
        st = c.call("status")
        check(st["loop"]["ticks"] > ticks0, "control loop did not tick")
        print("never-reading client dropped after %.1f s; %d ticks meanwhile, %d overruns" %
              (time.time() - t0, st["loop"]["ticks"] - ticks0, st["loop"]["overruns"]))
        lazy.close()
        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0 on SIGTERM")


if __name__ == "__main__":
    run(main)
