#!/usr/bin/env python3
"""Unit: the generated armd.service and armd@.service, loaded as armd.service, armd@arm0,
armd@arm1 and armd@armd (an instance named like the single-arm unit), read with systemd's rules
for RuntimeDirectory= as modelled in unitmodel.py (systemd.exec(5): a stop removes exactly the
listed directories, not the parents created for them, unless RuntimeDirectoryPreserve=yes).

Asserts: every unit has its own socket inside its own runtime directory; the instances'
directories are disjoint; no unit's stop removes another's socket or directory. Negative
controls: the same check must catch the layout these units had before (every unit
RuntimeDirectory=armd, RuntimeDirectoryPreserve=no, sockets /run/armd/NAME.sock), and
armd.service with RuntimeDirectoryPreserve=no. Also: ExecStopPost= runs `armd --torque-off` on
the unit's own configuration, not ignoring failure, guarded by the same ConditionPathExists=; the
real-time limits and the serial ports survive the hardening. armweb@NAME (armweb@.service) reads
armd@NAME's socket.

usage: test_units.py UNIT_DIR   (the build's systemd/ directory)
"""
import os
import re
import sys

import unitmodel

INSTANCES = ["arm0", "arm1", "armd"]


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def texts(unit_dir):
    out = {}
    for f in ("armd.service", "armd@.service"):
        with open(os.path.join(unit_dir, f)) as fh:
            out[f] = fh.read()
    return out


def units_from(t):
    return [unitmodel.Unit(t["armd.service"], "armd.service")] + [
        unitmodel.Unit(t["armd@.service"], "armd@.service", i) for i in INSTANCES]


def edit(text, key, value):
    """text with every key= line replaced by key=value (the key must be there)."""
    out, n = re.subn(r"(?m)^%s=.*$" % key, lambda m: "%s=%s" % (key, value), text)
    check(n > 0, "no %s= line to edit" % key)
    return out


def old_layout(t):
    """The units as they were before per-instance directories: one shared /run/armd."""
    out = {}
    for f, name in (("armd.service", "armd"), ("armd@.service", "%i")):
        s = edit(t[f], "RuntimeDirectory", "armd")
        s = edit(s, "RuntimeDirectoryPreserve", "no")
        out[f] = re.sub(r"--socket \S+", "--socket /run/armd/%s.sock" % name, s)
    return out


def check_directories(t):
    units = units_from(t)
    for u in units:
        print("%-20s socket %-26s runtime %-18s removed at stop: %s" %
              (u.name, u.socket, " ".join(u.runtime_dirs), " ".join(u.removed_on_stop()) or
               "nothing (RuntimeDirectoryPreserve=yes)"))
    found = unitmodel.conflicts(units)
    check(not found, "the units step on each other:\n  " + "\n  ".join(found))
    single = units[0]
    check(single.socket == "/run/armd/armd.sock",
          "armd.service's socket moved from the documented /run/armd/armd.sock to " + single.socket)
    for u in units[1:]:
        want = "/run/armd/%s" % u.instance
        check(u.runtime_dirs == [want], "%s: runtime directories %s, expected [%s]" %
              (u.name, u.runtime_dirs, want))
        check(u.socket == want + "/armd.sock", "%s: socket %s" % (u.name, u.socket))

    # negative controls: the model must see the bug these units fixed
    found = unitmodel.conflicts(units_from(old_layout(t)))
    want = ("stopping armd@arm0.service removes /run/armd and with it /run/armd/arm1.sock of "
            "armd@arm1.service")
    check(want in found, "the check missed the old layout's bug (%r); it found: %s" % (want, found))
    bad = dict(t)
    bad["armd.service"] = edit(t["armd.service"], "RuntimeDirectoryPreserve", "no")
    found = unitmodel.conflicts(units_from(bad))
    want = ("stopping armd.service removes /run/armd and with it /run/armd/arm0/armd.sock of "
            "armd@arm0.service")
    check(want in found, "the check missed armd.service removing /run/armd; it found: %s" % found)
    print("negative controls: the old shared layout and a non-preserved /run/armd are caught")


