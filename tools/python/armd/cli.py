"""armd.cli — ``python3 -m armd``: a small command line on the client (armctl is the full one).

    python3 -m armd [-s SOCKET | -a NAME] [--json] [--timeout S] COMMAND

COMMAND: status, info, or a state command (enable, disable, hold, estop, reset, cancel).
Exit status 0 ok, 1 when armd refused, failed or cannot be reached (its ``code: message`` on
stderr), 2 on usage errors.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from armd.client import Client, socket_path
from armd.errors import Error

STATE_COMMANDS = ("enable", "disable", "hold", "estop", "reset", "cancel")


def _unit(types: list[str], j: int, rotary: str, linear: str) -> str:
    """The units of joint j: linear for a prismatic joint, else rotary."""
    return linear if j < len(types) and types[j] == "prismatic" else rotary


def _fmt(x: Any) -> str:
    """A table cell: a number with 5 decimals, or "-" (null: not finite in armd)."""
    return "%12.5f" % x if isinstance(x, (int, float)) else "%12s" % "-"


def format_status(info: dict[str, Any], st: dict[str, Any]) -> str:
    """status as a table: state, fault, controller, trajectory, the tool, one row per joint,
    loop."""
    lines = ["state       %s%s" % (st["state"], "  (fault: %s)" % st["fault"] if st.get("fault")
                                   else ""),
             "controller  %s" % st.get("controller")]
    tr = st.get("trajectory")
    lines.append("trajectory  " + ("id %d: %.0f %% done, %.2f s left" %
                                   (tr["id"], 100 * tr["progress"], tr["remaining"])
                                   if tr else "none"))
    tool = st.get("tool")
    if isinstance(tool, dict):  # an arm with a [tool] section: its opening [mm], force [N]
        o, f = tool.get("opening"), tool.get("force")
        lines.append("tool        %s: %s mm, %s N, %s%s" % (
            tool.get("name"), "%.2f" % (1e3 * o) if isinstance(o, (int, float)) else "-",
            "%.2f" % f if isinstance(f, (int, float)) else "-", tool.get("command"),
            ", grasped" if tool.get("grasped") is True else ""))
    lines.append("%-12s %12s %12s %12s %12s %12s  %s" % ("joint", "q", "q_des", "error", "qd",
                                                          "tau", "units"))
    types = info.get("types", [])
    for j, name in enumerate(info.get("joints", [])):
        row = [st[k][j] if j < len(st.get(k, [])) else None
               for k in ("q", "q_des", "error", "qd", "tau")]
        lines.append("%-12s %s  %s" % (name, " ".join(_fmt(x) for x in row),
                                       _unit(types, j, "rad, rad/s, N m", "m, m/s, N")))
    loop = st.get("loop") or {}
    if loop:
        lat = loop.get("lateness_us", {})
        lines.append("loop        %.0f Hz, %d ticks, %d overruns, %d failed reads, lateness "
                     "p50 %.1f us p99 %.1f us" %
                     (loop["rate_hz"], loop["ticks"], loop["overruns"], loop["failed_reads"],
                      lat.get("p50", 0), lat.get("p99", 0)))
    return "\n".join(lines)


def format_info(info: dict[str, Any]) -> str:
    """info as a table: the arm, the driver and one row of limits per joint."""
    d = info.get("driver", {})
    lines = ["arm         %s (armd %s), %d joints, %g Hz, controller %s" %
             (info["name"], info.get("version", "?"), info["dof"], info["rate_hz"],
              info.get("controller")),
             "driver      %s %s at %s baud" % (d.get("type"), d.get("port"), d.get("baud")),
             "socket      %s (max_clients %s)" % (info.get("socket"), info.get("max_clients")),
             "%-12s %-9s %12s %12s %12s %12s %12s" % ("joint", "type", "lower", "upper",
                                                      "velocity", "acceleration", "torque")]
    lim = info.get("limits", {})
    for j, name in enumerate(info.get("joints", [])):
        lines.append("%-12s %-9s %s" % (name, info["types"][j], " ".join(
            _fmt(lim[k][j]) for k in ("lower", "upper", "velocity", "acceleration", "torque"))))
    lines.append("(SI units: rad, rad/s, rad/s^2, N m; m, m/s, m/s^2, N for prismatic joints)")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The command line: where armd is, output form, timeout, one command."""
    p = argparse.ArgumentParser(prog="python3 -m armd", description="A small armd client.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("-s", "--socket", help="armd's socket (default: $ARMD_SOCKET, else "
                       "/run/armd/armd.sock)")
    where.add_argument("-a", "--arm", metavar="NAME",
                       help="the instance armd@NAME (/run/armd/NAME/armd.sock)")
    p.add_argument("--json", action="store_true", help="armd's JSON instead of tables")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for armd "
                   "(default 10)")
    p.add_argument("command", choices=("status", "info") + STATE_COMMANDS)
    return p


def run(args: argparse.Namespace) -> str:
    """Runs one command; returns what to print."""
    with Client(args.socket or socket_path(args.arm), timeout=args.timeout) as c:
        if args.command in STATE_COMMANDS:
            r = c.call(args.command)
            return json.dumps(r) if args.json else r["state"]
        info = c.info()
        if args.command == "info":
            return json.dumps(info.to_dict(), indent=1) if args.json else format_info(info)
        st = c.status()
        return json.dumps(st.to_dict(), indent=1) if args.json else format_status(info, st)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status (argparse exits 2 on usage errors)."""
    args = parser().parse_args(argv)
    try:
        print(run(args))
    except Error as e:
        print("armd: %s" % e, file=sys.stderr)
        return 1
    return 0
