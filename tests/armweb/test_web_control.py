#!/usr/bin/python3
"""Integration: armweb --control, through its page in headless Chromium. armsim (PUMA 560 on a
pty) + armd + armweb --control, the arm enabled.

Asserts: a command without armweb's token, or with a wrong one, is refused with 401 and the
arm does nothing (disable, estop, gains.set, tool.release; checked on armd's socket); with the
token it is done; the token file beside armd's socket is a regular file of mode 0640, group armd
(the process's group where there is no group armd), holding a 43-character token, and is gone
after armweb's exit. Commands that do not come from the page are refused and change nothing even
with the token (no X-Armweb header: a cross-site form; a foreign Origin; a foreign Host, as after
DNS rebinding). With --allow-remote-control on 0.0.0.0, a foreign Host is still refused with the
right token, while the address the request came to is accepted. The page: its control buttons
are disabled until the token is entered (never in the URL); then a gain armd refuses (kp = -1)
shows armd's own error (invalid_params, naming kp) under the form and leaves the gains as they
were; a valid gain typed into the form reaches armd; Reset is disabled while the arm holds
(nothing to reset); the E-STOP button, pressed in the page, puts armd in `estop` (checked on
armd's socket), the page then reads `estop`, its event log has the state change to estop at the
top, and armweb keeps it for a browser that comes later (/api/state's events); Reset, now
enabled and pressed in the page, takes armd from estop to `disabled`, after which the page's
Enable brings it to `holding` (both checked on armd's socket).
"""
import grp
import json
import os
import stat
import time

from browser import Browser
from web_lib import Armweb, check, enable_and_hold, run, wait_until

import test_api_lib


def check_token_required(web, c):
    """Commands without the token or with a wrong one: 401, and armd sees nothing of them."""
    gains = c.call("gains.get")
    wrong = "x" * 43
    for why, token in (("no token", None), ("a wrong token", wrong), ("an empty token", "")):
        for path, body in (("/api/disable", b"{}"), ("/api/estop", b"{}"),
                           ("/api/gains", {"kd": [k + 1.0 for k in gains["kd"]]}),
                           ("/api/tool.release", b"{}")):
            status, reply = web.command(path, body, token)
            check(status == 401 and reply["error"]["code"] == "unauthorized",
                  "%s with %s: HTTP %d %r" % (path, why, status, reply))
            if token is None:
                check("Authorization: Bearer" in reply["error"]["message"] and
                      web.token_path in reply["error"]["message"],
                      "the refusal does not say what is missing: %r" % reply)
    st = c.call("status")
    check(st["state"] == "holding", "a command without the token changed the state to %s" %
          st["state"])
    check(c.call("gains.get") == gains, "a gains.set without the token changed the gains")
    status, reply = web.command("/api/token", b"{}", web.token())
    check(status == 200, "/api/token with the right token: HTTP %d %r" % (status, reply))
    status, reply = web.command("/api/disable", b"{}", web.token())
    check(status == 200 and reply["result"]["state"] == "disabled",
          "disable with the token: HTTP %d %r" % (status, reply))
    enable_and_hold(c)
    print("disable, estop, gains.set, tool.release without the token, with a wrong or an empty "
          "one: 401, the arm still holding, gains unchanged; disable with the token: done")


def check_token_file(web):
    """armweb.token beside armd's socket: a regular file, mode 0640, group armd."""
    check(os.path.exists(web.token_path), "no token file %s" % web.token_path)
    st = os.lstat(web.token_path)
    try:
        gid = grp.getgrnam("armd").gr_gid
    except KeyError:
        gid = os.getegid()
    check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640,
          "%s: mode %o, expected a regular file of mode 0640" % (web.token_path, st.st_mode))
    check(st.st_gid == gid, "%s: group %d, expected %d" % (web.token_path, st.st_gid, gid))
    token = web.token()
    check(len(token) == 43, "the token has %d characters, expected 43 (32 random bytes, "
          "base64url)" % len(token))
    leftovers = [f for f in os.listdir(os.path.dirname(web.token_path))
                 if f.startswith(".armweb.token")]
    check(not leftovers, "temporary token files left: %s" % leftovers)
    print("token file: mode 0640, group %d, 43 characters" % gid)


def check_remote_host(args, rig, c):
    """--allow-remote-control on 0.0.0.0: a foreign Host is refused even with the token; the
    address the request came to is accepted."""
    with Armweb(args, rig, ["--control", "--allow-remote-control"],
                listen_host="0.0.0.0") as web:
        for host in ("evil.example:%d" % web.port, "evil.example", "192.0.2.1:%d" % web.port):
            token = web.token() if os.path.exists(web.token_path) else None
            status, reply = web.command("/api/disable", b"{}", token, {
                "Host": host, "Origin": "http://" + host})
            check(status == 403 and reply["error"]["code"] == "forbidden" and
                  "Host" in reply["error"]["message"],
                  "--allow-remote-control: disable with Host %s: HTTP %d %r" %
                  (host, status, reply))
        check(c.call("status")["state"] == "holding",
              "a command with a foreign Host changed the state")
        status, reply = web.command("/api/token", b"{}", web.token())
        check(status == 200, "--allow-remote-control: Host 127.0.0.1 with the token: HTTP %d "
              "%r" % (status, reply))
    print("--allow-remote-control on 0.0.0.0: foreign Host refused with the token (403), the "
          "arm still holding; Host 127.0.0.1 accepted")


