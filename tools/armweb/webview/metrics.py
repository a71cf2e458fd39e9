"""metrics.py — armd's numbers as a Prometheus text exposition (format 0.0.4, the one every
Prometheus scrapes; https://prometheus.io/docs/instrumenting/exposition_formats/).

Pure functions of what armweb last saw (no I/O, standard library only, so that a unit test runs
them without aiohttp). Every series carries an `arm` label; per-joint series a `joint` label in
config joint order. Values come from armd's `status` (polled every 0.5 s), so a scrape never
asks armd anything and is at most one poll old. Units are Prometheus' base units: seconds
(armd reports the loop timing in microseconds), joint quantities in rad / N m (m / N on a
prismatic joint), as armd's socket gives them.
"""
import math
import re

# armd's states (daemon/safety.c, sf_state_name): one armd_state series each, 1 for the current.
STATES = ("disabled", "holding", "moving", "fault", "estop")

# Fault reasons, as the label of armd_faults_total: armd's fault sentences name joints and
# numbers ("joint j2: following error 0.12 over the limit 0.1"), one series per distinct
# sentence would grow without bound, so each sentence is classed by the first pattern it
# contains (daemon/safety.c and daemon/loop/ write them: sense.c, loop.c, observer.c).
# Order matters: "non-finite desired velocity" is non_finite, not velocity_limit.
FAULT_CLASSES = (
    ("non_finite", re.compile(r"non-finite")),
    ("device_alert", re.compile(r"device alert")),
    ("control_stalled", re.compile(r"control thread stalled")),
    ("read_failures", re.compile(r"failed reads")),
    ("write_failures", re.compile(r"failed writes")),
    ("following_error", re.compile(r"following error")),
    ("position_limit", re.compile(r"outside limits")),
    ("velocity_limit", re.compile(r"velocity .* over the limit")),
)
FAULT_OTHER = "other"

# Counters of status.loop: (metric name, status key, help).
LOOP_COUNTERS = (
    ("armd_loop_ticks_total", "ticks", "Control ticks run since armd started."),
    ("armd_loop_overruns_total", "overruns", "Loop periods skipped because a tick woke late."),
    ("armd_loop_late_ticks_total", "late_ticks",
     "Ticks that woke one or more periods late (one per overrun episode)."),
    ("armd_loop_failed_reads_total", "failed_reads", "Failed joint-state reads from the servos."),
    ("armd_loop_failed_writes_total", "failed_writes", "Failed torque writes to the servos."),
    ("armd_loop_read_gaps_total", "read_gaps",
     "Runs of failed reads that were ridden out without a fault."),
    ("armd_loop_saturations_total", "saturations",
     "Torque commands clamped to a joint's torque limit."),
)
# Timing statistics of status.loop, microseconds in armd, seconds here.
LOOP_TIMINGS = (
    ("armd_loop_lateness_seconds", "lateness_us", "How late a tick woke after its period began"),
    ("armd_loop_read_seconds", "read_us", "Time to read the joint state from the servos"),
    ("armd_loop_compute_seconds", "compute_us", "Time to compute the torque command"),
    ("armd_loop_write_seconds", "write_us", "Time to write the torque command"),
)
TIMING_STATS = ("p50", "p99", "max")


def fault_class(reason):
    """The armd_faults_total reason label of one of armd's fault sentences."""
    for label, pattern in FAULT_CLASSES:
        if pattern.search(reason or ""):
            return label
    return FAULT_OTHER


def fault_labels():
    """Every reason label, in a fixed order (each is exposed from 0 on, so rate() works)."""
    return [label for label, _ in FAULT_CLASSES] + [FAULT_OTHER]


def escape_label_value(v):
    """A label value as the text format wants it: backslash, double quote and line feed
    escaped."""
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(v):
    """HELP text: backslash and line feed escaped (a double quote stays as it is)."""
    return str(v).replace("\\", "\\\\").replace("\n", "\\n")


def format_value(x):
    """A sample value: an integer as such, a float in Go's ParseFloat syntax (NaN, +Inf, -Inf);
    None (armd's null for a non-finite number) is NaN."""
    if x is None:
        return "NaN"
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(x)


