#!/usr/bin/env python3
"""Unit: what a fake armd (test_client_unit.FakeArmd) cannot be made to do by the real one: the
typed replies of a newer armd (members the client does not know kept in ``extra``, nulls as
NaN, missing members empty, no crash), and armd.aio matching replies that come back in another
order than the requests went out, with a notification between them, and failing every waiting
request when armd closes. Standard library only."""
import asyncio
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "tools", "python")]
import armd  # noqa: E402
import armd.aio  # noqa: E402
from test_client_unit import FakeArmd, done_event, telemetry  # noqa: E402


class Replies(unittest.TestCase):

    def test_newer_and_older_armd(self):
        st = armd.Status.from_dict({
            "state": "moving", "fault": None, "q": [0.5, None], "warp": 9,
            "trajectory": {"id": 4, "progress": 0.25, "remaining": 1.5, "eta": 2},
            "loop": {"ticks": 7, "lateness_us": {"p50": 3, "p99": None, "p999": 8}}})
        self.assertEqual(st.state, "moving")
        self.assertEqual(st.q[0], 0.5)
        self.assertTrue(math.isnan(st.q[1]) and math.isnan(st.time))
        self.assertEqual(st.extra, {"warp": 9})
        self.assertEqual((st.trajectory.id, st.trajectory.extra), (4, {"eta": 2}))
        self.assertEqual((st.loop.ticks, st.loop.overruns), (7, 0))
        self.assertEqual(st.loop.lateness_us.extra, {"p999": 8})
        self.assertTrue(math.isnan(st.loop.lateness_us.p99))
        self.assertEqual((st.qd, st.collision.mode, st.clients), ([], "", 0))
        self.assertEqual(st["q"], [0.5, None])
        with self.assertRaises(Exception):
            st.state = "x"  # frozen
        info = armd.Info.from_dict({"name": "a", "dof": 2, "limits": {"lower": [0, 1]},
                                    "driver": {"type": "dxl2", "baud": 57600, "bus": 1},
                                    "gripper": {"width": 0.1}})
        self.assertEqual((info.dof, info.limits.lower, info.limits.upper), (2, [0.0, 1.0], []))
        self.assertEqual((info.driver.type, info.driver.baud, info.driver.extra),
                         ("dxl2", 57600, {"bus": 1}))
        self.assertEqual(info.extra, {"gripper": {"width": 0.1}})
        self.assertEqual(info.to_dict()["gripper"], {"width": 0.1})

    def test_pose(self):
        """The pose member: numbers as sent, null as NaN, short arrays padded, absent as None
        (an older armd); matrix() is the quaternion's rotation."""
        h = math.sqrt(0.5)
        st = armd.Status.from_dict({"pose": {"position": [0.1, None], "orientation": [h, 0, h, 0]}})
        self.assertEqual(st.pose.position[0], 0.1)
        self.assertTrue(math.isnan(st.pose.position[1]) and math.isnan(st.pose.position[2]))
        r = st.pose.matrix()  # 90 deg about y: x -> -z, z -> x
        for row, want in zip(r, [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]):
            for a, b in zip(row, want):
                self.assertAlmostEqual(a, b, places=12)
        self.assertNotIn("pose", st.extra)
        self.assertIsNone(armd.Status.from_dict({"state": "holding"}).pose)
        t = armd.Telemetry.from_params({"q": [0.0], "pose": {"position": [1, 2, 3],
                                                             "orientation": [1, 0, 0, 0]}})
        self.assertEqual((t.pose.position, t.pose.orientation), ((1.0, 2.0, 3.0), (1.0, 0.0, 0.0, 0.0)))
        self.assertIsNone(armd.Telemetry.from_params({"q": [0.0]}).pose)

    def test_wrench(self):
        """The wrench member: force and torque as sent, null (the observer off) as NaN, short
        arrays padded, absent as None (an older armd); in status and telemetry alike."""
        st = armd.Status.from_dict({"wrench": {"force": [1.5, -2, 3], "torque": [0.25, None]}})
        self.assertIsInstance(st.wrench, armd.Wrench)
        self.assertEqual(st.wrench.force, (1.5, -2.0, 3.0))
        self.assertEqual(st.wrench.torque[0], 0.25)
        self.assertTrue(math.isnan(st.wrench.torque[1]) and math.isnan(st.wrench.torque[2]))
        self.assertNotIn("wrench", st.extra)
        self.assertIsNone(armd.Status.from_dict({"state": "holding"}).wrench)
        t = armd.Telemetry.from_params({"q": [0.0], "wrench": {"force": [None] * 3,
                                                               "torque": [None] * 3}})
        self.assertTrue(all(math.isnan(v) for v in t.wrench.force + t.wrench.torque))
        self.assertIsNone(armd.Telemetry.from_params({"q": [0.0]}).wrench)


class Aio(unittest.TestCase):

    def test_replies_out_of_order(self):
        def script(p):
            reqs = [p.request() for _ in range(4)]
            p.send(telemetry(1), done_event(77))
            for r in reversed(reqs):
                p.reply(r, {"state": "s%d" % r["id"]} if r["method"] == "status"
                        else {"name": "n%d" % r["id"]})
            p.request()  # the last one is never answered: armd closes

        async def client(path):
            async with await armd.aio.connect(path, timeout=5) as arm:
                got = await asyncio.gather(arm.status(), arm.info(), arm.status(), arm.info())
                self.assertEqual([g.state if isinstance(g, armd.Status) else g.name
                                  for g in got], ["s1", "n2", "s3", "n4"])
                self.assertEqual((await arm.wait_done(traj=77)).result, "done")
                with self.assertRaises(armd.ConnectionClosed):
                    await arm.status()

        with FakeArmd(script) as srv:
            asyncio.run(client(srv.path))


if __name__ == "__main__":
    unittest.main()