def check_foreign_commands(web, c):
    """Commands without the page's marks are refused with 403 even with the token, and the arm
    stays holding."""
    host = "127.0.0.1:%d" % web.port
    auth = "Bearer " + web.token()
    for why, headers in (("no X-Armweb header", {}),
                         ("foreign Origin", {"X-Armweb": "1", "Origin": "http://evil.example"}),
                         ("foreign Host", {"X-Armweb": "1", "Host": "evil.example:%d" %
                                           web.port}),
                         ("cross-site fetch", {"X-Armweb": "1", "Sec-Fetch-Site":
                                               "cross-site"})):
        headers["Authorization"] = auth
        status, _, body = web.request("/api/estop", b"{}", headers, method="POST")
        check(status == 403 and json.loads(body)["error"]["code"] == "forbidden",
              "estop with %s: HTTP %d %r" % (why, status, body[:200]))
    check(c.call("status")["state"] == "holding", "a refused command changed the state")
    status, _, body = web.request("/api/disable", b"{}", {"X-Armweb": "1", "Origin": "http://" +
                                                          host, "Authorization": auth},
                                  method="POST")
    check(status == 200 and json.loads(body)["result"]["state"] == "disabled",
          "disable with the page's headers: HTTP %d %r" % (status, body[:200]))
    enable_and_hold(c)
    print("commands with the token but without X-Armweb, with a foreign Origin, Host or "
          "Sec-Fetch-Site: 403, arm still holding; with the page's headers: done")


def enter_token(br, web):
    """The control buttons are disabled until the token is entered; entering it enables them,
    and it goes into neither the URL nor the page's address."""
    check(br.evaluate("document.getElementById('estop').disabled"),
          "E-STOP is enabled before a token was entered")
    token = web.token()
    enter = ("(() => { const t = document.getElementById('token'); t.value = %s;"
             " t.dispatchEvent(new Event('change')); return true; })()")
    br.evaluate(enter % json.dumps("y" * 43))
    status = br.wait_for("(() => { const s = document.getElementById('token-status')"
                         ".textContent; return s.includes('refused') && s; })()", 10,
                         "the page saying a wrong token was refused")
    check(br.evaluate("document.getElementById('estop').disabled && "
                      "sessionStorage.getItem('armweb.token') === null"),
          "a wrong token enabled the buttons or stayed stored")
    br.evaluate(enter % json.dumps(token))
    br.wait_for("!document.getElementById('estop').disabled", 10,
                "E-STOP enabled once the token is entered")
    print("page: buttons disabled without a token; a wrong one: %r; the right one enables "
          "them, kept in sessionStorage, not in the URL" % status)
    check(token not in br.evaluate("location.href"), "the token is in the page's URL")
    check(br.evaluate("sessionStorage.getItem('armweb.token')") == token,
          "the token is not kept in sessionStorage")


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


# the event log, newest first: [method, local time, the entry without its time]
EVENT_LOG = """[...document.querySelectorAll('#events li')].map((e) => {
  const t = e.querySelector('time').textContent;
  return [e.dataset.method, t, e.textContent.slice(t.length)]; })"""


def check_reset(br, web, c):
    """After the page's E-STOP: the event log, then Reset and Enable from the page."""
    log = br.wait_for("(() => { const l = %s; return l.length && l[0][0] === 'state' && "
                      "l[0][2].endsWith('estop') && l; })()" % EVENT_LOG, 30,
                      "the event log topped by the state change to estop")
    kept = [e for e in web.state()["events"] if e["method"] == "state"]
    check(kept and kept[-1]["params"]["state"] == "estop" and
          isinstance(kept[-1]["params"].get("seen"), float),
          "armweb's last state event kept for later browsers: %s" % kept[-1:])
    br.wait_for("!document.getElementById('reset').disabled", 30,
                "Reset enabled while armd is in estop")
    br.evaluate("document.getElementById('reset').click(), true")
    wait_until(lambda: c.call("status")["state"] == "disabled", 10,
               "armd disabled after the page's Reset")
    br.wait_for("document.getElementById('state').textContent === 'disabled' && "
                "document.getElementById('reset').disabled", 30,
                "the page reading disabled, Reset disabled again")
    check(br.evaluate("document.getElementById('command-error').textContent") == "",
          "the page shows an error after Reset: %r" %
          br.evaluate("document.getElementById('command-error').textContent"))
    br.evaluate("document.getElementById('enable').click(), true")
    wait_until(lambda: c.call("status")["state"] == "holding", 10,
               "armd holding after the page's Enable")
    print("event log after E-STOP, newest first: %s; Reset in the page: armd disabled; "
          "Enable in the page: armd holding" % [t + ' ' + x for _, t, x in log[:2]])


def main(args):
    with test_api_lib.Rig(args, "web-control") as rig:
        c = rig.client()
        enable_and_hold(c)
        with Armweb(args, rig, ["--control"]) as web:
            check_token_required(web, c)
            check_token_file(web)
            check_foreign_commands(web, c)
            with Browser(web.url("/"), log_dir=rig.dir) as br:
                br.wait_for("!!document.getElementById('estop') && "
                            "document.getElementById('state').textContent === 'holding' && "
                            "document.querySelectorAll('#gains-form input').length === 18",
                            60, "the control panel, the gains form and state holding")
                enter_token(br, web)
                check(br.evaluate("document.getElementById('reset').disabled"),
                      "Reset is enabled while the arm holds (nothing to reset)")
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
                check_reset(br, web, c)
        check("estop from the page" in web.log(), "armweb did not log the estop:\n" + web.log())
        check(not os.path.exists(web.token_path), "%s is still there after armweb's exit" %
              web.token_path)
        print("token file removed at exit")
        check(c.call("status")["state"] == "holding", "armd left holding after the page's "
              "Enable")
        check_remote_host(args, rig, c)
        c.close()


if __name__ == "__main__":
    run(main)
