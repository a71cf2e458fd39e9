"""armd.aio — the client for asyncio: the methods of :class:`armd.Client` as coroutines (and
``arm.tool``'s, see armd.tool), the same records (:class:`armd.Status`, :class:`armd.Info`,
:class:`armd.Motion`, :class:`armd.Done`, :class:`armd.Telemetry`, :class:`armd.Event`,
:class:`armd.ToolResult`) and errors, over asyncio streams on the UNIX socket. Standard library
only.

    import asyncio, armd.aio

    async def main():
        async with await armd.aio.connect() as arm:      # $ARMD_SOCKET, else /run/armd/armd.sock
            st, info = await asyncio.gather(arm.status(), arm.info())
            await arm.enable()
            async with arm.subscribe(100) as sub:        # telemetry at 100 Hz plus every event
                m = await arm.move_to(st.q, duration=1.0)
                async for rec in sub:
                    if isinstance(rec, armd.Event) and rec.method == "trajectory_done":
                        break
            print(await arm.move_to(st.q, blocking=True))   # Done(...)

One task reads the socket for the connection's life: each reply completes the request with its
id (so any number of requests may be in flight at once, from any number of tasks), every
notification goes to the subscription's queue, and every ``trajectory_done`` is remembered by
id for :meth:`Client.wait_done`. Because that task always reads, armd never sees this client's
output stall. Every wait is bounded: a call by ``timeout`` (the client's, 10 s by default), a
record of the subscription by its timeout, wait_done by the motion's planned end plus 10 s.
"""
from __future__ import annotations

import asyncio
import collections
import math
import numbers
import time
from typing import Any, Iterable

from armd.client import (CLOSING_CODES, DEFAULT_TIMEOUT, DONE_MARGIN, EVENTS_RATE_HZ,
                         _REMEMBERED, _result, socket_path)
from armd.errors import (ClientTimeout, ConnectFailed, ConnectionClosed, Error, InvalidParams,
                         LineTooLong, ProtocolError, TrajectoryAborted, from_reply)
from armd.points import linear, normalize, number, vector
from armd.records import Done, Event, Motion, Pose, Telemetry, notification
from armd.replies import Info, Status
from armd.tool import AsyncTool
from armd.wire import MAX_REPLY, MAX_REQUEST, decode, encode

__all__ = ["Client", "Subscription", "connect"]


async def connect(path: str | None = None, *, timeout: float | None = DEFAULT_TIMEOUT,
                  max_queued: int = 10000) -> "Client":
    """A :class:`Client` connected to armd at path (default ``$ARMD_SOCKET``, then
    ``/run/armd/armd.sock``); :class:`armd.ConnectFailed` when no armd answers there."""
    path = path or socket_path()
    try:
        reader, writer = await asyncio.open_unix_connection(path, limit=MAX_REPLY)
    except OSError as e:
        hint = (" (is armd running? pass the socket path or set $ARMD_SOCKET)"
                if isinstance(e, (FileNotFoundError, ConnectionRefusedError)) else "")
        raise ConnectFailed("cannot connect to armd at %s: %s%s" %
                            (path, e.strerror or e, hint)) from None
    return Client(reader, writer, path=path, timeout=timeout, max_queued=max_queued)


