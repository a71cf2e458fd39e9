"""armd.wire — the byte level of armd's socket: one JSON object per line, UTF-8, in and out.

A line may arrive in any number of pieces and many lines in one piece; reads wait with
poll(2) up to a deadline (time.monotonic() seconds, math.inf for none) and never touch the
socket's own timeout, which only bounds sends. Not thread-safe, except that send() may run in
another thread than read().
"""
from __future__ import annotations

import json
import math
import select
import socket
import time
from typing import Any

from armd.errors import ClientTimeout, ConnectionClosed, ProtocolError

MAX_REQUEST = 1 << 20  # armd's longest request line without its newline (API_MAX_LINE) [bytes]
MAX_REPLY = 64 << 20  # the longest line accepted from armd (its largest are a few kB) [bytes]
_CHUNK = 1 << 16


class Wire:
    """A connected UNIX stream socket carrying newline-framed JSON objects."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.closed = False  # the peer closed (end of file or reset)
        self._buf = bytearray()
        self._scan = 0  # _buf[:_scan] holds no newline
        self._poll = select.poll()
        self._poll.register(sock, select.POLLIN)

    def send(self, data: bytes) -> None:
        """Sends all of data (bounded by the socket's timeout); ConnectionClosed when armd is
        gone. What armd sent before it closed stays readable (e.g. why it closed)."""
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ConnectionClosed("connection to armd lost while sending: %s" % e) from None

    def read(self, deadline: float) -> dict[str, Any] | None:
        """The next message, None once armd has closed the connection (a last partial line is
        dropped); ClientTimeout when none is complete at deadline; ProtocolError for a line
        that is not a JSON object or is longer than MAX_REPLY."""
        while True:
            line = self._take_line()
            if line is not None:
                return decode(line)
            if self.closed:
                return None
            self._fill(deadline)

    def pending(self) -> bool:
        """True when a complete line is buffered (read() would not wait)."""
        return self._buf.find(b"\n", self._scan) >= 0

    def _take_line(self) -> bytes | None:
        while True:
            i = self._buf.find(b"\n", self._scan)
            if i < 0:
                self._scan = len(self._buf)
                return None
            line = bytes(self._buf[:i])
            del self._buf[:i + 1]
            self._scan = 0
            if line.strip():
                return line

    def _fill(self, deadline: float) -> None:
        """Receives what has arrived, waiting until deadline at most."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise ClientTimeout("timed out")
        ms = None if math.isinf(left) else max(1, math.ceil(left * 1000))
        if not self._poll.poll(ms):
            return  # the caller's next round raises the timeout
        try:
            chunk = self.sock.recv(_CHUNK)
        except (BlockingIOError, InterruptedError, socket.timeout):
            return
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.closed = True
            return
        self._buf += chunk
        if len(self._buf) > MAX_REPLY and self._buf.find(b"\n", self._scan) < 0:
            self.closed = True
            raise ProtocolError("armd sent a line longer than %d bytes" % MAX_REPLY)


def decode(line: bytes) -> dict[str, Any]:
    """One received line as a JSON object."""
    try:
        msg = json.loads(line)
    except ValueError:
        raise ProtocolError("armd sent a line that is not JSON: %r" % line[:80]) from None
    if not isinstance(msg, dict):
        raise ProtocolError("armd sent a line that is not a JSON object: %r" % line[:80])
    return msg


def encode(msg: dict[str, Any]) -> bytes:
    """A request line: compact JSON, non-finite numbers refused (JSON has none), newline."""
    return json.dumps(msg, separators=(",", ":"), allow_nan=False).encode() + b"\n"
