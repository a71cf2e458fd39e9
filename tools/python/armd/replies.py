"""armd.replies — the typed replies of ``info`` and ``status`` (armd-api(7)): frozen dataclasses
like :class:`armd.Telemetry`, SI units, joint vectors in the configuration's joint order.

armd sends a non-finite number as null; here it is NaN. A member this client does not know (a
newer armd's) is kept in ``extra``, a member an older armd does not send gets its field's empty
value (NaN, "", 0, [] or None). ``raw`` is the reply as sent.

For code written against the dict replies of earlier clients, ``reply["state"]``,
``reply.get("fault")``, ``"q" in reply`` and :meth:`to_dict` read the reply as sent (JSON
values: nested objects are dicts, nulls are None), so ``status()["q"]`` keeps working; the
attributes are the typed form (``status().q``, ``status().loop.lateness_us.p99``).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, fields
from typing import Any

from armd.records import Pose, Wrench


def _num(v: Any) -> float:
    """A JSON number as a float; null (non-finite in armd) or a missing member as NaN."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _int(v: Any) -> int:
    """A JSON integer (a count); 0 when missing."""
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _floats(v: Any) -> list[float]:
    """A joint vector; null elements as NaN."""
    return [_num(x) for x in v] if isinstance(v, list) else []


def _strs(v: Any) -> list[str]:
    return [_str(x) for x in v] if isinstance(v, list) else []


