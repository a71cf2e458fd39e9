#!/usr/bin/python3
"""Unit: armweb's pieces without armd or a browser (tools/armweb/webview/).

- metrics: the exposition of a status, read back by a strict parser (prom_text.py) and passed
  by `promtool check metrics`; label values and HELP with quotes, backslashes and line feeds
  escaped so that they read back unchanged; NaN/Inf/null values; every state a series, one of
  them 1; fault sentences armd really writes classed as documented; armd down = armd_up 0 only.
- fanout: a browser that never takes its queue holds at most queue_limit messages, loses the
  oldest (counted), and does not hold up a browser that reads; the batch is bounded.
- the telemetry rate asked of armd never exceeds 60 Hz after armd's own rounding.
- the command line: --control on a non-loopback address is refused; Host checks.
- the control token (auth.py): its file has mode 0640 whatever the umask and the group asked
  for, replaces a stale file or a symbolic link without writing through it, leaves no
  temporary file, and is removed at exit only while it is still armweb's; the Authorization
  header is checked (missing, other scheme, wrong, right). The Host allowlist: loopback names,
  the --listen address, --allow-host names and the address a request came to; nothing else.
- the screenshot tests' PNG reader (png_colours.py): random images through every filter.
- the joint cards' grid (layout.py): the columns for 1 ... 7 joints as documented, and for every
  count up to 64 no last row of a single card.
- armd's events kept for a new browser: the last 20 (telemetry not among them), each stamped
  with when armweb saw it, the last fault kept beside them; in the snapshot a new browser gets.
- the tool commands (POST /api/tool.*): refused without the token (401), without the page's
  mark (403) and read-only (403) with nothing forwarded; with both, forwarded to armd with their
  params on a connection of their own (call_apart), armd's answer and refusal passed through;
  params other than the method's own, non-numbers and a body that is not an object refused
  (400) with nothing forwarded; a method outside the allowlist is no route; the telemetry batch
  carries the tool's opening and force, and the info event the tool and its card's column.

usage: test_web_unit.py TOOLS_ARMWEB_DIR
"""
import asyncio
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True

import png_colours  # noqa: E402
import prom_text  # noqa: E402
from webview import armd_link, auth, fanout, layout, metrics  # noqa: E402


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def status_sample(n, state="holding"):
    """A status result shaped as armd's (armd-api(7), status)."""
    t = {"p50": 18.5, "p99": 87.25, "max": 1334.0}
    return {
        "state": state, "fault": None, "time": 12.5, "controller": "computed_torque",
        "q": [0.1 * j for j in range(n)], "qd": [0.0] * n, "tau": [1.5 - j for j in range(n)],
        "q_des": [0.1 * j for j in range(n)], "qd_des": [0.0] * n,
        "error": [1e-4 * (j - 2) for j in range(n)], "trajectory": None,
        "collision": {"mode": "off", "external_torque": [0.0] * n, "detected": 3},
        "loop": {"rate_hz": 1000.0, "ticks": 9922, "overruns": 2, "late_ticks": 1,
                 "failed_reads": 4, "failed_writes": 0, "read_gaps": 1,
                 "longest_read_gap_ms": 3.0, "saturations": 7, "lateness_us": dict(t),
                 "read_us": dict(t), "compute_us": dict(t), "write_us": dict(t)},
        "clients": 2,
    }


def promtool_check(text):
    """`promtool check metrics` on text: its exit status and output."""
    tool = shutil.which("promtool")
    check(tool is not None, "promtool is missing: install the Debian package prometheus "
          "(tools/bootstrap does)")
    p = subprocess.run([tool, "check", "metrics"], input=text.encode(), capture_output=True)
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace")


