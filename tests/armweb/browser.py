"""browser.py — a real page in headless Chromium (Debian's `chromium`), driven through the
Chrome DevTools Protocol (https://chromedevtools.github.io/devtools-protocol/) over its
WebSocket, with the standard library only: a minimal RFC 6455 client (text frames, masking,
fragments, ping) and Runtime.evaluate / Page.captureScreenshot on top of it.

Chromium runs as root here, hence --no-sandbox; it gets a fresh profile directory, no network
but what the page asks for (armweb on 127.0.0.1), and is stopped with its whole process group.
A DevTools command may take long on a loaded machine (a screenshot of the page, software
rendering, behind a busy build): each may take up to PROTOCOL_TIMEOUT_S.
"""
import base64
import hashlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

from web_lib import Skip, TestFailure, check, die_with_parent

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, section 1.3
PROTOCOL_TIMEOUT_S = 120.0  # [s] one DevTools reply at most: generous, for a loaded machine


def find_chromium():
    """The Chromium binary; Skip (with the reason) where there is none."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise Skip("no chromium on PATH: install the Debian package chromium (tools/bootstrap "
               "does); the page cannot be tested without a browser")


class WebSocket:
    """A client WebSocket connection (ws:// only) exchanging text messages."""

    def __init__(self, url, timeout=PROTOCOL_TIMEOUT_S):
        u = urllib.parse.urlparse(url)
        check(u.scheme == "ws", "not a ws:// URL: %s" % url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" %
                           (u.path or "/", u.hostname, u.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            check(chunk, "the DevTools socket closed during the handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        check(lines[0].split(" ")[1] == "101", "WebSocket handshake refused: %s" % lines[0])
        want = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        accept = [x.split(":", 1)[1].strip() for x in lines[1:]
                  if x.lower().startswith("sec-websocket-accept:")]
        check(accept == [want], "bad Sec-WebSocket-Accept: %s" % accept)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            check(chunk, "the DevTools socket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send_frame(self, opcode, payload):
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        keys = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(keys, "big")).to_bytes(n, "big")
        self.sock.sendall(head + mask + masked)

    def send(self, text):
        self._send_frame(0x1, text.encode())

    def recv(self):
        """The next text message (fragments joined; pings answered)."""
        parts = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                keys = (mask * (n // 4 + 1))[:n]
                payload = (int.from_bytes(payload, "big") ^
                           int.from_bytes(keys, "big")).to_bytes(n, "big")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            check(opcode != 0x8, "the DevTools socket was closed by Chromium")
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode()

    def close(self):
        self.sock.close()


class Browser:
    """Headless Chromium showing one URL; a context manager."""

    def __init__(self, url, width=1280, height=1000, log_dir=None):
        self.url = url
        self.width, self.height = width, height
        self.binary = find_chromium()
        self.profile = tempfile.mkdtemp(prefix="armweb-chromium-")
        self.log_path = os.path.join(log_dir or self.profile, "chromium.log")
        self.proc = None
        self.ws = None
        self.next_id = 0

    def __enter__(self):
        cmd = [self.binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
               "--user-data-dir=" + self.profile, "--remote-debugging-port=0",
               "--window-size=%d,%d" % (self.width, self.height), "about:blank"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log_path, "w"), start_new_session=True,
                                     preexec_fn=die_with_parent)
        port = self._devtools_port(60)
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port,
                                    timeout=PROTOCOL_TIMEOUT_S) as r:
            targets = json.loads(r.read())
        pages = [t for t in targets if t.get("type") == "page"]
        check(pages, "Chromium shows no page: %s" % targets)
        self.ws = WebSocket(pages[0]["webSocketDebuggerUrl"])
        self.call("Page.enable")
        self.call("Page.navigate", {"url": self.url})
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            print("---- chromium.log (tail)\n" + "".join(
                open(self.log_path, errors="replace").readlines()[-20:]))
        self.close()
        return False

    def _devtools_port(self, timeout):
        """The port from Chromium's "DevTools listening on ws://127.0.0.1:PORT/..." line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = open(self.log_path, errors="replace").read()
            for line in text.splitlines():
                if line.startswith("DevTools listening on ws://"):
                    return urllib.parse.urlparse(line.split(" on ", 1)[1]).port
            check(self.proc.poll() is None, "Chromium exited (%s):\n%s" %
                  (self.proc.returncode, text[-2000:]))
            time.sleep(0.1)
        raise TestFailure("Chromium did not open its DevTools port in %g s" % timeout)

    def call(self, method, params=None):
        """One DevTools command; its result (events in between are ignored)."""
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params or {}}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.next_id:
                check("error" not in m, "%s failed: %s" % (method, m.get("error")))
                return m.get("result", {})

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (promises awaited)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True})
        check("exceptionDetails" not in r, "the page threw on %r: %s" %
              (expression[:80], r.get("exceptionDetails")))
        return r["result"].get("value")

    def wait_for(self, expression, timeout, what):
        """Polls a JavaScript expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.evaluate(expression)
            if v:
                return v
            check(time.monotonic() < deadline, "%s: not within %g s" % (what, timeout))
            time.sleep(0.2)

    def screenshot(self):
        """The page as PNG bytes."""
        r = self.call("Page.captureScreenshot", {"format": "png"})
        return base64.b64decode(r["data"])

    def close(self):
        if self.ws:
            self.ws.close()
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # Chromium and its helpers
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
