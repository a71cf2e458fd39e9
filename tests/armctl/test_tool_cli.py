#!/usr/bin/env python3
"""test_tool_cli.py — armctl tool without an armd: its usage and what it sends and prints.

Usage: test_tool_cli.py ARMCTL

- usage: `armctl tool --help` (and -h after any argument) prints the tool's usage, exit 0; a
  wrong subcommand, a missing or non-numeric OPENING / WIDTH, NaN or infinity, an option the
  subcommand does not take, an option without its value or out of its range (--speed 0,
  --force -1, --epsilon-inner -0.001), an option given twice and an extra argument are usage
  errors: exit 2 naming the word and the choices, and no connection is opened (the socket is a
  listener of this test that never accepts: its backlog stays empty).
- against a fake armd (a UNIX socket server of this test): each subcommand sends its method
  with exactly the params given (numbers as given, in m, m/s, N), prints "OUTCOME: opening X mm,
  force Y N" and exits 0 for reached and grasped, 1 for no_object, blocked, stopped and aborted
  (saying on stderr what the outcome means) and for armd's errors (no_tool, bad_state); --json
  prints armd's result with the same exit status; `armctl tool` shows status's tool in mm and N,
  and exits 1 naming [tool] for an arm without one; status, info and watch show the tool; record
  writes tool_opening, tool_speed, tool_force before mono and wall.
Python 3 standard library only.
"""
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

FAILURES = []

TOOL_STATUS = {"name": "gripper", "opening": 0.0421, "speed": 0.0, "force": 0.0,
               "command": "idle", "grasped": False, "lower": 0.02, "upper": 0.075}
TOOL_INFO = {"name": "gripper", "id": 15, "lower": 0.02, "upper": 0.075, "velocity": 0.1,
             "max_force": 20, "force": 10, "speed": 0.05}


def check(cond, message):
    if not cond:
        FAILURES.append(message)
        print("FAIL " + message)


def run(armctl, sock, *args):
    p = subprocess.run([armctl, "-s", sock] + list(args), capture_output=True, text=True,
                       timeout=20)
    return p


class FakeArmd:
    """Answers every request of every connection with answer(method, params) -> reply member
    ({"result": ...} or {"error": ...}); notifications after subscribe come from `telemetry`.
    Keeps the requests."""

    def __init__(self, path, answer):
        self.path = path
        self.answer = answer
        self.requests = []
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(8)
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop:
            ready, _, _ = select.select([self.srv], [], [], 0.1)
            if ready:
                conn, _ = self.srv.accept()
                threading.Thread(target=self.connection, args=(conn,), daemon=True).start()

    def connection(self, conn):
        buf = b""
        with conn:
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    req = json.loads(line)
                    self.requests.append(req)
                    reply = dict(self.answer(req["method"], req.get("params")), id=req["id"])
                    out = json.dumps(reply).encode() + b"\n"
                    if req["method"] == "subscribe":
                        out += b"".join(json.dumps(m).encode() + b"\n" for m in telemetry())
                    try:
                        conn.sendall(out)
                    except OSError:
                        return

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.srv.close()


def telemetry():
    """Telemetry samples 0.1 s apart, of a one-joint arm with a tool."""
    return [{"method": "telemetry", "params": {
        "tick": k, "time": 0.1 * k, "mono": 100 + 0.1 * k, "wall": 1.8e9 + 0.1 * k,
        "state": "holding", "q": [0.5], "q_des": [0.5], "qd": [0.0], "tau": [0.1],
        "ext": [0.0], "pose": {"position": [0.3, 0.1, 0.2], "orientation": [1, 0, 0, 0]},
        "wrench": {"force": [1.5, -2, 3], "torque": [0.25, 0, None]},
        "tool": {"opening": 0.02005, "speed": 0.0, "force": 9.75}}}
        for k in range(12)]


