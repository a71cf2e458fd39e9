"""web_lib.py — helpers of armweb's integration tests: armweb as a real process beside the
daemon tests' Rig (armsim on a pty + armd, tests/daemon/test_api_lib.py), HTTP with urllib, and
the command line (test_api_lib's plus --armweb).
Python 3 standard library only."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "daemon"))
sys.dont_write_bytecode = True

import test_api_lib  # noqa: E402
from test_api_lib import TestFailure, check  # noqa: E402,F401

Skip = test_api_lib.TestSkipped
die_with_parent = test_api_lib._die_with_parent  # for every process a test starts


def parse_args():
    """The daemon tests' command line, plus armweb's script and where to copy a screenshot."""
    p = test_api_lib.arg_parser()
    p.add_argument("--armweb", required=True, help="the armweb script")
    p.add_argument("--screenshot-out", help="also write the page's screenshot here")
    return p.parse_args()


def run(main):
    """Runs main(args): "ok" and 0, "FAIL: ..." and 1, or "SKIP: ..." and 77."""
    test_api_lib.run(main, parse_args)


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def enable_and_hold(client):
    """Enables the arm and waits until armd reports holding."""
    client.call("enable")
    wait_until(lambda: client.call("status")["state"] == "holding", 10, "armd holding")


def wait_until(cond, timeout, what, period=0.1):
    """Polls cond() until true; fails naming `what` after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, "%s: not within %g s" % (what, timeout))
        time.sleep(period)


class Armweb:
    """armweb on a free port of listen_host (default 127.0.0.1) for rig's armd, reached on
    127.0.0.1; a context manager that stops it."""

    def __init__(self, args, rig, extra=(), listen_host="127.0.0.1"):
        self.rig = rig
        self.port = free_port()
        self.log_path = os.path.join(rig.dir, "armweb.log")
        self.cmd = [args.armweb, "--socket", rig.sock, "--listen",
                    "%s:%d" % (listen_host, self.port)] + list(extra)
        # where --control writes its token: beside armd's socket
        self.token_path = os.path.join(os.path.dirname(os.path.abspath(rig.sock)),
                                       "armweb.token")
        self.proc = None

    def __enter__(self):
        self.proc = subprocess.Popen(self.cmd, stdout=open(self.log_path, "w"),
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=die_with_parent)
        self.wait_connected()
        return self

    def __exit__(self, *exc):
        self.stop()
        if exc[0] is not None:
            print("---- armweb.log (tail)\n" + "".join(self.log().splitlines(True)[-30:]))
        return False

    def wait_connected(self, timeout=20):
        """Until armweb answers and has armd's status."""
        def ready():
            check(self.proc.poll() is None, "armweb exited early:\n" + self.log())
            try:
                st = self.state()
            except (OSError, ValueError):
                return False
            return st["link"]["connected"] and st["status"] is not None
        wait_until(ready, timeout, "armweb connected to armd")

    def stop(self):
        """SIGTERM; returns armweb's exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise TestFailure("armweb did not stop within 10 s of SIGTERM")

    def log(self):
        return open(self.log_path, errors="replace").read()

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def request(self, path, body=None, headers=None, method=None):
        """(HTTP status, headers, body bytes); an HTTP error status is returned, not raised."""
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        req = urllib.request.Request(self.url(path), data=data, headers=headers or {},
                                     method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def token(self):
        """The control token armweb wrote (its file, without the line feed)."""
        with open(self.token_path) as f:
            return f.read().strip()

    def command(self, path, body=b"{}", token=None, headers=None):
        """POST path as armweb's page does (X-Armweb, its own Origin), with
        `Authorization: Bearer token` unless token is None: (status, parsed JSON reply)."""
        h = {"X-Armweb": "1", "Origin": "http://127.0.0.1:%d" % self.port}
        if token is not None:
            h["Authorization"] = "Bearer " + token
        h.update(headers or {})
        status, _, reply = self.request(path, body, h, method="POST")
        try:
            return status, json.loads(reply)
        except ValueError:
            raise TestFailure("POST %s: HTTP %d, not JSON: %r" % (path, status, reply[:200]))

    def state(self):
        status, _, body = self.request("/api/state")
        check(status == 200, "/api/state answered %d" % status)
        return json.loads(body)

    def metrics_text(self):
        status, headers, body = self.request("/metrics")
        check(status == 200, "/metrics answered %d: %r" % (status, body[:200]))
        return headers, body.decode()

    def rss_kib(self):
        """armweb's resident memory [KiB] (VmRSS of /proc/PID/status)."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise TestFailure("no VmRSS for armweb")
