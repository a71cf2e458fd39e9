#!/usr/bin/env python3
"""Integration: a hostile client during a move. While the PUMA 560 follows a slow 12 s move_to,
other connections send malformed, out-of-range and abusive requests (non-finite and absurd
durations and rates, NaN/Infinity literals, wrong vector lengths, strings for numbers, huge and
deeply nested arrays, invalid UTF-8, a duplicate key, numbers that overflow, unknown methods,
params and ids of the wrong type, what the arm cannot follow: a 50 kg payload, kd past the
sampled loop's stability bound, kp × 4.25 while moving; a 1e6 s recording), a 1 MiB + 1 byte
line without a newline, a 5 MB line, half-written lines (then a half close, or a full close), a
flood of 2000 status requests in one write, a subscriber at the loop rate that never reads, and
7 idle connections. Checked:
 - every refused request gets a JSON error object {"id", "error": {"code", "message"}} with the
   expected code and its own id back (null where the line is no JSON); the connections that
   must be closed are closed after their error; the harmless ones (status flood, an object as
   id) are answered, every one, in order; a table of them all is printed;
 - the move was still running when the last of them had been answered and ends with
   trajectory_done "done" at its target; or, where the machine held armd's control thread up
   for longer than the servos' bus watchdog (this shared VM does, now and then, for 100 ms),
   with a fault that names its reason;
 - armd is alive, `status` answers on a fresh connection, the idle connections still answer,
   the never-reading subscriber was dropped ("not reading"), no connection leaked;
 - armsim's truth shows torque on some joint in every row from the enable to the end of the
   move (the PUMA under gravity never needs all-zero torque; servos switched off behind armd's
   back would show it); after a fault, up to 0.2 s (the stall limit) before it.
Real armd + armsim on a pty; [socket] max_clients = 16 so that all these connections fit
(connections beyond max_clients are test_api_estop_flood's and test_api_estop_squat's subject)."""
import json
import socket
import threading
import time

from test_api_lib import (DEFAULT_DROPIN, Client, Recorder, Rig, check, enable_clock_offset,
                          event, rows_between, run)

DROPIN = DEFAULT_DROPIN + "[socket]\nmax_clients = 16\n"
MOVE_S = 12.0          # duration of the move the hostile requests run beside [s]
STALL_S = 0.2          # armd's stall limit (CTL_STALL_SECONDS): blind for this long at most
N_IDLE = 7             # connections that connect and send nothing
N_FLOOD = 2000         # status requests in one write
MAX_LINE = 1024 * 1024  # armd's longest accepted request line [bytes] (API_MAX_LINE)


def req(rid, method, params=None, **extra):
    """A request line (params given as JSON text, so that NaN & co. can be written raw)."""
    text = '{"id": %s, "method": %s' % (json.dumps(rid), json.dumps(method))
    if params is not None:
        text += ', "params": ' + params
    for k, v in extra.items():
        text += ', %s: %s' % (json.dumps(k), v)
    return (text + "}\n").encode()