def test_exposition():
    joints = ["j1", "j2", "j3", "j4", "j5", "j6"]
    web = {"browsers": 2, "dropped_batches": 5, "dropped_browsers": 1, "connects": 1}
    faults = {"following_error": 2}
    text = metrics.render("puma560", joints, status_sample(6), faults, web)
    rc, out = promtool_check(text)
    check(rc == 0, "promtool check metrics refused the exposition:\n%s\n%s" % (out, text))
    f = prom_text.parse(text)
    v = prom_text.value
    check(v(f, "armd_up", arm="puma560") == 1, "armd_up is not 1 with a status")
    for s in metrics.STATES:
        want = 1 if s == "holding" else 0
        check(v(f, "armd_state", arm="puma560", state=s) == want,
              "armd_state{state=%s} is not %d" % (s, want))
    check(f["armd_state"]["type"] == "gauge", "armd_state is not a gauge")
    for r in metrics.fault_labels():
        check(v(f, "armd_faults_total", arm="puma560", reason=r) == faults.get(r, 0),
              "armd_faults_total{reason=%s} wrong" % r)
    check(f["armd_faults_total"]["type"] == "counter", "armd_faults_total is not a counter")
    for name, key, _ in metrics.LOOP_COUNTERS:
        check(f[name]["type"] == "counter", "%s is not a counter" % name)
        check(v(f, name, arm="puma560") == status_sample(6)["loop"][key], "%s wrong" % name)
    check(abs(v(f, "armd_loop_lateness_seconds", arm="puma560", stat="p99") - 87.25e-6) < 1e-15,
          "lateness p99 not converted from microseconds to seconds")
    check(v(f, "armd_collisions_total", arm="puma560") == 3, "armd_collisions_total wrong")
    for j, name in enumerate(joints):
        check(v(f, "armd_joint_torque", arm="puma560", joint=name) == 1.5 - j,
              "torque of %s wrong" % name)
        check(abs(v(f, "armd_joint_tracking_error", arm="puma560", joint=name)
                  - 1e-4 * (j - 2)) < 1e-18, "tracking error of %s wrong" % name)
    check(v(f, "armweb_dropped_batches_total", arm="puma560") == 5, "dropped batches wrong")
    for name, fam in f.items():
        check(fam["help"] and fam["type"], "%s lacks HELP or TYPE" % name)
    print("exposition of a 6-joint status: %d families, promtool ok" % len(f))


def test_escaping():
    arm = 'arm "A"\\B\nC'
    joints = ['j"1', "j\\2", "j\n3", "ĵ4"]
    st = status_sample(4)
    st["tau"] = [float("nan"), float("inf"), float("-inf"), None]
    text = metrics.render(arm, joints, st, {}, {})
    check('arm="arm \\"A\\"\\\\B\\nC"' in text, "arm label not escaped:\n" + text[:400])
    rc, out = promtool_check(text)
    check(rc == 0, "promtool refused escaped labels:\n%s\n%s" % (out, text))
    f = prom_text.parse(text)
    for name, want in zip(joints, ("NaN", "+Inf", "-Inf", "NaN")):
        got = prom_text.value(f, "armd_joint_torque", arm=arm, joint=name)
        check(("%r" % got).lower().replace("+", "") == ("%r" % float(want)).lower(),
              "torque of %r read back as %r, expected %s" % (name, got, want))
    check(metrics.escape_help("a\\b\nc\"") == 'a\\\\b\\nc"', "HELP escaping wrong")
    for bad in ('x{a="\\q"} 1\n', 'x{a="b} 1\n', "x 1", 'x{a="1",a="2"} 1\n', "x one\n",
                "# TYPE x counter\nx -1\n", "x 1\ny 1\nx 2\n", "x 1\nx 1\n"):
        try:
            prom_text.parse(bad)
        except prom_text.PromFormatError:
            continue
        raise Failure("the strict reader accepted %r" % bad)
    print("escaping: quotes, backslashes, line feeds and non-finite values read back unchanged")


def test_down_and_faults():
    text = metrics.render("a", [], None, {"other": 1}, {})
    f = prom_text.parse(text)
    check(prom_text.value(f, "armd_up", arm="a") == 0, "armd_up is not 0 without a status")
    check(not any(n.startswith("armd_") and n != "armd_up" for n in f),
          "armd series while armd is down: %s" % sorted(f))
    # sentences as daemon/safety.c and daemon/loop/ write them
    cases = {
        "joint j2: following error 0.1203 over the limit 0.1": "following_error",
        "joint j1: position 3.2 outside limits [-2.79, 2.79]": "position_limit",
        "joint j3: velocity 9.1 over the limit 8": "velocity_limit",
        "non-finite desired velocity on j2 (trajectory 7)": "non_finite",
        "non-finite torque on j4 from the computed_torque law (trajectory 0)": "non_finite",
        "3 consecutive failed reads, no state for 21.0 ms (last: timeout: no reply)":
            "read_failures",
        "3 consecutive failed writes over 4.0 ms (last: io: x)": "write_failures",
        "device alert from device 2: servo 2: Bus Watchdog expired": "device_alert",
        "device alert on write: servo 3 overload": "device_alert",
        "control thread stalled: a tick was 230 ms late": "control_stalled",
        "something new": "other",
    }
    for sentence, want in cases.items():
        got = metrics.fault_class(sentence)
        check(got == want, "fault %r classed %s, expected %s" % (sentence, got, want))
    print("armd down: armd_up 0 alone; %d fault sentences classed" % len(cases))


