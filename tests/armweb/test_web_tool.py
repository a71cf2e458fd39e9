#!/usr/bin/python3
"""Integration: the gripper in armweb's page, in headless Chromium. armsim (the
OpenManipulator-X example, its [tool gripper], holding a 30 mm object: --object 0.03,1e5;
without gravity, see DROPIN) + armd + armweb --control, the arm enabled.

Asserts: the page has a card for the tool after the joints' (data-tool, its opening plotted)
and the grid counts it (4 joints + the tool: 3 columns); Open and Close are in the control
panel, disabled until the token is entered; Open, pressed in the page, opens the fingers to the
stroke's upper end (armd's tool.release: the page shows "Open: reached", armd's status the
opening); Close grasps whatever lies between the fingers (tool.grasp at the stroke's middle,
epsilons from just above its closed end to its open end): the page shows "Close: grasped",
armd's status says grasped at the object's 30 mm, and the card's readout shows the opening; a Close pressed and an E-STOP
pressed at once: armd goes to estop while the Close runs (on armweb's connection of its own, it
holds up nothing), so the Close answers aborted, not grasped. armweb logs the tool commands.
"""
import time

from browser import Browser
from web_lib import Armweb, check, run, wait_until

import test_api_lib
from test_web_control import enter_token

UPRIGHT = ("--q0", "0,0,-1.4,0")  # upright, the forearm raised, inside every limit
OBJECT = ("--object", "0.03,1e5")
# the example's 400 Hz; the real-time rig's tolerance of host stalls (test_api_lib); no gravity
# for armsim and armd alike (the drop-in is read by both), so that the limp arm cannot fall
# between armsim's start and the enable (a loaded machine may take seconds to start armd); the
# gripper's default speed 20 mm/s, so that a Close from 75 mm takes 2.75 s: long enough for an
# E-STOP through the page (0.4-1.6 s, test_web_control) pressed once it runs to come before
# it ends
DROPIN = ("[arm]\ngravity = 0 0 0\n[safety]\nmax_read_gap_ms = 400\n"
          "[driver]\nbus_watchdog_ms = 500\n[realtime]\npriority = 50\n"
          "[tool gripper]\nspeed = 0.02\n")
OUTCOME = "document.getElementById('tool-outcome').textContent"


def enable(c):
    c.call("enable")
    wait_until(lambda: c.call("status")["state"] == "holding", 10, "armd holding")


def press(br, button, label, outcome, timeout=15):
    """Clicks #button and waits until the page shows the tool's answer `label: outcome`."""
    br.evaluate("document.getElementById('%s').click(), true" % button)
    return br.wait_for("(() => { const s = %s; return s.startsWith('%s: %s') && s; })()" %
                       (OUTCOME, label, outcome), timeout,
                       "the page showing %s: %s" % (label, outcome))


def main(args):
    with test_api_lib.Rig(args, "web-tool", sim_args=UPRIGHT + OBJECT, dropin=DROPIN) as rig:
        c = rig.client()
        enable(c)
        tool = c.call("info")["tool"]
        check(tool is not None, "the example has no [tool]: info %s" % tool)
        with Armweb(args, rig, ["--control"]) as web:
            with Browser(web.url("/"), log_dir=rig.dir) as br:
                br.wait_for("(() => { const t = document.querySelector('section.tool');"
                            " return !!t && t.dataset.tool === 'gripper' &&"
                            " +t.dataset.points > 10 &&"
                            " !document.getElementById('tool-close').hidden; })()", 60,
                            "the tool's card with its opening plotted, Close shown")
                cols = br.evaluate("getComputedStyle(document.getElementById('joints'))"
                                   ".getPropertyValue('--columns').trim()")
                check(cols == "3", "4 joints and the tool in %r columns, expected 3" % cols)
                check(br.evaluate("document.getElementById('tool-open').disabled && "
                                  "document.getElementById('tool-close').disabled"),
                      "Open or Close enabled before the token was entered")
                enter_token(br, web)
                check(not br.evaluate("document.getElementById('tool-close').disabled"),
                      "Close still disabled with the token")

                shown = press(br, "tool-open", "Open", "reached")
                st = c.call("status")["tool"]
                print("Open: the page shows %r; armd's tool %s" % (shown, st))
                check(abs(st["opening"] - tool["upper"]) < 0.002 and not st["grasped"],
                      "after Open: %s" % st)

                shown = press(br, "tool-close", "Close", "grasped")
                st = c.call("status")["tool"]
                print("Close: the page shows %r; armd's tool %s" % (shown, st))
                check(st["grasped"] and abs(st["opening"] - 0.030) < 0.001,
                      "after Close, on the 30 mm object: %s" % st)
                br.wait_for("(() => { const b = document.querySelector('section.tool "
                            ".tool-opening'); return !!b && Math.abs(+b.dataset.value - 0.03)"
                            " < 0.001; })()", 10, "the card's readout at the object's 30 mm")

                press(br, "tool-open", "Open", "reached")
                br.evaluate("document.getElementById('tool-close').click(), true")
                wait_until(lambda: c.call("status")["tool"]["command"] == "grasp", 5,
                           "armd running the page's Close", period=0.02)
                t0 = time.monotonic()
                br.evaluate("document.getElementById('estop').click(), true")
                wait_until(lambda: c.call("status")["state"] == "estop", 5,
                           "armd in estop after E-STOP pressed during a Close")
                took = time.monotonic() - t0
                shown = br.wait_for("(() => { const s = %s; return s.startsWith('Close: ') &&"
                                    " !s.endsWith('...') && s; })()" % OUTCOME, 15,
                                    "the Close's answer after the E-STOP")
                print("E-STOP during a Close: armd in estop after %.0f ms; the page shows %r" %
                      (took * 1e3, shown))
                check(shown.startswith("Close: aborted"), "the Close cut by the E-STOP: %r" %
                      shown)
        log = web.log()
        check("tool.grasp from the page" in log and "tool.release from the page" in log,
              "armweb did not log the tool commands:\n" + log)
        c.close()


if __name__ == "__main__":
    run(main)
