#!/usr/bin/env python3
"""Unit: the Python client (tools/python/armd) against a fake armd written here — a UNIX-socket
server in a thread that runs a script per connection: framing (replies in 1-byte pieces, many
lines in one piece, a 3 MB line, a request split by nothing), one exception per error code,
notifications interleaved with replies (queued in order, stray replies dropped, trajectory ends
remembered), wait_done, the automatic subscription, end of connection, timeouts that hold
while telemetry trickles, the array helpers and the CLI. Standard library only."""
import io
import json
import math
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tools", "python"))
import armd  # noqa: E402
from armd import cli  # noqa: E402


class Peer:
    """The fake armd's side of one connection."""

    def __init__(self, conn):
        self.conn = conn
        self.buf = b""
        self.requests = []

    def request(self, timeout=5.0):
        """The next request line, parsed (None when the client closed)."""
        self.conn.settimeout(timeout)
        while b"\n" not in self.buf:
            chunk = self.conn.recv(1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        req = json.loads(line)
        self.requests.append(req)
        return req

    def send(self, *msgs):
        self.conn.sendall(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))

    def reply(self, req, result):
        self.send({"id": req["id"], "result": result})

    def error(self, req, code, message):
        self.send({"id": req["id"], "error": {"code": code, "message": message}})


class FakeArmd:
    """Serves one connection with script(peer) in a thread; `with` joins it and re-raises
    what the script raised."""

    def __init__(self, script):
        self.dir = tempfile.mkdtemp(prefix="armd-pyclient-")
        self.path = os.path.join(self.dir, "armd.sock")
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(4)
        self.script = script
        self.peer = None
        self.failure = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            self.srv.settimeout(10)
            conn, _ = self.srv.accept()
            self.peer = Peer(conn)
            try:
                self.script(self.peer)
            finally:
                conn.close()
        except Exception as e:  # reported by __exit__
            self.failure = e

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.thread.join(20)
        self.srv.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if exc[0] is None:
            assert not self.thread.is_alive(), "the fake armd's script did not finish"
            if self.failure:
                raise self.failure
        return False


def telemetry(tick, n=2):
    return {"method": "telemetry", "params": {
        "tick": tick, "time": tick / 1000, "state": "holding", "q": [0.1 * tick] * n,
        "qd": [0.0] * n, "tau": [1.0, None][:n], "tau_meas": [0.5] * n, "q_des": [0.0] * n,
        "qd_des": [0.0] * n,
        "ext": [0.0] * n}}


def done_event(tid, result="done", t=1.5):
    return {"method": "trajectory_done", "params": {"time": t, "id": tid, "result": result}}


def state_event(state, t=1.0):
    return {"method": "state", "params": {"time": t, "state": state}}


