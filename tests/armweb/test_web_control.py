#!/usr/bin/python3
"""Integration: armweb --control, through its page in headless Chromium. armsim (PUMA 560 on a
pty) + armd + armweb --control, the arm enabled.

Asserts: commands that do not come from the page are refused and change nothing (no X-Armweb
header: a cross-site form; a foreign Origin; a foreign Host, as after DNS rebinding); the page
shows the control buttons and a gains form; a gain armd refuses (kp = -1) shows armd's own
error (invalid_params, naming kp) under the form and leaves the gains as they were; a valid
gain typed into the form reaches armd; the E-STOP button, pressed in the page, puts armd in
`estop` (checked on armd's socket) and the page then reads `estop`.
"""
import json
import time

from browser import Browser
from web_lib import Armweb, check, enable_and_hold, run, wait_until

import test_api_lib


def check_foreign_commands(web, c):
    """Commands without the page's marks are refused with 403, and the arm stays holding."""
    host = "127.0.0.1:%d" % web.port
    for why, headers in (("no X-Armweb header", {}),
                         ("foreign Origin", {"X-Armweb": "1", "Origin": "http://evil.example"}),
                         ("foreign Host", {"X-Armweb": "1", "Host": "evil.example:%d" %
                                           web.port})):
        status, _, body = web.request("/api/estop", b"{}", headers, method="POST")
        check(status == 403 and json.loads(body)["error"]["code"] == "forbidden",
              "estop with %s: HTTP %d %r" % (why, status, body[:200]))
    check(c.call("status")["state"] == "holding", "a refused command changed the state")
    status, _, body = web.request("/api/disable", b"{}", {"X-Armweb": "1", "Origin": "http://" +
                                                          host}, method="POST")
    check(status == 200 and json.loads(body)["result"]["state"] == "disabled",
          "disable with the page's headers: HTTP %d %r" % (status, body[:200]))
    enable_and_hold(c)
    print("commands without X-Armweb, with a foreign Origin or Host: 403, arm still holding; "
          "with the page's headers: done")


def set_gain_input(br, name, value):
    br.evaluate("(() => { const f = document.getElementById('gains-form');"
                " f.elements['%s'].value = %s; return true; })()" % (name, json.dumps(value)))


def submit_gains(br):
    br.evaluate("document.getElementById('gains-apply').click(), true")


def check_gains_form(br, c):
    before = c.call("gains.get")
    set_gain_input(br, "kp0", "-1")
    submit_gains(br)
    text = br.wait_for("document.getElementById('gains-error').textContent", 10,
                       "armd's error under the gains form")
    check(text.startswith("invalid_params:") and "kp" in text,
          "the page shows %r for kp = -1, expected armd's invalid_params naming kp" % text)
    check(c.call("gains.get") == before, "a refused gains.set changed the gains")
    kd = before["kd"][0] + 1.0
    set_gain_input(br, "kp0", str(before["kp"][0]))
    set_gain_input(br, "kd0", str(kd))
    submit_gains(br)
    wait_until(lambda: c.call("gains.get")["kd"][0] == kd, 10, "kd of j1 set from the page")
    check(br.evaluate("document.getElementById('gains-error').textContent") == "",
          "the error stayed after a gains.set armd accepted")
    print("gains form: kp = -1 shows %r; kd of j1 %g -> %g reached armd" %
          (text, before["kd"][0], kd))


def main(args):
    with test_api_lib.Rig(args, "web-control") as rig:
        c = rig.client()
        enable_and_hold(c)
        with Armweb(args, rig, ["--control"]) as web:
            check_foreign_commands(web, c)
            with Browser(web.url("/"), log_dir=rig.dir) as br:
                br.wait_for("!!document.getElementById('estop') && "
                            "document.getElementById('state').textContent === 'holding' && "
                            "document.querySelectorAll('#gains-form input').length === 18",
                            60, "the control panel, the gains form and state holding")
                check_gains_form(br, c)
                t0 = time.monotonic()
                br.evaluate("document.getElementById('estop').click(), true")
                wait_until(lambda: c.call("status")["state"] == "estop", 5,
                           "armd in estop after the page's E-STOP")
                took = time.monotonic() - t0
                br.wait_for("document.getElementById('state').textContent === 'estop'", 10,
                            "the page reading estop")
                check(br.evaluate("document.getElementById('command-error').textContent")
                      == "", "the page shows an error after estop")
                print("E-STOP pressed in the page: armd in estop within %.0f ms (polled on "
                      "its socket); the page reads estop" % (took * 1e3))
        check("estop from the page" in web.log(), "armweb did not log the estop:\n" + web.log())
        c.close()


if __name__ == "__main__":
    run(main)
