"""server.py — armweb's HTTP side (aiohttp): the page, its event stream, /metrics, and with
--control the commands.

Routes:
  GET  /                 the page (static/index.html); /static/* its script and style
  GET  /js/chart.js      Chart.js from Debian's libjs-chart.js (never a copy in armd's tree)
  GET  /events           server-sent events: config, link, info, gains, status, history (armd's
                         last events, to a new browser), telemetry, armd (each event as it comes)
  GET  /api/state        the same state as one JSON object (link, info, status, gains, faults,
                         events)
  GET  /metrics          Prometheus text format (metrics.py)
  POST /api/enable, /api/disable, /api/estop, /api/reset, /api/gains
                         only with --control, else 403
  POST /api/tool.move, /api/tool.grasp, /api/tool.release, /api/tool.stop
                         the same; the body is the method's params (TOOL_COMMANDS), forwarded
                         on a connection of their own (ArmdLink.call_apart): armd answers a
                         tool command when the fingers are done
  POST /api/token        only with --control: 200 when the request carries the right token

A command is taken only from armweb's own page and only with armweb's token (auth.py): it must
carry `Authorization: Bearer TOKEN` (401 without it or with a wrong one), the header
`X-Armweb: 1` (a form or a script on another site cannot send it without a CORS preflight, which
armweb never grants), an Origin, when the browser sends one, of this very host, no
`Sec-Fetch-Site` but same-origin, and a Host that armweb answers to: a loopback name, the
--listen address, an --allow-host name, or the IP address the request came in on (a
DNS-rebinding page has its own host name). The reply is armd's own JSON: {"result"} (200) or
{"error": {code, message}} (422 when armd refused, 503/504 when armd is unreachable or silent,
400/401/403 for armweb's own refusals). POST /api/token only checks the token (the page, when
the user enters it).
"""
import asyncio
import ipaddress
import json
import logging
import os
import socket

from aiohttp import web

from webview import metrics
from webview.armd_link import ArmdError
from webview.fanout import sse

log = logging.getLogger("armweb")

KEEPALIVE_S = 10.0      # an SSE comment when nothing else went out, to find closed browsers
BROWSER_STALL_S = 10.0  # default: a browser whose write made no progress this long is closed
# The kernel's send buffer of an event stream [bytes]: Linux would grow it up to 4 MiB
# (net.ipv4.tcp_wmem) for a browser that reads nothing, hours of telemetry (~13 kB/s), so that
# its stall would not show for minutes; 32 KiB (the kernel doubles it) is some 5 s of stream.
STREAM_SNDBUF = 32 * 1024
COMMANDS = ("enable", "disable", "estop", "reset")
GAINS_KEYS = ("kp", "kd", "ki")
# The tool methods the page may send (armd-api(7)) and the params each may carry, all numbers;
# the page sends tool.grasp (Close) and tool.release (Open).
TOOL_COMMANDS = {
    "tool.move": ("opening", "speed"),
    "tool.grasp": ("width", "force", "speed", "epsilon_inner", "epsilon_outer"),
    "tool.release": ("speed",),
    "tool.stop": (),
}
LOOPBACK_NAMES = ("localhost", "localhost.", "ip6-localhost")
WILDCARDS = ("0.0.0.0", "::", "")

