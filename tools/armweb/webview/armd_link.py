"""armd_link.py — armweb's one connection to armd's socket (armd-api(7)), an ordinary
client like armctl, kept up for as long as armweb runs.

On each connection: `info`, `subscribe` at most 60 Hz (a whole decimation of the loop rate),
`gains.get`, then `status` every 0.5 s and `gains.get` every 2 s. It reads armd's output all the
time and as fast as it comes, whatever the browsers do (telemetry goes to the fan-out without
waiting), so armd never finds armweb "not reading". When the connection drops (armd restarted,
stopped, dropped armweb) every pending request fails, the state is forgotten, and the link tries
again every second. Runs on armweb's asyncio loop; nothing here blocks.

A tool command, which armd answers only when the fingers are done (seconds), goes on a short
connection of its own (call_apart): on the one connection it would hold up the polls and the
page's other commands, E-STOP among them, until then.
"""
import asyncio
import collections
import json
import logging
import math
import time

from webview import layout, metrics

log = logging.getLogger("armweb")

MAX_TELEMETRY_HZ = 60.0
STATUS_PERIOD_S = 0.5
GAINS_EVERY = 4          # status polls per gains.get (2 s)
CALL_TIMEOUT_S = 3.0     # armd answers within 1 s or with its own `timeout` error
APART_TIMEOUT_S = 60.0   # a tool command: armd answers `timeout` after [tool] timeout (5 s)
RETRY_S = 1.0
LINE_LIMIT = 1 << 20     # bytes; armd's longest line (status of 64 joints) is far shorter
EVENT_LOG = 20           # armd's last events kept for a browser that opens the page later


class ArmdError(Exception):
    """A request that got no reply: armd unreachable, connection lost, or no answer in time."""


def telemetry_rate(loop_hz, limit=MAX_TELEMETRY_HZ):
    """The subscription rate [Hz]: the loop rate divided by the smallest whole number that
    brings it to at most `limit`, so that armd's own rounding (to a whole decimation) cannot
    round it above the limit."""
    d = max(1, math.ceil(loop_hz / limit - 1e-9))
    return loop_hz / d