def test_fanout():
    async def run():
        fo = fanout.Fanout(queue_limit=5, batch_limit=8)
        slow = fo.join([])
        fast = fo.join([])
        got = []
        for k in range(40):
            for s in range(3):
                fo.add_sample({"time": k + s / 3, "q": [1], "q_des": [1], "tau": [0]})
            fo.flush()
            got.append(await fast.take(0.1))
        check(all(b"event: telemetry" in g for g in got), "the reading browser missed batches")
        check(len(slow.queue) == 5, "the slow browser holds %d messages (limit 5)" %
              len(slow.queue))
        check(fo.dropped_total() == 35, "dropped %d batches, expected 35" % fo.dropped_total())
        data = await slow.take(0.1)
        check(data.count(b"event: telemetry") == 5 and b'"time":[39.0,' in data,
              "the slow browser did not keep the newest 5 batches")
        fo.add_sample({"time": 50, "q": [1], "q_des": [1], "tau": [0],
                       "wrench": {"force": [1.23456, -2, None], "torque": [0, 0.5, 0]}})
        fo.flush()
        batch = json.loads((await fast.take(0.1)).split(b"data: ", 1)[1])
        check(batch.get("wrench") == {"force": [1.235, -2, None], "torque": [0, 0.5, 0]},
              "the batch's wrench: %s" % batch.get("wrench"))
        for k in range(20):
            fo.add_sample({"time": k})
        check(len(fo.batch) == 8, "the batch grew to %d (limit 8)" % len(fo.batch))
        fo.leave(slow)
        fo.leave(fast)
        check(fo.dropped_total() == 35 and not fo.browsers, "counts lost on leave")
        check(await fast.take(0.05) == b"", "an empty queue did not time out with b''")
    asyncio.run(run())
    print("fanout: a browser that never reads keeps 5 messages, 35 dropped; the other gets all")


def parse_refused(args):
    """armweb's argument parser on ARGS: (whether it refused them, what it printed)."""
    from webview import main
    with tempfile.TemporaryFile("w+") as err:
        saved = sys.stderr
        sys.stderr = err
        try:
            main.parse_args(args)
            refused = False
        except SystemExit:
            refused = True
        finally:
            sys.stderr = saved
        err.seek(0)
        return refused, err.read()


def test_rate_and_args():
    for loop_hz in (60, 61, 70, 89, 90, 100, 119, 250, 1000, 4000):
        hz = armd_link.telemetry_rate(loop_hz)
        d = max(1, int(loop_hz / hz + 0.5))  # armd's rounding (daemon/telemetry.c)
        check(loop_hz / d <= 60 + 1e-9, "loop %g Hz: asks %g Hz, armd gives %g Hz > 60" %
              (loop_hz, hz, loop_hz / d))
        check(loop_hz / d > 30 - 1e-9, "loop %g Hz: only %g Hz" % (loop_hz, loop_hz / d))
    from webview import main, server
    check(main.parse_listen("[::1]:8080") == ("::1", 8080), "IPv6 listen address")
    for bad in ("8080", "host:", "host:99999", "[::1]8080"):
        try:
            main.parse_listen(bad)
        except ValueError:
            continue
        raise Failure("--listen %s accepted" % bad)
    for host, want in (("127.0.0.1", True), ("127.3.4.5", True), ("::1", True),
                       ("localhost", True), ("0.0.0.0", False), ("192.168.1.5", False),
                       ("evil.example", False)):
        check(server.is_loopback_host(host) == want, "is_loopback_host(%s) != %s" % (host, want))
    check(server.host_of("[::1]:8080") == "::1" and server.host_of("localhost:9000") ==
          "localhost", "host_of")
    refused, msg = parse_refused(["--control", "--listen", "0.0.0.0:8080"])
    check(refused and "anyone" in msg, "--control on 0.0.0.0 not refused: %r" % msg)
    a = main.parse_args(["--control", "--listen", "0.0.0.0:8080", "--allow-remote-control"])
    check(a.control and a.host == "0.0.0.0", "--allow-remote-control not taken")
    for bad in ("nan", "inf", "-inf", "0", "0.5", "1e-300", "301", "1e300", "-3"):
        refused, msg = parse_refused(["--stall-timeout=" + bad])
        check(refused and "--stall-timeout" in msg and "1 ... 300 s" in msg,
              "--stall-timeout %s not refused: %r" % (bad, msg))
    check(main.parse_args(["--stall-timeout", "3"]).stall_timeout == 3.0 and
          main.parse_args([]).stall_timeout == server.BROWSER_STALL_S, "--stall-timeout")
    print("telemetry at most 60 Hz for loop rates 60 ... 4000 Hz; --control refused off "
          "loopback; --stall-timeout outside 1 ... 300 s refused")


