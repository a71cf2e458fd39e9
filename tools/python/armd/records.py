"""armd.records — the notifications and motions the client returns: telemetry samples (with the
tool's state), events, a motion's id and duration, how a trajectory ended, and how a tool command
ended (the replies of info and status are in armd.replies). SI units, joint vectors in the
configuration's joint order (rad or m, rad/s or m/s, N m or N, s); the tool in m, m/s and N; the
tool pose in m and a unit quaternion, the wrench at the tool in N and N m."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def _floats(v: Any) -> list[float]:
    """A joint vector from a notification: armd sends non-finite values as null, here NaN."""
    if not isinstance(v, list):
        return []
    return [float(x) if isinstance(x, (int, float)) else math.nan for x in v]


def _num(v: Any) -> float:
    """A number from armd: null (non-finite in armd), a missing member or a non-number as NaN."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


@dataclass(frozen=True)
class Pose:
    """The tool frame (``[arm] tool_xyz``, ``tool_rpy``) in the base frame, by forward kinematics
    of the measured q: ``position`` (x, y, z) [m] and ``orientation`` the unit quaternion
    (w, x, y, z), w >= 0. NaN where armd sent null (q not finite)."""

    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]

    @classmethod
    def from_dict(cls, d: Any) -> "Pose | None":
        """The record of a ``pose`` member; None when there is none (an older armd)."""
        if not isinstance(d, dict):
            return None
        p, o = _floats(d.get("position")), _floats(d.get("orientation"))
        p += [math.nan] * (3 - len(p))
        o += [math.nan] * (4 - len(o))
        return cls(position=(p[0], p[1], p[2]), orientation=(o[0], o[1], o[2], o[3]))

    def matrix(self) -> list[list[float]]:
        """The orientation as a 3x3 rotation matrix R (rows; v_base = R v_tool)."""
        w, x, y, z = self.orientation
        return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


@dataclass(frozen=True)
class Wrench:
    """The wrench the environment applies at the tool frame origin, estimated from the collision
    observer's external torques (F = (J^T)+ ext, damped near singularities): ``force`` (x, y, z)
    [N] and ``torque`` the moment about the tool origin (x, y, z) [N m], both in the base frame.
    NaN while the observer is off (``[safety] collision = off``)."""

    force: tuple[float, float, float]
    torque: tuple[float, float, float]

    @classmethod
    def from_dict(cls, d: Any) -> "Wrench | None":
        """The record of a ``wrench`` member; None when there is none (an older armd)."""
        if not isinstance(d, dict):
            return None
        f, t = _floats(d.get("force")), _floats(d.get("torque"))
        f += [math.nan] * (3 - len(f))
        t += [math.nan] * (3 - len(t))
        return cls(force=(f[0], f[1], f[2]), torque=(t[0], t[1], t[2]))


@dataclass(frozen=True)
class ToolState:
    """The tool (the gripper of a ``[tool]`` section) in a ``telemetry`` sample: the
    ``opening`` between the fingers [m], their ``speed`` [m/s], the ``force`` they squeeze
    with [N] (positive closing on something, 0 in free motion), the servo's ``current`` [A],
    whether they are ``moving`` and whether they are ``stalled`` (still, short of their
    goal)."""

    opening: float
    speed: float
    force: float
    current: float = math.nan  # the servo's motor current [A]
    moving: bool = False  # the fingers move
    stalled: bool = False  # still, short of their goal (an object or an obstacle holds them)

    @classmethod
    def from_dict(cls, d: Any) -> "ToolState | None":
        """The record of telemetry's ``tool`` member; None when there is none (no tool)."""
        if not isinstance(d, dict):
            return None
        return cls(opening=_num(d.get("opening")), speed=_num(d.get("speed")),
                   force=_num(d.get("force")), current=_num(d.get("current")),
                   moving=d.get("moving") is True, stalled=d.get("stalled") is True)


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
    tool: ToolState | None = None  # the tool's state; None without a [tool] section
    pose: Pose | None = None  # the tool frame in the base frame (None from an older armd)
    wrench: Wrench | None = None  # the wrench at the tool (None from an older armd)

    @classmethod
    def from_params(cls, p: dict[str, Any]) -> "Telemetry":
        return cls(tick=int(p.get("tick", 0)), time=float(p.get("time", math.nan)),
                   mono=float(p.get("mono", math.nan)), wall=float(p.get("wall", math.nan)),
                   state=str(p.get("state", "")), q=_floats(p.get("q")), qd=_floats(p.get("qd")),
                   tau=_floats(p.get("tau")), tau_meas=_floats(p.get("tau_meas")),
                   q_des=_floats(p.get("q_des")),
                   qd_des=_floats(p.get("qd_des")), ext=_floats(p.get("ext")), params=p,
                   tool=ToolState.from_dict(p.get("tool")), pose=Pose.from_dict(p.get("pose")),
                   wrench=Wrench.from_dict(p.get("wrench")))


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


# The outcomes of a tool command that mean it did what it was asked (armd-api(7), tool.move).
TOOL_SUCCESS = frozenset({"reached", "grasped"})


@dataclass(frozen=True)
class ToolResult:
    """How a tool command (``tool.move``, ``tool.grasp``, ``tool.release``, ``tool.stop``)
    ended, and the tool then: ``outcome`` is ``reached`` (a move or release at its target),
    ``grasped`` (a grasp closed within width - epsilon_inner ... width + epsilon_outer),
    ``no_object`` (a grasp closed below that: nothing, or something narrower, between the
    fingers), ``blocked`` (stopped short: an obstacle, or a grasp stopped above width +
    epsilon_outer), ``stopped`` (tool.stop or a newer tool command) or ``aborted`` (the arm
    left holding and moving: disable, estop, a fault); ``opening`` [m] and ``force`` [N] as in
    :class:`ToolState`. ``raw`` is the result as armd sent it."""

    outcome: str
    opening: float
    force: float
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """True when the command did what it was asked: ``grasped`` for a grasp, ``reached``
        for a move or a release."""
        return self.outcome in TOOL_SUCCESS

    @classmethod
    def from_dict(cls, d: Any) -> "ToolResult":
        d = d if isinstance(d, dict) else {}
        outcome = d.get("outcome")
        return cls(outcome=outcome if isinstance(outcome, str) else "",
                   opening=_num(d.get("opening")), force=_num(d.get("force")), raw=d)


def notification(msg: dict[str, Any]) -> Telemetry | Event:
    """The record for a notification ``{"method", "params"}``."""
    params = msg.get("params")
    params = params if isinstance(params, dict) else {}
    if msg.get("method") == "telemetry":
        return Telemetry.from_params(params)
    t = params.get("time")
    return Event(method=str(msg.get("method")),
                 time=float(t) if isinstance(t, (int, float)) else math.nan, params=params)
