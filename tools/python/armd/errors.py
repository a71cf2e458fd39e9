"""armd.errors — the exceptions the client raises.

Every exception is an :class:`Error`. An error reply from armd becomes the subclass named for
its code (``{"code": "limits", ...}`` -> :class:`Limits`), carrying ``code``, ``message`` and
the ``method`` of the request; a code this module does not know becomes a plain :class:`Error`
with that code. Problems on this side of the socket have ``code`` None: :class:`ConnectFailed`
and :class:`ConnectionClosed` (also ``ConnectionError``, so ``except OSError`` sees them),
:class:`ClientTimeout` (also ``TimeoutError``), :class:`ProtocolError` (armd sent something that
is not a JSON object line) and :class:`TrajectoryAborted` (wait_done saw ``aborted: why``).
"""
from __future__ import annotations

from typing import Any


class Error(Exception):
    """An armd error: ``code`` (armd's error code, None for client-side errors), ``message``
    (armd's sentence, naming the member and the number) and ``method`` (the request's method,
    or None)."""

    code: str | None = None

    def __init__(self, message: str, code: str | None = None, method: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.method = method

    def __str__(self) -> str:
        where = "%s: " % self.method if self.method else ""
        what = "%s: " % self.code if self.code else ""
        return where + what + self.message


# ------------------------------------------------------------------ armd's error codes
# (armd-api(7); daemon/api_methods.c, api.c, api_sched.c and the control thread)

class ParseError(Error):
    """A request line was not JSON (``parse_error``)."""
    code = "parse_error"


class InvalidRequest(Error):
    """A request was not a well-formed request object (``invalid_request``)."""
    code = "invalid_request"


class UnknownMethod(Error):
    """No such method (``unknown_method``): an older armd than this client expects."""
    code = "unknown_method"


class InvalidParams(Error):
    """A parameter is missing, of the wrong type or out of its range (``invalid_params``); the
    message names it, e.g. ``points[3].q[1]``. Also raised before sending for values JSON cannot
    carry (NaN, infinity) or that are not numbers."""
    code = "invalid_params"


class LineTooLong(Error):
    """A request over armd's 1 MiB line limit (``line_too_long``; armd closes the connection).
    Raised before sending when this client would send such a line."""
    code = "line_too_long"


class TooManyClients(Error):
    """``too_many_clients`` (the connection is closed): sent by armd before its connections
    beyond max_clients became restricted ones; kept for those versions."""
    code = "too_many_clients"


class Restricted(Error):
    """This connection is beyond armd's max_clients: one request, estop, status or disable,
    then armd closes it (``restricted``)."""
    code = "restricted"


class IdleTimeout(Error):
    """armd closed a connection that sent nothing and was not subscribed for idle_timeout
    (``idle_timeout``)."""
    code = "idle_timeout"


class Busy(Error):
    """Too many commands or trajectories in flight (``busy``): retry."""
    code = "busy"


class Timeout(Error):
    """armd's control thread did not answer within 1 s, or a tool command was not done within
    ``[tool] timeout`` (``timeout``). Not the client's own timeout, which is
    :class:`ClientTimeout`."""
    code = "timeout"


class BadState(Error):
    """The command is not allowed in the arm's present state (``bad_state``), e.g. a
    trajectory or a tool command while disabled."""
    code = "bad_state"


class NoTool(Error):
    """A tool method on an arm whose configuration has no ``[tool]`` section (``no_tool``);
    also raised by ``arm.tool.state()`` for such an arm."""
    code = "no_tool"


class Limits(Error):
    """The trajectory or move leaves the position, velocity or acceleration limits
    (``limits``); the message names the joint and the number."""
    code = "limits"


class Unreachable(Error):
    """A ``move_linear`` the arm cannot follow (``unreachable``): a waypoint out of reach, at a
    singularity, or an orientation the arm cannot take; the message names the waypoint."""
    code = "unreachable"


class Conflict(Error):
    """The trajectory an ``append`` was for is no longer running (``conflict``): send it
    again."""
    code = "conflict"


class RestartNeeded(Error):
    """A reload changed keys that only a restart applies (``restart_needed``)."""
    code = "restart_needed"


class InvalidConfig(Error):
    """A reload found errors in the configuration (``invalid_config``)."""
    code = "invalid_config"


class ConfigError(Error):
    """The configuration does not fit the running model (``config``)."""
    code = "config"


class DeviceError(Error):
    """The servos could not be read or enabled (``device``)."""
    code = "device"


class NotRunning(Error):
    """armd's control thread is not running (``not_running``)."""
    code = "not_running"


class Stopping(Error):
    """armd stopped before the request's answer came (``stopping``); the connection then
    closes."""
    code = "stopping"


class Unsupported(Error):
    """The method is not available in this armd (``unsupported``), e.g. reload without a
    configuration file."""
    code = "unsupported"


class Internal(Error):
    """armd could not build the reply (``internal``), e.g. out of memory."""
    code = "internal"


class Failed(Error):
    """A command failed without a more specific code (``failed``)."""
    code = "failed"


# ---------------------------------------------------------------- this side of the socket

class ConnectFailed(Error, ConnectionError):
    """The socket could not be connected (no armd there, no permission)."""


class ConnectionClosed(Error, ConnectionError):
    """armd closed the connection (or it broke) before the reply or message waited for."""


class ClientTimeout(Error, TimeoutError):
    """Nothing arrived within the client's timeout."""


class ProtocolError(Error):
    """armd sent a line that is not a JSON object, or one longer than the client accepts."""


class TrajectoryAborted(Error):
    """wait_done: the trajectory ended ``aborted: why`` (a fault, estop, disable or the goal not
    reached); ``done`` holds the :class:`armd.Done` record."""

    def __init__(self, message: str, done: Any):
        super().__init__(message)
        self.done = done


ERRORS: dict[str, type[Error]] = {
    cls.code: cls for cls in (
        ParseError, InvalidRequest, UnknownMethod, InvalidParams, LineTooLong, TooManyClients,
        Restricted, IdleTimeout, Busy, Timeout, BadState, NoTool, Limits, Unreachable, Conflict,
        RestartNeeded, InvalidConfig, ConfigError, DeviceError, NotRunning, Stopping, Unsupported,
        Internal, Failed)
    if cls.code is not None
}


def from_reply(error: Any, method: str | None = None) -> Error:
    """The exception for a reply's ``error`` member ``{"code", "message"}``: the subclass for its
    code, else :class:`Error` with that code."""
    if not isinstance(error, dict):
        return ProtocolError("malformed error member: %r" % (error,), method=method)
    code = error.get("code")
    message = error.get("message")
    message = message if isinstance(message, str) else repr(message)
    cls = ERRORS.get(code) if isinstance(code, str) else None
    if cls is not None:
        return cls(message, method=method)
    return Error(message, code=code if isinstance(code, str) else repr(code), method=method)