def test_token_file():
    import grp
    import stat
    group = next((g for g in ("daemon", "nogroup", "adm") if gid_of(g) is not None), None)
    check(group is not None, "no group daemon, nogroup or adm to give the token file")
    gid = grp.getgrnam(group).gr_gid
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "armweb.token")
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("untouched\n")
        os.symlink(victim, path)  # a stale link (or a planted one): replaced, not followed
        old = os.umask(0o077)
        try:
            tf = auth.TokenFile(path, group)
            tf.write()
        finally:
            os.umask(old)
        st = os.lstat(path)
        check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640,
              "token file mode %o, expected a regular file 0640" % st.st_mode)
        check(st.st_gid == gid, "token file group %d, expected %s (%d)" % (st.st_gid, group,
                                                                          gid))
        check(open(victim).read() == "untouched\n", "the token was written through a link")
        check(open(path).read() == tf.token + "\n" and len(tf.token) == 43, "token content")
        check(sorted(os.listdir(d)) == ["armweb.token", "victim"], "files left: %s" %
              os.listdir(d))
        other = auth.TokenFile(path, group)
        check(other.token != tf.token, "two tokens alike")
        other.write()
        tf.remove()  # no longer its file: left to the other armweb
        check(open(path).read() == other.token + "\n", "removed another armweb's token")
        other.remove()
        check(not os.path.exists(path), "the token file stayed after remove()")
        for why, header in (("missing", None), ("missing", ""), ("scheme", "Basic " + tf.token),
                            ("scheme", "Bearer"), ("wrong", "Bearer " + other.token),
                            ("wrong", "Bearer " + tf.token[:-1])):
            msg = tf.check(header)
            check(msg is not None, "Authorization %r accepted" % header)
            check({"missing": path in msg and "Bearer TOKEN" in msg, "scheme": "Bearer TOKEN"
                   in msg, "wrong": "wrong" in msg}[why], "refusal of %r: %r" % (header, msg))
        check(tf.check("Bearer " + tf.token) is None and tf.check("bearer  " + tf.token) is
              None, "the right token refused")
        os.chmod(d, 0o777)
        try:
            auth.TokenFile(os.path.join(d, "t"), group).write()
            raise Failure("a token file written into a world-writable directory")
        except auth.TokenError as e:
            check("writable by every user" in str(e), "refusal: %s" % e)
    print("token file: 0640 under umask 077, group %s, a link replaced not followed, removed "
          "only while its own; Authorization checked" % group)


def gid_of(group):
    import grp
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        return None


def test_host_allowlist():
    from webview import main, server
    a = main.parse_args(["--control", "--listen", "0.0.0.0:8080", "--allow-remote-control",
                         "--allow-host", "arm-host.example", "--socket", "/run/armd/a/armd.sock"])
    check(a.token_file == "/run/armd/a/armweb.token", "default token file %s" % a.token_file)
    names = server.host_names(a.host, a.allow_host)
    for host, local, want in (("localhost", "127.0.0.1", True),
                              ("arm-host.example", "192.0.2.5", True),
                              ("ARM-HOST.example", "192.0.2.5", True),
                              ("192.0.2.5", "192.0.2.5", True),
                              ("192.0.2.5", "::ffff:192.0.2.5", True),
                              ("127.0.0.1", "127.0.0.1", True),
                              ("evil.example", "192.0.2.5", False),
                              ("evil.example", "127.0.0.1", False),
                              ("0.0.0.0", "192.0.2.5", False),
                              ("192.0.2.6", "192.0.2.5", False),
                              ("127.0.0.1", "192.0.2.5", False),
                              ("", "192.0.2.5", False),
                              ("arm-host.example.evil.example", "192.0.2.5", False)):
        check(server.host_allowed(host, names, local) == want,
              "Host %r on %s: %s, expected %s" % (host, local, not want, want))
    names = server.host_names("192.0.2.5")
    check(server.host_allowed("192.0.2.5", names, None) and
          not server.host_allowed("evil.example", names, None), "--listen address as a name")
    print("Host allowlist: loopback names, --listen address, --allow-host, the local address")


