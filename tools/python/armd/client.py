"""armd.client — a connection to armd's socket (armd-api(7)) with a method per socket
method.

Replies and notifications share the connection: a call reads until its own reply (matched by
id), and every notification read meanwhile is queued, in order, for the next
:meth:`Client.next_notification` (or a :class:`Subscription`); replies nobody waits for (late
replies to a request that timed out) are dropped. ``trajectory_done`` events are also remembered
by id, whoever reads them, so :meth:`Client.wait_done` sees an end that a call or an iterator
read first.

Nothing waits forever: every call waits at most ``timeout`` seconds (the client's, 10 s by
default) for its reply, every notification read at most its timeout, and wait_done until the
motion's planned end plus a margin. Not thread-safe: use one Client per thread.
"""
from __future__ import annotations

import collections
import math
import numbers
import os
import socket
import time
from typing import Any, Iterable, Iterator

from armd.errors import (ClientTimeout, ConnectFailed, ConnectionClosed, Error, InvalidParams,
                         LineTooLong, ProtocolError, TrajectoryAborted, from_reply)
from armd.points import linear, normalize, number, vector
from armd.records import Done, Event, Motion, Pose, Telemetry, notification
from armd.replies import Info, Status
from armd.tool import Tool
from armd.wire import MAX_REQUEST, Wire, encode

DEFAULT_SOCKET = "/run/armd/armd.sock"  # armd.service's socket, armctl's default
DEFAULT_TIMEOUT = 10.0  # [s] for a reply; armd's control thread answers within 1 s or says so
DONE_MARGIN = 10.0  # [s] wait_done's wait past a motion's planned end (settling, goal timeout)
EVENTS_RATE_HZ = 1.0  # telemetry rate of the subscription trajectory() makes for wait_done
# error codes armd sends with "id": null just before it closes the connection
CLOSING_CODES = frozenset({"too_many_clients", "idle_timeout", "line_too_long"})
_REMEMBERED = 1024  # trajectory ends and planned ends kept per connection


def socket_path(arm: str | None = None) -> str:
    """The socket to use: the instance ``armd@ARM`` (``/run/armd/ARM/armd.sock``) when arm is
    given, else ``$ARMD_SOCKET``, else ``/run/armd/armd.sock`` (as armctl)."""
    if arm:
        return "/run/armd/%s/armd.sock" % arm
    return os.environ.get("ARMD_SOCKET") or DEFAULT_SOCKET


def _deadline(timeout: float | None) -> float:
    """The time.monotonic() instant timeout [s] from now (math.inf for None or infinity)."""
    return math.inf if timeout is None or math.isinf(timeout) else time.monotonic() + timeout


def _result(msg: dict[str, Any], method: str) -> Any:
    """A reply's result; its error raised as the armd.Error subclass for the code."""
    if "error" in msg:
        raise from_reply(msg["error"], method)
    if "result" not in msg:
        raise ProtocolError("reply without result or error: %r" % (msg,), method=method)
    return msg["result"]


