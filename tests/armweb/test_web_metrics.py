#!/usr/bin/python3
"""Integration: armweb's /metrics against a real armd. armsim (PUMA 560 on a pty, a device
alert armed for SIGUSR1) + armd + armweb.

Each scrape passes `promtool check metrics` and the strict reader (prom_text.py). Asserts: the
Content-Type of format 0.0.4; the arm label is the config's [arm] name and the joint labels its
joints; armd_state follows armd (disabled, holding, fault); the loop counters count up between
scrapes and match armd's status; the per-joint tracking error and torque are armd's; with armd
stopped, armd_up is 0 and no other armd_ series is shown; when armd is back, armweb reconnects
by itself (armd_up 1, armweb_armd_connects_total 2); a fault (armsim's device alert) counts
once in armd_faults_total{reason="device_alert"}.
"""
import os
import shutil
import signal
import subprocess
import time

import prom_text
from web_lib import Armweb, TestFailure, check, enable_and_hold, run

import test_api_lib


def scrape(web):
    """One scrape, validated by promtool and the strict reader; the families."""
    headers, text = web.metrics_text()
    check(headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
          "/metrics Content-Type %r" % headers.get("Content-Type"))
    tool = shutil.which("promtool")
    check(tool is not None, "promtool is missing: install the Debian package prometheus "
          "(tools/bootstrap does)")
    p = subprocess.run([tool, "check", "metrics"], input=text.encode(), capture_output=True)
    check(p.returncode == 0, "promtool check metrics failed:\n%s\n%s" %
          ((p.stdout + p.stderr).decode(errors="replace"), text))
    try:
        return prom_text.parse(text)
    except prom_text.PromFormatError as e:
        raise TestFailure("/metrics: %s\n%s" % (e, text))


def wait_metric(web, what, cond, timeout=5.0):
    """Scrapes until cond(families) is true (armweb polls armd's status every 0.5 s)."""
    deadline = time.monotonic() + timeout
    while True:
        f = scrape(web)
        try:
            if cond(f):
                return f
        except KeyError:
            pass
        check(time.monotonic() < deadline, "%s: not within %g s" % (what, timeout))
        time.sleep(0.2)


def state_is(arm, state):
    return lambda f: prom_text.value(f, "armd_state", arm=arm, state=state) == 1


def main(args):
    sim = test_api_lib.READY_POSE + ("--alert-after", "1e6", "--alert-id", "2")
    with test_api_lib.Rig(args, "web-metrics", sim_args=sim) as rig:
        c = rig.client()
        info = c.call("info")
        arm, joints = info["name"], info["joints"]
        v = prom_text.value
        with Armweb(args, rig) as web:
            f = wait_metric(web, "state disabled", state_is(arm, "disabled"))
            check(v(f, "armd_up", arm=arm) == 1, "armd_up is not 1")
            check(sum(v(f, "armd_state", arm=arm, state=s) for s in
                      ("disabled", "holding", "moving", "fault", "estop")) == 1,
                  "armd_state is 1 for more than one state")
            series = {dict(k)["joint"] for k in f["armd_joint_torque"]["samples"]}
            check(series == set(joints), "joint labels %s, armd's joints %s" % (series, joints))
            print("disabled: %d families, arm=%s, joints %s; promtool ok" %
                  (len(f), arm, ",".join(joints)))

            enable_and_hold(c)
            f1 = wait_metric(web, "state holding", state_is(arm, "holding"))
            time.sleep(1.0)
            f2 = scrape(web)
            st = c.call("status")
            t1, t2 = (v(x, "armd_loop_ticks_total", arm=arm) for x in (f1, f2))
            check(t2 > t1 + 300, "armd_loop_ticks_total went from %d to %d in 1 s" % (t1, t2))
            check(abs(v(f2, "armd_loop_ticks_total", arm=arm) - st["loop"]["ticks"]) < 3000,
                  "ticks %d, armd's status %d" % (t2, st["loop"]["ticks"]))
            check(v(f2, "armd_loop_rate_hertz", arm=arm) == st["loop"]["rate_hz"], "rate")
            p99 = v(f2, "armd_loop_lateness_seconds", arm=arm, stat="p99")
            check(0 <= p99 < 1, "lateness p99 %r s" % p99)
            for k, j in enumerate(joints):
                e = v(f2, "armd_joint_tracking_error", arm=arm, joint=j)
                tau = v(f2, "armd_joint_torque", arm=arm, joint=j)
                check(abs(e - st["error"][k]) < 2e-3, "%s: tracking error %g, armd %g" %
                      (j, e, st["error"][k]))
                check(abs(tau - st["tau"][k]) < 0.1 * abs(st["tau"][k]) + 1.0,
                      "%s: torque %g, armd %g" % (j, tau, st["tau"][k]))
            print("holding: ticks %d -> %d in 1 s, lateness p99 %.1f us, torques %s N m" %
                  (t1, t2, p99 * 1e6, [round(v(f2, "armd_joint_torque", arm=arm, joint=j), 2)
                                      for j in joints]))

            c.close()
            check(rig.stop_armd() == 0, "armd did not exit 0")
            f = wait_metric(web, "armd_up 0", lambda f: v(f, "armd_up", arm=arm) == 0)
            leftover = [n for n in f if n.startswith("armd_") and n != "armd_up"]
            check(not leftover, "armd series while armd is stopped: %s" % leftover)
            rig.start_armd()
            f = wait_metric(web, "armweb back on armd", lambda f: v(f, "armd_up", arm=arm) == 1,
                            timeout=10)
            check(v(f, "armweb_armd_connects_total", arm=arm) == 2,
                  "armweb_armd_connects_total %g after one restart of armd" %
                  v(f, "armweb_armd_connects_total", arm=arm))
            check(v(f, "armd_state", arm=arm, state="disabled") == 1,
                  "the restarted armd is not shown disabled")
            print("armd stopped: armd_up 0 alone; restarted: armweb reconnected by itself")
            c = rig.client()
            enable_and_hold(c)
            os.kill(rig.sim.pid, signal.SIGUSR1)  # armsim's device alert on servo 2
            f = wait_metric(web, "state fault", state_is(arm, "fault"))
            f = wait_metric(web, "the fault counted", lambda f: v(
                f, "armd_faults_total", arm=arm, reason="device_alert") == 1)
            others = {dict(k)["reason"]: x for k, x in f["armd_faults_total"]["samples"].items()
                      if dict(k)["reason"] != "device_alert"}
            check(not any(others.values()), "other fault classes counted: %s" % others)
            print("device alert: armd_state fault, armd_faults_total{reason=device_alert} 1 "
                  "(armd: %s)" % c.call("status")["fault"])
            c.close()
            check(web.stop() == 0, "armweb did not exit 0 on SIGTERM:\n" + web.log())


if __name__ == "__main__":
    run(main)