class Framing(unittest.TestCase):

    def test_request_line_and_reply_in_pieces(self):
        """A request is one compact line with an increasing id; a reply arriving one byte at a
        time, and two replies in one piece, are read whole."""
        def script(p):
            req = p.request()
            data = json.dumps({"id": req["id"], "result": {"state": "holding", "q": [1.5, -2]}})
            for b in (data + "\n").encode():
                p.conn.sendall(bytes([b]))
                time.sleep(0.0005)
            r2, r3 = p.request(), p.request()
            p.send({"id": r2["id"], "result": {"state": "moving"}},
                   {"id": r3["id"], "result": {"state": "holding"}})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            self.assertEqual(c.status().to_dict(), {"state": "holding", "q": [1.5, -2]})
            c.send_raw(b'{"id":101,"method":"status"}\n{"id":102,"method":"status"}\n')
            self.assertEqual(c.read_message()["result"]["state"], "moving")
            self.assertEqual(c.read_message()["result"]["state"], "holding")
        reqs = srv.peer.requests
        self.assertEqual(reqs[0], {"id": 1, "method": "status"})
        self.assertEqual([r["id"] for r in reqs[1:]], [101, 102])

    def test_long_line(self):
        """A 3 MB reply line (many recv() calls) arrives intact."""
        big = [float(i) for i in range(200000)]

        def script(p):
            p.reply(p.request(), {"q": big})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=10) as c:
            self.assertEqual(c.call("status")["q"], big)

    def test_params_sent_as_given(self):
        """Keyword arguments become the socket's params: move_to's q and duration, gains with a
        scalar and a vector, controller.set's name, trajectory's points and mode."""
        def script(p):
            for _ in range(2):  # the automatic subscription, then move_to
                req = p.request()
                p.reply(req, {"rate_hz": 1.0} if req["method"] == "subscribe"
                        else {"id": 7, "duration": 2.0})
            p.reply(p.request(), {"kp": [5, 5], "kd": [1, 2], "ki": [0, 0],
                                  "controller": "pd_gravity"})
            p.reply(p.request(), {"controller": "gravity_comp"})
            p.reply(p.request(), {"id": 8, "duration": 1.0})
            p.reply(p.request(), {"translational_stiffness": [800] * 3,
                                  "controller": "cartesian_impedance"})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            self.assertEqual(c.move_to([0.5, -1], duration=2), armd.Motion(7, 2.0))
            self.assertEqual(c.gains(kp=5, kd=[1, 2])["controller"], "pd_gravity")
            self.assertEqual(c.controller("gravity_comp"), "gravity_comp")
            c.trajectory([(1, [0, 0]), {"t": 2, "q": [1, 1], "qd": [0, 0]}], mode="append")
            self.assertEqual(c.impedance(translational=800, damping=[0.5] * 6)["controller"],
                             "cartesian_impedance")
        r = srv.peer.requests
        self.assertEqual(r[0]["method"], "subscribe")
        self.assertEqual(r[1]["params"], {"q": [0.5, -1.0], "duration": 2.0})
        self.assertEqual(r[2], {"id": 3, "method": "gains.set",
                                "params": {"kp": 5.0, "kd": [1.0, 2.0]}})
        self.assertEqual(r[3]["params"], {"name": "gravity_comp"})
        self.assertEqual(r[4]["params"], {"mode": "append", "points": [
            {"t": 1.0, "q": [0.0, 0.0]}, {"t": 2.0, "q": [1.0, 1.0], "qd": [0.0, 0.0]}]})
        self.assertEqual(r[5], {"id": 6, "method": "impedance.set", "params": {
            "translational_stiffness": 800.0, "damping_ratio": [0.5] * 6}})

    def test_payload_methods(self):
        """payload(), payload_set() with and without com/inertia, payload_clear() and
        payload_estimate() send payload.get, payload.set and payload.estimate with the params
        armd documents; NaN in a payload is refused before sending."""
        p0 = {"mass": 0.0, "com": [0, 0, 0], "inertia": [0] * 6}
        est = {"mass": 2.0, "com": [0.1, 0, 0.05], "applied": True}

        def script(p):
            p.reply(p.request(), p0)
            p.reply(p.request(), dict(p0, mass=2.0))
            p.reply(p.request(), dict(p0, mass=1.0))
            p.reply(p.request(), p0)
            p.reply(p.request(), est)
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            self.assertEqual(c.payload(), p0)
            self.assertEqual(c.payload_set(2, com=(0.1, 0, 0.05))["mass"], 2.0)
            c.payload_set(1.0, inertia=[0.01, 0, 0, 0.01, 0, 0.01])
            c.payload_clear()
            with self.assertRaisesRegex(armd.InvalidParams, r"com\[2\]: nan"):
                c.payload_set(1, com=[0, 0, math.nan])
            self.assertEqual(c.payload_estimate(apply=True, move_time=1.5), est)
        r = srv.peer.requests
        self.assertEqual([x["method"] for x in r], ["payload.get", "payload.set", "payload.set",
                                                     "payload.set", "payload.estimate"])
        self.assertEqual(r[1]["params"], {"mass": 2.0, "com": [0.1, 0.0, 0.05]})
        self.assertEqual(r[2]["params"], {"mass": 1.0, "inertia": [0.01, 0, 0, 0.01, 0, 0.01]})
        self.assertEqual(r[3]["params"], {"mass": 0.0})
        self.assertEqual(r[4]["params"], {"move_time": 1.5, "apply": True})

    def test_bad_values_never_sent(self):
        """NaN, infinity, non-numbers and an over-long line are refused before sending, naming
        the element; nothing reaches armd."""
        def script(p):
            self.assertIsNone(p.request(timeout=10))
        with FakeArmd(script) as srv:
            with armd.Client(srv.path, timeout=5) as c:
                with self.assertRaisesRegex(armd.InvalidParams, r"q\[1\]: nan"):
                    c.move_to([0, math.nan])
                with self.assertRaisesRegex(armd.InvalidParams, r"points\[1\]\.q\[0\]: inf"):
                    c.trajectory([(1, [0]), (2, [math.inf])])
                with self.assertRaisesRegex(armd.InvalidParams,
                                            r"points\[0\]\.t: expected a number"):
                    c.trajectory([("1", [0])])
                with self.assertRaisesRegex(armd.InvalidParams, r"mode"):
                    c.trajectory([(1, [0])], mode="merge")
                with self.assertRaises(armd.InvalidParams):
                    c.call("gains.set", {"kp": float("nan")})
                pts = [(0.001 * (k + 1), [0.123456789] * 40) for k in range(8000)]
                with self.assertRaisesRegex(armd.LineTooLong, "append"):
                    c.trajectory(pts)
            self.assertEqual(srv.peer.requests, [])


