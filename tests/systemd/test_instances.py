#!/usr/bin/env python3
"""Integration: three arms side by side as the generated units lay them out — armd.service and
the instances armd@arm0 and armd@arm1 — each a real armd on its own armsim (pseudo-terminal),
listening on the socket its unit's ExecStart= names (/run/armd/armd.sock,
/run/armd/arm0/armd.sock, /run/armd/arm1/armd.sock). No systemd runs as PID 1 here, so this
test plays the service manager's part for the runtime directories, as systemd.exec(5) documents
it (unitmodel.py): it creates each unit's RuntimeDirectory= before starting armd and, after the
KillSignal= stop, removes what the unit's RuntimeDirectory= / RuntimeDirectoryPreserve= say.
The test runs in a private mount namespace with a fresh tmpfs on /run, so the real paths are
used and the machine's /run is never touched.

Asserts, identifying each server by the process that listens (SO_PEERCRED) and through
`armctl --arm NAME` / plain `armctl` (armd's `info` names its socket): all three answer; stopping
armd@arm0 removes /run/armd/arm0 while armd@arm1 and armd.service still answer; stopping
armd.service keeps /run/armd and armd@arm1 answers; armd@arm0 starts again beside armd@arm1;
stopping armd@arm1 leaves armd@arm0 answering. Negative control: a stop with the old layout's
rule (RuntimeDirectory=armd, RuntimeDirectoryPreserve=no) removes /run/armd and armd@arm0 stops
answering, so the checks do tell a removed socket.

usage: test_instances.py --armd A --armsim S --armctl C --config INI --units BUILD/systemd
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from test_api_lib import READY_POSE, Client, Rig, TestFailure, _die_with_parent, check  # noqa: E402

import unitmodel  # noqa: E402

PRIVATE_RUN = "ARMD_TEST_PRIVATE_RUN"
# Three arms at once on a shared 2-core machine, and all this test needs is sockets that answer:
# a slow control loop with patient reads, and coarse physics (three simulators at the default
# 10 kHz under SCHED_FIFO would starve every other process).
DROPIN = ("[arm]\nrate_hz = 100\n[driver]\ntimeout_us = 5000\nretries = 3\n"
          "[safety]\nmax_failed_reads = 25\n")
SIM_ARGS = READY_POSE + ("--rate", "2000")


def parse_args():
    p = argparse.ArgumentParser()
    for a in ("--armd", "--armsim", "--armctl", "--config", "--units"):
        p.add_argument(a, required=True)
    p.add_argument("--keep", action="store_true", help="keep the run directories")
    return p.parse_args()


def in_private_run():
    """Runs this script again in a private mount namespace (and a user namespace when not root,
    for the right to mount) and returns its exit status; in that child, mounts a tmpfs on /run
    and returns None."""
    if os.environ.get(PRIVATE_RUN) == "1":
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "armd-test-run", "/run"],
                       check=True)
        return None
    cmd = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        cmd.append("--map-root-user")
    env = dict(os.environ, **{PRIVATE_RUN: "1"})
    rc = subprocess.call(cmd + [sys.executable] + sys.argv, env=env, preexec_fn=_die_with_parent)
    if rc != 0:
        print("FAIL: the test in a private mount namespace (%s) exited %d" % (" ".join(cmd), rc))
    return rc


def listener_pid(path):
    """The pid of the process listening on the UNIX socket path (SO_PEERCRED of a connection)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(5)
        s.connect(path)
        pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                     struct.calcsize("3i")))
        return pid
    finally:
        s.close()


class Service:
    """One unit on one simulated arm, started and stopped as the service manager would."""

    def __init__(self, args, unit, rig):
        self.args = args
        self.unit = unit
        self.rig = rig
        self.proc = None

    def start(self):
        mode = int(self.unit.value("RuntimeDirectoryMode", default="0755"), 8)
        for d in self.unit.runtime_dirs:
            os.makedirs(d, mode=0o755, exist_ok=True)  # parents as systemd creates them
            os.chmod(d, mode)
        argv = self.unit.argv("ExecStart")
        argv[0] = self.args.armd
        argv[argv.index("-c") + 1] = self.rig.config  # stands in for /etc/armd/NAME.ini
        argv += ["--port", self.rig.link]
        log = open(os.path.join(self.rig.dir, "armd.log"), "w")
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent)
        self.rig.armd = self.proc  # the rig stops it whatever happens
        deadline = time.time() + 20
        while time.time() < deadline:
            check(self.proc.poll() is None,
                  "%s: armd exited early:\n%s" % (self.unit.name, self.rig.armd_log()))
            try:
                c = Client(self.unit.socket)
                c.call("status")
                c.close()
                break
            except (OSError, TestFailure):
                time.sleep(0.1)
        else:
            raise TestFailure("%s: armd did not answer on %s" % (self.unit.name, self.unit.socket))
        print("started %s: armd pid %d on %s" % (self.unit.name, self.proc.pid, self.unit.socket))

    def stop(self, removal_rule=None):
        """KillSignal=, then the runtime directories removal_rule (default: this unit) removes."""
        sig = getattr(signal, self.unit.value("KillSignal", default="SIGTERM"))
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            raise TestFailure("%s: armd did not stop within 10 s" % self.unit.name)
        check(code == 0, "%s: armd exited %d on %s" % (self.unit.name, code, sig.name))
        rule = removal_rule or self.unit
        for d in rule.removed_on_stop():
            shutil.rmtree(d, ignore_errors=True)
        print("stopped %s; removed %s" % (self.unit.name, rule.removed_on_stop() or "nothing"))

    def answers(self):
        """Fails unless this unit's armd is the process listening on the unit's socket."""
        check(os.path.exists(self.unit.socket), "%s: %s is gone" % (self.unit.name,
                                                                    self.unit.socket))
        pid = listener_pid(self.unit.socket)
        check(pid == self.proc.pid, "%s: %s is served by pid %d, not by its armd (%d)" %
              (self.unit.name, self.unit.socket, pid, self.proc.pid))
        c = Client(self.unit.socket)
        st = c.call("status")
        c.close()
        check("state" in st, "%s: status without a state: %s" % (self.unit.name, st))


