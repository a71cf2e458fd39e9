#!/usr/bin/env python3
"""Unit: the gripper in the Python client (tools/python/armd), against the fake armd of
test_client_unit: the records (ToolResult and its ok for every outcome armd-api(7) names,
ToolState in telemetry, ToolStatus in status, ToolInfo in info; nulls as NaN, an arm without a
tool None, members of a newer armd kept in extra), arm.tool's methods (the params each sends,
optional ones only when given, checked before sending; its result; no_tool as armd.NoTool;
state() from status, NoTool without a tool; a tool command allowed to take longer than the
client's timeout), the tool's line of `python3 -m armd status`, and the same through armd.aio.
Standard library only."""
import asyncio
import math
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "tools", "python")]
import armd  # noqa: E402
import armd.aio  # noqa: E402
from test_client_unit import FakeArmd, telemetry  # noqa: E402

OUTCOMES = {"reached": True, "grasped": True, "no_object": False, "blocked": False,
            "stopped": False, "aborted": False}
TOOL_STATUS = {"name": "gripper", "opening": 0.042, "speed": 0.0, "force": None,
               "command": "idle", "grasped": False, "lower": 0.02, "upper": 0.075}


class Records(unittest.TestCase):

    def test_tool_result(self):
        for outcome, ok in OUTCOMES.items():
            r = armd.ToolResult.from_dict({"outcome": outcome, "opening": 0.0201, "force": 9.5})
            self.assertEqual((r.outcome, r.opening, r.force, r.ok), (outcome, 0.0201, 9.5, ok))
        r = armd.ToolResult.from_dict({"outcome": "grasped", "opening": None, "gap": 1})
        self.assertTrue(math.isnan(r.opening) and math.isnan(r.force))
        self.assertEqual(r.raw, {"outcome": "grasped", "opening": None, "gap": 1})
        self.assertEqual(armd.ToolResult.from_dict({"outcome": "reached", "opening": 0.075,
                                                    "force": 0, "gap": 1}),
                         armd.ToolResult("reached", 0.075, 0.0))  # raw is not compared
        self.assertFalse(armd.ToolResult.from_dict(None).ok)
        with self.assertRaises(Exception):
            r.outcome = "reached"  # frozen

    def test_telemetry_tool(self):
        p = telemetry(3)["params"]
        self.assertIsNone(armd.Telemetry.from_params(p).tool)
        p["tool"] = {"opening": 0.03, "speed": -0.05, "force": None}
        t = armd.Telemetry.from_params(p)
        self.assertEqual((t.tool.opening, t.tool.speed), (0.03, -0.05))
        self.assertTrue(math.isnan(t.tool.force))
        self.assertEqual(t.params["tool"]["opening"], 0.03)

    def test_status_and_info_tool(self):
        st = armd.Status.from_dict({"state": "holding", "tool": dict(TOOL_STATUS, grip=2)})
        self.assertEqual((st.tool.name, st.tool.opening, st.tool.command, st.tool.grasped,
                          st.tool.lower, st.tool.upper),
                         ("gripper", 0.042, "idle", False, 0.02, 0.075))
        self.assertTrue(math.isnan(st.tool.force))
        self.assertEqual((st.tool.extra, st.extra), ({"grip": 2}, {}))
        self.assertEqual(st["tool"]["name"], "gripper")
        self.assertTrue(armd.Status.from_dict({"tool": dict(TOOL_STATUS, grasped=True)})
                        .tool.grasped)
        self.assertIsNone(armd.Status.from_dict({"state": "holding"}).tool)
        info = armd.Info.from_dict({"name": "omx", "tool": {
            "name": "gripper", "id": 15, "lower": 0.02, "upper": 0.075, "velocity": 0.1,
            "max_force": 20, "force": 10, "speed": 0.05}})
        self.assertEqual((info.tool.id, info.tool.max_force, info.tool.speed, info.extra),
                         (15, 20.0, 0.05, {}))
        self.assertIsNone(armd.Info.from_dict({"name": "puma", "tool": None}).tool)


def answer_tool(p, n):
    """The fake armd's side: n tool requests, each answered with its method's outcome."""
    outcome = {"tool.move": "reached", "tool.grasp": "grasped", "tool.release": "reached",
               "tool.stop": "stopped"}
    for _ in range(n):
        req = p.request()
        p.reply(req, {"outcome": outcome[req["method"]], "opening": 0.02, "force": 1.5})


