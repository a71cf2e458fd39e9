"""armd.tool — the tool (gripper) of an arm with a ``[tool]`` section, as ``arm.tool`` of
:class:`armd.Client` (:class:`Tool`) and of :class:`armd.aio.Client` (:class:`AsyncTool`, the
same methods as coroutines): armd-api(7)'s tool.move, tool.grasp, tool.release, tool.stop and
status's ``tool``. Openings and widths in m, speeds in m/s, forces in N.

    with armd.Client() as arm:
        arm.enable()                                # tool commands need the arm enabled
        arm.tool.release()                          # ToolResult(outcome='reached', ...)
        r = arm.tool.grasp(width=0.020, force=10)   # close on a 20 mm object, 10 N
        if not r.ok:                                # r.outcome 'no_object', 'blocked', ...
            ...

armd answers a tool command when the fingers are done, so a command waits up to ``timeout``
[s] (TOOL_TIMEOUT, not the client's timeout); armd itself gives up after ``[tool] timeout`` (5 s
by default) and raises :class:`armd.Timeout`. A command answered on one connection holds every
later request of that connection until then: stop a running command from another connection
(another Client, or ``armctl tool stop``). An arm without a tool raises :class:`armd.NoTool`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from armd.errors import NoTool
from armd.points import number
from armd.records import ToolResult
from armd.replies import ToolStatus

if TYPE_CHECKING:
    import armd.aio
    import armd.client

TOOL_TIMEOUT = 60.0  # [s] a tool command's wait for its answer (armd's [tool] timeout is 5 s)


def _optional(**given: Any) -> dict[str, Any]:
    """The optional params of a tool command: the values given (None: armd's default), each
    checked to be a finite number before anything is sent (InvalidParams names it)."""
    return {k: number(v, k) for k, v in given.items() if v is not None}


def move_params(opening: Any, speed: Any) -> dict[str, Any]:
    """tool.move's params, checked."""
    return {"opening": number(opening, "opening"), **_optional(speed=speed)}


def grasp_params(width: Any, force: Any, speed: Any, epsilon_inner: Any,
                 epsilon_outer: Any) -> dict[str, Any]:
    """tool.grasp's params, checked."""
    return {"width": number(width, "width"),
            **_optional(force=force, speed=speed, epsilon_inner=epsilon_inner,
                        epsilon_outer=epsilon_outer)}


def _state(status: Any) -> ToolStatus:
    """status's tool; NoTool for an arm without one."""
    if status.tool is None:
        raise NoTool("this arm has no tool: its configuration has no [tool] section",
                     method="status")
    return status.tool


class Tool:
    """``arm.tool`` of an :class:`armd.Client`: the gripper's commands, each returning the
    :class:`armd.ToolResult` (outcome, opening, force) armd answers when the fingers are done.
    ``result.ok`` is True for ``grasped`` (grasp) and ``reached`` (move, release)."""

    def __init__(self, client: "armd.client.Client"):
        self._client = client

    def move(self, opening: float, speed: float | None = None, *,
             timeout: float | None = TOOL_TIMEOUT) -> ToolResult:
        """Moves the fingers to ``opening`` [m] (within the stroke) at ``speed`` [m/s]
        (default ``[tool] speed``): ``reached``, or ``blocked`` when they stop short."""
        params = move_params(opening, speed)
        return ToolResult.from_dict(self._client.call("tool.move", params, timeout=timeout))

    def grasp(self, width: float, force: float | None = None, speed: float | None = None,
              epsilon_inner: float | None = None, epsilon_outer: float | None = None, *,
              timeout: float | None = TOOL_TIMEOUT) -> ToolResult:
        """Closes the fingers on an object ``width`` [m] wide with ``force`` [N] (default
        ``[tool] force``) at ``speed`` [m/s]: ``grasped`` when they stop with an opening from
        width - epsilon_inner to width + epsilon_outer [m] (default ``[tool] epsilon`` each),
        ``no_object`` below that, ``blocked`` above. The force keeps squeezing until the next
        tool command."""
        params = grasp_params(width, force, speed, epsilon_inner, epsilon_outer)
        return ToolResult.from_dict(self._client.call("tool.grasp", params, timeout=timeout))

    def release(self, speed: float | None = None, *,
                timeout: float | None = TOOL_TIMEOUT) -> ToolResult:
        """Opens the fingers to the stroke's upper end, letting go: ``reached`` or
        ``blocked``."""
        params = _optional(speed=speed)
        return ToolResult.from_dict(self._client.call("tool.release", params, timeout=timeout))

    def stop(self) -> ToolResult:
        """Stops the fingers where they are (answered at once, outcome ``stopped``); the tool
        command running on another connection then answers ``stopped``."""
        return ToolResult.from_dict(self._client.call("tool.stop"))

    def state(self) -> ToolStatus:
        """The tool now (status's ``tool``: opening, speed, force, command, grasped, stroke)."""
        return _state(self._client.status())


class AsyncTool:
    """``arm.tool`` of an :class:`armd.aio.Client`: :class:`Tool`'s methods as coroutines.
    Requests of one aio connection are answered in order too: ``stop()`` a running command
    from another connection."""

    def __init__(self, client: "armd.aio.Client"):
        self._client = client

    async def move(self, opening: float, speed: float | None = None, *,
                   timeout: float | None = TOOL_TIMEOUT) -> ToolResult:
        """As :meth:`Tool.move`."""
        params = move_params(opening, speed)
        return ToolResult.from_dict(await self._client.call("tool.move", params,
                                                            timeout=timeout))

    async def grasp(self, width: float, force: float | None = None, speed: float | None = None,
                    epsilon_inner: float | None = None, epsilon_outer: float | None = None, *,
                    timeout: float | None = TOOL_TIMEOUT) -> ToolResult:
        """As :meth:`Tool.grasp`."""
        params = grasp_params(width, force, speed, epsilon_inner, epsilon_outer)
        return ToolResult.from_dict(await self._client.call("tool.grasp", params,
                                                            timeout=timeout))

    async def release(self, speed: float | None = None, *,
                      timeout: float | None = TOOL_TIMEOUT) -> ToolResult:
        """As :meth:`Tool.release`."""
        params = _optional(speed=speed)
        return ToolResult.from_dict(await self._client.call("tool.release", params,
                                                            timeout=timeout))

    async def stop(self) -> ToolResult:
        """As :meth:`Tool.stop`."""
        return ToolResult.from_dict(await self._client.call("tool.stop"))

    async def state(self) -> ToolStatus:
        """As :meth:`Tool.state`."""
        return _state(await self._client.status())
