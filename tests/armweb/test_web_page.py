#!/usr/bin/python3
"""Integration: armweb's page in a real browser. armsim (PUMA 560 on a pty) + armd + armweb
(read-only), the arm enabled; headless Chromium opens the page.

Asserts, through the DOM: six joint cards, each position plot with at least 180 samples and
its measured line drawn on the canvas; the state reads `holding`; each joint's shown q equals
armd's status q (the arm holds still); the loop timing and gains tables show armd's numbers; no
control buttons; the cards in the grid armweb's rule gives (info.columns: 3, two rows of
three); every time axis (positions, errors, torques) labelled in seconds before the newest
sample, -10 s ... 0 s. Over HTTP: the commands (reset among them) answer 403 read_only and
change nothing; /js/chart.js is Debian's file. Then a move: the page follows it (shows armd's q
where the arm stops) and its event log shows, newest first, the move's trajectory_done (done)
above the state changes moving and holding. The screenshot is a real picture (more than 200
distinct colours; a blank page has a handful).
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
# rad: from the ready pose (0, pi/2, -pi/2, 0, 0, 0), gently enough for a loaded test machine
TARGET = [0.3, 1.45, -1.45, 0.2, -0.2, 0.2]

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
    pose: JSON.parse(document.getElementById('pose').dataset.position || '[]'),
    poseText: document.getElementById('pose').textContent,
    wrench: JSON.parse(document.getElementById('wrench').dataset.force || 'null'),
    wrenchText: document.getElementById('wrench').textContent,
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
    controlShown: getComputedStyle(document.getElementById('control')).display !== 'none',
    // the cards' rows: how many cards share each distinct top edge, top to bottom
    rows: Object.values(cards.reduce((r, c) => {
      r[c.offsetTop] = (r[c.offsetTop] || 0) + 1; return r; }, {})),
    columns: getComputedStyle(document.getElementById('joints')).gridTemplateColumns
      .split(' ').length,
    // the labels of every time axis: joint positions and errors, then the torques
    axes: [...document.querySelectorAll('section.joint canvas'),
      document.getElementById('torque-chart')].map((c) =>
      Chart.getChart(c).scales.x.ticks.map((t) => t.label)),
  };
})()"""

# the event log, newest first: [method, local time, the entry without its time]
EVENT_LOG = """[...document.querySelectorAll('#events li')].map((e) => {
  const t = e.querySelector('time').textContent;
  return [e.dataset.method, t, e.textContent.slice(t.length)]; })"""
RELATIVE_AXIS = ["\u221210 s", "\u22128 s", "\u22126 s", "\u22124 s", "\u22122 s", "0 s"]

# 3 s of telemetry in every plot (armweb subscribes at 58.8 Hz at 1 kHz)
ALL_PLOTTED = ("(() => { const c = [...document.querySelectorAll('section.joint')];"
               " return c.length === 6 && c.every((e) => +e.dataset.points >= 180); })()")


def check_read_only(web, c):
    """Every command endpoint refuses with 403 read_only; the arm stays as it was."""
    for path, body in (("/api/estop", None), ("/api/disable", None), ("/api/enable", None),
                       ("/api/reset", None), ("/api/gains", {"kp": 1})):
        status, _, reply = web.request(path, body=body if body else b"{}",
                                       headers={"X-Armweb": "1"}, method="POST")
        check(status == 403 and json.loads(reply)["error"]["code"] == "read_only",
              "read-only armweb answered %s with %d %r" % (path, status, reply[:200]))
    check(c.call("status")["state"] == "holding", "a refused command changed the state")
    status, _, body = web.request("/js/chart.js")
    check(status == 200 and body == open(CHARTJS, "rb").read(),
          "/js/chart.js is not Debian's %s (HTTP %d)" % (CHARTJS, status))