def armctl(args, *argv, expect=0):
    env = {k: v for k, v in os.environ.items() if k != "ARMD_SOCKET"}
    p = subprocess.run([args.armctl] + list(argv), capture_output=True, text=True, timeout=30,
                       env=env)
    check(p.returncode == expect, "armctl %s: exit %d (expected %d)\nstdout: %s\nstderr: %s" %
          (" ".join(argv), p.returncode, expect, p.stdout, p.stderr))
    return p


def armctl_reaches(args, service, *how):
    """armctl, addressed by how (e.g. --arm arm0, or nothing: the default socket), reaches the
    armd of service (its info names the socket it listens on)."""
    info = json.loads(armctl(args, *how, "--json", "info").stdout)
    check(info.get("socket") == service.unit.socket, "armctl %s reached the armd on %s, not %s's "
          "%s" % (" ".join(how) or "(default)", info.get("socket"), service.unit.name,
                  service.unit.socket))


def main(args):
    single, arm0_unit, arm1_unit = unitmodel.load(args.units, ["arm0", "arm1"])
    with open(os.path.join(args.units, "armd@.service")) as f:
        template = f.read()
    old_arm1 = unitmodel.Unit(template.replace("RuntimeDirectory=armd/%i", "RuntimeDirectory=armd"),
                              "armd@.service", "arm1")
    check(old_arm1.removed_on_stop() == ["/run/armd"], "could not build the old layout's rule")
    with contextlib.ExitStack() as stack:
        rigs = []
        for name in ("single", "arm0", "arm1"):
            r = Rig(args, name, sim_args=SIM_ARGS, dropin=DROPIN)
            stack.push(r)  # its __exit__ stops armsim and armd; armd is started below
            r.start_sim()
            rigs.append(r)
        main_svc, arm0, arm1 = [Service(args, u, r)
                                for u, r in zip((single, arm0_unit, arm1_unit), rigs)]
        for s in (main_svc, arm0, arm1):
            s.start()
        for s in (main_svc, arm0, arm1):
            s.answers()
        armctl_reaches(args, arm0, "--arm", "arm0")
        armctl_reaches(args, arm1, "-a", "arm1")
        armctl_reaches(args, main_svc)
        print("all three answer, each on its own socket; armctl --arm NAME and the default reach "
              "the right one")

        arm0.stop()
        check(not os.path.exists("/run/armd/arm0"), "/run/armd/arm0 left after armd@arm0 stopped")
        arm1.answers()
        main_svc.answers()
        armctl_reaches(args, arm1, "--arm", "arm1")
        p = armctl(args, "--arm", "arm0", "status", expect=1)
        check("/run/armd/arm0/armd.sock" in p.stderr, "armctl --arm arm0: %s" % p.stderr)
        print("after armd@arm0 stopped: armd@arm1 and armd.service answer")

        main_svc.stop()
        check(os.path.isdir("/run/armd"), "/run/armd removed with armd.service")
        check(not os.path.exists(single.socket), "armd.service left its socket behind")
        arm1.answers()
        print("after armd.service stopped: /run/armd kept, armd@arm1 answers")

        arm0.start()
        arm0.answers()
        arm1.answers()
        arm1.stop()
        check(not os.path.exists("/run/armd/arm1"), "/run/armd/arm1 left after armd@arm1 stopped")
        arm0.answers()
        armctl_reaches(args, arm0, "--arm", "arm0")
        print("armd@arm0 restarted beside armd@arm1; after armd@arm1 stopped, armd@arm0 answers")

        # negative control: the old shared directory removed under a running arm
        arm1.start()
        arm1.stop(removal_rule=old_arm1)
        check(not os.path.exists(arm0.unit.socket), "the old rule left %s" % arm0.unit.socket)
        cut_off = False
        try:
            arm0.answers()
        except (TestFailure, OSError):
            cut_off = True
        check(cut_off, "armd@arm0 still answered after /run/armd was removed: the checks cannot "
              "tell a removed socket")
        armctl(args, "--arm", "arm0", "status", expect=1)
        print("negative control: with the old layout, stopping armd@arm1 cut armd@arm0 off")
        arm0.stop()


if __name__ == "__main__":
    args = parse_args()
    rc = in_private_run()
    if rc is not None:
        sys.exit(rc)
    try:
        main(args)
    except (TestFailure, unitmodel.UnitError) as e:
        print("FAIL:", e)
        sys.exit(1)
    print("ok")
