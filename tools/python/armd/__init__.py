"""armd — the Python client of armd, the real-time robot arm controller daemon.

Standard library only (Python 3.11); NumPy arrays are accepted where vectors are, when NumPy
happens to be installed. All joint vectors are in the configuration's joint order, SI units.

    import armd

    with armd.Client() as arm:              # $ARMD_SOCKET, else /run/armd/armd.sock
        print(arm.status().state)           # an armd.Status (frozen dataclass)
        print(arm.pose().position)          # the tool frame: position [m], quaternion
        arm.enable()
        done = arm.move_to([0, 1.2, -1.4, 0, 0.3, 0], blocking=True)
        print(done)                         # Done(id=1, result='done', time=...)
        with arm.subscribe(100) as sub:     # telemetry at 100 Hz plus every event
            for rec in sub:
                if isinstance(rec, armd.Telemetry):
                    print(rec.time, rec.q)

The gripper of an arm with a ``[tool]`` section is ``arm.tool`` (armd.tool): ``release()``,
``grasp(width, force=...)``, ``move(opening)``, ``stop()``, ``state()``, each command returning
an :class:`armd.ToolResult` (outcome, opening, force; ``.ok``) when the fingers are done.

Errors are :class:`armd.Error` subclasses named for armd's error codes (BadState, Limits,
InvalidParams, NoTool, ...; see armd.errors). ``armd.aio`` is the same client for asyncio.
``python3 -m armd status`` is a small command line.
"""
from armd.client import DEFAULT_SOCKET, Client, Subscription, socket_path
from armd.errors import (ERRORS, BadState, Busy, ClientTimeout, ConfigError, Conflict,
                         ConnectFailed, ConnectionClosed, DeviceError, Error, Failed,
                         IdleTimeout, Internal, InvalidConfig, InvalidParams, InvalidRequest,
                         LineTooLong, Limits, NoTool, NotRunning, ParseError, ProtocolError,
                         Restricted, RestartNeeded, Stopping, Timeout, TooManyClients,
                         TrajectoryAborted, UnknownMethod, Unreachable, Unsupported)
from armd.points import points
from armd.records import Done, Event, Motion, Pose, Telemetry, ToolResult, ToolState, Wrench
from armd.replies import (Collision, Driver, Info, JointLimits, LoopStats, Progress, Status,
                          Timing, ToolInfo, ToolStatus)

__all__ = [
    "Client", "Subscription", "socket_path", "DEFAULT_SOCKET", "points",
    "Telemetry", "Event", "Motion", "Done", "Pose", "Wrench", "ToolResult", "ToolState",
    "Status", "Info", "Progress", "LoopStats", "Timing", "Collision", "JointLimits", "Driver",
    "ToolStatus", "ToolInfo",
    "Error", "ERRORS", "ParseError", "InvalidRequest", "UnknownMethod", "InvalidParams",
    "LineTooLong", "TooManyClients", "Restricted", "IdleTimeout", "Busy", "Timeout", "BadState",
    "NoTool",
    "Limits", "Unreachable", "Conflict", "RestartNeeded", "InvalidConfig", "ConfigError", "DeviceError",
    "NotRunning", "Stopping", "Unsupported", "Internal", "Failed", "ConnectFailed", "ConnectionClosed",
    "ClientTimeout", "ProtocolError", "TrajectoryAborted",
]
