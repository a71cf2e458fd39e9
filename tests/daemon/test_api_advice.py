#!/usr/bin/env python3
"""Integration: every refusal armctl shows says the step that works. armd + armsim (PUMA 560,
real time) are driven into each state; a command the state refuses is run through armctl, the
advice in its message (the clause after the last ';', and after a ': ' in it) is turned into armctl commands, those are
run (each must succeed), and then the refused command must succeed.

States and refused commands: disabled (move; wait done), estop (move, enable, controller,
wait holding), fault (armsim stopped for longer than the read gap: move, enable) and moving
(controller during a long move).

Advice to commands: "armctl X" written in the advice is run as it stands; otherwise the verbs
reset, enable, cancel and "trajectory end" (armctl wait done), in the order written, up to the
first " or " (the first of two alternatives).
"""
import re
import signal
import subprocess
import time

from test_api_lib import Rig, check, run

VERBS = (("reset", ["reset"]), ("enable", ["enable"]), ("cancel", ["cancel"]),
         ("trajectory end", ["wait", "done", "--timeout", "20"]))


def armctl(rig, *args, expect=0):
    p = subprocess.run([rig.args.armctl, "-s", rig.sock] + list(args), capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == expect, "armctl %s: exit %d (expected %d)\nstdout: %s\nstderr: %s" %
          (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def advice_steps(message):
    """The armctl commands the advice of a refusal names, in order."""
    clause = message.strip().splitlines()[0].rsplit(";", 1)
    check(len(clause) == 2, "no advice (no '; ...') in %r" % message)
    clause = clause[1].rsplit(": ", 1)[-1]  # "...; what is allowed: the advice"
    named = re.findall(r"armctl ([a-z]+(?: done)?)", clause)
    if named:
        return [n.split() + (["--timeout", "20"] if n.startswith("wait") else [])
                for n in named]
    first = clause.split(" or ")[0]
    hits = sorted((first.find(word), cmd) for word, cmd in VERBS if word in first)
    return [cmd for _, cmd in hits]


def refused_then_advice_works(rig, args, state):
    """args is refused (exit 1) in state; its advice's steps succeed and then args does."""
    p = armctl(rig, *args, expect=1)
    steps = advice_steps(p.stderr)
    print("%s: armctl %s -> %s -> steps %s" % (state, " ".join(args), p.stderr.strip(),
                                               [" ".join(s) for s in steps]))
    check(steps, "%s: armctl %s: no step in the advice: %r" % (state, " ".join(args), p.stderr))
    for s in steps:
        armctl(rig, *s)
    armctl(rig, *args)


def goal(rig, dq):
    st = rig.client().call("status")
    q = list(st["q"])
    q[0] += dq
    return ["%.6f" % v for v in q]


def main(args):
    with Rig(args, "advice") as rig:
        # disabled
        refused_then_advice_works(rig, ["move"] + goal(rig, 0.05) + ["--time", "1"], "disabled")
        armctl(rig, "wait", "done", "--timeout", "20")
        armctl(rig, "disable")
        refused_then_advice_works(rig, ["wait", "done", "--timeout", "20"], "disabled")

        # estop
        armctl(rig, "estop")
        refused_then_advice_works(rig, ["move"] + goal(rig, -0.05) + ["--time", "1"], "estop")
        armctl(rig, "wait", "done", "--timeout", "20")
        armctl(rig, "estop")
        refused_then_advice_works(rig, ["enable"], "estop")
        armctl(rig, "estop")
        refused_then_advice_works(rig, ["controller", "pd_gravity"], "estop")
        armctl(rig, "estop")
        refused_then_advice_works(rig, ["wait", "holding", "--timeout", "20"], "estop")

        # moving: a long move, then a control law change
        armctl(rig, "move", *goal(rig, 0.1), "--time", "4")
        refused_then_advice_works(rig, ["controller", "computed_torque"], "moving")

        # fault: armsim stopped for longer than the read gap (400 ms)
        rig.sim.send_signal(signal.SIGSTOP)
        time.sleep(1.5)
        rig.sim.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + 20
        while rig.client().call("status")["state"] != "fault" and time.monotonic() < deadline:
            time.sleep(0.05)
        st = rig.client().call("status")
        check(st["state"] == "fault", "armsim stopped 1.5 s: state %s" % st["state"])
        time.sleep(1.0)  # armsim catching up; the arm at rest again
        refused_then_advice_works(rig, ["enable"], "fault")
        rig.sim.send_signal(signal.SIGSTOP)
        time.sleep(1.5)
        rig.sim.send_signal(signal.SIGCONT)
        time.sleep(1.0)
        check(rig.client().call("status")["state"] == "fault", "armsim stopped again: no fault")
        refused_then_advice_works(rig, ["move"] + goal(rig, 0.05) + ["--time", "1"], "fault")


if __name__ == "__main__":
    run(main)