class Client:
    """A connection to armd. ``Client(path=None, timeout=10.0)``: path defaults to
    ``$ARMD_SOCKET``, then ``/run/armd/armd.sock``; timeout [s] bounds every call (None or
    math.inf: no bound). A context manager (closes on exit). Raises
    :class:`armd.ConnectFailed` when no armd answers at path.

    ``max_queued`` bounds the notifications kept while nobody reads them; beyond it the oldest
    telemetry record is dropped (events are kept) and counted in ``dropped``."""

    def __init__(self, path: str | None = None, *, timeout: float | None = DEFAULT_TIMEOUT,
                 max_queued: int = 10000):
        path = path or socket_path()
        timeout = math.inf if timeout is None else timeout
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(None if math.isinf(timeout) else timeout)
        try:
            sock.connect(path)
        except OSError as e:
            sock.close()
            hint = (" (is armd running? pass the socket path or set $ARMD_SOCKET)"
                    if isinstance(e, (FileNotFoundError, ConnectionRefusedError)) else "")
            raise ConnectFailed("cannot connect to armd at %s: %s%s" %
                                (path, e.strerror or e, hint)) from None
        self._setup(sock, path, timeout, max_queued)

    @classmethod
    def from_socket(cls, sock: socket.socket, *, timeout: float = DEFAULT_TIMEOUT,
                    max_queued: int = 10000) -> "Client":
        """A Client on a socket already connected to armd (e.g. one beyond max_clients). Its
        timeout bounds sends; calls use ``timeout``."""
        self = cls.__new__(cls)
        self._setup(sock, "", timeout, max_queued)
        return self

    def _setup(self, sock: socket.socket, path: str, timeout: float, max_queued: int) -> None:
        self.path = path
        self.sock = sock  # the connected socket (for select(); its timeout bounds sends)
        self.timeout = math.inf if timeout is None else timeout  # [s] for each call
        self.max_queued = max_queued
        self.dropped = 0  # telemetry records dropped from a full queue
        self._wire = Wire(sock)
        self._next_id = 0
        self._queue: collections.deque[dict[str, Any]] = collections.deque()
        self._done: dict[int, Done] = {}  # trajectory ends seen, by id (insertion order)
        self._ends: dict[int, float] = {}  # planned end (time.monotonic()) of motions sent
        self._outstanding: set[int] = set()  # motions sent whose end was not seen yet
        self._tail_end = 0.0  # planned end of the last motion sent [time.monotonic()]
        self._last_motion: Motion | None = None
        self._subscribed: float | None = None  # telemetry rate [Hz] while subscribed
        self._auto = False  # subscribed by trajectory()/move_to() for wait_done
        self.tool = Tool(self)  # the gripper's commands (armd.tool): arm.tool.grasp(...)

    # ------------------------------------------------------------------ the connection

    def close(self) -> None:
        """Closes the connection (armd forgets this client's subscription)."""
        self.sock.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def send_raw(self, data: bytes) -> None:
        """Sends bytes as they are (for testing armd's input handling); may run in another
        thread than the one reading."""
        self._wire.send(data)

    def read_message(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next line from armd as it comes, reply or notification, bypassing the queue;
        None once armd has closed the connection; ClientTimeout after timeout [s] (default:
        the client's)."""
        timeout = self.timeout if timeout is None else timeout
        try:
            msg = self._wire.read(_deadline(timeout))
        except ClientTimeout:
            raise ClientTimeout("no message from armd within %g s" % timeout) from None
        if msg is not None and "id" not in msg:
            self._observe(msg)
        return msg

    def _read(self, deadline: float, timeout: float, what: str,
              method: str | None = None) -> dict[str, Any]:
        """The next line for a wait on `what`; ConnectionClosed or ClientTimeout naming it."""
        try:
            msg = self._wire.read(deadline)
        except ClientTimeout:
            raise ClientTimeout("no %s from armd within %g s" % (what, timeout),
                                method=method) from None
        if msg is None:
            raise ConnectionClosed("armd closed the connection before %s" % what, method=method)
        return msg

    def _observe(self, msg: dict[str, Any]) -> None:
        """Bookkeeping for every notification read: trajectory ends by id."""
        if msg.get("method") != "trajectory_done":
            return
        p = msg.get("params")
        if not isinstance(p, dict) or type(p.get("id")) is not int:
            return
        done = notification(msg)
        self._done[p["id"]] = Done(id=p["id"], result=str(p.get("result")), time=done.time)
        if len(self._done) > _REMEMBERED:
            del self._done[next(iter(self._done))]
        self._outstanding.discard(p["id"])

    def _keep(self, msg: dict[str, Any]) -> None:
        """Queues a notification read while waiting for something else."""
        self._observe(msg)
        if len(self._queue) >= self.max_queued:
            for i, old in enumerate(self._queue):
                if old.get("method") == "telemetry":
                    del self._queue[i]
                    break
            else:
                self._queue.popleft()
            self.dropped += 1
        self._queue.append(msg)

    def _stray(self, msg: dict[str, Any], method: str | None = None) -> None:
        """A reply nobody waits for: dropped, unless it is armd closing the connection."""
        err = msg.get("error")
        if msg.get("id") is None and isinstance(err, dict) and err.get("code") in CLOSING_CODES:
            raise from_reply(err, method)

    # ------------------------------------------------------------------ requests

    def request(self, method: str, params: dict[str, Any] | None = None, *,
                timeout: float | None = None) -> dict[str, Any]:
        """Sends a request and returns armd's whole reply ``{"id", "result"}`` or
        ``{"id", "error"}``. ClientTimeout after timeout [s] (default: the client's),
        ConnectionClosed if armd closes first, LineTooLong (before sending) for a request over
        armd's 1 MiB line limit, InvalidParams for NaN or infinity in params."""
        return self._exchange(self._prepare(method, params), method, timeout)

    def call(self, method: str, params: dict[str, Any] | None = None, *,
             timeout: float | None = None) -> Any:
        """The result of a request; an error reply raises the :class:`armd.Error` subclass for
        its code. Timeouts and closing as :meth:`request`."""
        return _result(self.request(method, params, timeout=timeout), method)

    def _prepare(self, method: str, params: dict[str, Any] | None) -> tuple[int, bytes]:
        """A new request id and the request's line, checked before anything is sent."""
        self._next_id += 1
        req: dict[str, Any] = {"id": self._next_id, "method": method}
        if params is not None:
            req["params"] = params
        try:
            line = encode(req)
        except ValueError as e:
            raise InvalidParams("params: %s" % e, method=method) from None
        if len(line) - 1 > MAX_REQUEST:
            raise LineTooLong("the request is %d bytes, armd takes at most %d per line (send a "
                              "long trajectory in parts with mode='append')" %
                              (len(line) - 1, MAX_REQUEST), method=method)
        return self._next_id, line

    def _exchange(self, prepared: tuple[int, bytes], method: str,
                  timeout: float | None) -> dict[str, Any]:
        """Sends a prepared request and reads until its reply, queueing notifications."""
        rid, line = prepared
        timeout = self.timeout if timeout is None else timeout
        try:
            self._wire.send(line)
        except ConnectionClosed as e:
            e.method = method
            raise
        deadline = _deadline(timeout)
        what = "the reply to '%s'" % method
        while True:
            msg = self._read(deadline, timeout, what, method)
            if "id" not in msg:
                self._keep(msg)
            elif type(msg["id"]) is int and msg["id"] == rid:
                return msg
            else:
                self._stray(msg, method)

    # ------------------------------------------------------------------ notifications

    def next_notification(self, timeout: float | None = None) -> dict[str, Any]:
        """The next notification ``{"method", "params"}`` as sent: queued ones first, then from
        the socket. ClientTimeout after timeout [s] (default: the client's), ConnectionClosed
        when armd closes."""
        if self._queue:
            return self._queue.popleft()
        timeout = self.timeout if timeout is None else timeout
        deadline = _deadline(timeout)
        while True:
            msg = self._read(deadline, timeout, "notification")
            if "id" not in msg:
                self._observe(msg)
                return msg
            self._stray(msg)

    def subscribe(self, rate_hz: float = 50.0, *,
                  timeout: float | None = None) -> "Subscription":
        """Subscribes to telemetry at rate_hz [Hz] (1 Hz to the loop rate; armd uses the loop
        rate over a whole decimation) and to every event; returns the iterator of
        :class:`armd.Telemetry` and :class:`armd.Event` records, each waited for at most
        timeout [s] (default: the client's). Read it steadily: armd drops a subscriber whose
        output stops moving for its stall_timeout (2 s). Notifications queued by the
        subscription trajectory() made are dropped first: the stream starts now."""
        r = self.call("subscribe", {"rate_hz": number(rate_hz, "rate_hz")})
        if self._auto:
            self._queue.clear()
        self._subscribed, self._auto = float(r["rate_hz"]), False
        return Subscription(self, self._subscribed, timeout)

    def unsubscribe(self) -> None:
        """Ends the telemetry and events (queued ones stay readable)."""
        self.call("unsubscribe")
        self._subscribed, self._auto = None, False

    # ------------------------------------------------------------------ state commands

    def info(self) -> Info:
        """The arm as an :class:`armd.Info` (name, version, dof, joints, types, limits,
        rate_hz, driver, controller, socket, max_clients, config, tool: None or a
        :class:`armd.ToolInfo`; armd-api(7) ``info``).
        ``info()["joints"]`` still reads the reply as sent."""
        return Info.from_dict(self.call("info"))

    def status(self) -> Status:
        """The arm now as an :class:`armd.Status` (state, fault, time, mono, wall, controller,
        q, qd, tau, q_des, qd_des, error, trajectory: None or a :class:`armd.Progress`, loop,
        collision, clients, tool: None or a :class:`armd.ToolStatus`; armd-api(7) ``status``).
        ``status()["q"]`` still reads the reply as sent."""
        return Status.from_dict(self.call("status"))

    def pose(self) -> Pose:
        """The tool frame in the base frame now (:class:`armd.Pose`: position [m], orientation
        as a unit quaternion w, x, y, z), from ``status``."""
        pose = self.status().pose
        if pose is None:
            raise ProtocolError("armd's status has no pose (an armd older than this client)")
        return pose

    def enable(self) -> str:
        """Torque on, holding the present position; returns the new state (``holding``)."""
        return self.call("enable")["state"]

    def disable(self) -> str:
        """Torque off; returns the new state (``disabled``)."""
        return self.call("disable")["state"]

    def hold(self) -> str:
        """Stops a move within the acceleration limits, as cancel does, then holds where it
        stopped; returns the new state (``moving`` while the stop runs, then ``holding``)."""
        return self.call("hold")["state"]

    def estop(self) -> str:
        """Emergency stop (allowed beyond max_clients too); returns the new state (``estop``)."""
        return self.call("estop")["state"]

    def reset(self) -> str:
        """Leaves ``fault`` or ``estop`` for ``disabled``; returns the new state."""
        return self.call("reset")["state"]

    def cancel(self) -> str:
        """Decelerates the motion within the limits and holds; the trajectory ends
        ``cancelled``. Returns the new state."""
        return self.call("cancel")["state"]

    # ------------------------------------------------------------------ motion

    def trajectory(self, points: Iterable[Any], mode: str = "replace", *,
                   blocking: bool = False) -> Motion | Done:
        """Sends waypoints ``[{"t", "q", "qd"?, "qdd"?}, ...]`` or ``(t, q[, qd[, qdd]])``
        tuples (vectors as lists or arrays; see :func:`armd.points`), ``t`` [s] after the start;
        mode ``replace`` (the running trajectory gives way) or ``append`` (starts where the last
        one ends). Returns its :class:`armd.Motion` (id, duration). Limits: the whole path
        within the position, velocity and acceleration limits, else :class:`armd.Limits`.

        blocking=True waits for the motion's end and returns its :class:`armd.Done` (as
        :meth:`wait_done`: ``aborted: why`` raises :class:`armd.TrajectoryAborted`);
        blocking=False (the default) returns once armd accepted it.

        Subscribes this connection to events first (telemetry at 1 Hz) if it is not
        subscribed, so that :meth:`wait_done` cannot miss the end of a short motion."""
        if mode not in ("replace", "append"):
            raise InvalidParams("mode: expected 'replace' or 'append', got %r" % (mode,),
                                method="trajectory")
        params = {"points": normalize(points), "mode": mode}
        m = self._motion("trajectory", params, append=mode == "append")
        return self.wait_done(traj=m) if blocking else m

    def move_to(self, q: Any, duration: float | None = None, *,
                blocking: bool = False) -> Motion | Done:
        """Moves to joint position q (one number per joint [rad or m]) in duration [s], or
        when None in the shortest time the velocity and acceleration limits allow (armd's own
        ``move_to``). Returns the :class:`armd.Motion`, or with blocking=True its
        :class:`armd.Done` once it ended (as :meth:`trajectory`); subscribes as
        :meth:`trajectory`."""
        params: dict[str, Any] = {"q": vector(q, "q")}
        if duration is not None:
            params["duration"] = number(duration, "duration")
        m = self._motion("move_to", params, append=False)
        return self.wait_done(traj=m) if blocking else m

    def move_linear(self, offset: Any = None, *, position: Any = None, orientation: Any = None,
                    frame: str = "base", speed: float | None = None,
                    acceleration: float | None = None, append: bool = False,
                    blocking: bool = False) -> Motion | Done:
        """Moves the tool along a straight line (armd's ``move_linear``): by ``offset``
        [dx, dy, dz] m from where the move starts (axes of the base frame, or of the tool with
        frame="tool"), or to ``position`` [x, y, z] m (base frame) with an optional
        ``orientation`` [w, x, y, z] (else the present one is kept); ``speed`` [m/s] and
        ``acceleration`` [m/s^2] along the line (else the configuration's). armd plans the
        joint trajectory by inverse kinematics and checks it as any other: a line out of
        reach or through a singularity raises :class:`armd.Unreachable`, one too fast for the
        joints :class:`armd.Limits`. Returns as :meth:`trajectory` (append=True: after the
        running one)."""
        params = linear(offset, position, orientation, frame, speed, acceleration, append)
        m = self._motion("move_linear", params, append=append)
        return self.wait_done(traj=m) if blocking else m

    def _motion(self, method: str, params: dict[str, Any], append: bool) -> Motion:
        """Sends a motion request (subscribed first, see trajectory()); a refused one leaves
        no automatic subscription behind."""
        prepared = self._prepare(method, params)
        self._watch_motion()
        try:
            r = _result(self._exchange(prepared, method, None), method)
        except Error as e:
            if e.code is not None:  # refused by armd: the connection is fine
                self._drop_auto()
            raise
        return self._sent(r, append)

    def _watch_motion(self) -> None:
        """Subscribes (1 Hz) unless subscribed, so that the motion's end reaches wait_done."""
        if self._subscribed is None:
            r = self.call("subscribe", {"rate_hz": EVENTS_RATE_HZ})
            self._subscribed, self._auto = float(r["rate_hz"]), True

    def _drop_auto(self) -> None:
        """Ends the subscription _watch_motion made, and drops what it queued, once none of
        this connection's motions is outstanding."""
        if self._auto and not self._outstanding:
            self.unsubscribe()
            self._queue.clear()

    def _sent(self, r: dict[str, Any], append: bool) -> Motion:
        """Records a motion armd accepted: its planned end, the last one sent."""
        m = Motion(id=int(r["id"]), duration=float(r["duration"]))
        now = time.monotonic()
        self._tail_end = (max(now, self._tail_end) if append else now) + m.duration
        self._ends[m.id] = self._tail_end
        if len(self._ends) > _REMEMBERED:
            del self._ends[next(iter(self._ends))]
        self._outstanding.add(m.id)
        self._last_motion = m
        return m

    def wait_done(self, timeout: float | None = None, traj: Motion | int | None = None, *,
                  check: bool = True) -> Done:
        """Waits for the ``trajectory_done`` event of traj (a Motion or an id; default: the last
        motion sent on this connection) and returns the :class:`armd.Done` record. timeout [s]
        defaults to the motion's planned end plus 10 s (the client's timeout for a motion this
        connection did not send); ClientTimeout after it. With check (default) an ``aborted:
        why`` end raises :class:`armd.TrajectoryAborted`; ``cancelled`` and ``replaced`` are
        returned. Notifications read meanwhile stay queued. A subscription trajectory() made
        ends once none of its motions is outstanding."""
        tid = traj.id if isinstance(traj, Motion) else traj
        if tid is None:
            if self._last_motion is None:
                raise ValueError("wait_done: no motion was sent on this connection; pass traj")
            tid = self._last_motion.id
        if timeout is None:
            end = self._ends.get(tid)
            timeout = (max(0.0, end - time.monotonic()) + DONE_MARGIN if end is not None
                       else self.timeout)
        deadline = _deadline(timeout)
        if tid not in self._done and self._subscribed is None:
            self._subscribe_late(tid, deadline)
        self._read_until_done(tid, deadline, timeout)
        self._drop_auto()
        done = self._done[tid]
        if check and done.result.startswith("aborted"):
            raise TrajectoryAborted("trajectory %d ended %s" % (tid, done.result), done)
        return done

    def _read_until_done(self, tid: int, deadline: float, timeout: float) -> None:
        """Reads (queueing notifications) until trajectory tid's end has been seen."""
        while tid not in self._done:
            msg = self._read(deadline, timeout, "end of trajectory %d" % tid)
            if "id" not in msg:
                self._keep(msg)
            else:
                self._stray(msg)

    def _subscribe_late(self, tid: int, deadline: float) -> None:
        """Subscribes for a wait on a trajectory sent before this connection subscribed (by
        another connection, or after unsubscribe): its end must still be to come."""
        self._watch_motion()
        tr = self.call("status").get("trajectory")
        if isinstance(tr, dict) and isinstance(tr.get("id"), int) and tr["id"] <= tid:
            return  # running, or queued behind the running one
        try:  # its event may be on its way still
            self._read_until_done(tid, min(deadline, time.monotonic() + 0.25), 0.25)
        except ClientTimeout:
            self._drop_auto()
            raise Error("trajectory %d is not running and ended before this connection "
                        "subscribed to events: how it ended is unknown (subscribe before "
                        "sending it)" % tid, method="wait_done") from None

    # ------------------------------------------------------------------ tuning

    def gains(self, *, kp: Any = None, kd: Any = None, ki: Any = None) -> dict[str, Any]:
        """The gains ``{kp[], kd[], ki[], controller}``; with kp, kd or ki (one number for
        every joint, or one per joint; kp, kd 0 ... 1e7, ki 0 ... 1e9) sets those first
        (``gains.set``)."""
        given = {k: v for k, v in (("kp", kp), ("kd", kd), ("ki", ki)) if v is not None}
        if not given:
            return self.call("gains.get")
        params = {k: number(v, k) if isinstance(v, numbers.Real) else vector(v, k)
                  for k, v in given.items()}
        return self.call("gains.set", params)

    def impedance(self, *, translational: Any = None, rotational: Any = None,
                  damping: Any = None, guide: Any = None) -> dict[str, Any]:
        """The ``cartesian_impedance`` law's spring and damper ``{translational_stiffness[3],
        rotational_stiffness[3], damping_ratio[6], guide_damping[2], controller}``; with
        translational (N/m) or rotational (N m/rad) stiffness (one number or x, y, z), damping
        (the damping ratio: one number or six) or guide (the free axes' damping, two numbers)
        sets those first (``impedance.set``; past the sampled loop's bound raises
        :class:`armd.Error` with code ``infeasible``)."""
        given = {k: v for k, v in (("translational_stiffness", translational),
                                   ("rotational_stiffness", rotational),
                                   ("damping_ratio", damping), ("guide_damping", guide))
                 if v is not None}
        if not given:
            return self.call("impedance.get")
        return self.call("impedance.set", {
            k: number(v, k) if isinstance(v, numbers.Real) else vector(v, k)
            for k, v in given.items()})

    def controller(self, name: str | None = None) -> str:
        """The control law in use; with name (``computed_torque``, ``pd_gravity``,
        ``gravity_comp``, ``cartesian_impedance``) switches to it first (``controller.set``:
        disabled or holding)."""
        if name is None:
            return self.call("gains.get")["controller"]
        return self.call("controller.set", {"name": name})["controller"]

    def reload(self) -> str:
        """Reloads the configuration (like SIGHUP); returns what changed ("" for nothing).
        Keys that need a restart raise :class:`armd.RestartNeeded`."""
        return self.call("reload")["changed"]

    # ------------------------------------------------------------------ payload

    def payload(self) -> dict[str, Any]:
        """The payload in use ``{mass, com[3], inertia[6]}`` (``payload.get``): the config's
        until :meth:`payload_set` replaces it."""
        return self.call("payload.get")

    def payload_set(self, mass: float, com: Any = None, inertia: Any = None) -> dict[str, Any]:
        """Sets the payload the tool holds (``payload.set``): mass [kg] (0 clears it), com
        [m] in the tool frame, inertia ``ixx ixy ixz iyy iyz izz`` about the COM [kg m^2]
        (default zeros). Applied between two ticks; kept until the next one or a restart (a
        reload keeps it). Returns the payload now in use."""
        params: dict[str, Any] = {"mass": number(mass, "mass")}
        if com is not None:
            params["com"] = vector(com, "com")
        if inertia is not None:
            params["inertia"] = vector(inertia, "inertia")
        return self.call("payload.set", params)

    def payload_clear(self) -> dict[str, Any]:
        """No payload (mass 0)."""
        return self.payload_set(0.0)

    def payload_estimate(self, *, poses: Any = None, move_time: float | None = None,
                         apply: bool = False, timeout: float | None = 120.0) -> dict[str, Any]:
        """Estimates the payload (``payload.estimate``): the arm, holding at rest, moves through
        poses (default: 8 around the present one, turning the elbow and the wrist by 0.5 rad;
        or poses, one position per joint each, each move move_time [s] or the shortest the
        limits allow) and back, and the torques of those moves are fitted. Returns ``{mass,
        com, sd_mass, sd_com, inertia, residual_rms, cond, rows, rows_left_out, samples, poses,
        duration, applied, warnings}`` (com, inertia None when not determined; warnings: sentences about
        coordinates the moves barely showed); with apply the result becomes the
        payload. Waits up to timeout [s] for the reply."""
        params: dict[str, Any] = {}
        if poses is not None:
            params["poses"] = [vector(p, "poses[%d]" % i) for i, p in enumerate(poses)]
        if move_time is not None:
            params["move_time"] = number(move_time, "move_time")
        if apply:
            params["apply"] = True
        return self.call("payload.estimate", params, timeout=timeout)

    def stats_reset(self) -> None:
        """The loop timing quantiles in status() start afresh (counters keep counting)."""
        self.call("stats.reset")

    def sim_run(self, seconds: float, *, timeout: float | None = None) -> float:
        """armd --lockstep only: lets simulated time advance by ``seconds`` and returns the
        control time reached [s] (a paused lockstep runs those ticks now; a free one answers
        once they have run). Notifications that arrive meanwhile stay queued."""
        return self.call("sim.run", {"seconds": number(seconds, "seconds")},
                         timeout=timeout)["time"]


class Subscription:
    """The telemetry and events of a subscribed :class:`Client`: iterate for
    :class:`armd.Telemetry` and :class:`armd.Event` records in arrival order, each waited for
    at most ``timeout`` [s] (ClientTimeout), ConnectionClosed when armd closes. ``rate_hz`` is
    the telemetry rate armd uses. As a context manager it unsubscribes on exit."""

    def __init__(self, client: Client, rate_hz: float, timeout: float | None):
        self.client = client
        self.rate_hz = rate_hz
        self.timeout = timeout

    def __iter__(self) -> Iterator[Telemetry | Event]:
        return self

    def __next__(self) -> Telemetry | Event:
        return notification(self.client.next_notification(self.timeout))

    def close(self) -> None:
        """Unsubscribes (nothing when the connection is gone)."""
        try:
            self.client.unsubscribe()
        except (ConnectionClosed, OSError):
            pass

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
