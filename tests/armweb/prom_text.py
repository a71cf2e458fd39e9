"""prom_text.py — a strict reader of the Prometheus text exposition format 0.0.4
(https://prometheus.io/docs/instrumenting/exposition_formats/), for armweb's tests: it gives
the values back by name and labels, and fails (PromFormatError naming the line) on anything the
format does not allow, beside `promtool check metrics`, which the tests also run.

Checked: names and label names by the format's grammar; label values with only the escapes
\\\\ \\" \\n; values as Go's ParseFloat reads them (NaN, +Inf, -Inf); at most one HELP and one TYPE
per family, both before its samples; a family's samples together; no series twice; counters
never negative; the text ends with a line feed. Standard library only.
"""
import math
import re

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
VALUE = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|Inf|NaN)")


class PromFormatError(Exception):
    pass


def _fail(k, line, why):
    raise PromFormatError("line %d: %s: %r" % (k, why, line[:120]))


def _labels(k, line, text, i):
    """Parses {a="x",b="y"} from text[i] == "{"; returns (dict, index after "}")."""
    labels = {}
    i += 1
    while True:
        if text[i:i + 1] == "}":
            return labels, i + 1
        m = LABEL.match(text, i)
        if not m:
            _fail(k, line, "bad label name")
        name = m.group(0)
        i = m.end()
        if text[i:i + 2] != '="':
            _fail(k, line, "expected =\" after label %s" % name)
        i += 2
        value = []
        while True:
            if i >= len(text):
                _fail(k, line, "unterminated label value")
            c = text[i]
            if c == "\\":
                esc = text[i + 1:i + 2]
                if esc not in ("\\", '"', "n"):
                    _fail(k, line, "bad escape \\%s in a label value" % esc)
                value.append("\n" if esc == "n" else esc)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                _fail(k, line, "raw line feed in a label value")
            else:
                value.append(c)
                i += 1
        if name in labels:
            _fail(k, line, "label %s twice" % name)
        labels[name] = "".join(value)
        if text[i:i + 1] == ",":
            i += 1
        elif text[i:i + 1] != "}":
            _fail(k, line, "expected , or } after a label")


def _value(k, line, s):
    if not VALUE.fullmatch(s):
        _fail(k, line, "bad value %r" % s)
    return float(s.replace("Inf", "inf").replace("NaN", "nan"))


def parse(text):
    """{family name: {"type", "help", "samples": {frozenset(labels.items()): value}}}."""
    if not text.endswith("\n"):
        raise PromFormatError("the text does not end with a line feed")
    families = {}
    closed = set()  # families whose samples are over
    current = None
    for k, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not NAME.fullmatch(name):
                    _fail(k, line, "bad metric name")
                f = families.setdefault(name, {"type": None, "help": None, "samples": {}})
                key = parts[1].lower()
                if f[key] is not None:
                    _fail(k, line, "a second %s for %s" % (parts[1], name))
                if f["samples"]:
                    _fail(k, line, "%s after the samples of %s" % (parts[1], name))
                rest = parts[3] if len(parts) > 3 else ""
                if key == "type" and rest not in TYPES:
                    _fail(k, line, "unknown type")
                if key == "help" and re.search(r"\\([^n]|$)", rest.replace("\\\\", "")):
                    _fail(k, line, "bad escape in HELP")
                f[key] = rest
            continue
        if not line.strip():
            _fail(k, line, "empty line")
        m = NAME.match(line)
        if not m:
            _fail(k, line, "bad metric name")
        name, i = m.group(0), m.end()
        labels = {}
        if line[i:i + 1] == "{":
            labels, i = _labels(k, line, line, i)
        if line[i:i + 1] != " ":
            _fail(k, line, "expected a space before the value")
        fields = line[i + 1:].split(" ")
        if not 1 <= len(fields) <= 2:
            _fail(k, line, "expected a value and at most a timestamp")
        value = _value(k, line, fields[0])
        if len(fields) == 2 and not re.fullmatch(r"-?\d+", fields[1]):
            _fail(k, line, "bad timestamp")
        if name != current:
            if name in closed:
                _fail(k, line, "samples of %s are not together" % name)
            if current is not None:
                closed.add(current)
            current = name
        f = families.setdefault(name, {"type": None, "help": None, "samples": {}})
        key = frozenset(labels.items())
        if key in f["samples"]:
            _fail(k, line, "the same series twice")
        if f["type"] == "counter" and not (value >= 0 or math.isnan(value)):
            _fail(k, line, "a negative counter")
        f["samples"][key] = value
    return families


def value(families, name, **labels):
    """The value of one series (labels given as keyword arguments must all match exactly)."""
    f = families.get(name)
    if f is None:
        raise KeyError("no family %s" % name)
    for key, v in f["samples"].items():
        if dict(key) == labels:
            return v
    raise KeyError("no series %s%s (has %s)" % (name, labels, [dict(x) for x in f["samples"]]))