class Commands(unittest.TestCase):

    def test_params_and_results(self):
        """Each method sends its params, optional ones only when given, and returns the
        ToolResult of armd's answer."""
        with FakeArmd(lambda p: answer_tool(p, 6)) as srv, armd.Client(srv.path, timeout=5) as c:
            self.assertEqual(c.tool.grasp(width=0.020, force=10),
                             armd.ToolResult("grasped", 0.02, 1.5))
            r = c.tool.grasp(0.03, 5, 0.02, epsilon_inner=0.001, epsilon_outer=0.04)
            self.assertTrue(r.ok)
            self.assertEqual(c.tool.move(0.05).outcome, "reached")
            self.assertEqual(c.tool.move(0.05, speed=0.01).outcome, "reached")
            self.assertEqual(c.tool.release(speed=0.1).outcome, "reached")
            r = c.tool.stop()
            self.assertEqual((r.outcome, r.ok), ("stopped", False))
        sent = [(q["method"], q.get("params")) for q in srv.peer.requests]
        self.assertEqual(sent, [
            ("tool.grasp", {"width": 0.02, "force": 10.0}),
            ("tool.grasp", {"width": 0.03, "force": 5.0, "speed": 0.02, "epsilon_inner": 0.001,
                            "epsilon_outer": 0.04}),
            ("tool.move", {"opening": 0.05}),
            ("tool.move", {"opening": 0.05, "speed": 0.01}),
            ("tool.release", {"speed": 0.1}),
            ("tool.stop", None)])

    def test_bad_values_never_sent(self):
        """NaN, infinity, non-numbers and a missing width raise InvalidParams naming the
        parameter; nothing reaches armd."""
        with FakeArmd(lambda p: p.reply(p.request(), {"state": "holding"})) as srv, \
                armd.Client(srv.path, timeout=5) as c:
            for call, name in ((lambda: c.tool.grasp(math.nan), "width"),
                               (lambda: c.tool.grasp(0.02, force=math.inf), "force"),
                               (lambda: c.tool.grasp(None), "width"),
                               (lambda: c.tool.grasp(0.02, epsilon_outer="wide"),
                                "epsilon_outer"),
                               (lambda: c.tool.move(0.03, speed=True), "speed"),
                               (lambda: c.tool.release(speed=-math.inf), "speed")):
                with self.assertRaises(armd.InvalidParams) as cm:
                    call()
                self.assertIn(name, str(cm.exception))
            self.assertEqual(c.enable(), "holding")
        self.assertEqual([q["method"] for q in srv.peer.requests], ["enable"])

    def test_no_tool_and_state(self):
        """no_tool raises armd.NoTool; state() reads status's tool, NoTool without one."""
        def script(p):
            p.error(p.request(), "no_tool", "this arm has no [tool] section")
            p.reply(p.request(), {"state": "holding", "tool": TOOL_STATUS})
            p.reply(p.request(), {"state": "holding"})
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=5) as c:
            with self.assertRaises(armd.NoTool) as cm:
                c.tool.release()
            self.assertEqual((cm.exception.code, cm.exception.method),
                             ("no_tool", "tool.release"))
            self.assertEqual(c.tool.state(), armd.ToolStatus.from_dict(TOOL_STATUS))
            with self.assertRaises(armd.NoTool):
                c.tool.state()
        self.assertIs(armd.ERRORS["no_tool"], armd.NoTool)

    def test_longer_than_the_client_timeout(self):
        """A tool command waits past the client's timeout (armd answers when the fingers are
        done); its own timeout bounds it."""
        def script(p):
            req = p.request()
            time.sleep(0.6)
            p.reply(req, {"outcome": "grasped", "opening": 0.02, "force": 10})
            p.request()  # never answered
            p.request()  # None: the client gave up and closed
        with FakeArmd(script) as srv, armd.Client(srv.path, timeout=0.3) as c:
            self.assertTrue(c.tool.grasp(0.02).ok)
            with self.assertRaises(armd.ClientTimeout):
                c.tool.release(timeout=0.2)


class Cli(unittest.TestCase):

    def test_status_shows_the_tool(self):
        """python3 -m armd status: the tool's line (mm, N, the command, grasped)."""
        from armd import cli
        st = {"state": "holding", "fault": None, "controller": "computed_torque",
              "trajectory": None, "q": [0.5], "q_des": [0.5], "error": [0], "qd": [0],
              "tau": [0.1], "tool": dict(TOOL_STATUS, opening=0.02005, force=9.75,
                                         grasped=True)}
        out = cli.format_status({"joints": ["j1"], "types": ["revolute"]}, st)
        self.assertIn("tool        gripper: 20.05 mm, 9.75 N, idle, grasped", out)
        del st["tool"]
        self.assertNotIn("tool", cli.format_status({"joints": ["j1"]}, st))


class Aio(unittest.TestCase):

    def test_aio_tool(self):
        def script(p):
            answer_tool(p, 2)
            p.reply(p.request(), {"state": "holding", "tool": TOOL_STATUS})

        async def client(path):
            async with await armd.aio.connect(path, timeout=5) as arm:
                r = await arm.tool.grasp(width=0.02, force=10, epsilon_outer=0.055)
                self.assertEqual((r.outcome, r.ok), ("grasped", True))
                self.assertEqual((await arm.tool.stop()).outcome, "stopped")
                self.assertEqual((await arm.tool.state()).upper, 0.075)
                with self.assertRaises(armd.InvalidParams):
                    await arm.tool.move(math.nan)

        with FakeArmd(script) as srv:
            asyncio.run(client(srv.path))
        self.assertEqual(srv.peer.requests[0]["params"],
                         {"width": 0.02, "force": 10.0, "epsilon_outer": 0.055})


if __name__ == "__main__":
    unittest.main()