def png_encode(width, height, bpp, pixels, filters):
    """A PNG of pixels (rows of bytes), scanline y filtered with filters[y % len(filters)] (the
    forward filters of the PNG specification, section 9.2), for the decoder's round trip."""
    out, prev = [], bytes(width * bpp)
    for y, row in enumerate(pixels):
        kind = filters[y % len(filters)]
        line = bytearray([kind])
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            pred = (0, a, b, (a + b) >> 1, png_colours._paeth(a, b, c))[kind]
            line.append((x - pred) & 255)
        out.append(bytes(line))
        prev = row

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body)))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6 if bpp == 4 else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
            chunk(b"IDAT", zlib.compress(b"".join(out))) + chunk(b"IEND", b""))


def test_png_reader():
    rnd = random.Random(15)
    for bpp in (3, 4):
        w, h = 37, 25
        pixels = [bytes(rnd.randrange(256) for _ in range(w * bpp)) for _ in range(h)]
        png = png_encode(w, h, bpp, pixels, [0, 1, 2, 3, 4])
        check(png_colours.decode(png)[3] == pixels, "PNG round trip failed (%d bytes per "
              "pixel, all five filters)" % bpp)
    blank = png_encode(20, 10, 4, [bytes([255, 255, 255, 255] * 20)] * 10, [4, 1])
    check(png_colours.distinct_colours(blank) == 1, "a blank PNG has more than one colour")
    print("PNG reader: random images through all five filters read back exactly")


def test_layout():
    want = {1: 1, 2: 2, 3: 3, 4: 2, 5: 3, 6: 3, 7: 4}
    got = {n: layout.joint_columns(n) for n in want}
    check(got == want, "columns for 1 ... 7 joints: %s, expected %s" % (got, want))
    for n in range(2, 65):
        cols = layout.joint_columns(n)
        rows = [min(cols, n - k) for k in range(0, n, cols)]  # the grid fills row by row
        check(1 <= cols <= n and rows[-1] > 1,
              "%d joints in %d columns: rows of %s, a lone card" % (n, cols, rows))
    print("layout: columns for 1 ... 7 joints %s; no lone card up to 64" %
          [want[n] for n in sorted(want)])


class FakeFanout:
    """What ArmdLink publishes, in order."""

    def __init__(self):
        self.published = []
        self.samples = 0

    def publish(self, kind, data):
        self.published.append((kind, data))

    def add_sample(self, params):
        self.samples += 1


def test_event_history():
    from webview import server
    fo = FakeFanout()
    link = armd_link.ArmdLink("/nonexistent.sock", fo)
    link._take({"method": "fault", "params": {"time": 1.0, "reason": "j2: following error "
                                                                      "0.2 rad", "state": "fault"}})
    for k in range(25):
        link._take({"method": "state", "params": {"time": 2.0 + k, "state": "estop"}})
        link._take({"method": "telemetry", "params": {"time": [2.0 + k]}})
    link._take({"method": "trajectory_done", "params": None})
    events = list(link.events)
    check(len(events) == armd_link.EVENT_LOG == 20, "%d events kept" % len(events))
    check(events[-1]["method"] == "trajectory_done" and events[-2]["params"]["time"] == 26.0 and
          all(e["method"] != "telemetry" for e in events), "events kept: %s" % events[-3:])
    check(all(isinstance(e["params"]["seen"], float) for e in events), "an event without seen")
    check(link.last_fault["reason"].startswith("j2:"), "last fault %s" % link.last_fault)
    check(fo.samples == 25 and [k for k, _ in fo.published].count("armd") == 27,
          "published %d armd events, %d samples" % (len(fo.published), fo.samples))
    srv = server.Server(link, fanout.Fanout(), os.path.join(sys.argv[1], "static"),
                        "/nonexistent", False, "127.0.0.1")
    hist = [m for m in srv.snapshot() if m.startswith(b"event: history\n")]
    check(len(hist) == 1 and b'"trajectory_done"' in hist[0] and b"following error" in hist[0],
          "the snapshot's history: %r" % hist)
    print("events: the last 20 kept with when armweb saw them, the last fault beside them, "
          "both in a new browser's snapshot")