class Errors(unittest.TestCase):

    def test_every_code_maps_to_its_class(self):
        """Each documented code raises its class, carrying code, message and method; an
        unknown code raises armd.Error itself with that code; the connection stays usable."""
        codes = list(armd.ERRORS) + ["something_new"]

        def script(p):
            for code in codes:
                p.error(p.request(), code, "message for " + code)
            p.reply(p.request(), {"state": "disabled"})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            for code in codes:
                with self.assertRaises(armd.Error) as cm:
                    c.call("enable")
                e = cm.exception
                want = armd.ERRORS.get(code, armd.Error)
                self.assertIs(type(e), want, code)
                self.assertEqual((e.code, e.message, e.method),
                                 (code, "message for " + code, "enable"))
                self.assertIn("enable: %s: message for %s" % (code, code), str(e))
            self.assertEqual(c.disable(), "disabled")
        self.assertIs(armd.ERRORS["limits"], armd.Limits)
        self.assertIs(armd.ERRORS["bad_state"], armd.BadState)
        self.assertIs(armd.ERRORS["invalid_params"], armd.InvalidParams)

    def test_closing_error_without_id(self):
        """An {"id": null} error armd sends before closing (too_many_clients) raises at once
        while a reply is awaited; a null-id error of another code is not this call's."""
        def script(p):
            p.request()
            p.send({"id": None, "error": {"code": "parse_error", "message": "raw garbage"}})
            p.send({"id": None, "error": {"code": "too_many_clients", "message": "closing"}})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            with self.assertRaises(armd.TooManyClients) as cm:
                c.status()
            self.assertEqual(cm.exception.code, "too_many_clients")

    def test_not_json(self):
        """A line that is not a JSON object raises ProtocolError naming it."""
        def script(p):
            p.request()
            p.conn.sendall(b"hello armd\n")
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            with self.assertRaisesRegex(armd.ProtocolError, "hello armd"):
                c.status()

    def test_connect_failure(self):
        """No server at the path: ConnectFailed (an armd.Error and a ConnectionError) naming
        the path; $ARMD_SOCKET is the default path."""
        d = tempfile.mkdtemp()
        try:
            path = os.path.join(d, "none.sock")
            with self.assertRaisesRegex(armd.ConnectFailed, "none.sock.*is armd running"):
                armd.Client(path)
            old = os.environ.get("ARMD_SOCKET")
            os.environ["ARMD_SOCKET"] = path
            try:
                with self.assertRaises(ConnectionError):
                    armd.Client()
                self.assertEqual(armd.socket_path(), path)
                self.assertEqual(armd.socket_path("arm0"), "/run/armd/arm0/armd.sock")
            finally:
                if old is None:
                    del os.environ["ARMD_SOCKET"]
                else:
                    os.environ["ARMD_SOCKET"] = old
        finally:
            shutil.rmtree(d)