def vec(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def refused_requests(n, q0, target):
    """(label, raw line, expected error codes, id expected back) for requests armd must refuse
    without touching the move: errors found in the params, in the JSON or in the request."""
    t_ok = vec(target)
    pt = lambda t, q=t_ok: '{"t": %s, "q": %s}' % (t, q)
    huge = "[" + ",".join(["{}"] * 100000) + "]"  # 300 kB: counted before it is read
    nested = "[" * 100000 + "]" * 100000
    cases = [
        ("move_to duration 1e200", "move_to", '{"q": %s, "duration": 1e200}' % t_ok,
         "invalid_params"),
        ("move_to duration 1e-300", "move_to", '{"q": %s, "duration": 1e-300}' % t_ok,
         "invalid_params"),
        ("move_to duration NaN", "move_to", '{"q": %s, "duration": NaN}' % t_ok, "parse_error"),
        ("move_to duration Infinity", "move_to", '{"q": %s, "duration": Infinity}' % t_ok,
         "parse_error"),
        ("move_to duration -Infinity", "move_to", '{"q": %s, "duration": -Infinity}' % t_ok,
         "parse_error"),
        ("move_to duration -1", "move_to", '{"q": %s, "duration": -1}' % t_ok, "invalid_params"),
        ("move_to duration 0", "move_to", '{"q": %s, "duration": 0}' % t_ok, "invalid_params"),
        ("move_to duration 1e999 (overflow)", "move_to", '{"q": %s, "duration": 1e999}' % t_ok,
         "parse_error"),
        ("move_to q[0] = 1e300", "move_to", '{"q": %s, "duration": 5}' % vec([1e300] + q0[1:]),
         "limits"),
        ("move_to q of %d values" % (n - 1), "move_to", '{"q": %s}' % vec(q0[1:]),
         "invalid_params"),
        ("move_to q as strings", "move_to", '{"q": %s}' % json.dumps([str(v) for v in q0]),
         "invalid_params"),
        ("move_to q missing", "move_to", '{"duration": 5}', "invalid_params"),
        ("trajectory first t = 1e-200", "trajectory", '{"points": [%s]}' % pt("1e-200"),
         "invalid_params"),
        ("trajectory empty points", "trajectory", '{"points": []}', "invalid_params"),
        ("trajectory 100000 points", "trajectory", '{"points": %s}' % huge, "invalid_params"),
        ("trajectory points 0.5 period apart", "trajectory",
         '{"points": [%s, %s]}' % (pt("1.0"), pt("1.0005")), "invalid_params"),
        ("trajectory t = 1e300", "trajectory", '{"points": [%s]}' % pt("1e300"),
         "invalid_params"),
        ("trajectory t = -1", "trajectory", '{"points": [%s]}' % pt("-1"), "invalid_params"),
        ("trajectory q of %d values" % (n + 1), "trajectory",
         '{"points": [%s]}' % pt("2", vec(target + [0.0])), "invalid_params"),
        ("trajectory t as a string", "trajectory", '{"points": [%s]}' % pt('"2"'),
         "invalid_params"),
        ("trajectory q as strings", "trajectory",
         '{"points": [%s]}' % pt("2", json.dumps([str(v) for v in target])), "invalid_params"),
        ("trajectory a point not an object", "trajectory", '{"points": [[1, 2, 3]]}',
         "invalid_params"),
        ("trajectory mode \"sideways\"", "trajectory",
         '{"points": [%s], "mode": "sideways"}' % pt("2"), "invalid_params"),
        ("trajectory qd NaN", "trajectory",
         '{"points": [{"t": 2, "q": %s, "qd": %s}]}' % (t_ok, vec(["NaN"] * n)), "parse_error"),
        ("subscribe rate_hz 1e-300", "subscribe", '{"rate_hz": 1e-300}', "invalid_params"),
        ("subscribe rate_hz 0", "subscribe", '{"rate_hz": 0}', "invalid_params"),
        ("subscribe rate_hz -1", "subscribe", '{"rate_hz": -1}', "invalid_params"),
        ("subscribe rate_hz 1e300", "subscribe", '{"rate_hz": 1e300}', "invalid_params"),
        ("subscribe rate_hz \"fast\"", "subscribe", '{"rate_hz": "fast"}', "invalid_params"),
        ("gains.set kp 1e300", "gains.set", '{"kp": 1e300}', "invalid_params"),
        ("gains.set kd -5", "gains.set", '{"kd": -5}', "invalid_params"),
        ("gains.set ki NaN", "gains.set", '{"ki": NaN}', "parse_error"),
        ("gains.set kp [1e300 x n]", "gains.set", '{"kp": %s}' % vec([1e300] * n),
         "invalid_params"),
        ("gains.set kp -Infinity", "gains.set", '{"kp": -Infinity}', "parse_error"),
        ("gains.set nothing", "gains.set", '{}', "invalid_params"),
        ("controller.set \"chaos\"", "controller.set", '{"name": "chaos"}', "invalid_params"),
        ("payload.set mass 1e300, com 1e300", "payload.set",
         '{"mass": 1e300, "com": [1e300, 0, 0]}', "invalid_params"),
        ("payload.set mass -1e-300", "payload.set", '{"mass": -1e-300}', "invalid_params"),
        ("payload.set mass NaN", "payload.set", '{"mass": NaN}', "parse_error"),
        ("payload.set inertia indefinite", "payload.set",
         '{"mass": 1, "inertia": [1, 2, 0, 1, 0, 1]}', "invalid_params"),
        ("payload.set 50 kg (max_payload 2.5)", "payload.set", '{"mass": 50}', "infeasible"),
        ("gains.set kd 2500 (kd dt = 2.5 > 2)", "gains.set", '{"kd": 2500}', "invalid_params"),
        ("gains.set kp 400 -> 1700 while moving", "gains.set", '{"kp": 1700}', "bad_state"),
        ("record.start 1e6 s", "record.start", '{"duration": 1e6}', "invalid_params"),
        ("payload.estimate poses [] ", "payload.estimate", '{"poses": []}', "invalid_params"),
        ("payload.estimate 33 poses", "payload.estimate", '{"poses": %s}' % (
            "[" + ",".join([vec(target)] * 33) + "]"), "invalid_params"),
        ("payload.estimate while moving", "payload.estimate", '{}', "bad_state"),
        ("unknown method", "teleport", '{"q": %s}' % t_ok, "unknown_method"),
        ("params an array", "move_to", vec(target), "invalid_params"),
        ("params a string", "gains.set", '"kp=1e300"', "invalid_params"),
        ("status with a stray params member", "status", '{"verbose": true}', "invalid_params"),
    ]
    # a line that is not JSON cannot be tied to its request: "id": null
    out = [(label, req(1000 + k, m, p), {code}, None if code == "parse_error" else 1000 + k)
           for k, (label, m, p, code) in enumerate(cases)]
    out += [
        ("id an object, unknown method", req({"x": [1, {"y": 2}]}, "self_destruct"),
         {"unknown_method"}, {"x": [1, {"y": 2}]}),
        ("method a number", b'{"id": 2001, "method": 42}\n', {"invalid_request"}, 2001),
        ("extra request member", req(2002, "status", None, sudo="true"), {"invalid_request"},
         2002),
        ("request an array", b'[{"id": 2003, "method": "estop"}]\n', {"invalid_request"}, None),
        ("request a number", b"12345\n", {"parse_error"}, None),
        ("NaN alone", b"NaN\n", {"parse_error"}, None),
        ("invalid UTF-8 bytes", b'{"id": 2004, "method": "\xff\xfe\xc3\x28"}\n',
         {"parse_error"}, None),
        ("invalid UTF-8, binary garbage", bytes(range(128, 256)) + b"\n", {"parse_error"}, None),
        ("NUL escape in method", b'{"id": 2005, "method": "est\\u0000op"}\n', {"parse_error"},
         None),
        ("duplicate key", b'{"id": 2006, "method": "status", "method": "estop"}\n',
         {"parse_error"}, None),
        ("integer overflow id", b'{"id": 99999999999999999999999999, "method": "status"}\n',
         {"parse_error"}, None),
        ("100000-deep nesting", ('{"id": 2007, "method": "move_to", "params": {"q": %s}}\n' %
                                 nested).encode(), {"parse_error"}, None),
        ("truncated object", b'{"id": 2008, "method": "move_to", "params": {"q": [0, \n',
         {"parse_error"}, None),
    ]
    return out


def ask(c, raw, timeout=10.0):
    """Sends raw on c; the first reply line (None: connection closed)."""
    c.sock.settimeout(timeout)
    c.send_raw(raw)
    return c.read_message()


def is_error(m, codes):
    """True if m is {"error": {"code" in codes, "message": non-empty text}}."""
    e = m.get("error") if isinstance(m, dict) else None
    return (isinstance(e, dict) and e.get("code") in codes and isinstance(e.get("message"), str)
            and len(e["message"]) > 0 and "result" not in m)


def read_until_closed(sock, timeout):
    """Reads sock until end of file (True), or False if it is still open after timeout [s]."""
    deadline = time.monotonic() + timeout
    data = b""
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(1 << 16)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True, data
        if not chunk:
            return True, data
        data += chunk
    return False, data


def error_then_closed(rig, label, payload, code, half_close=False):
    """Sends payload on a new connection (then shuts down writing if half_close); the row
    (label, what came back, ok): ok when the first line back is an error `code` and the
    connection is then closed."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(rig.sock)
    s.settimeout(20)
    try:
        s.sendall(payload)
        if half_close:
            s.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # armd may close before the last bytes are taken
    closed, data = read_until_closed(s, 20)
    s.close()
    first = json.loads(data.split(b"\n", 1)[0]) if b"\n" in data else None
    ok = closed and first is not None and is_error(first, {code})
    return (label, first["error"]["code"] if first and "error" in first else
            ("closed, nothing sent" if closed else "still open"), ok)


def closing_cases(rig):
    """Requests after which the connection must be closed: rows (label, got, ok)."""
    head = b'{"id": 3000, "method": "status", "params": {"pad": "'
    pts = ",".join('{"t": %d, "q": [0.1, 1.6, -1.6, 0.1, 0.1, 0.1]}' % (k + 1)
                   for k in range(100000))
    rows = [
        # a line over 1 MiB without a newline: line_too_long, then closed
        error_then_closed(rig, "1 MiB + 1 byte, no newline",
                          head + b"x" * (MAX_LINE + 1 - len(head)), "line_too_long"),
        # a trajectory of 100000 full waypoints (5 MB): refused at 1 MiB, closed
        error_then_closed(rig, "trajectory 100000 waypoints (5 MB)",
                          ('{"id": 3001, "method": "trajectory", "params": {"points": [%s]}}\n'
                           % pts).encode(), "line_too_long"),
        # half a request, then a half close: the fragment is a line (parse_error), closed
        error_then_closed(rig, "half a line, then half close",
                          b'{"id": 3002, "method": "move_to", "params": {"q": [0.1, 1e3',
                          "parse_error", half_close=True),
    ]
    # half a request, then gone: nothing to answer; armd must not mind
    for _ in range(20):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(rig.sock)
        s.sendall(b'{"id": 3003, "method": "trajectory", "params": {"points": [{"t": 1')
        s.close()
    alive = rig.armd.poll() is None and "state" in fresh_status(rig)
    rows.append(("half a line, then close (x20)", "armd alive" if alive else "armd gone", alive))
    return rows


def fresh_status(rig):
    """status on a new connection, closed again."""
    c = rig.client()
    st = c.call("status")
    c.close()
    return st


def flood(rig):
    """2000 status requests in one write from one client; all answered, in order."""
    c = Client(rig.sock, timeout=20)
    data = b"".join(b'{"id": %d, "method": "status"}\n' % k for k in range(N_FLOOD))
    writer = threading.Thread(target=c.send_raw, args=(data,))
    writer.start()
    got = []
    while len(got) < N_FLOOD:
        m = c.read_message()
        if m is None:
            break
        got.append(m)
    writer.join()
    c.close()
    in_order = [m.get("id") for m in got] == list(range(N_FLOOD))
    answered = all("result" in m for m in got)
    return ("%d x status in one write" % N_FLOOD,
            "%d results%s" % (len(got), ", in order" if in_order and answered else ", WRONG"),
            in_order and answered and len(got) == N_FLOOD)


def wait_clients(c, want, timeout, what):
    """Polls status until armd counts `want` clients (armd accepts and sees closes on its own
    time)."""
    deadline = time.monotonic() + timeout
    got = c.call("status")["clients"]
    while got != want:
        check(time.monotonic() < deadline, "%s: %d clients counted, expected %d" %
              (what, got, want))
        time.sleep(0.02)
        got = c.call("status")["clients"]


def outcome(rec, move_id, timeout):
    """Waits for the move's trajectory_done or a fault; returns (done params or None, fault
    params or None) once one came and the events of the next 0.3 s are in too."""
    deadline = time.monotonic() + timeout
    done = fault = None
    while done is None and fault is None and time.monotonic() < deadline:
        rec.collect(0.2)
        done = event(rec, "trajectory_done", lambda p: p["id"] == move_id)
        fault = event(rec, "fault")
    rec.collect(0.3)
    return (event(rec, "trajectory_done", lambda p: p["id"] == move_id), event(rec, "fault"))


def main(args):
    with Rig(args, "hostile", dropin=DROPIN) as rig:
        c = rig.client()
        info = c.call("info")
        n, rate = info["dof"], info["rate_hz"]
        check(info["max_clients"] == 16, "the drop-in's max_clients did not apply")
        q0 = c.call("status")["q"]
        lim = info["limits"]
        target = [min(max(q + d, lo + 0.1), hi - 0.1) for q, d, lo, hi in
                  zip(q0, [0.4, 0.3, -0.3, 0.5, 0.4, 0.5] * 2, lim["lower"], lim["upper"])]
        rec = Recorder(rig.sock, 10)  # before enable: sees the holding event
        idle = [rig.client() for _ in range(N_IDLE)]
        base_clients = 2 + N_IDLE
        wait_clients(c, base_clients, 10, "the idle connections")
        check(c.call("enable")["state"] == "holding", "enable did not hold")
        move = c.call("move_to", {"q": target, "duration": MOVE_S})
        check(c.call("status")["state"] == "moving", "not moving after move_to")

        # a subscriber at the loop rate that never reads (small buffer: stalls at once)
        lazy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lazy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        lazy.connect(rig.sock)
        lazy.sendall(b'{"id": 1, "method": "subscribe", "params": {"rate_hz": %d}}\n' % rate)

        table = []  # (label, what came back, ok)
        bad = [rig.client() for _ in range(3)]  # the hostile connections, taking turns
        for k, (label, raw, codes, rid) in enumerate(refused_requests(n, q0, target)):
            m = ask(bad[k % len(bad)], raw)
            ok = m is not None and is_error(m, codes) and m.get("id") == rid
            table.append((label, m["error"]["code"] if m and "error" in m else
                          ("closed" if m is None else "result!"), ok))
        # harmless: an object as id is echoed with a result
        m = ask(bad[0], req({"who": ["me", 1]}, "status"))
        table.append(("id an object, status", "result" if m and "result" in m else str(m),
                      m is not None and m.get("id") == {"who": ["me", 1]} and "result" in m))
        table += closing_cases(rig)
        table.append(flood(rig))
        for b in bad:  # still open and answering after all that
            b.call("status")
        st = c.call("status")
        still_moving = st["state"] == "moving" and st["trajectory"] is not None and \
            st["trajectory"]["id"] == move["id"]
        print("%-40s %s" % ("request", "reply"))
        for label, got, ok in table:
            print("%-40s %-28s %s" % (label, got, "ok" if ok else "WRONG"))
        print("%d hostile requests; the move still running after the last: %s (%.1f of %.1f s "
              "left)" % (len(table), still_moving,
                         st["trajectory"]["remaining"] if st["trajectory"] else 0, MOVE_S))
        wrong = [t[0] for t in table if not t[2]]
        check(not wrong, "wrong or missing error for: %s" % ", ".join(wrong))
        check(len(table) >= 30, "only %d hostile requests" % len(table))

        # the outcome: the move done at its target; or, where the machine held armd's control
        # thread up for longer than the servos' bus watchdog, a fault that says why
        done, fault = outcome(rec, move["id"], MOVE_S + 10)
        st = fresh_status(rig)
        lp = st["loop"]
        print("loop: %d overruns, %d failed reads, longest read gap %.1f ms, lateness max %.0f "
              "us" % (lp["overruns"], lp["failed_reads"], lp["longest_read_gap_ms"],
                      lp["lateness_us"]["max"]))
        if fault is not None:
            print("move %d: FAULT at armd t = %.2f s: %r" % (move["id"], fault["time"],
                                                             fault["reason"]))
            check(isinstance(fault["reason"], str) and fault["reason"].strip(),
                  "a fault without a reason")
            check(st["state"] == "fault" and st["fault"], "after the fault event: %s, %r" %
                  (st["state"], st["fault"]))
            # armd cannot see what happens while it is held up: up to the stall limit (0.2 s)
            t_end = fault["time"] - STALL_S
        else:
            check(still_moving, "the move was over before the hostile requests were done: %s" %
                  st["state"])
            check(done is not None, "no trajectory_done for the move within %g s" %
                  (MOVE_S + 10))
            err = max(abs(a - b) for a, b in zip(st["q"], target))
            print("move %d: %s at armd t = %.2f s; state %s, |q - target| max %.4f rad" %
                  (move["id"], done["result"], done["time"], st["state"], err))
            check(done["result"] == "done", "the move ended %r" % done["result"])
            check(st["state"] == "holding" and st["fault"] is None,
                  "after the move: %s, fault %r" % (st["state"], st["fault"]))
            check(err < 0.01, "the arm is %.4f rad from the move's target" % err)
            t_end = done["time"]

        # the never-reading subscriber was dropped, the idle ones still answer, nothing leaked
        # (reading it now would make it a reader: first armd's log, then the end of file)
        deadline = time.monotonic() + 20
        while "not reading" not in rig.armd_log():
            check(time.monotonic() < deadline, "the never-reading subscriber was not dropped "
                  "(or armd did not log why)")
            time.sleep(0.05)
        closed, _ = read_until_closed(lazy, 10)
        check(closed, "the never-reading subscriber's connection is still open")
        lazy.close()
        for s in idle:
            s.call("status")
        for b in bad:
            b.close()
        wait_clients(c, base_clients, 10, "at the end")
        check(rig.armd.poll() is None, "armd died")

        # the truth: torque on some joint in every row from the enable to the end of the move
        truth = rig.read_truth(cover=time.monotonic())
        d = enable_clock_offset(rec, truth)
        hold = event(rec, "state", lambda p: p["state"] == "holding")
        rows = rows_between(truth, hold["time"] + d + 0.002, t_end + d)
        zero = [r[0] for r in rows if all(x == 0.0 for x in r[3])]
        span = rows[-1][0] - rows[0][0] if rows else 0
        print("truth: %d rows over %.2f s from the enable to the end of the move, %d with all "
              "torques zero" % (len(rows), span, len(zero)))
        check(fault is not None or span > MOVE_S, "truth covers only %.2f s of the move" % span)
        check(not zero, "all-zero torque in the truth while armd held or moved, first at truth "
              "t = %.4f s" % (zero[0] if zero else 0))
        rec.client.close()
        for s in idle:
            s.close()
        c.call("disable")
        c.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