def check_holding_page(br, c, web):
    """The DOM once every plot has data: state, joints, timing, gains, no controls, the grid
    of cards, the time axes."""
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
    check(len(dom["pose"]) == 3 and max(abs(a - b) for a, b in zip(dom["pose"], st["pose"]["position"]))
          < 1e-3 and dom["poseText"].endswith(" mm"),
          "the page shows the tool at %s (%r), armd at %s" % (dom["pose"], dom["poseText"],
                                                              st["pose"]["position"]))
    force = st["wrench"]["force"]  # null numbers: the example runs without the observer
    check(dom["wrench"] == force and dom["wrenchText"] == "-" if force[0] is None else
          dom["wrench"] is not None and dom["wrenchText"].endswith(" N"),
          "the page shows the force at the tool as %s (%r), armd %s" % (dom["wrench"],
                                                                        dom["wrenchText"], force))
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
    check(not dom["controls"] and not dom["controlShown"],
          "a read-only page shows control elements: %s" % dom["controls"])
    columns = web.state()["info"]["columns"]
    check(columns == 3 and dom["columns"] == 3 and dom["rows"] == [3, 3],
          "6 joints: armweb's rule gives %s columns; the page has %d columns, rows of %s "
          "(expected 3, two rows of three)" % (columns, dom["columns"], dom["rows"]))
    for k, labels in enumerate(dom["axes"]):
        check(labels == RELATIVE_AXIS, "time axis %d of %d labelled %s, expected %s" %
              (k + 1, len(dom["axes"]), labels, RELATIVE_AXIS))
    print("page: state holding, tool at %s, 6 plots with %s samples, q as armd's within 2 mrad, pixels "
          "of the measured line %s, timing and gains shown, no controls; cards in rows of %s; "
          "%d time axes labelled %s" %
          (dom["poseText"], [j["points"] for j in dom["joints"]], [j["ink"] for j in dom["joints"]],
           dom["rows"], len(dom["axes"]), " ".join(RELATIVE_AXIS)))


def check_page_follows_move(br, c):
    """A move: the page's last values are armd's where the arm came to rest (also when armd
    cut the move short: the page has to show where the arm is, not where it was sent)."""
    q0 = c.call("status")["q"]
    traj = c.call("move_to", {"q": TARGET, "duration": 3.0})["id"]
    wait_until(lambda: c.call("status")["trajectory"] is None, 15, "the move ends")
    time.sleep(1.0)
    st = c.call("status")
    check(abs(st["q"][0] - q0[0]) > 0.1, "j1 moved only from %.3f to %.3f" % (q0[0], st["q"][0]))
    dom = br.evaluate(DOM_SUMMARY)
    for k, j in enumerate(dom["joints"]):
        check(abs(j["q"] - st["q"][k]) < 2e-3, "%s: the page shows q = %.4f after the move, "
              "armd %.4f" % (j["name"], j["q"], st["q"][k]))
    print("after a 3 s move (j1 %.3f -> %.3f rad): the page shows armd's q within 2 mrad" %
          (q0[0], st["q"][0]))
    done = "#%d " % traj  # "done", or "aborted: why" when armd cut it short
    log = br.wait_for("(() => { const l = %s; return l.some((e) => e[0] === 'trajectory_done' "
                      "&& e[2].includes(%s)) && l; })()" % (EVENT_LOG, json.dumps(done)), 30,
                      "the event log showing trajectory_done " + done)
    order = [(m, x.split(" ", 1)[1]) for m, _, x in log[:3]]
    # newest first: armd's state holding (the end of the move), the trajectory, state moving
    check(order[0] == ("state", "holding") and order[1][0] == "trajectory_done" and
          order[1][1].startswith(done) and order[2] == ("state", "moving"),
          "the event log after the move, newest first: %s" % log)
    print("event log after the move, newest first: %s" % [t + ' ' + x for _, t, x in log[:3]])


def main(args):
    with test_api_lib.Rig(args, "web-page") as rig:
        c = rig.client()
        enable_and_hold(c)
        with Armweb(args, rig) as web:
            check_read_only(web, c)
            with Browser(web.url("/"), height=1100, log_dir=rig.dir) as br:
                check_holding_page(br, c, web)
                check_page_follows_move(br, c)
                t0 = time.monotonic()
                png = br.screenshot()
                path = os.path.join(rig.dir, "screenshot.png")
                open(path, "wb").write(png)
                colours = distinct_colours(png)
                check(colours > 200, "the screenshot has %d distinct colours: blank?" % colours)
                print("screenshot %d bytes, %d distinct colours (decoded in %.1f s)" %
                      (len(png), colours, time.monotonic() - t0))
                if args.screenshot_out:
                    shutil.copy(path, args.screenshot_out)
            check(c.call("status")["state"] == "holding", "armd left holding during the test")
            check(web.stop() == 0, "armweb did not exit 0 on SIGTERM:\n" + web.log())
        c.call("disable")
        c.close()


if __name__ == "__main__":
    run(main)