class Interleaving(unittest.TestCase):

    def test_notifications_queued_in_order(self):
        """Notifications before a reply are queued in arrival order and a stray reply (a late
        one to another id) is dropped; the iterator yields the queued ones first, as records,
        then reads on."""
        def script(p):
            req = p.request()
            p.send(telemetry(1), state_event("moving"), {"id": 999, "result": {}},
                   telemetry(2))
            p.reply(req, {"state": "moving"})
            p.send(telemetry(3), done_event(4))
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            self.assertEqual(c.status()["state"], "moving")
            sub = armd.Subscription(c, 50.0, 5.0)
            got = [next(sub) for _ in range(5)]
        self.assertEqual([type(r).__name__ for r in got],
                         ["Telemetry", "Event", "Telemetry", "Telemetry", "Event"])
        self.assertEqual([r.tick for r in got if isinstance(r, armd.Telemetry)], [1, 2, 3])
        self.assertEqual((got[1].method, got[1]["state"], got[1].time), ("state", "moving", 1.0))
        self.assertEqual(got[0].q, [0.1, 0.1])
        self.assertTrue(math.isnan(got[0].tau[1]))  # null (non-finite in armd) -> NaN
        self.assertEqual(got[0].tau_meas, [0.5, 0.5])
        self.assertEqual(got[4]["id"], 4)

    def test_subscribe_stream(self):
        """subscribe() sends the rate, returns armd's rate, and iterates telemetry and events;
        leaving the with block unsubscribes."""
        def script(p):
            req = p.request()
            p.reply(req, {"rate_hz": 100.0})
            p.send(telemetry(10), state_event("fault"),
                   {"method": "fault", "params": {"time": 2.0, "reason": "j2 over", "state":
                                                  "fault"}})
            p.reply(p.request(), {})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            with c.subscribe(120) as sub:
                self.assertEqual(sub.rate_hz, 100.0)
                recs = [next(sub) for _ in range(3)]
        self.assertEqual(srv.peer.requests[0]["params"], {"rate_hz": 120.0})
        self.assertEqual(srv.peer.requests[1]["method"], "unsubscribe")
        self.assertEqual(recs[0].tick, 10)
        self.assertEqual(recs[2]["reason"], "j2 over")

    def test_wait_done_sees_an_end_read_by_a_call(self):
        """The automatic subscription precedes the motion; a trajectory_done read while waiting
        for another reply satisfies wait_done without new input; a different id's end does not;
        with nothing outstanding the automatic subscription ends and its notifications go."""
        def script(p):
            p.reply(p.request(), {"rate_hz": 1.0})
            p.reply(p.request(), {"id": 5, "duration": 0.2})
            req = p.request()
            p.send(telemetry(1), done_event(4, "replaced"), done_event(5, "done", 2.5))
            p.reply(req, {"state": "holding"})
            p.reply(p.request(), {})  # unsubscribe
            self.assertIsNone(p.request(timeout=10))
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            m = c.move_to([1, 2])
            self.assertEqual(c.status()["state"], "holding")
            t0 = time.monotonic()
            d = c.wait_done()
            self.assertLess(time.monotonic() - t0, 5.0)  # not its 10 s timeout
            self.assertEqual(d, armd.Done(5, "done", 2.5))
            self.assertTrue(d.ok)
            self.assertEqual(c.wait_done(traj=4), armd.Done(4, "replaced", 1.5))
            self.assertEqual(m.id, 5)
            with self.assertRaises(armd.ClientTimeout):
                c.next_notification(timeout=0.2)  # the automatic subscription's queue is gone
        self.assertEqual([r["method"] for r in srv.peer.requests],
                         ["subscribe", "move_to", "status", "unsubscribe"])

    def test_wait_done_aborted_and_timeout(self):
        """An aborted end raises TrajectoryAborted (with check) carrying the record; no end
        within the timeout raises ClientTimeout while telemetry keeps coming."""
        def script(p):
            p.reply(p.request(), {"rate_hz": 1.0})
            p.reply(p.request(), {"id": 1, "duration": 0.1})
            p.send(done_event(1, "aborted: fault: j1 over its torque limit"))
            p.reply(p.request(), {})  # unsubscribe
            p.reply(p.request(), {"rate_hz": 1.0})
            p.reply(p.request(), {"id": 2, "duration": 0.1})
            end = time.monotonic() + 3
            tick = 0
            try:
                while time.monotonic() < end:  # until the client is done
                    tick += 1
                    p.send(telemetry(tick))
                    time.sleep(0.02)
            except (BrokenPipeError, ConnectionResetError):
                pass
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            c.move_to([0, 0])
            with self.assertRaises(armd.TrajectoryAborted) as cm:
                c.wait_done()
            self.assertEqual(cm.exception.done.result, "aborted: fault: j1 over its torque limit")
            self.assertFalse(cm.exception.done.ok)
            c.move_to([0, 0])
            t0 = time.monotonic()
            with self.assertRaisesRegex(armd.ClientTimeout, "end of trajectory 2"):
                c.wait_done(timeout=0.5)
            took = time.monotonic() - t0
            self.assertGreaterEqual(took, 0.5)
            self.assertLess(took, 2.5)  # bounded (slack for a loaded machine)
            self.assertGreater(c.next_notification(timeout=1)["params"]["tick"], 0)

    def test_refused_motion_drops_the_automatic_subscription(self):
        """A motion armd refuses (limits) raises Limits and ends the subscription made for it."""
        def script(p):
            p.reply(p.request(), {"rate_hz": 1.0})
            p.error(p.request(), "limits", "waypoint 0 joint j1: q = 5 rad is outside [-2, 2]")
            p.reply(p.request(), {})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            with self.assertRaisesRegex(armd.Limits, "j1: q = 5 rad"):
                c.move_to([5, 0])
        self.assertEqual([r["method"] for r in srv.peer.requests],
                         ["subscribe", "move_to", "unsubscribe"])

    def test_queue_bound_drops_telemetry_first(self):
        """With max_queued reached the oldest telemetry goes (counted), events stay."""
        def script(p):
            req = p.request()
            p.send(state_event("moving"), *[telemetry(k) for k in range(1, 11)])
            p.reply(req, {"state": "moving"})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5, max_queued=4) as c:
            c.status()
            got = [c.next_notification(timeout=1) for _ in range(4)]
            self.assertEqual(c.dropped, 7)
        self.assertEqual(got[0]["method"], "state")
        self.assertEqual([m["params"]["tick"] for m in got[1:]], [8, 9, 10])