def check_stop_post(t):
    for u in units_from(t):
        raw = u.values("ExecStopPost")
        check(len(raw) == 1, "%s: %d ExecStopPost= lines, expected 1" % (u.name, len(raw)))
        check(not raw[0].startswith("-"), "%s: ExecStopPost= ignores failure ('-'): a "
              "torque-off that failed must show" % u.name)
        argv = u.argv("ExecStopPost")
        start = u.argv("ExecStart")
        want = [start[0], "--torque-off", "-c", u.config]
        check(argv == want, "%s: ExecStopPost=%s, expected %s" % (u.name, argv, want))
        cond = u.value("ConditionPathExists", section="Unit")
        check(cond == u.config, "%s: ConditionPathExists=%s is not the configuration %s that "
              "ExecStart= and ExecStopPost= read" % (u.name, cond, u.config))
    print("ExecStopPost=: armd --torque-off -c <the unit's configuration> on every unit")


def check_realtime_and_ports(t):
    for u in units_from(t):
        rtprio = u.value("LimitRTPRIO", default="0")
        check(rtprio.isdigit() and int(rtprio) > 0, "%s: LimitRTPRIO=%s" % (u.name, rtprio))
        check(u.value("LimitMEMLOCK") == "infinity", "%s: LimitMEMLOCK=%s" %
              (u.name, u.value("LimitMEMLOCK")))
        for key in ("RestrictRealtime", "PrivateDevices"):
            check(u.value(key, default="no") in ("no", "false", "0", "off"),
                  "%s: %s=%s forbids SCHED_FIFO or hides the serial port" %
                  (u.name, key, u.value(key)))
        allowed = set(u.values("DeviceAllow"))
        for dev in ("char-ttyUSB rw", "char-ttyACM rw", "char-ttyS rw"):
            check(dev in allowed, "%s: DeviceAllow=%s missing" % (u.name, dev))
        check("dialout" in " ".join(u.values("SupplementaryGroups")).split(),
              "%s: not in group dialout" % u.name)
        check(u.value("User") == "armd", "%s: User=%s" % (u.name, u.value("User")))
    print("SCHED_FIFO and mlockall limits, serial devices and group dialout kept")


def check_armweb(unit_dir, t):
    """armweb@NAME reads armd@NAME's socket, after it, as a member of group armd (the socket's
    group unless [socket] group says otherwise), read-only and on loopback unless configured."""
    with open(os.path.join(unit_dir, "armweb@.service")) as f:
        text = f.read()
    for name in INSTANCES:
        web = unitmodel.Unit(text, "armweb@.service", name)
        armd = unitmodel.Unit(t["armd@.service"], "armd@.service", name)
        check(web.socket == armd.socket, "%s reads %s, but armd@%s listens on %s" %
              (web.name, web.socket, name, armd.socket))
        check("armd@%s.service" % name in web.value("After", section="Unit", default="").split(),
              "%s does not start after armd@%s" % (web.name, name))
        check("armd" in " ".join(web.values("SupplementaryGroups")).split(),
              "%s: not in group armd, which owns armd's socket" % web.name)
        check(web.value("User") != "armd", "%s runs as armd, the controller's own user" %
              web.name)
        argv = web.argv("ExecStart")
        check("--control" not in argv, "%s: --control by default" % web.name)
        token = web.option("ExecStart", "--token-file")
        check(any(unitmodel.inside(os.path.dirname(token), d) for d in web.runtime_dirs) and
              not any(unitmodel.inside(token, d) for d in armd.removed_on_stop()),
              "%s: token file %s not in its own runtime directory %s (or removed with "
              "armd@%s)" % (web.name, token, web.runtime_dirs, name))
        check("@chown" in [w for v in web.values("SystemCallFilter") if not v.startswith("~")
                           for w in v.split()],
              "%s: no fchown() to group armd for the token file" % web.name)
        env = " ".join(web.values("Environment")).split()
        check("ARMWEB_LISTEN=127.0.0.1:8080" in env and
              argv[argv.index("--listen") + 1] == "${ARMWEB_LISTEN}",
              "%s: not on 127.0.0.1 by default: %s / %s" % (web.name, env, argv))
    print("armweb@NAME: armd@NAME's socket, after it, group armd, read-only on 127.0.0.1 by "
          "default, its control token in its own runtime directory")


def main():
    if len(sys.argv) != 2:
        print("usage: test_units.py UNIT_DIR")
        return 2
    try:
        t = texts(sys.argv[1])
        check_directories(t)
        check_stop_post(t)
        check_realtime_and_ports(t)
        check_armweb(sys.argv[1], t)
    except (Failure, unitmodel.UnitError, OSError) as e:
        print("FAIL:", e)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