class Client:
    """A connection to armd for asyncio; made by :func:`connect`. An async context manager
    (closes on exit). ``timeout`` [s] bounds every call (None: no bound)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 path: str = "", timeout: float | None = DEFAULT_TIMEOUT,
                 max_queued: int = 10000):
        self.path = path
        self.timeout = math.inf if timeout is None else timeout
        self.max_queued = max_queued
        self.dropped = 0  # telemetry records dropped from a full subscription queue
        self._reader, self._writer = reader, writer
        self._send_lock = asyncio.Lock()
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._queue: collections.deque[dict[str, Any]] = collections.deque()
        self._arrived = asyncio.Event()  # set while _queue holds something or the end came
        self._done: dict[int, Done] = {}
        self._done_waiters: dict[int, list[asyncio.Future[Done]]] = {}
        self._ends: dict[int, float] = {}  # planned end (time.monotonic()) by motion id
        self._outstanding: set[int] = set()
        self._tail_end = 0.0
        self._last_motion: Motion | None = None
        self._subscribed: float | None = None  # telemetry rate while subscribed [Hz]
        self._user_sub = False  # a Subscription is open (notifications are queued for it)
        self._closed_by: Error | None = None  # why the connection ended
        self.tool = AsyncTool(self)  # the gripper's commands (armd.tool): await arm.tool.grasp(...)
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    # ------------------------------------------------------------------ the connection

    async def close(self) -> None:
        """Closes the connection; requests still waiting raise ConnectionClosed."""
        self._writer.close()
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        self._finish(ConnectionClosed("the connection was closed by this client"))
        try:
            await self._writer.wait_closed()
        except OSError:
            pass

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _read_loop(self) -> None:
        """Reads every line for the connection's life and routes it."""
        why: Error = ConnectionClosed("armd closed the connection")
        try:
            while True:
                try:
                    line = await self._reader.readuntil(b"\n")
                except asyncio.IncompleteReadError:
                    break
                except asyncio.LimitOverrunError:
                    why = ProtocolError("armd sent a line longer than %d bytes" % MAX_REPLY)
                    break
                if line.strip():
                    self._route(decode(line))
        except ProtocolError as e:
            why = e
        except (ConnectionResetError, BrokenPipeError):
            pass
        except Error as e:  # armd closing the connection with an error (idle_timeout, ...)
            why = e
        self._finish(why)

    def _route(self, msg: dict[str, Any]) -> None:
        """A reply to its request's future; a notification to the bookkeeping and the queue."""
        if "id" not in msg:
            self._observe(msg)
            if self._user_sub:
                self._keep(msg)
            return
        rid = msg["id"]
        fut = self._pending.pop(rid, None) if type(rid) is int else None
        if fut is not None:
            if not fut.done():
                fut.set_result(msg)
            return
        err = msg.get("error")
        if rid is None and isinstance(err, dict) and err.get("code") in CLOSING_CODES:
            raise from_reply(err)
        # else: a late reply to a request that timed out, dropped

    def _observe(self, msg: dict[str, Any]) -> None:
        """Remembers trajectory ends by id and wakes their waiters."""
        if msg.get("method") != "trajectory_done":
            return
        p = msg.get("params")
        if not isinstance(p, dict) or type(p.get("id")) is not int:
            return
        done = Done(id=p["id"], result=str(p.get("result")), time=notification(msg).time)
        self._done[done.id] = done
        if len(self._done) > _REMEMBERED:
            del self._done[next(iter(self._done))]
        self._outstanding.discard(done.id)
        for fut in self._done_waiters.pop(done.id, []):
            if not fut.done():
                fut.set_result(done)

    def _keep(self, msg: dict[str, Any]) -> None:
        """Queues a notification for the subscription; a full queue loses its oldest
        telemetry record (events are kept)."""
        if len(self._queue) >= self.max_queued:
            for i, old in enumerate(self._queue):
                if old.get("method") == "telemetry":
                    del self._queue[i]
                    break
            else:
                self._queue.popleft()
            self.dropped += 1
        self._queue.append(msg)
        self._arrived.set()

    def _finish(self, why: Error) -> None:
        """The connection ended: every wait raises why."""
        if self._closed_by is None:
            self._closed_by = why
        for fut in list(self._pending.values()):
            if not fut.done():
                fut.set_exception(self._closed_by)
        self._pending.clear()
        for waiters in self._done_waiters.values():
            for fut in waiters:
                if not fut.done():
                    fut.set_exception(self._closed_by)
        self._done_waiters.clear()
        self._arrived.set()

    # ------------------------------------------------------------------ requests

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      timeout: float | None = None) -> dict[str, Any]:
        """Sends a request and returns armd's whole reply (``{"id", "result"}`` or ``{"id",
        "error"}``); errors and timeouts as :meth:`armd.Client.request`."""
        if self._closed_by is not None:
            raise type(self._closed_by)(self._closed_by.message, method=method)
        self._next_id += 1
        rid = self._next_id
        req: dict[str, Any] = {"id": rid, "method": method}
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
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        timeout = self.timeout if timeout is None else timeout
        try:
            async with self._send_lock:
                self._writer.write(line)
                await self._writer.drain()
            return await asyncio.wait_for(fut, None if math.isinf(timeout) else timeout)
        except (ConnectionResetError, BrokenPipeError) as e:
            raise ConnectionClosed("connection to armd lost while sending: %s" % e,
                                   method=method) from None
        except asyncio.TimeoutError:
            raise ClientTimeout("no reply to '%s' from armd within %g s" % (method, timeout),
                                method=method) from None
        except Error as e:
            if e.method is None:
                e.method = method
            raise
        finally:
            self._pending.pop(rid, None)

    async def call(self, method: str, params: dict[str, Any] | None = None, *,
                   timeout: float | None = None) -> Any:
        """The result of a request; an error reply raises the :class:`armd.Error` subclass for
        its code."""
        return _result(await self.request(method, params, timeout=timeout), method)

    # ------------------------------------------------------------------ notifications

    def subscribe(self, rate_hz: float = 50.0, *,
                  timeout: float | None = None) -> "Subscription":
        """Telemetry at rate_hz [Hz] and every event, as an async iterator of
        :class:`armd.Telemetry` and :class:`armd.Event` records. ``await arm.subscribe()``
        or ``async with arm.subscribe() as sub`` subscribes (before a motion is sent, so
        that no sample of it is missed); leaving the ``async with`` or ``await sub.close()``
        unsubscribes."""
        return Subscription(self, rate_hz, timeout)

    async def _subscribe(self, rate_hz: float) -> float:
        r = await self.call("subscribe", {"rate_hz": number(rate_hz, "rate_hz")})
        self._queue.clear()
        self._arrived.clear()
        self._subscribed, self._user_sub = float(r["rate_hz"]), True
        return self._subscribed

    async def _unsubscribe(self) -> None:
        """Ends the user's subscription; events for outstanding motions stay (1 Hz)."""
        self._user_sub = False
        if self._outstanding:
            r = await self.call("subscribe", {"rate_hz": EVENTS_RATE_HZ})
            self._subscribed = float(r["rate_hz"])
        else:
            await self.call("unsubscribe")
            self._subscribed = None

    async def _next(self, timeout: float | None) -> Telemetry | Event:
        """The next queued notification, waited for at most timeout [s]."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while not self._queue:
            if self._closed_by is not None:
                raise type(self._closed_by)(self._closed_by.message)
            self._arrived.clear()
            left = deadline - time.monotonic()
            try:
                await asyncio.wait_for(self._arrived.wait(),
                                       None if math.isinf(left) else max(left, 0))
            except asyncio.TimeoutError:
                raise ClientTimeout("no notification from armd within %g s" % timeout) from None
        return notification(self._queue.popleft())

    # ------------------------------------------------------------------ state commands

    async def info(self) -> Info:
        """The arm (:class:`armd.Info`)."""
        return Info.from_dict(await self.call("info"))

    async def status(self) -> Status:
        """The arm now (:class:`armd.Status`)."""
        return Status.from_dict(await self.call("status"))

    async def pose(self) -> Pose:
        """The tool frame in the base frame now (:class:`armd.Pose`), from ``status``."""
        pose = (await self.status()).pose
        if pose is None:
            raise ProtocolError("armd's status has no pose (an armd older than this client)")
        return pose

    async def enable(self) -> str:
        """Torque on, holding; returns the new state."""
        return (await self.call("enable"))["state"]

    async def disable(self) -> str:
        """Torque off; returns the new state."""
        return (await self.call("disable"))["state"]

    async def hold(self) -> str:
        """Stops a move within the limits and holds; returns the new state."""
        return (await self.call("hold"))["state"]

    async def estop(self) -> str:
        """Emergency stop; returns the new state (``estop``)."""
        return (await self.call("estop"))["state"]

    async def reset(self) -> str:
        """Leaves ``fault`` or ``estop`` for ``disabled``; returns the new state."""
        return (await self.call("reset"))["state"]

    async def cancel(self) -> str:
        """Decelerates the motion within the limits and holds; returns the new state."""
        return (await self.call("cancel"))["state"]

    # ------------------------------------------------------------------ motion

    async def trajectory(self, points: Iterable[Any], mode: str = "replace", *,
                         blocking: bool = False) -> Motion | Done:
        """As :meth:`armd.Client.trajectory`: the :class:`armd.Motion` once armd accepted it,
        or with blocking=True the :class:`armd.Done` once it ended (``aborted: why`` raises
        :class:`armd.TrajectoryAborted`)."""
        if mode not in ("replace", "append"):
            raise InvalidParams("mode: expected 'replace' or 'append', got %r" % (mode,),
                                method="trajectory")
        params = {"points": normalize(points), "mode": mode}
        m = await self._motion("trajectory", params, append=mode == "append")
        return await self.wait_done(traj=m) if blocking else m

    async def move_to(self, q: Any, duration: float | None = None, *,
                      blocking: bool = False) -> Motion | Done:
        """As :meth:`armd.Client.move_to`, blocking as :meth:`trajectory`."""
        params: dict[str, Any] = {"q": vector(q, "q")}
        if duration is not None:
            params["duration"] = number(duration, "duration")
        m = await self._motion("move_to", params, append=False)
        return await self.wait_done(traj=m) if blocking else m

    async def move_linear(self, offset: Any = None, *, position: Any = None,
                          orientation: Any = None, frame: str = "base",
                          speed: float | None = None, acceleration: float | None = None,
                          append: bool = False, blocking: bool = False) -> Motion | Done:
        """As :meth:`armd.Client.move_linear`, blocking as :meth:`trajectory`."""
        params = linear(offset, position, orientation, frame, speed, acceleration, append)
        m = await self._motion("move_linear", params, append=append)
        return await self.wait_done(traj=m) if blocking else m

    async def _motion(self, method: str, params: dict[str, Any], append: bool) -> Motion:
        """Sends a motion, subscribed to events first (1 Hz) so that its end is seen."""
        if self._subscribed is None:
            r = await self.call("subscribe", {"rate_hz": EVENTS_RATE_HZ})
            self._subscribed = float(r["rate_hz"])
        r = await self.call(method, params)
        m = Motion(id=int(r["id"]), duration=float(r["duration"]))
        now = time.monotonic()
        self._tail_end = (max(now, self._tail_end) if append else now) + m.duration
        self._ends[m.id] = self._tail_end
        if len(self._ends) > _REMEMBERED:
            del self._ends[next(iter(self._ends))]
        if m.id not in self._done:
            self._outstanding.add(m.id)
        self._last_motion = m
        return m

    async def wait_done(self, timeout: float | None = None, traj: Motion | int | None = None, *,
                        check: bool = True) -> Done:
        """The :class:`armd.Done` of traj (default: the last motion sent on this connection),
        as :meth:`armd.Client.wait_done`; several tasks may wait for the same motion. Only
        motions sent while this connection was subscribed (every motion it sent) can be
        waited for."""
        tid = traj.id if isinstance(traj, Motion) else traj
        if tid is None:
            if self._last_motion is None:
                raise ValueError("wait_done: no motion was sent on this connection; pass traj")
            tid = self._last_motion.id
        if timeout is None:
            end = self._ends.get(tid)
            timeout = (max(0.0, end - time.monotonic()) + DONE_MARGIN if end is not None
                       else self.timeout)
        done = self._done.get(tid)
        if done is None:
            if self._closed_by is not None:
                raise type(self._closed_by)(self._closed_by.message, method="wait_done")
            fut: asyncio.Future[Done] = asyncio.get_running_loop().create_future()
            self._done_waiters.setdefault(tid, []).append(fut)
            try:
                done = await asyncio.wait_for(fut, None if math.isinf(timeout) else timeout)
            except asyncio.TimeoutError:
                raise ClientTimeout("no end of trajectory %d from armd within %g s" %
                                    (tid, timeout), method="wait_done") from None
        if check and done.result.startswith("aborted"):
            raise TrajectoryAborted("trajectory %d ended %s" % (tid, done.result), done)
        return done

    # ------------------------------------------------------------------ tuning, payload

    async def gains(self, *, kp: Any = None, kd: Any = None, ki: Any = None) -> dict[str, Any]:
        """As :meth:`armd.Client.gains`."""
        given = {k: v for k, v in (("kp", kp), ("kd", kd), ("ki", ki)) if v is not None}
        if not given:
            return await self.call("gains.get")
        return await self.call("gains.set", {
            k: number(v, k) if isinstance(v, numbers.Real) else vector(v, k)
            for k, v in given.items()})

    async def impedance(self, *, translational: Any = None, rotational: Any = None,
                        damping: Any = None, guide: Any = None) -> dict[str, Any]:
        """As :meth:`armd.Client.impedance`."""
        given = {k: v for k, v in (("translational_stiffness", translational),
                                   ("rotational_stiffness", rotational),
                                   ("damping_ratio", damping), ("guide_damping", guide))
                 if v is not None}
        if not given:
            return await self.call("impedance.get")
        return await self.call("impedance.set", {
            k: number(v, k) if isinstance(v, numbers.Real) else vector(v, k)
            for k, v in given.items()})

    async def controller(self, name: str | None = None) -> str:
        """As :meth:`armd.Client.controller`."""
        if name is None:
            return (await self.call("gains.get"))["controller"]
        return (await self.call("controller.set", {"name": name}))["controller"]

    async def reload(self) -> str:
        """As :meth:`armd.Client.reload`."""
        return (await self.call("reload"))["changed"]

    async def payload(self) -> dict[str, Any]:
        """As :meth:`armd.Client.payload`."""
        return await self.call("payload.get")

    async def payload_set(self, mass: float, com: Any = None,
                          inertia: Any = None) -> dict[str, Any]:
        """As :meth:`armd.Client.payload_set`."""
        params: dict[str, Any] = {"mass": number(mass, "mass")}
        if com is not None:
            params["com"] = vector(com, "com")
        if inertia is not None:
            params["inertia"] = vector(inertia, "inertia")
        return await self.call("payload.set", params)

    async def payload_clear(self) -> dict[str, Any]:
        """No payload (mass 0)."""
        return await self.payload_set(0.0)

    async def payload_estimate(self, *, poses: Any = None, move_time: float | None = None,
                               apply: bool = False,
                               timeout: float | None = 120.0) -> dict[str, Any]:
        """As :meth:`armd.Client.payload_estimate` (the arm moves; the reply comes at the
        end)."""
        params: dict[str, Any] = {}
        if poses is not None:
            params["poses"] = [vector(p, "poses[%d]" % i) for i, p in enumerate(poses)]
        if move_time is not None:
            params["move_time"] = number(move_time, "move_time")
        if apply:
            params["apply"] = True
        return await self.call("payload.estimate", params, timeout=timeout)

    async def stats_reset(self) -> None:
        """As :meth:`armd.Client.stats_reset`."""
        await self.call("stats.reset")

    async def sim_run(self, seconds: float, *, timeout: float | None = None) -> float:
        """As :meth:`armd.Client.sim_run` (armd --lockstep)."""
        return (await self.call("sim.run", {"seconds": number(seconds, "seconds")},
                                timeout=timeout))["time"]


class Subscription:
    """The telemetry and events of an :class:`armd.aio.Client`: ``async for rec in sub``
    gives :class:`armd.Telemetry` and :class:`armd.Event` records in arrival order, each
    waited for at most ``timeout`` [s] (ClientTimeout); ConnectionClosed when armd closes.
    ``rate_hz`` is the rate armd granted (None before subscribing)."""

    def __init__(self, client: Client, rate_hz: float, timeout: float | None):
        self.client = client
        self.rate_hz: float | None = None
        self.timeout = timeout
        self._asked = rate_hz

    def __await__(self):  # type: ignore[no-untyped-def]
        return self._start().__await__()

    async def _start(self) -> "Subscription":
        if self.rate_hz is None:
            self.rate_hz = await self.client._subscribe(self._asked)
        return self

    async def __aenter__(self) -> "Subscription":
        return await self._start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __aiter__(self) -> "Subscription":
        return self

    async def __anext__(self) -> Telemetry | Event:
        await self._start()
        return await self.client._next(self.timeout)

    async def close(self) -> None:
        """Unsubscribes (nothing when the connection is gone)."""
        try:
            await self.client._unsubscribe()
        except (ConnectionClosed, OSError):
            pass