class EndAndTimeouts(unittest.TestCase):

    def test_closed_before_reply(self):
        """armd closing mid-reply: ConnectionClosed (a ConnectionError) naming the method; the
        raw read gives None; the iterator raises ConnectionClosed."""
        def script(p):
            p.request()
            p.conn.sendall(b'{"id": 1, "res')
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            with self.assertRaisesRegex(armd.ConnectionClosed, "reply to 'status'"):
                c.status()
            self.assertIsNone(c.read_message())
            with self.assertRaises(ConnectionError):
                next(armd.Subscription(c, 1.0, 1.0))

    def test_reply_readable_after_failed_send(self):
        """armd refusing an over-long line answers and closes while the client still sends:
        the send raises ConnectionClosed, the answer is still read, then the end."""
        def script(p):
            p.conn.recv(1 << 16)
            p.send({"id": None, "error": {"code": "line_too_long", "message": "closing"}})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            with self.assertRaises(armd.ConnectionClosed):
                c.send_raw(b"[" + b"1," * (1 << 20))
            m = c.read_message()
            self.assertEqual(m["error"]["code"], "line_too_long")
            self.assertIsNone(c.read_message())

    def test_timeout_despite_trickle(self):
        """No reply: ClientTimeout after the client's timeout, although notifications keep
        arriving; they stay queued."""
        def script(p):
            p.request()
            try:
                for k in range(40):
                    p.send(telemetry(k))
                    time.sleep(0.025)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client is done
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=0.6) as c:
            t0 = time.monotonic()
            with self.assertRaises(armd.ClientTimeout) as cm:
                c.status()
            took = time.monotonic() - t0
            self.assertIsInstance(cm.exception, TimeoutError)
            self.assertIn("reply to 'status' from armd within 0.6 s", str(cm.exception))
            self.assertGreaterEqual(took, 0.6)
            self.assertLess(took, 2.6)  # bounded (slack for a loaded machine)
            self.assertEqual(c.next_notification()["method"], "telemetry")


