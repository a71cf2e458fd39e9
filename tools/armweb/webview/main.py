"""main.py — armweb's command line: options, checks, and the asyncio loop that runs the armd
link, the fan-out and the HTTP server together until SIGTERM or SIGINT."""
import argparse
import asyncio
import logging
import os
import signal
import sys

from aiohttp import web

from webview import auth
from webview.armd_link import MAX_TELEMETRY_HZ, ArmdLink
from webview.fanout import Fanout
from webview.server import BROWSER_STALL_S, Server, is_loopback_host

CHARTJS = "/usr/share/javascript/chart.js/chart.min.js"  # Debian's libjs-chart.js

log = logging.getLogger("armweb")


def default_socket():
    """As armctl: $ARMD_SOCKET, else the single-arm unit's socket."""
    return os.environ.get("ARMD_SOCKET") or "/run/armd/armd.sock"


def parse_listen(text):
    """HOST:PORT (an IPv6 address in brackets: [::1]:8080) -> (host, port); ValueError with a
    sentence otherwise."""
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ValueError("--listen %s: expected [IPV6]:PORT" % text)
        port = rest[1:]
    else:
        host, sep, port = text.rpartition(":")
        if not sep or not host:
            raise ValueError("--listen %s: expected HOST:PORT, e.g. 127.0.0.1:8080" % text)
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError("--listen %s: the port must be 1 ... 65535" % text)
    return host, int(port)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="armweb", description="Live web view and Prometheus metrics of one armd.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-s", "--socket", help="armd's socket (default: $ARMD_SOCKET, else "
                   "/run/armd/armd.sock)")
    g.add_argument("-a", "--arm", metavar="NAME",
                   help="the systemd instance armd@NAME: socket /run/armd/NAME/armd.sock")
    p.add_argument("--listen", default="127.0.0.1:8080", metavar="HOST:PORT",
                   help="address to serve on (default 127.0.0.1:8080, this machine only)")
    p.add_argument("--control", action="store_true",
                   help="add enable, disable, estop, reset and a gains form to the page; every "
                   "command needs the token armweb writes to --token-file")
    p.add_argument("--token-file", metavar="FILE",
                   help="where --control writes its token (default: armweb.token beside "
                   "armd's socket)")
    p.add_argument("--token-group", default=auth.DEFAULT_GROUP, metavar="GROUP",
                   help="the group that may read the token file (default %s)" %
                   auth.DEFAULT_GROUP)
    p.add_argument("--allow-remote-control", action="store_true",
                   help="accept --control on an address other than loopback: then anyone "
                   "who reaches that address and has the token can move the arm")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a host name by which browsers reach armweb, accepted in the Host "
                   "of a command (besides loopback names, the --listen address and the "
                   "address a request came in on); repeatable")
    p.add_argument("--name", metavar="ARM",
                   help="the arm label of the metrics and the page (default: the config's "
                   "[arm] name)")
    p.add_argument("--rate", type=float, default=MAX_TELEMETRY_HZ, metavar="HZ",
                   help="telemetry rate asked of armd, 1 ... 60 Hz (default 60; armd rounds "
                   "it down to a whole decimation of the loop rate)")
    p.add_argument("--stall-timeout", type=float, default=BROWSER_STALL_S, metavar="SECONDS",
                   help="close a browser whose event stream made no progress this long, 1 ... "
                   "300 s (default %g)" % BROWSER_STALL_S)
    p.add_argument("--static", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--chartjs", default=CHARTJS, metavar="FILE",
                   help="Chart.js to serve (default %s, Debian's libjs-chart.js)" % CHARTJS)
    p.add_argument("-v", "--verbose", action="store_true", help="log every HTTP request")
    a = p.parse_args(argv)
    if a.arm:
        a.socket = "/run/armd/%s/armd.sock" % a.arm
    a.socket = a.socket or default_socket()
    try:
        a.host, a.port = parse_listen(a.listen)
    except ValueError as e:
        p.error(str(e))
    if not (1 <= a.rate <= MAX_TELEMETRY_HZ):  # NaN too
        p.error("--rate %g: must be 1 ... %g Hz" % (a.rate, MAX_TELEMETRY_HZ))
    if not (1 <= a.stall_timeout <= 300):  # NaN too
        p.error("--stall-timeout %g: must be 1 ... 300 s" % a.stall_timeout)
    if a.control and not is_loopback_host(a.host) and not a.allow_remote_control:
        p.error("--control with --listen %s would let anyone who reaches that address move "
                "the arm; listen on 127.0.0.1 and use an SSH tunnel (armweb(1)), or add "
                "--allow-remote-control if that is really meant" % a.listen)
    if a.control and not a.token_file:
        a.token_file = auth.default_token_file(a.socket)
    return a


async def serve(a, static_dir, token=None):
    fanout = Fanout()
    link = ArmdLink(a.socket, fanout, name_override=a.name, max_hz=a.rate)
    server = Server(link, fanout, static_dir, a.chartjs, a.control, a.host, a.stall_timeout,
                    token, a.allow_host)
    runner = web.AppRunner(server.app, handle_signals=False,
                           access_log=logging.getLogger("armweb.http") if a.verbose else None)
    await runner.setup()
    await web.TCPSite(runner, a.host, a.port, reuse_address=True).start()
    log.info("serving http://%s:%d/ (%s) for armd at %s", a.host, a.port,
             "with control, token in %s" % a.token_file if a.control else "read-only",
             a.socket)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks = [asyncio.ensure_future(link.run()), asyncio.ensure_future(fanout.run())]
    await stop.wait()
    log.info("stopping")
    for t in tasks:
        t.cancel()
    fanout.close()  # the event streams end now, not at their next keepalive
    await runner.cleanup()


def main(argv, static_dir):
    a = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="armweb: %(message)s", stream=sys.stderr)
    if a.static:
        static_dir = a.static
    if not os.path.isfile(os.path.join(static_dir, "index.html")):
        log.error("the page is missing: %s/index.html", static_dir)
        return 1
    if not os.path.isfile(a.chartjs):
        log.warning("%s is missing (Debian package libjs-chart.js): the page will have no "
                    "plots; /metrics works", a.chartjs)
    token = auth.TokenFile(a.token_file, a.token_group) if a.control else None
    try:
        if token is not None:
            token.write()
        asyncio.run(serve(a, static_dir, token))
    except auth.TokenError as e:
        log.error("cannot write the control token: %s (--token-file FILE: a directory "
                  "armweb may write, not writable by everyone)", e)
        return 1
    except OSError as e:
        log.error("cannot listen on %s: %s", a.listen, e.strerror or e)
        return 1
    finally:
        if token is not None:
            token.remove()
    return 0
