"""armd.records — the notifications and motions the client returns: telemetry samples, events,
a motion's id and duration, and how a trajectory ended (the replies of info and status are in
armd.replies). SI units, joint vectors in the configuration's joint order (rad or m, rad/s or
m/s, N m or N, s)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def _floats(v: Any) -> list[float]:
    """A joint vector from a notification: armd sends non-finite values as null, here NaN."""
    if not isinstance(v, list):
        return []
    return [float(x) if isinstance(x, (int, float)) else math.nan for x in v]


@dataclass(frozen=True)
class Telemetry:
    """One ``telemetry`` notification: the control loop's state at tick ``tick``, ``time``
    seconds of armd's control time; ``mono`` the same instant on CLOCK_MONOTONIC (Python's
    ``time.monotonic()``) and ``wall`` on CLOCK_REALTIME (``time.time()``), NaN from an armd
    without them. ``params`` is the notification as sent, with any field a newer armd adds."""

    tick: int
    time: float
    mono: float
    wall: float
    state: str
    q: list[float]
    qd: list[float]
    tau: list[float]  # the torque the tick commanded
    tau_meas: list[float]  # the torque the servos reported with q (empty from an older armd)
    q_des: list[float]
    qd_des: list[float]
    ext: list[float]  # the collision observer's external torque estimate (0 while it is off)
    params: dict[str, Any] = field(repr=False)

    @classmethod
    def from_params(cls, p: dict[str, Any]) -> "Telemetry":
        return cls(tick=int(p.get("tick", 0)), time=float(p.get("time", math.nan)),
                   mono=float(p.get("mono", math.nan)), wall=float(p.get("wall", math.nan)),
                   state=str(p.get("state", "")), q=_floats(p.get("q")), qd=_floats(p.get("qd")),
                   tau=_floats(p.get("tau")), tau_meas=_floats(p.get("tau_meas")),
                   q_des=_floats(p.get("q_des")),
                   qd_des=_floats(p.get("qd_des")), ext=_floats(p.get("ext")), params=p)


@dataclass(frozen=True)
class Event:
    """Any other notification: ``method`` is ``state``, ``fault``, ``trajectory_done``,
    ``collision`` (or one a newer armd adds), ``params`` its members (armd-api(7):
    ``time``, ``mono``, ``wall`` and the event's own); ``event["reason"]`` reads a member."""

    method: str
    time: float
    params: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.params[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)


@dataclass(frozen=True)
class Motion:
    """The reply to ``trajectory`` and ``move_to``: the trajectory's ``id`` (its
    ``trajectory_done`` event carries it) and ``duration`` [s]."""

    id: int
    duration: float


@dataclass(frozen=True)
class Done:
    """How trajectory ``id`` ended, from its ``trajectory_done`` event: ``result`` is ``done``,
    ``replaced``, ``cancelled`` (``cancelled: disabled``, ``: hold``, ``: stopping`` when a
    command or armd's shutdown ended it) or ``aborted: why`` (a fault, estop, collision, the
    path tolerance or the goal not reached); ``time`` is armd's time of the end [s]."""

    id: int
    result: str
    time: float

    @property
    def ok(self) -> bool:
        """True when the trajectory ran to its end and settled at the goal."""
        return self.result == "done"


def notification(msg: dict[str, Any]) -> Telemetry | Event:
    """The record for a notification ``{"method", "params"}``."""
    params = msg.get("params")
    params = params if isinstance(params, dict) else {}
    if msg.get("method") == "telemetry":
        return Telemetry.from_params(params)
    t = params.get("time")
    return Event(method=str(msg.get("method")),
                 time=float(t) if isinstance(t, (int, float)) else math.nan, params=params)