class Points(unittest.TestCase):

    class Array:
        """Stands in for a NumPy array: the client only uses tolist()."""

        def __init__(self, rows):
            self.rows = rows

        def tolist(self):
            return self.rows

    def test_points_from_arrays(self):
        pts = armd.points(self.Array([1.0, 2.0]), self.Array([[0, 1], [2, 3]]),
                          qd=[[0, 0], [0.5, 0.5]])
        self.assertEqual(pts, [{"t": 1.0, "q": [0.0, 1.0], "qd": [0.0, 0.0]},
                               {"t": 2.0, "q": [2.0, 3.0], "qd": [0.5, 0.5]}])
        self.assertEqual(armd.points(iter([0.5]), [(1, 2)]), [{"t": 0.5, "q": [1.0, 2.0]}])
        try:
            import numpy
        except ImportError:
            print("numpy is not installed: arrays checked through tolist() only")
        else:
            pts = armd.points(numpy.array([1.0, 2.0]), numpy.array([[0, 1], [2, 3]]))
            self.assertEqual(pts[1], {"t": 2.0, "q": [2.0, 3.0]})
            self.assertIs(type(pts[1]["q"][0]), float)

    def test_points_errors(self):
        with self.assertRaisesRegex(armd.InvalidParams, r"q: 1 rows, expected 2"):
            armd.points([1, 2], [[0, 0]])
        with self.assertRaisesRegex(armd.InvalidParams, r"q\[1\]: 1 values, q\[0\] has 2"):
            armd.points([1, 2], [[0, 0], [0]])
        with self.assertRaisesRegex(armd.InvalidParams, r"t\[1\]: nan is not a finite"):
            armd.points([1, float("nan")], [[0], [0]])
        with self.assertRaisesRegex(armd.InvalidParams,
                                    r"q\[0\]\[0\]: expected a number, got bool"):
            armd.points([1], [[True]])
        with self.assertRaisesRegex(armd.InvalidParams, "qdd: given without qd"):
            armd.points([1], [[0]], qdd=[[0]])


class Cli(unittest.TestCase):

    def run_cli(self, argv, script):
        out, err = io.StringIO(), io.StringIO()
        with FakeArmd(script) as srv, redirect_stdout(out), redirect_stderr(err):
            rc = cli.main(["-s", srv.path] + argv)
        return rc, out.getvalue(), err.getvalue()

    def test_status_table(self):
        info = {"name": "arm", "dof": 2, "joints": ["j1", "slide"],
                "types": ["revolute", "prismatic"], "rate_hz": 500}
        st = {"state": "holding", "fault": None, "controller": "computed_torque",
              "trajectory": {"id": 3, "progress": 0.25, "remaining": 1.5},
              "q": [0.5, 0.25], "q_des": [0.5, 0.25], "error": [0, 0], "qd": [0, 0],
              "tau": [1.0, None]}

        def script(p):
            p.reply(p.request(), info)
            p.reply(p.request(), st)
        rc, out, err = self.run_cli(["status"], script)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("holding", out)
        self.assertIn("id 3: 25 % done, 1.50 s left", out)
        self.assertRegex(out, r"slide +0\.25000 +0\.25000 .* +- +m, m/s, N")

    def test_refused_and_usage(self):
        def script(p):
            p.error(p.request(), "bad_state", "not from fault")
        rc, out, err = self.run_cli(["enable"], script)
        self.assertEqual((rc, out), (1, ""))
        self.assertIn("armd: enable: bad_state: not from fault", err)
        with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as cm:
            cli.main(["fly"])
        self.assertEqual(cm.exception.code, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