class Exposition:
    """Builds the text: one family at a time, HELP and TYPE first, then its samples."""

    def __init__(self, base_labels):
        self.base = list(base_labels.items())
        self.lines = []

    def family(self, name, kind, help_text, samples):
        """samples: (extra labels dict, value) pairs; a family without samples is left out."""
        if not samples:
            return
        self.lines.append("# HELP %s %s" % (name, escape_help(help_text)))
        self.lines.append("# TYPE %s %s" % (name, kind))
        for labels, value in samples:
            pairs = self.base + list(labels.items())
            text = ",".join('%s="%s"' % (k, escape_label_value(v)) for k, v in pairs)
            self.lines.append("%s{%s} %s" % (name, text, format_value(value)))

    def text(self):
        return "\n".join(self.lines) + "\n"


def _joint_family(out, name, help_text, joints, values):
    """A per-joint gauge from one of status' joint vectors."""
    if isinstance(values, list) and len(values) == len(joints):
        out.family(name, "gauge", help_text,
                   [({"joint": j}, v) for j, v in zip(joints, values)])


def _armd_families(out, joints, status, faults):
    """Everything that comes from armd's status and events."""
    out.family("armd_state", "gauge", "1 for armd's current state, 0 for the others.",
               [({"state": s}, int(status.get("state") == s)) for s in STATES])
    out.family("armd_faults_total", "counter",
               "Faults armweb saw armd report while connected, by class of reason.",
               [({"reason": r}, faults.get(r, 0)) for r in fault_labels()])
    coll = status.get("collision") or {}
    if "detected" in coll:
        out.family("armd_collisions_total", "counter", "Collisions detected since armd started.",
                   [({}, coll["detected"])])
    loop = status.get("loop") or {}
    if "rate_hz" in loop:
        out.family("armd_loop_rate_hertz", "gauge", "The control loop's rate.",
                   [({}, loop["rate_hz"])])
    for name, key, help_text in LOOP_COUNTERS:
        if key in loop:
            out.family(name, "counter", help_text, [({}, loop[key])])
    for name, key, help_text in LOOP_TIMINGS:
        t = loop.get(key)
        if isinstance(t, dict):
            out.family(name, "gauge",
                       help_text + ": median, 99th percentile and maximum since the last "
                       "stats.reset (label stat).",
                       [({"stat": s}, None if t.get(s) is None else t[s] * 1e-6)
                        for s in TIMING_STATS if s in t])
    _joint_family(out, "armd_joint_tracking_error", "Desired minus measured joint position, "
                  "q_des - q [rad; m on a prismatic joint].", joints, status.get("error"))
    _joint_family(out, "armd_joint_torque", "Commanded joint torque [N m; N on a prismatic "
                  "joint].", joints, status.get("tau"))
    _joint_family(out, "armd_joint_position", "Measured joint position [rad; m on a prismatic "
                  "joint].", joints, status.get("q"))


def render(arm, joints, status, faults, web):
    """The whole exposition. arm: the `arm` label; joints: joint names (config order); status:
    armd's last status result, or None while armweb has none (armd down: only armd_up = 0 and
    armweb's own series then); faults: {reason class: count}; web: armweb's own counters
    {"browsers", "dropped_batches", "dropped_browsers", "reconnects"}."""
    out = Exposition({"arm": arm})
    out.family("armd_up", "gauge", "1 while armweb is connected to armd and has a fresh status.",
               [({}, int(status is not None))])
    if status is not None:
        _armd_families(out, joints, status, faults)
    out.family("armweb_browsers", "gauge", "Browsers connected to the live view.",
               [({}, web.get("browsers", 0))])
    out.family("armweb_dropped_batches_total", "counter",
               "Telemetry batches dropped for browsers that read too slowly.",
               [({}, web.get("dropped_batches", 0))])
    out.family("armweb_dropped_browsers_total", "counter",
               "Browser connections closed because they stopped reading.",
               [({}, web.get("dropped_browsers", 0))])
    out.family("armweb_armd_connects_total", "counter",
               "Connections armweb made to armd's socket (more than 1: armd restarted).",
               [({}, web.get("connects", 0))])
    return out.text()