def status_reply(tool=True):
    t = {"p50": 1, "p99": 2, "max": 3}
    s = {"state": "holding", "fault": None, "controller": "computed_torque", "time": 1.0,
         "q": [0.5], "q_des": [0.5], "error": [0.0], "qd": [0.0], "tau": [0.1],
         "trajectory": None, "collision": {"mode": "off"},
         "loop": {"rate_hz": 400, "ticks": 1, "overruns": 0, "failed_reads": 0, "saturations": 0,
                  "lateness_us": t, "read_us": t, "compute_us": t, "write_us": t}}
    if tool:
        s["tool"] = dict(TOOL_STATUS, grasped=True, opening=0.02005, force=9.75,
                         command="idle")
        s["wrench"] = {"force": [1.5, -2, 3], "torque": [0.25, 0, -0.125]}
    else:  # the collision observer off: the wrench unknown
        s["wrench"] = {"force": [None, None, None], "torque": [None, None, None]}
    return s


def info_reply(tool=True):
    return {"name": "omx", "version": "test", "joints": ["j1"], "types": ["revolute"],
            "rate_hz": 400, "controller": "computed_torque",
            "driver": {"type": "dxl2", "port": "/dev/null", "baud": 1000000},
            "limits": {"lower": [-1], "upper": [1], "velocity": [1], "acceleration": [1],
                       "torque": [1]}, "tool": TOOL_INFO if tool else None}