class ToolLink:
    """What the server asks of armd for the tool commands: every request kept, tool.grasp
    answered grasped, a width of 0 refused as armd would."""

    def __init__(self):
        self.sent = []

    async def call(self, method, params=None):
        self.sent.append(("call", method, params))
        return {"result": {"state": "holding"}}

    async def call_apart(self, method, params=None):
        self.sent.append(("apart", method, params))
        if params and params.get("width") == 0:
            return {"error": {"code": "invalid_params", "message": "params.width: 0 m is "
                              "outside the stroke [0.02, 0.075] m"}}
        return {"result": {"outcome": "grasped", "opening": 0.0201, "force": 9.9}}

    async def poll_status(self):
        pass


def check_call_apart():
    """ArmdLink.call_apart against a fake armd: one request on a connection of its own, the
    lines before its reply passed over, the connection closed after it; a silent armd is an
    ArmdError naming the method, no armd one naming the socket."""
    tmp = tempfile.mkdtemp(prefix="armweb-apart-")
    path = os.path.join(tmp, "armd.sock")
    seen = []

    async def serve(reader, writer):
        req = json.loads(await reader.readline())
        seen.append(req)
        if req["method"] == "tool.grasp":
            writer.write(b'{"method":"telemetry","params":{}}\n{"id":1,"result":'
                         b'{"outcome":"no_object","opening":0.0195,"force":0.4}}\n')
            await writer.drain()
        seen.append(await reader.read())  # b"": armweb closed the connection (or gave up)
        writer.close()

    async def main():
        srv = await asyncio.start_unix_server(serve, path)
        link = armd_link.ArmdLink(path, FakeFanout())
        reply = await link.call_apart("tool.grasp", {"width": 0.02})
        check(reply == {"id": 1, "result": {"outcome": "no_object", "opening": 0.0195,
                                            "force": 0.4}}, "call_apart's reply %r" % reply)
        try:
            await link.call_apart("tool.move", {"opening": 0.03}, timeout=0.3)
            check(False, "a silent armd gave no ArmdError")
        except armd_link.ArmdError as e:
            check("tool.move" in str(e), "the error for a silent armd: %s" % e)
        for _ in range(200):  # the fake armd's read of armweb's close
            if len(seen) == 4:
                break
            await asyncio.sleep(0.01)
        srv.close()
        await srv.wait_closed()
        try:
            await armd_link.ArmdLink(path + ".none", FakeFanout()).call_apart("tool.stop")
            check(False, "no armd gave no ArmdError")
        except armd_link.ArmdError as e:
            check(path + ".none" in str(e), "the error for no armd: %s" % e)

    asyncio.run(main())
    shutil.rmtree(tmp, ignore_errors=True)
    check(seen == [{"id": 1, "method": "tool.grasp", "params": {"width": 0.02}}, b"",
                   {"id": 1, "method": "tool.move", "params": {"opening": 0.03}}, b""],
          "what the fake armd saw: %r" % seen)