class ArmdLink:
    """The connection, what armd last told it, and the fault count by reason class.

    Public state (read by the web server): connected, info, status, status_at (monotonic s),
    gains, last_fault (params of the last fault event), events (armd's last EVENT_LOG events
    but telemetry, oldest first, as {"method", "params"}; every params with `seen`: when armweb
    got it, Unix time [s]), faults {class: count}, connects, telemetry_hz, link_message (why it
    is not connected)."""

    def __init__(self, path, fanout, name_override=None, max_hz=MAX_TELEMETRY_HZ):
        self.path = path
        self.fanout = fanout
        self.name_override = name_override
        self.max_hz = max_hz
        self.reader = self.writer = None
        self.pending = {}
        self.next_id = 0
        self.connected = False
        self.info = None
        self.status = None
        self.status_at = 0.0
        self.gains = None
        self.last_fault = None
        self.events = collections.deque(maxlen=EVENT_LOG)
        self.faults = {}
        self.connects = 0
        self.telemetry_hz = None
        self.link_message = "not connected yet"

    # ------------------------------------------------------------------ what the server reads
    def arm_name(self):
        if self.name_override:
            return self.name_override
        return self.info["name"] if self.info else "unknown"

    def joints(self):
        return list(self.info["joints"]) if self.info else []

    def fresh_status(self):
        """The last status while connected and at most 2 s old, else None."""
        if self.connected and self.status is not None and \
                time.monotonic() - self.status_at < 4 * STATUS_PERIOD_S:
            return self.status
        return None

    def link_event(self):
        return {"connected": self.connected, "message": self.link_message,
                "socket": self.path, "telemetry_hz": self.telemetry_hz}

    def info_event(self):
        """What the page builds its cards from: the joints and the tool (info's, None without
        a [tool] section), which has a card among them."""
        i = self.info or {}
        tool = i.get("tool") if isinstance(i.get("tool"), dict) else None
        return {"arm": self.arm_name(), "joints": self.joints(), "types": i.get("types"),
                "rate_hz": i.get("rate_hz"), "version": i.get("version"),
                "controller": i.get("controller"), "limits": i.get("limits"), "tool": tool,
                "columns": layout.joint_columns(len(self.joints()) + (1 if tool else 0))}

    # ------------------------------------------------------------------------- requests
    async def call(self, method, params=None, timeout=CALL_TIMEOUT_S):
        """Sends one request; returns armd's whole reply object ({"result"} or {"error"}).
        Raises ArmdError when there is no connection or no reply."""
        if not self.connected:
            raise ArmdError("not connected to armd (%s)" % self.link_message)
        self.next_id += 1
        rid = self.next_id
        req = {"id": rid, "method": method}
        if params is not None:
            req["params"] = params
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        try:
            self.writer.write((json.dumps(req) + "\n").encode())
            await asyncio.wait_for(fut, timeout)
            return fut.result()
        except asyncio.TimeoutError:
            raise ArmdError("armd did not answer %s within %g s" % (method, timeout))
        except (ConnectionError, OSError) as e:
            raise ArmdError("lost the connection to armd: %s" % e)
        finally:
            self.pending.pop(rid, None)

    async def call_apart(self, method, params=None, timeout=APART_TIMEOUT_S):
        """As call, on a new connection of its own, closed after the reply: for a request armd
        answers late (a tool command). Raises ArmdError when armd is unreachable or silent."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(self.path, limit=LINE_LIMIT), CALL_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as e:
            raise ArmdError("cannot connect to armd at %s: %s" %
                            (self.path, getattr(e, "strerror", None) or str(e) or "timed out"))
        req = {"id": 1, "method": method}
        if params is not None:
            req["params"] = params
        try:
            writer.write((json.dumps(req) + "\n").encode())
            return await asyncio.wait_for(self._reply_to(reader, 1), timeout)
        except asyncio.TimeoutError:
            raise ArmdError("armd did not answer %s within %g s" % (method, timeout))
        except (ConnectionError, OSError, ValueError, asyncio.LimitOverrunError) as e:
            raise ArmdError("lost the connection to armd: %s" % e)
        finally:
            writer.close()

    @staticmethod
    async def _reply_to(reader, rid):
        """The reply with id rid read from reader (the lines before it are not asked for)."""
        while True:
            line = await reader.readline()
            if not line:
                raise ConnectionError("armd closed the connection")
            msg = json.loads(line)
            if isinstance(msg, dict) and msg.get("id") == rid and "method" not in msg:
                return msg

    async def result(self, method, params=None):
        """The result of a request that must succeed (else ArmdError naming armd's error)."""
        reply = await self.call(method, params)
        if "result" not in reply:
            err = reply.get("error") or {}
            raise ArmdError("%s: %s: %s" % (method, err.get("code"), err.get("message")))
        return reply["result"]

    # ------------------------------------------------------------------ incoming messages
    def _take(self, msg):
        """One message from armd: a reply to a pending request, or a notification."""
        if not isinstance(msg, dict):
            return
        if "method" not in msg:
            fut = self.pending.get(msg.get("id"))
            if fut is not None and not fut.done():
                fut.set_result(msg)
            return
        method, params = msg.get("method"), msg.get("params")
        if not isinstance(params, dict):
            params = {}
        if method == "telemetry":
            self.fanout.add_sample(params)
            return
        params = dict(params, seen=time.time())  # when armweb saw it (Unix time, s)
        if method == "fault":
            cls = metrics.fault_class(params.get("reason"))
            self.faults[cls] = self.faults.get(cls, 0) + 1
            self.last_fault = params
        event = {"method": method, "params": params}
        self.events.append(event)
        self.fanout.publish("armd", event)

    async def _read_loop(self):
        while True:
            line = await self.reader.readline()
            if not line:
                raise ConnectionError("armd closed the connection")
            try:
                msg = json.loads(line)
            except ValueError:
                log.warning("armd sent a line that is not JSON: %r", line[:80])
                continue
            self._take(msg)

    async def _poll_loop(self):
        k = 0
        while True:
            await self.poll_status()
            k += 1
            if k % GAINS_EVERY == 0:
                await self.refresh_gains()
            await asyncio.sleep(STATUS_PERIOD_S)

    async def poll_status(self):
        """status, kept and sent to every browser."""
        self.status = await self.result("status")
        self.status_at = time.monotonic()
        self.fanout.publish("status", self.status)

    async def refresh_gains(self):
        """gains.get; the browsers hear of it when the gains changed."""
        gains = await self.result("gains.get")
        if gains != self.gains:
            self.gains = gains
            self.fanout.publish("gains", gains)

    async def _session(self):
        """One connection's life: handshake, then reading and polling until either fails."""
        self.reader, self.writer = await asyncio.open_unix_connection(self.path, limit=LINE_LIMIT)
        self.connected = True
        self.connects += 1
        reader_task = asyncio.ensure_future(self._read_loop())
        poll_task = None
        try:
            self.info = await self.result("info")
            hz = telemetry_rate(float(self.info["rate_hz"]), self.max_hz)
            self.telemetry_hz = (await self.result("subscribe", {"rate_hz": hz}))["rate_hz"]
            self.gains = await self.result("gains.get")
            self.link_message = "connected"
            log.info("connected to armd at %s: arm %s, %d joints, telemetry at %.1f Hz",
                     self.path, self.arm_name(), len(self.joints()), self.telemetry_hz)
            self.fanout.publish("link", self.link_event())
            self.fanout.publish("info", self.info_event())
            self.fanout.publish("gains", self.gains)
            poll_task = asyncio.ensure_future(self._poll_loop())
            done, _ = await asyncio.wait({reader_task, poll_task},
                                         return_when=asyncio.FIRST_EXCEPTION)
            for t in done:
                t.result()  # raises what ended the session
        finally:
            for t in (reader_task, poll_task):
                if t is None:
                    continue
                if t.done() and not t.cancelled():
                    t.exception()  # retrieved: the session's end is reported by run()
                t.cancel()
            self.writer.close()

    async def run(self):
        """Connects, and reconnects for ever."""
        while True:
            try:
                await self._session()
            except OSError as e:
                if not self.connected and e.strerror:  # the connect itself failed
                    self._lost("cannot connect: %s (is armd running?)" % e.strerror)
                else:
                    self._lost(str(e) or type(e).__name__)
            except (ConnectionError, ArmdError, ValueError, KeyError,
                    asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
                self._lost(str(e) or type(e).__name__)
            await asyncio.sleep(RETRY_S)

    def _lost(self, why):
        """Forgets the connection: pending requests fail, the status is no longer shown."""
        changed = self.connected or why != self.link_message
        self.connected = False
        self.status = None
        self.link_message = why
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError(why))
        self.pending.clear()
        if changed:  # logged once per outage, not every second
            log.warning("armd at %s: %s; retrying every %g s", self.path, why, RETRY_S)
            self.fanout.publish("link", self.link_event())