def usage(armctl, tmp):
    sock = os.path.join(tmp, "listener.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(sock)
    listener.listen(64)
    for args in (["tool", "--help"], ["tool", "-h"], ["tool", "grasp", "x", "--help"],
                 ["tool", "move", "--json", "-h"]):
        p = run(armctl, sock, *args)
        check(p.returncode == 0 and p.stdout.startswith("usage: armctl [OPTIONS] tool [status]")
              and "tool grasp WIDTH [--force N] [--speed V] [--epsilon-inner E] "
              "[--epsilon-outer E]" in p.stdout and p.stderr == "",
              "armctl %s: exit %d %r %r" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    errors = [
        (["tool", "open"], ["'open'", "status", "move", "grasp", "release", "stop"]),
        (["tool", "move"], ["tool move", "OPENING"]),
        (["tool", "grasp"], ["tool grasp", "WIDTH"]),
        (["tool", "move", "wide"], ["'wide'", "not a number", "OPENING"]),
        (["tool", "grasp", "nan"], ["'nan'", "not a number", "WIDTH"]),
        (["tool", "grasp", "inf"], ["'inf'", "not a number"]),
        (["tool", "grasp", "20mm"], ["'20mm'", "not a number"]),
        (["tool", "move", "0.03", "--force", "5"], ["'--force'", "--speed"]),
        (["tool", "grasp", "0.02", "--bogus", "1"],
         ["'--bogus'", "--force", "--speed", "--epsilon-inner", "--epsilon-outer"]),
        (["tool", "grasp", "0.02", "--force"], ["--force", "force > 0"]),
        (["tool", "grasp", "0.02", "--force", "-1"], ["--force", "force > 0"]),
        (["tool", "grasp", "0.02", "--force", "nan"], ["--force", "finite"]),
        (["tool", "move", "0.03", "--speed", "0"], ["--speed", "speed > 0"]),
        (["tool", "move", "0.03", "--speed", "1e999"], ["--speed", "finite"]),
        (["tool", "grasp", "0.02", "--epsilon-inner", "-0.001"], ["--epsilon-inner", ">= 0"]),
        (["tool", "grasp", "0.02", "--epsilon-outer", "x"], ["--epsilon-outer", ">= 0"]),
        (["tool", "release", "--speed", "0.1", "--speed", "0.2"], ["--speed", "twice"]),
        (["tool", "grasp", "0.02", "0.03"], ["'0.03'", "unexpected"]),
        (["tool", "release", "0.07"], ["'0.07'", "unexpected"]),
        (["tool", "stop", "now"], ["tool stop", "no arguments", "'now'"]),
        (["tool", "status", "x"], ["tool status", "no arguments"]),
    ]
    for args, words in errors:
        p = run(armctl, sock, *args)
        what = "armctl %s" % " ".join(args)
        check(p.returncode == 2 and p.stdout == "", "%s: exit %d, stdout %r" %
              (what, p.returncode, p.stdout))
        for w in words:
            check(w in p.stderr, "%s: the message does not name %s: %r" % (what, w, p.stderr))
        check("(armctl tool --help for usage)" in p.stderr, "%s: no pointer to tool --help: %r"
              % (what, p.stderr))
        ready, _, _ = select.select([listener], [], [], 0)
        if ready:
            listener.accept()[0].close()
        check(not ready, "%s: armctl opened a connection" % what)
    listener.close()
    print("armctl tool: --help, -h anywhere; %d usage errors: exit 2, the word and the choices "
          "named, nothing sent" % len(errors))


# (arguments, the params armctl must send, armd's outcome, exit status)
COMMANDS = [
    (["tool", "move", "0.05"], "tool.move", {"opening": 0.05}, "reached", 0),
    (["tool", "move", "0.05", "--speed", "0.02"], "tool.move", {"opening": 0.05, "speed": 0.02},
     "blocked", 1),
    (["tool", "grasp", "0.02", "--force", "10"], "tool.grasp", {"width": 0.02, "force": 10},
     "grasped", 0),
    (["tool", "grasp", "0.02", "--speed", "0.01", "--epsilon-inner", "0",
      "--epsilon-outer", "0.055", "--force", "2.5"], "tool.grasp",
     {"width": 0.02, "speed": 0.01, "epsilon_inner": 0, "epsilon_outer": 0.055, "force": 2.5},
     "no_object", 1),
    (["tool", "release"], "tool.release", None, "reached", 0),
    (["tool", "release", "--speed", "0.1"], "tool.release", {"speed": 0.1}, "aborted", 1),
    (["tool", "stop"], "tool.stop", None, "stopped", 1),
]
MEANING = {"no_object": "nothing", "blocked": "short of the target", "stopped": "tool stop",
           "aborted": "armctl status"}


def against_fake(armctl, tmp):
    sock = os.path.join(tmp, "armd.sock")
    state = {"outcome": "reached", "tool": True, "error": None}

    def answer(method, params):
        if method.startswith("tool.") and state["error"]:
            return {"error": {"code": state["error"], "message": "refused for the test"}}
        if method.startswith("tool."):
            return {"result": {"outcome": state["outcome"], "opening": 0.02005, "force": 9.75}}
        if method == "status":
            return {"result": status_reply(state["tool"])}
        if method == "info":
            return {"result": info_reply(state["tool"])}
        if method == "subscribe":
            return {"result": {"rate_hz": 10}}
        return {"error": {"code": "unknown_method", "message": method}}

    armd = FakeArmd(sock, answer)
    try:
        for args, method, params, outcome, status in COMMANDS:
            state["outcome"] = outcome
            del armd.requests[:]
            p = run(armctl, sock, *args)
            what = "armctl %s (armd: %s)" % (" ".join(args), outcome)
            sent = [(r["method"], r.get("params")) for r in armd.requests]
            check(sent == [(method, params)], "%s: sent %s" % (what, sent))
            check(p.returncode == status, "%s: exit %d, expected %d" % (what, p.returncode,
                                                                         status))
            check(p.stdout == "%s: opening 20.05 mm, force 9.75 N\n" % outcome,
                  "%s: stdout %r" % (what, p.stdout))
            if outcome in MEANING:
                check(MEANING[outcome] in p.stderr, "%s: stderr %r" % (what, p.stderr))
            else:
                check(p.stderr == "", "%s: stderr %r" % (what, p.stderr))
            p = run(armctl, sock, "--json", *args)
            check(p.returncode == status and json.loads(p.stdout)["outcome"] == outcome,
                  "%s --json: exit %d %r" % (what, p.returncode, p.stdout))
        print("%d tool commands: the params given sent, the outcome printed in mm and N, exit 0 "
              "for reached and grasped only" % len(COMMANDS))

        for code in ("no_tool", "bad_state"):
            state["error"] = code
            p = run(armctl, sock, "tool", "grasp", "0.02")
            check(p.returncode == 1 and "armctl: tool.grasp: %s: refused for the test" % code
                  in p.stderr, "armd's %s: exit %d %r" % (code, p.returncode, p.stderr))
        state["error"] = None

        p = run(armctl, sock, "tool")
        check(p.returncode == 0 and p.stdout.splitlines() == [
            "tool        gripper", "opening     20.05 mm (stroke 20.00 ... 75.00 mm)",
            "speed       0.0 mm/s", "force       9.75 N", "command     idle", "grasped     yes"],
            "armctl tool: exit %d %r" % (p.returncode, p.stdout))
        p = run(armctl, sock, "--json", "tool", "status")
        check(p.returncode == 0 and json.loads(p.stdout)["name"] == "gripper",
              "armctl --json tool status: %r" % p.stdout)
        p = run(armctl, sock, "status")
        check(p.returncode == 0 and "tool        gripper: 20.05 mm, 9.75 N, idle, grasped" in
              p.stdout, "armctl status's tool line: %r" % p.stdout)
        check("wrench         force x 1.50 y -2.00 z 3.00 N, moment x 0.250 y 0.000 z -0.125 N m"
              in p.stdout, "armctl status's wrench line: %r" % p.stdout)
        p = run(armctl, sock, "info")
        check(p.returncode == 0 and "tool        gripper (servo 15): stroke 20.00 ... 75.00 mm,"
              " speed 50 mm/s (at most 100), force 10 N (at most 20)" in p.stdout,
              "armctl info's tool line: %r" % p.stdout)
        p = run(armctl, sock, "record", "-", "--seconds", "0.5", "--rate", "10")
        lines = p.stdout.splitlines()
        check(p.returncode == 0 and lines and lines[0] ==
              "t,q_j1,q_des_j1,qd_j1,tau_j1,ext_j1,pose_x,pose_y,pose_z,pose_qw,pose_qx,pose_qy,"
              "pose_qz,wrench_fx,wrench_fy,wrench_fz,wrench_mx,wrench_my,wrench_mz,tool_opening,"
              "tool_speed,tool_force,mono,wall"
              and lines[1].split(",")[6:22] == ["0.3", "0.1", "0.2", "1", "0", "0", "0",
                                                "1.5", "-2", "3", "0.25", "0", "nan",
                                                "0.02005", "0", "9.75"],
              "armctl record with a tool: %d %r" % (p.returncode, lines[:2]))

        state["tool"] = False
        p = run(armctl, sock, "tool")
        check(p.returncode == 1 and "no tool" in p.stderr and "[tool]" in p.stderr,
              "armctl tool without a tool: exit %d %r" % (p.returncode, p.stderr))
        p = run(armctl, sock, "info")
        check(p.returncode == 0 and "tool        none" in p.stdout, "armctl info without a "
              "tool: %r" % p.stdout)
        p = run(armctl, sock, "status")
        check(p.returncode == 0 and "wrench" not in p.stdout,
              "armctl status with the wrench unknown: %r" % p.stdout)
        p = run(armctl, sock, "record", "-", "--seconds", "0.2", "--rate", "10")
        check(p.stdout.startswith("t,q_j1,q_des_j1,qd_j1,tau_j1,ext_j1,pose_x,pose_y,pose_z,pose_qw,"
                                    "pose_qx,pose_qy,pose_qz,wrench_fx,wrench_fy,wrench_fz,"
                                    "wrench_mx,wrench_my,wrench_mz,mono,wall\n"),
              "armctl record without a tool: %r" % p.stdout[:100])
        print("armctl tool, status, info, record show the tool (and say when there is none)")
    finally:
        armd.close()

    # watch: the tool's line under the joint table (it runs until interrupted)
    state["tool"] = True
    armd = FakeArmd(sock + "2", answer)
    try:
        w = subprocess.Popen([armctl, "-s", sock + "2", "watch", "--rate", "10"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, _ = w.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            w.terminate()
            out, _ = w.communicate(timeout=5)
        check("tool           opening 20.05 mm, speed 0.0 mm/s, force 9.75 N" in out,
              "armctl watch's tool line: %r" % out[-400:])
        print("armctl watch shows the tool's line")
    finally:
        armd.close()


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    armctl = os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="armctl-tool-")
    try:
        usage(armctl, tmp)
        against_fake(armctl, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
