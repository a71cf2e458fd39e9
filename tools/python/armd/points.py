"""armd.points — trajectories from arrays: lists, tuples, any iterable, or NumPy arrays when
NumPy happens to be installed (anything with ``tolist()``; NumPy itself is never imported).

Only what JSON cannot carry is checked here (non-numbers, NaN, infinity, ragged rows), with
:class:`armd.InvalidParams` naming the element as armd would (``points[3].q[1]``); armd checks
everything else (times, joint count, limits) and its error names the element the same way.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, Sequence

from armd.errors import InvalidParams

Point = dict[str, Any]  # {"t": s, "q": [...], "qd"?: [...], "qdd"?: [...]}
_KEYS = ("t", "q", "qd", "qdd")


def number(x: Any, where: str) -> float:
    """x as a finite float (NumPy scalars too); InvalidParams naming `where` otherwise."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InvalidParams("%s: expected a number, got %s" % (where, type(x).__name__))
    v = float(x)
    if not math.isfinite(v):
        raise InvalidParams("%s: %r is not a finite number" % (where, v))
    return v


def linear(offset: Any = None, position: Any = None, orientation: Any = None,
           frame: str = "base", speed: float | None = None, acceleration: float | None = None,
           append: bool = False) -> dict[str, Any]:
    """The params of ``move_linear``: one of offset ([dx, dy, dz] m, in the base frame's axes
    or the tool's, frame "tool") and position ([x, y, z] m, base frame, with an optional
    orientation [w, x, y, z]); speed [m/s], acceleration [m/s^2] when given."""
    if (offset is None) == (position is None):
        raise InvalidParams("move_linear: give one of offset and position")
    if frame not in ("base", "tool"):
        raise InvalidParams("frame: expected \"base\" or \"tool\", got %r" % (frame,))
    p: dict[str, Any] = {}
    if offset is not None:
        p["offset"] = vector(offset, "offset")
        p["frame"] = frame
    else:
        p["position"] = vector(position, "position")
    if orientation is not None:
        p["orientation"] = vector(orientation, "orientation")
    if speed is not None:
        p["speed"] = number(speed, "speed")
    if acceleration is not None:
        p["acceleration"] = number(acceleration, "acceleration")
    if append:
        p["mode"] = "append"
    return p


def _items(v: Any, where: str) -> list[Any]:
    """The elements of a sequence, iterable or array (its tolist())."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (str, bytes, dict)) or not isinstance(v, Iterable):
        raise InvalidParams("%s: expected a sequence, got %s" % (where, type(v).__name__))
    return list(v)


def vector(v: Any, where: str) -> list[float]:
    """A joint vector (one finite number per joint) as a list of floats."""
    return [number(x, "%s[%d]" % (where, i)) for i, x in enumerate(_items(v, where))]


def _rows(v: Any, n: int, where: str) -> list[list[float]]:
    """n joint vectors of equal length (a list of lists or a 2-D array)."""
    rows = _items(v, where)
    if len(rows) != n:
        raise InvalidParams("%s: %d rows, expected %d (one per time in t)" % (where, len(rows), n))
    out = [vector(r, "%s[%d]" % (where, i)) for i, r in enumerate(rows)]
    for i, r in enumerate(out):
        if len(r) != len(out[0]):
            raise InvalidParams("%s[%d]: %d values, %s[0] has %d" % (where, i, len(r), where,
                                                                     len(out[0])))
    return out


def points(t: Any, q: Any, qd: Any = None, qdd: Any = None) -> list[Point]:
    """Waypoints from arrays: ``t`` [s] the times (k of them, after the start), ``q`` k rows of
    joint positions (a k x n array), optional ``qd`` and ``qdd`` the velocities and
    accelerations at those points (k x n). Returns ``[{"t", "q", ...}, ...]`` for
    :meth:`armd.Client.trajectory`. ``t`` may be any iterable, e.g.
    ``itertools.accumulate(durations)`` for segment durations."""
    ts = [number(x, "t[%d]" % i) for i, x in enumerate(_items(t, "t"))]
    cols = {"q": _rows(q, len(ts), "q")}
    if qd is not None:
        cols["qd"] = _rows(qd, len(ts), "qd")
    if qdd is not None:
        if qd is None:
            raise InvalidParams("qdd: given without qd")
        cols["qdd"] = _rows(qdd, len(ts), "qdd")
    return [dict({"t": ts[i]}, **{k: v[i] for k, v in cols.items()}) for i in range(len(ts))]


def normalize(pts: Iterable[Any]) -> list[Point]:
    """The waypoints for a trajectory request: each a dict ``{"t", "q", "qd"?, "qdd"?}`` or a
    sequence ``(t, q[, qd[, qdd]])``, the vectors lists or arrays."""
    out = []
    for i, p in enumerate(_items(pts, "points")):
        where = "points[%d]" % i
        if isinstance(p, dict):
            unknown = sorted(set(p) - set(_KEYS))
            if unknown:
                raise InvalidParams("%s: unknown member '%s' (expected: t, q, qd, qdd)" %
                                    (where, unknown[0]))
            given = {k: p[k] for k in _KEYS if k in p}
        else:
            seq: Sequence[Any] = _items(p, where)
            if not 2 <= len(seq) <= 4:
                raise InvalidParams("%s: expected (t, q[, qd[, qdd]]), got %d items" %
                                    (where, len(seq)))
            given = dict(zip(_KEYS, seq))
        for k in ("t", "q"):
            if k not in given:
                raise InvalidParams("%s.%s: missing" % (where, k))
        point: Point = {"t": number(given["t"], where + ".t")}
        for k in ("q", "qd", "qdd"):
            if k in given and given[k] is not None:
                point[k] = vector(given[k], "%s.%s" % (where, k))
        out.append(point)
    return out
