#!/usr/bin/python3
"""Integration: armweb's page in a real browser. armsim (PUMA 560 on a pty) + armd + armweb
(read-only), the arm enabled; headless Chromium opens the page.

Asserts, through the DOM: six joint cards, each position plot with at least 180 samples and
its measured line drawn on the canvas; the state reads `holding`; each joint's shown q equals armd's status q
(the arm holds still); the loop timing and gains tables show armd's numbers; no control
buttons. Over HTTP: the commands answer 403 read_only and change nothing; /js/chart.js is
Debian's file. Then a move: the plots follow it (the shown q reaches the target). The
screenshot is a real picture (more than 200 distinct colours; a blank page has a handful).
"""
import json
import os
import shutil
import time

from browser import Browser
from png_colours import distinct_colours
from web_lib import Armweb, check, enable_and_hold, run, wait_until

import test_api_lib

CHARTJS = "/usr/share/javascript/chart.js/chart.min.js"
TARGET = [0.3, 1.2, -1.3, 0.4, -0.3, 0.5]  # rad, within the PUMA 560's limits

DOM_SUMMARY = """(() => {
  const cards = [...document.querySelectorAll('section.joint')];
  // pixels of the measured-position line (blue, #1f77b4): axes, grid, labels and the desired
  // line are grey, so an empty plot has none
  const ink = (canvas) => {
    const g = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < g.length; i += 4) if (g[i + 3] > 100 && g[i + 2] - g[i] > 60) n++;
    return n;
  };
  return {
    state: document.getElementById('state').textContent,
    link: document.getElementById('link').textContent,
    joints: cards.map((c) => ({
      name: c.dataset.joint, points: +c.dataset.points,
      q: +c.querySelector('.q').dataset.value,
      ink: ink(c.querySelector('canvas')) })),
    timing: [...document.querySelectorAll('#timing tbody tr')].map((r) =>
      [...r.cells].map((c) => c.textContent)),
    gains: [...document.querySelectorAll('#gains tbody tr')].map((r) =>
      ['kp', 'kd', 'ki'].map((k) => r.querySelector('.' + k).textContent)),
    controls: ['estop', 'enable', 'disable', 'gains-apply'].filter((id) =>
      document.getElementById(id)),
    controlHidden: document.getElementById('control').hidden,
  };
})()"""

# 3 s of telemetry in every plot (armweb subscribes at 58.8 Hz at 1 kHz)
ALL_PLOTTED = ("(() => { const c = [...document.querySelectorAll('section.joint')];"
               " return c.length === 6 && c.every((e) => +e.dataset.points >= 180); })()")


def check_read_only(web, c):
    """Every command endpoint refuses with 403 read_only; the arm stays as it was."""
    for path, body in (("/api/estop", None), ("/api/disable", None), ("/api/enable", None),
                       ("/api/gains", {"kp": 1})):
        status, _, reply = web.request(path, body=body if body else b"{}",
                                       headers={"X-Armweb": "1"}, method="POST")
        check(status == 403 and json.loads(reply)["error"]["code"] == "read_only",
              "read-only armweb answered %s with %d %r" % (path, status, reply[:200]))
    check(c.call("status")["state"] == "holding", "a refused command changed the state")
    status, _, body = web.request("/js/chart.js")
    check(status == 200 and body == open(CHARTJS, "rb").read(),
          "/js/chart.js is not Debian's %s (HTTP %d)" % (CHARTJS, status))


def check_holding_page(br, c):
    """The DOM once every plot has data: state, joints, timing, gains, no controls."""
    br.wait_for(ALL_PLOTTED, 60, "six joint plots with at least 180 samples each")
    dom = br.evaluate(DOM_SUMMARY)
    st = c.call("status")
    gains = c.call("gains.get")
    check(dom["state"] == "holding", "the page shows state %r, armd %r" %
          (dom["state"], st["state"]))
    info = c.call("info")
    check([j["name"] for j in dom["joints"]] == info["joints"],
          "joint cards %s, armd's joints %s" % ([j["name"] for j in dom["joints"]],
                                                 info["joints"]))
    for k, j in enumerate(dom["joints"]):
        check(abs(j["q"] - st["q"][k]) < 2e-3, "%s: the page shows q = %.5f, armd %.5f" %
              (j["name"], j["q"], st["q"][k]))
        # (the legend's box alone has some 50 such pixels; 3 s of a flat line some 150 more)
        check(j["ink"] > 100, "%s: the position plot shows %d pixels of the measured line" %
              (j["name"], j["ink"]))
    rows = {r[0]: r[1:] for r in dom["timing"]}
    check(set(rows) == {"lateness", "read", "compute", "write"}, "timing rows %s" % list(rows))
    check(all(float(x) >= 0 for r in rows.values() for x in r),
          "timing cells that are not numbers: %s" % rows)
    for k, row in enumerate(dom["gains"]):
        for m, key in enumerate(("kp", "kd", "ki")):
            check(float(row[m]) == gains[key][k], "gains %s of joint %d: page %s, armd %s" %
                  (key, k + 1, row[m], gains[key][k]))
    check(not dom["controls"] and dom["controlHidden"],
          "a read-only page shows control elements: %s" % dom["controls"])
    print("page: state holding, 6 plots with %s samples, q as armd's within 2 mrad, pixels "
          "of the measured line %s, timing and gains shown, no controls" %
          ([j["points"] for j in dom["joints"]], [j["ink"] for j in dom["joints"]]))


def main(args):
    with test_api_lib.Rig(args, "web-page") as rig:
        c = rig.client()
        enable_and_hold(c)
        with Armweb(args, rig) as web:
            check_read_only(web, c)
            with Browser(web.url("/"), log_dir=rig.dir) as br:
                check_holding_page(br, c)
                c.call("move_to", {"q": TARGET, "duration": 2.5})
                wait_until(lambda: c.call("status")["trajectory"] is None, 10, "the move ends")
                time.sleep(1.0)
                dom = br.evaluate(DOM_SUMMARY)
                for k, j in enumerate(dom["joints"]):
                    check(abs(j["q"] - TARGET[k]) < 0.02, "%s: the page shows q = %.4f after "
                          "the move to %.4f" % (j["name"], j["q"], TARGET[k]))
                t0 = time.monotonic()
                png = br.screenshot()
                path = os.path.join(rig.dir, "screenshot.png")
                open(path, "wb").write(png)
                colours = distinct_colours(png)
                check(colours > 200, "the screenshot has %d distinct colours: blank?" % colours)
                print("after a 2.5 s move: the page shows the target; screenshot %d bytes, %d "
                      "distinct colours (decoded in %.1f s)" %
                      (len(png), colours, time.monotonic() - t0))
                if args.screenshot_out:
                    shutil.copy(path, args.screenshot_out)
            check(c.call("status")["state"] == "holding", "armd left holding during the test")
            check(web.stop() == 0, "armweb did not exit 0 on SIGTERM:\n" + web.log())
        c.call("disable")
        c.close()


if __name__ == "__main__":
    run(main)