SECURITY_HEADERS = {
    # the page is armweb's own files only: no inline script, no other origin, no framing (a
    # framed page could be tricked into a click on estop or enable)
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def is_loopback_host(host):
    """True for a loopback IP address (127.0.0.0/8, ::1) or the name localhost."""
    host = host.strip("[]")
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_of(header):
    """The host name of a Host header ("[::1]:8080" -> "::1", "localhost:9000" -> "localhost")."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def same_ip(a, b):
    """a and b are the same IP address (an IPv4-mapped IPv6 address as its IPv4 one); False
    when either is not an address."""
    try:
        x, y = ipaddress.ip_address(a.strip("[]")), ipaddress.ip_address(b.strip("[]"))
    except ValueError:
        return False
    x = getattr(x, "ipv4_mapped", None) or x
    y = getattr(y, "ipv4_mapped", None) or y
    return x == y


def host_names(listen_host, allow_hosts=()):
    """The host names (lower case) a command's Host may carry besides the IP address it came in
    on: the loopback names, the --listen address unless a wildcard, and the --allow-host ones."""
    names = set(LOOPBACK_NAMES)
    if listen_host.strip("[]") not in WILDCARDS:
        names.add(listen_host.strip("[]").lower())
    names.update(h.strip("[]").lower() for h in allow_hosts)
    return names


def host_allowed(host, names, local_ip):
    """Host (the header's host part) names armweb: one of names, a loopback address when the
    request came in on loopback, or the local address local_ip the request came in on."""
    h = host.strip("[]").lower()
    if h in names or (local_ip is not None and same_ip(h, local_ip)):
        return True
    return local_ip is not None and is_loopback_host(local_ip) and is_loopback_host(h)


def error_json(status, code, message, headers=None):
    return web.json_response({"error": {"code": code, "message": message}}, status=status,
                             headers=dict(SECURITY_HEADERS, **(headers or {})))


class Server:
    """The aiohttp application around one ArmdLink and one Fanout."""

    def __init__(self, link, fanout, static_dir, chartjs, control, listen_host,
                 stall_s=BROWSER_STALL_S, token=None, allow_hosts=()):
        self.link = link
        self.token = token  # auth.TokenFile: every command must carry it
        self.stall_s = stall_s
        self.fanout = fanout
        self.static_dir = static_dir
        self.chartjs = chartjs
        self.control = control
        self.host_names = host_names(listen_host, allow_hosts)
        if control and token is None:
            raise ValueError("--control needs a token")
        self.app = web.Application(client_max_size=64 * 1024,
                                   middlewares=[self.security_headers])
        r = self.app.router
        r.add_get("/", self.index)
        r.add_get("/js/chart.js", self.chart_js)
        r.add_get("/events", self.events)
        r.add_get("/api/state", self.state)
        r.add_get("/metrics", self.metrics)
        for c in COMMANDS:
            r.add_post("/api/" + c, self.command)
        r.add_post("/api/gains", self.gains_set)
        for m in TOOL_COMMANDS:
            r.add_post("/api/" + m, self.tool_command)
        r.add_post("/api/token", self.token_check)
        r.add_static("/static/", static_dir, follow_symlinks=False)

    @web.middleware
    async def security_headers(self, request, handler):
        resp = await handler(request)
        for k, v in SECURITY_HEADERS.items():
            resp.headers.setdefault(k, v)
        return resp

    # ------------------------------------------------------------------------- reading
    async def index(self, request):
        return web.FileResponse(os.path.join(self.static_dir, "index.html"))

    async def chart_js(self, request):
        if not os.path.isfile(self.chartjs):
            return web.Response(status=404, text="armweb: %s is missing: install the Debian "
                                "package libjs-chart.js\n" % self.chartjs)
        return web.FileResponse(self.chartjs, headers={"Content-Type": "text/javascript"})

    def snapshot(self):
        """The state a new browser starts from, as the events it would have seen."""
        k = self.link
        config = {"control": self.control}
        if self.control:
            config["token_file"] = self.token.path
        msgs = [sse("config", config), sse("link", k.link_event())]
        if k.info:
            msgs.append(sse("info", k.info_event()))
        if k.gains:
            msgs.append(sse("gains", k.gains))
        if k.fresh_status():
            msgs.append(sse("status", k.status))
        msgs.append(sse("history", {"events": list(k.events), "last_fault": k.last_fault}))
        return msgs

    async def events(self, request):
        """The event stream of one browser (see fanout.py for what bounds it)."""
        if self.fanout.full():
            return error_json(503, "too_many_browsers", "armweb serves at most %d browsers at "
                              "once" % self.fanout.max_browsers)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "X-Accel-Buffering": "no"})
        sock = request.transport.get_extra_info("socket") if request.transport else None
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, STREAM_SNDBUF)
        await resp.prepare(request)
        b = self.fanout.join(self.snapshot())
        try:
            await resp.write(b"retry: 2000\n\n")
            while True:
                data = await b.take(KEEPALIVE_S)
                if data is None:
                    break  # armweb is stopping
                await asyncio.wait_for(resp.write(data or b": keepalive\n\n"), self.stall_s)
        except asyncio.TimeoutError:
            self.fanout.dropped_browsers += 1
            log.info("closed a browser (%s) that read nothing for %g s", request.remote,
                     self.stall_s)
            if request.transport is not None:
                request.transport.abort()
        except ConnectionError:
            pass  # the browser went away
        finally:
            self.fanout.leave(b)
        return resp

    async def state(self, request):
        k = self.link
        return web.json_response({
            "link": k.link_event(), "info": k.info_event() if k.info else None,
            "status": k.fresh_status(), "gains": k.gains, "faults": k.faults,
            "last_fault": k.last_fault, "events": list(k.events), "control": self.control,
            "browsers": len(self.fanout.browsers)})

    async def metrics(self, request):
        k = self.link
        web_counters = {"browsers": len(self.fanout.browsers),
                        "dropped_batches": self.fanout.dropped_total(),
                        "dropped_browsers": self.fanout.dropped_browsers,
                        "connects": k.connects}
        text = metrics.render(k.arm_name(), k.joints(), k.fresh_status(), k.faults, web_counters)
        return web.Response(body=text.encode(),
                            headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})

    # ------------------------------------------------------------------------ commanding
    def refuse_command(self, request):
        """Why this request may not command the arm, as an error response, or None. Nothing
        but these checks runs before the refusal."""
        if not self.control:
            return error_json(403, "read_only", "armweb runs read-only: start it with "
                              "--control to command the arm from the page")
        host = request.headers.get("Host", "")
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        local_ip = sockname[0] if sockname else None
        if not host_allowed(host_of(host), self.host_names, local_ip):
            return error_json(403, "forbidden", "Host %r is not a name of this armweb (a "
                              "loopback name, the --listen address, an --allow-host name, or "
                              "the address the request came to)" % host)
        origin = request.headers.get("Origin")
        if origin is not None and origin not in ("http://" + host, "https://" + host):
            return error_json(403, "forbidden", "a command from another site (Origin %s)" %
                              origin)
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None and site != "same-origin":
            return error_json(403, "forbidden", "a command from another site "
                              "(Sec-Fetch-Site %s)" % site)
        if request.headers.get("X-Armweb") != "1":
            return error_json(403, "forbidden", "commands are taken from armweb's page only "
                              "(header X-Armweb: 1 missing)")
        why = self.token.check(request.headers.get("Authorization"))
        if why is not None:
            log.info("refused a command without the right token (%s)", request.remote)
            return error_json(401, "unauthorized", why,
                              {"WWW-Authenticate": 'Bearer realm="armweb"'})
        return None

    async def token_check(self, request):
        """200 when the request could command the arm (token and page marks), else why not."""
        refusal = self.refuse_command(request)
        if refusal is not None:
            return refusal
        return web.json_response({"result": {"token": "accepted"}})

    async def forward(self, method, params=None, apart=False):
        """armd's reply to one request, as the HTTP response; apart: on a connection of its own
        (a tool command, answered when the fingers are done, would hold up the link's status
        polls)."""
        try:
            if apart:
                reply = await self.link.call_apart(method, params)
            else:
                reply = await self.link.call(method, params)
        except ArmdError as e:
            status = 504 if "did not answer" in str(e) else 503
            return error_json(status, "armd_unavailable", str(e))
        if "result" in reply:
            return web.json_response({"result": reply["result"]})
        return web.json_response({"error": reply.get("error")}, status=422)

    async def command(self, request):
        refusal = self.refuse_command(request)
        if refusal is not None:
            return refusal
        method = request.path.rsplit("/", 1)[1]
        log.info("%s from the page (%s)", method, request.remote)
        resp = await self.forward(method)
        try:  # every browser sees the effect at once, not at the next poll
            await self.link.poll_status()
        except ArmdError:
            pass
        return resp

    async def gains_set(self, request):
        refusal = self.refuse_command(request)
        if refusal is not None:
            return refusal
        try:
            params = json.loads(await request.text())
        except ValueError as e:
            return error_json(400, "parse_error", "the body is not JSON: %s" % e)
        if not isinstance(params, dict) or not params:
            return error_json(400, "invalid_params", "expected an object with kp, kd and/or ki")
        log.info("gains.set from the page (%s): %s", request.remote,
                 json.dumps(params)[:200])
        resp = await self.forward("gains.set", params)
        if resp.status == 200:
            try:
                await self.link.refresh_gains()
            except ArmdError:
                pass
        return resp

    async def tool_command(self, request):
        """A tool method with its params (the body: an object of TOOL_COMMANDS' numbers)."""
        refusal = self.refuse_command(request)
        if refusal is not None:
            return refusal
        method = request.path.rsplit("/", 1)[1]
        try:
            params = json.loads(await request.text() or "{}")
        except ValueError as e:
            return error_json(400, "parse_error", "the body is not JSON: %s" % e)
        allowed = TOOL_COMMANDS[method]
        if not isinstance(params, dict) or any(
                k not in allowed or isinstance(v, bool) or not isinstance(v, (int, float))
                for k, v in params.items()):
            return error_json(400, "invalid_params", "%s takes an object of numbers: %s" %
                              (method, ", ".join(allowed) or "nothing"))
        log.info("%s from the page (%s): %s", method, request.remote, json.dumps(params))
        resp = await self.forward(method, params or None, apart=True)
        try:  # every browser sees the tool's new state at once
            await self.link.poll_status()
        except ArmdError:
            pass
        return resp
