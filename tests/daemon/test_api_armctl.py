#!/usr/bin/env python3
"""Integration: armctl against a real armd + armsim. Human output names the joints, --json is
parseable, commands move the arm, errors exit non-zero with the daemon's message, usage errors
exit 2, record writes a CSV (with the mono and wall clocks). pose shows the tool frame: a move
of the PUMA's vertical joint 1 turns it about the base z axis by as much, and the printed
roll-pitch-yaw angles are the quaternion's rotation."""
import csv
import datetime
import json
import math
import os
import subprocess
import time

from test_api_lib import Rig, check, run


def armctl(rig, *args, expect=0, timeout=30):
    p = subprocess.run([rig.args.armctl, "-s", rig.sock] + list(args), capture_output=True,
                       text=True, timeout=timeout)
    check(p.returncode == expect, "armctl %s: exit %d (expected %d)\nstdout: %s\nstderr: %s" %
          (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def rot_of_quat(w, x, y, z):
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def rot_of_rpy(r, p, y):
    """Rz(y) Ry(p) Rx(r): the fixed-axis roll-pitch-yaw of [arm] tool_rpy."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]


def check_pose(rig, q_before):
    """armctl pose after the move of joint 1 by +0.2 rad (and joint 6, which turns the flange
    about its own axis, where the tool frame sits): the position turned about z by the measured
    change of q1, radius and height kept; the quaternion a unit one and the printed angles its
    rotation."""
    st = json.loads(armctl(rig, "--json", "status").stdout)
    pose = json.loads(armctl(rig, "--json", "pose").stdout)
    p, o = pose["position"], pose["orientation"]
    check(max(abs(a - b) for a, b in zip(p, st["pose"]["position"])) < 1e-4,
          "pose %s vs status pose %s" % (p, st["pose"]))
    check(abs(math.sqrt(sum(v * v for v in o)) - 1) < 1e-9 and o[0] >= 0,
          "pose orientation is not a unit quaternion with w >= 0: %s" % o)
    before = rig.pose_at_start
    turn = math.atan2(p[1], p[0]) - math.atan2(before[1], before[0])
    dq1 = st["q"][0] - q_before[0]
    check(abs(turn - dq1) < 1e-3 and abs(math.hypot(p[0], p[1]) - math.hypot(*before[:2])) < 2e-3
          and abs(p[2] - before[2]) < 2e-3,
          "pose after turning joint 1 by %.4f rad: %s, before %s (turned %.4f)" % (dq1, p, before, turn))
    out = armctl(rig, "pose").stdout
    words = out.split()
    rpy = [math.radians(float(words[words.index(k) + 1])) for k in ("roll", "pitch", "yaw")]
    a, b = rot_of_rpy(*rpy), rot_of_quat(*o)
    check(max(abs(a[i][j] - b[i][j]) for i in range(3) for j in range(3)) < 1e-4,
          "armctl pose's roll-pitch-yaw %s is not its quaternion %s:\n%s" % (rpy, o, out))
    check("m (base frame)" in out, "armctl pose output: %s" % out)
    print("pose: joint 1 turned %.4f rad, the tool %.4f rad about z" % (dq1, turn))


def check_move_linear(rig, q0):
    """armctl move-linear: refused at the ready pose (q5 = 0, a singularity); from a pose with
    the elbow up and the wrist bent, 5 cm down in the base frame: the tool ends 5 cm lower (within 3 mm,
    the real-time loop's holding error included), x and y kept; out of reach and a bad frame
    are refused, exit 1 with the daemon's reason and exit 2."""
    p = armctl(rig, "move-linear", "0", "0", "-0.05", expect=1)
    check("unreachable" in p.stderr and "singularity" in p.stderr,
          "move-linear at the ready pose: %s" % p.stderr)
    bent = [0.2, 0.9, -2.4, 0.1, 0.8, 0.2]  # elbow up, wrist bent: room on every side
    armctl(rig, "move", *["%.6f" % x for x in bent], "--time", "3")
    armctl(rig, "wait", "done", "--timeout", "10")
    before = json.loads(armctl(rig, "--json", "pose").stdout)["position"]
    out = armctl(rig, "move-linear", "0", "0", "-0.05", "--speed", "0.1").stdout
    # 15/8 x 0.05 m / 0.1 m/s = 0.9375 s: the quintic at its peak speed
    check(out.startswith("trajectory ") and "0.93" in out, "move-linear output: %s" % out)
    armctl(rig, "wait", "done", "--timeout", "10")
    after = json.loads(armctl(rig, "--json", "pose").stdout)["position"]
    d = [b - a for a, b in zip(before, after)]
    check(abs(d[0]) < 3e-3 and abs(d[1]) < 3e-3 and abs(d[2] + 0.05) < 3e-3,
          "move-linear 0 0 -0.05 moved the tool by %s" % d)
    p = armctl(rig, "move-linear", "3", "0", "0", expect=1)
    check("unreachable" in p.stderr and "out of reach" in p.stderr and "waypoint" in p.stderr,
          "move-linear 3 m away: %s" % p.stderr)
    armctl(rig, "move-linear", "0", "0", "0.1", "--frame", "world", expect=2)
    print("move-linear: the tool moved by (%.4f, %.4f, %.4f) m" % tuple(d))


def main(args):
    with Rig(args, "armctl") as rig:
        out = armctl(rig, "status").stdout
        for word in ("state", "disabled", "j1", "j6", "lateness", "rad"):
            check(word in out, "status output lacks %r:\n%s" % (word, out))
        st = json.loads(armctl(rig, "--json", "status").stdout)
        check(st["state"] == "disabled", "status --json state %s" % st["state"])
        rig.pose_at_start = st["pose"]["position"]
        info = json.loads(armctl(rig, "info", "--json").stdout)
        n = info["dof"]
        check("puma560" in armctl(rig, "info").stdout, "info does not name the arm")

        # errors: the daemon's message and exit 1; usage errors exit 2
        p = armctl(rig, "move", "0.1", "0.2", expect=1)
        check("invalid_params" in p.stderr and "params.q" in p.stderr,
              "move with 2 of %d values: %s" % (n, p.stderr))
        p = armctl(rig, "hold", expect=1)
        check("hold" in p.stderr, "hold while disabled: %s" % p.stderr)
        armctl(rig, "fly", expect=2)
        armctl(rig, "move", "abc", expect=2)
        p = subprocess.run([args.armctl, "-s", os.path.join(rig.dir, "nothing.sock"), "status"],
                           capture_output=True, text=True)
        check(p.returncode == 1 and "cannot connect" in p.stderr, "missing socket: %s" % p.stderr)

        check(armctl(rig, "enable").stdout.strip() == "holding", "enable")
        q0 = st["q"]
        target = list(q0)
        target[0] += 0.2
        target[5] -= 0.3
        out = armctl(rig, "move", *["%.6f" % x for x in target], "--time", "1.5").stdout
        check(out.startswith("trajectory "), "move output: %s" % out)
        armctl(rig, "wait", "done", "--timeout", "10")
        st = json.loads(armctl(rig, "--json", "status").stdout)
        err = max(abs(a - b) for a, b in zip(st["q"], target))
        print("move: reached within %.5f rad" % err)
        check(err < 0.01, "move did not reach the target: %.4f rad off" % err)
        check_pose(rig, q0)

        # send a CSV trajectory back to q0 while recording
        path = os.path.join(rig.dir, "back.csv")
        with open(path, "w") as f:
            f.write("t," + ",".join(info["joints"]) + "\n")
            mid = [(a + b) / 2 for a, b in zip(q0, target)]
            f.write("1.0," + ",".join("%.6f" % x for x in mid) + "\n")
            f.write("2.0," + ",".join("%.6f" % x for x in q0) + "\n")
        rec_path = os.path.join(rig.dir, "rec.csv")
        t_rec = time.monotonic()
        rec = subprocess.Popen([args.armctl, "-s", rig.sock, "record", rec_path, "--seconds", "3",
                                "--rate", "100"], stderr=subprocess.PIPE, text=True)
        out = armctl(rig, "send", path).stdout
        check("2.000 s" in out, "send output: %s" % out)
        armctl(rig, "wait", "done", "--timeout", "10")
        rec.wait(20)
        check(rec.returncode == 0, "record failed: %s" % rec.stderr.read())
        rows = list(csv.reader(open(rec_path)))
        check(rows[0][0] == "t" and "q_j1" in rows[0] and "tau_j6" in rows[0] and "q_des_j3" in rows[0],
              "record header: %s" % rows[0])
        check(len(rows[0]) == 3 + 5 * n + 7 + 6 and "pose_qz" in rows[0] and "wrench_mz" in rows[0] and "ext_j2" in rows[0] and rows[0][-2:] == ["mono", "wall"],
              "record has %d columns: %s" % (len(rows[0]), rows[0]))
        # the clocks: mono is this machine's CLOCK_MONOTONIC (Python's time.monotonic), wall
        # the realtime clock in ISO 8601 UTC, both of the sample's tick (not when written)
        mono = [float(r[-2]) for r in rows[1:]]
        wall = [datetime.datetime.strptime(r[-1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp() for r in rows[1:]]
        offset = time.time() - time.monotonic()
        check(all(b > a for a, b in zip(mono, mono[1:])), "record: mono not increasing")
        check(t_rec - 1 <= mono[0] and mono[-1] <= time.monotonic(),
              "record: mono %.3f .. %.3f outside the recording's %.3f .. %.3f" %
              (mono[0], mono[-1], t_rec, time.monotonic()))
        check(max(abs(w - m - offset) for w, m in zip(wall, mono)) < 0.5,
              "record: wall - mono differs from the realtime clock's offset by more than 0.5 s")
        check(all(abs((float(r[0]) - float(rows[1][0])) - (m - mono[0])) < 1e-5
                  for r, m in zip(rows[1:], mono)), "record: mono - t not constant")
        check(250 <= len(rows) - 1 <= 320, "record at 100 Hz for 3 s wrote %d rows" % (len(rows) - 1))
        print("record: %d rows" % (len(rows) - 1))

        check_move_linear(rig, q0)

        # gains: set per joint and scalar, shown in the table
        out = armctl(rig, "gains", "kp=300", "kd=" + ",".join(["30"] * n)).stdout
        check("300" in out and "j6" in out, "gains output: %s" % out)
        g = json.loads(armctl(rig, "--json", "gains").stdout)
        check(g["kp"] == [300.0] * n and g["kd"] == [30.0] * n, "gains not applied: %s" % g)
        armctl(rig, "gains", "kp=1,2", expect=1)  # wrong count: the daemon's error
        # impedance: one number for the axes, one per axis; shown; the daemon's bounds
        out = armctl(rig, "impedance", "translational=800",
                     "damping=0.5,0.5,0.6,0.7,0.7,0.7").stdout
        check("800" in out and "0.6" in out and "N/m" in out, "impedance output: %s" % out)
        m = json.loads(armctl(rig, "--json", "impedance").stdout)
        check(m["translational_stiffness"] == [800.0] * 3 and m["damping_ratio"][2] == 0.6,
              "impedance not applied: %s" % m)
        armctl(rig, "impedance", "rotational=-1", expect=1)
        # payload: set, shown, kept by a reload, cleared; bad input is a usage error (2) or
        # the daemon's (1)
        out = armctl(rig, "payload", "set", "1.5", "0", "0", "0.1").stdout
        check("1.5 kg" in out and "0.1" in out, "payload set output: %s" % out)
        p = json.loads(armctl(rig, "--json", "payload").stdout)
        check(p["mass"] == 1.5 and p["com"] == [0, 0, 0.1], "payload not set: %s" % p)
        armctl(rig, "payload", "set", "-1", expect=1)
        armctl(rig, "payload", "set", "1", "0", "0", expect=2)
        armctl(rig, "payload", "set", "1", "--inertia", "1", "0", "0", "1", "0", "-1", expect=1)
        armctl(rig, "payload", "estimate", "--fast", expect=2)
        armctl(rig, "payload", "weigh", expect=2)
        out = armctl(rig, "reload").stdout
        check("reloaded" in out, "reload output: %s" % out)
        check(json.loads(armctl(rig, "--json", "payload").stdout)["mass"] == 1.5,
              "a reload changed the payload set over the socket")
        check("0 kg" in armctl(rig, "payload", "clear").stdout, "payload clear")
        check(armctl(rig, "disable").stdout.strip() == "disabled", "disable")
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