def test_tool_commands():
    from aiohttp.test_utils import TestClient, TestServer
    from webview import server
    tmp = tempfile.mkdtemp(prefix="armweb-tool-")
    token = auth.TokenFile(os.path.join(tmp, "armweb.token"))
    static = os.path.join(sys.argv[1], "static")
    page = {"X-Armweb": "1", "Authorization": "Bearer " + token.token}

    async def post(srv, path, body, headers):
        async with TestClient(TestServer(srv.app)) as client:
            r = await client.post(path, data=body, headers=headers)
            json_reply = r.content_type == "application/json"
            return r.status, await r.json() if json_reply else await r.text()

    def run_post(control, path, body, headers):
        link = ToolLink()
        srv = server.Server(link, fanout.Fanout(), static, "/nonexistent", control,
                            "127.0.0.1", token=token if control else None)
        status, reply = asyncio.run(post(srv, path, body, headers))
        return status, reply, link.sent

    grasp = '{"width": 0.02, "force": 10, "epsilon_outer": 0.055}'
    for why, control, headers, want in (
            ("no token", True, {"X-Armweb": "1"}, 401),
            ("a wrong token", True, {"X-Armweb": "1", "Authorization": "Bearer " + "x" * 43}, 401),
            ("no X-Armweb", True, {"Authorization": page["Authorization"]}, 403),
            ("read-only", False, page, 403)):
        status, reply, sent = run_post(control, "/api/tool.grasp", grasp, headers)
        check(status == want and sent == [], "tool.grasp with %s: HTTP %d %r, forwarded %s" %
              (why, status, reply, sent))
    status, reply, sent = run_post(True, "/api/tool.grasp", grasp, page)
    check(status == 200 and reply["result"]["outcome"] == "grasped" and
          sent == [("apart", "tool.grasp", {"width": 0.02, "force": 10, "epsilon_outer": 0.055})],
          "tool.grasp with the token: HTTP %d %r, forwarded %s" % (status, reply, sent))
    status, reply, sent = run_post(True, "/api/tool.release", "", page)
    check(status == 200 and sent == [("apart", "tool.release", None)],
          "tool.release without a body: HTTP %d, forwarded %s" % (status, sent))
    status, reply, sent = run_post(True, "/api/tool.grasp", '{"width": 0}', page)
    check(status == 422 and reply["error"]["code"] == "invalid_params",
          "armd's refusal passed through: HTTP %d %r" % (status, reply))
    for path, body in (("/api/tool.release", '{"width": 0.02}'),
                       ("/api/tool.stop", '{"speed": 0.1}'),
                       ("/api/tool.move", '{"opening": "0.03"}'),
                       ("/api/tool.move", '{"opening": true}'),
                       ("/api/tool.grasp", '[0.02]'),
                       ("/api/tool.grasp", '{"width": 0.02')):
        status, reply, sent = run_post(True, path, body, page)
        check(status == 400 and sent == [], "%s %s: HTTP %d %r, forwarded %s" %
              (path, body, status, reply, sent))
    status, _, sent = run_post(True, "/api/tool.calibrate", "{}", page)
    check(status in (404, 405) and sent == [], "a tool method outside the allowlist: HTTP %d, "
          "forwarded %s" % (status, sent))
    check(set(server.TOOL_COMMANDS) == {"tool.move", "tool.grasp", "tool.release", "tool.stop"},
          "the tool allowlist: %s" % sorted(server.TOOL_COMMANDS))
    shutil.rmtree(tmp, ignore_errors=True)

    fo = fanout.Fanout()
    b = fo.join([])
    fo.add_sample({"time": 1.0, "q": [0.0], "q_des": [0.0], "tau": [0.0],
                   "tool": {"opening": 0.0201234567, "speed": 0.0, "force": 9.87654}})
    fo.add_sample({"time": 1.01, "q": [0.0], "q_des": [0.0], "tau": [0.0],
                   "tool": {"opening": 0.02, "speed": 0.0, "force": None}})
    fo.flush()
    batch = asyncio.run(b.take(0))
    check(b'"tool_opening":[0.020123,0.02]' in batch and b'"tool_force":[9.877,null]' in batch,
          "the telemetry batch's tool: %r" % batch)
    link = armd_link.ArmdLink("/nonexistent.sock", FakeFanout())
    link.info = {"name": "omx", "joints": ["j1", "j2", "j3", "j4"], "rate_hz": 400,
                 "tool": {"name": "gripper", "lower": 0.02, "upper": 0.075}}
    ev = link.info_event()
    check(ev["tool"]["name"] == "gripper" and ev["columns"] == layout.joint_columns(5) == 3,
          "info event with a tool: %s" % ev)
    link.info["tool"] = None
    check(link.info_event()["tool"] is None and link.info_event()["columns"] == 2,
          "info event without a tool: %s" % link.info_event())
    check_call_apart()
    print("tool commands: 401/403 and nothing forwarded without the token, the page's mark or "
          "--control; forwarded apart with their params, armd's answer and refusal passed "
          "through; other params, non-numbers and no object: 400; the batch and info carry "
          "the tool")


def main_():
    try:
        test_layout()
        test_tool_commands()
        test_event_history()
        test_png_reader()
        test_exposition()
        test_escaping()
        test_down_and_faults()
        test_fanout()
        test_rate_and_args()
        test_token_file()
        test_host_allowlist()
    except Failure as e:
        print("FAIL:", e)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main_()