def _obj(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


class _Reply:
    """The dict-style reading of a reply dataclass: the reply as armd sent it (``raw``)."""

    raw: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.raw

    def to_dict(self) -> dict[str, Any]:
        """The reply as armd sent it (a deep copy: JSON values, null for non-finite numbers),
        e.g. for ``json.dumps``."""
        return copy.deepcopy(self.raw)


def _extra(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """The members of d that cls has no field for (a newer armd's)."""
    known = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k not in known}


@dataclass(frozen=True)
class Timing(_Reply):
    """Quantiles of one loop timing since stats.reset [us]: ``p50``, ``p99``, ``max``."""

    p50: float
    p99: float
    max: float
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "Timing":
        d = _obj(d)
        return cls(p50=_num(d.get("p50")), p99=_num(d.get("p99")), max=_num(d.get("max")),
                   extra=_extra(cls, d), raw=d)


@dataclass(frozen=True)
class LoopStats(_Reply):
    """status's ``loop``: the rate [Hz], counters since start, the longest read gap [ms] and
    the timing quantiles [us] of lateness, read, compute and write."""

    rate_hz: float
    ticks: int
    overruns: int
    late_ticks: int
    failed_reads: int
    failed_writes: int
    read_gaps: int
    longest_read_gap_ms: float
    saturations: int
    lateness_us: Timing
    read_us: Timing
    compute_us: Timing
    write_us: Timing
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "LoopStats":
        d = _obj(d)
        counts = {k: _int(d.get(k)) for k in ("ticks", "overruns", "late_ticks", "failed_reads",
                                               "failed_writes", "read_gaps", "saturations")}
        times = {k: Timing.from_dict(d.get(k))
                 for k in ("lateness_us", "read_us", "compute_us", "write_us")}
        return cls(rate_hz=_num(d.get("rate_hz")),
                   longest_read_gap_ms=_num(d.get("longest_read_gap_ms")),
                   extra=_extra(cls, d), raw=d, **counts, **times)


@dataclass(frozen=True)
class Collision(_Reply):
    """status's ``collision``: ``mode`` (off, detect, react), the observer's
    ``external_torque`` per joint [N m or N] and the number of collisions ``detected``."""

    mode: str
    external_torque: list[float]
    detected: int
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "Collision":
        d = _obj(d)
        return cls(mode=_str(d.get("mode")), external_torque=_floats(d.get("external_torque")),
                   detected=_int(d.get("detected")), extra=_extra(cls, d), raw=d)


@dataclass(frozen=True)
class Progress(_Reply):
    """status's ``trajectory`` while one runs: its ``id``, ``progress`` (0 ... 1) and the
    ``remaining`` time [s]."""

    id: int
    progress: float
    remaining: float
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "Progress | None":
        if not isinstance(d, dict):
            return None
        return cls(id=_int(d.get("id")), progress=_num(d.get("progress")),
                   remaining=_num(d.get("remaining")), extra=_extra(cls, d), raw=d)


@dataclass(frozen=True)
class ToolStatus(_Reply):
    """status's ``tool`` (an arm with a ``[tool]`` section): its ``name``, the ``opening``
    between the fingers [m], their ``speed`` [m/s], the ``force`` they squeeze with [N]
    (positive closing on something), the tool ``command`` running (idle, move, grasp,
    release), whether it holds what a grasp ``grasped`` (until the next tool command), the
    stroke ``lower`` ... ``upper`` [m], the servo's ``current`` [A], whether the fingers are
    ``moving`` or ``stalled`` (still, short of their goal) and the ``tolerance`` [m] a move
    reaches its target within."""

    name: str
    opening: float
    speed: float
    force: float
    command: str
    grasped: bool
    lower: float
    upper: float
    current: float = math.nan
    moving: bool = False
    stalled: bool = False
    tolerance: float = math.nan
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "ToolStatus | None":
        if not isinstance(d, dict):
            return None
        return cls(name=_str(d.get("name")), command=_str(d.get("command")),
                   grasped=d.get("grasped") is True, moving=d.get("moving") is True,
                   stalled=d.get("stalled") is True, extra=_extra(cls, d), raw=d,
                   **{k: _num(d.get(k)) for k in ("opening", "speed", "force", "lower",
                                                   "upper", "current", "tolerance")})


@dataclass(frozen=True)
class Status(_Reply):
    """The reply to ``status``: the arm now. ``state`` (disabled, holding, moving, fault,
    estop...), ``fault`` (the reason, None without one), ``time`` armd's control time [s] with
    ``mono`` (``time.monotonic()``) and ``wall`` (``time.time()``) of the same instant, the
    control law, the measured ``q``, ``qd``, ``tau``, the desired ``q_des``, ``qd_des`` and the
    tracking ``error``, the running ``trajectory`` (None when none runs), ``loop`` statistics,
    ``collision``, the number of ``clients`` connected, the ``tool`` (None without a
    ``[tool]`` section), the tool frame's ``pose`` (an :class:`armd.Pose`) and the ``wrench``
    at the tool (an :class:`armd.Wrench`)."""

    state: str
    fault: str | None
    time: float
    mono: float
    wall: float
    controller: str
    q: list[float]
    qd: list[float]
    tau: list[float]
    q_des: list[float]
    qd_des: list[float]
    error: list[float]
    trajectory: Progress | None
    loop: LoopStats
    collision: Collision
    clients: int
    tool: ToolStatus | None = None
    pose: Pose | None = None  # the tool frame in the base frame (None from an older armd)
    wrench: Wrench | None = None  # the wrench at the tool (None from an older armd)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "Status":
        d = _obj(d)
        vecs = {k: _floats(d.get(k)) for k in ("q", "qd", "tau", "q_des", "qd_des", "error")}
        fault = d.get("fault")
        return cls(state=_str(d.get("state")), fault=fault if isinstance(fault, str) else None,
                   time=_num(d.get("time")), mono=_num(d.get("mono")), wall=_num(d.get("wall")),
                   controller=_str(d.get("controller")),
                   trajectory=Progress.from_dict(d.get("trajectory")),
                   loop=LoopStats.from_dict(d.get("loop")),
                   collision=Collision.from_dict(d.get("collision")),
                   clients=_int(d.get("clients")), tool=ToolStatus.from_dict(d.get("tool")),
                   pose=Pose.from_dict(d.get("pose")), wrench=Wrench.from_dict(d.get("wrench")),
                   extra=_extra(cls, d), raw=d, **vecs)


@dataclass(frozen=True)
class JointLimits(_Reply):
    """info's ``limits``, one value per joint: position ``lower`` and ``upper`` [rad or m],
    ``velocity`` [rad/s or m/s], ``acceleration`` [rad/s^2 or m/s^2], ``torque`` [N m or N]."""

    lower: list[float]
    upper: list[float]
    velocity: list[float]
    acceleration: list[float]
    torque: list[float]
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "JointLimits":
        d = _obj(d)
        return cls(extra=_extra(cls, d), raw=d, **{
            k: _floats(d.get(k)) for k in ("lower", "upper", "velocity", "acceleration",
                                           "torque")})


@dataclass(frozen=True)
class Driver(_Reply):
    """info's ``driver``: its ``type`` (armlink, dxl2), serial ``port`` and ``baud``."""

    type: str
    port: str
    baud: int
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "Driver":
        d = _obj(d)
        return cls(type=_str(d.get("type")), port=_str(d.get("port")), baud=_int(d.get("baud")),
                   extra=_extra(cls, d), raw=d)


@dataclass(frozen=True)
class ToolInfo(_Reply):
    """info's ``tool`` (an arm with a ``[tool]`` section): its ``name``, the servo's ``id``,
    the stroke ``lower`` ... ``upper`` [m], the largest speed ``velocity`` [m/s] and force
    ``max_force`` [N], and the defaults of the tool commands: ``force`` [N] and ``speed``
    [m/s]."""

    name: str
    id: int
    lower: float
    upper: float
    velocity: float
    max_force: float
    force: float
    speed: float
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "ToolInfo | None":
        if not isinstance(d, dict):
            return None
        return cls(name=_str(d.get("name")), id=_int(d.get("id")), extra=_extra(cls, d), raw=d,
                   **{k: _num(d.get(k)) for k in ("lower", "upper", "velocity", "max_force",
                                                   "force", "speed")})


@dataclass(frozen=True)
class Info(_Reply):
    """The reply to ``info``: the arm's ``name``, armd's ``version``, ``dof``, the ``joints``'
    names and ``types`` (revolute, prismatic), their ``limits``, the loop ``rate_hz`` [Hz], the
    ``driver``, the control law, armd's ``socket`` path, ``max_clients``, the ``config``
    file it runs and the ``tool`` (None without a ``[tool]`` section)."""

    name: str
    version: str
    dof: int
    joints: list[str]
    types: list[str]
    limits: JointLimits
    rate_hz: float
    driver: Driver
    controller: str
    socket: str
    max_clients: int
    config: str
    tool: ToolInfo | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "Info":
        d = _obj(d)
        return cls(name=_str(d.get("name")), version=_str(d.get("version")),
                   dof=_int(d.get("dof")), joints=_strs(d.get("joints")),
                   types=_strs(d.get("types")), limits=JointLimits.from_dict(d.get("limits")),
                   rate_hz=_num(d.get("rate_hz")), driver=Driver.from_dict(d.get("driver")),
                   controller=_str(d.get("controller")), socket=_str(d.get("socket")),
                   max_clients=_int(d.get("max_clients")), config=_str(d.get("config")),
                   tool=ToolInfo.from_dict(d.get("tool")), extra=_extra(cls, d), raw=d)
