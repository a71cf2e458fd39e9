#!/usr/bin/env python3
"""Integration: while one client floods 10,000 requests and seven others sit idle (max_clients
taken), a new client's estop, on a connection beyond max_clients (restricted: one request,
estop, status or disable), reaches zero torque in armsim's truth within 2 x the latency
measured without the flood + 20 ms.
Real armd + armsim on a pty, PUMA 560 holding under gravity.

 - baseline: holding, no other client: estop on a fresh connection; its latency is the time
   from sending the request to the first truth row of the all-zero torque that follows;
 - flood: reset, enable; the flooder writes 10,000 `{"method": "status"}` lines (no id: no
   replies, so armd never holds it back for unread output) and one `status` with an id, as
   fast as the socket takes them, reading nothing; the seven idle clients fill max_clients;
   while the flood is being worked through, a new connection (beyond max_clients) sends
   estop. Checked: the reply says estop, status (another such connection) says estop, the
   estop's connection was restricted (closed after its reply), the flood was still being
   worked through when the estop was applied (the flood's last status says estop), the idle
   clients were answered meanwhile (their status stamped before the flood's last), the
   flooder's last reply arrives (or it was dropped), and the latency bound.

Clocks: armd's time runs on CLOCK_MONOTONIC from its own start, so armd time = monotonic + o
with one constant o for the whole run, bounded from below by max(status time - receipt time)
over 30 calls (a bound from below maps the send earlier: this part can only over-estimate).
armd time maps onto the truth by the enable instant (holding event, first truth row with
torque, as enable_clock_offset), measured again at each enable since armsim skips time when
the machine stalls it; that part is good to about a tick and runs the other way when the
enable tick itself was late. Both latencies are measured alike, to about 1 ms, and may come
out slightly below 0. The servos' bus watchdog is off ([driver] bus_watchdog_ms = 0)
so that the zero torque is armd's doing (as in test_api_faults)."""
import socket
import threading
import time

from test_api_lib import (NO_WATCHDOG_DROPIN, Client, Recorder, Rig, check, event, run,
                          zero_onset)

N_FLOOD = 10000
BOUND_FACTOR, BOUND_SLACK = 2.0, 0.020  # flood latency <= 2 x baseline + 20 ms


def bound(base):
    """The flood latency's bound [s]; a baseline measured below 0 (the clocks are aligned to
    about a tick) counts as 0."""
    return BOUND_FACTOR * max(base, 0.0) + BOUND_SLACK


def armd_clock_offset(c, calls=30):
    """o with armd time = time.monotonic() + o, bounded from below (see the docstring)."""
    best = None
    for _ in range(calls):
        st = c.call("status")
        o = st["time"] - time.monotonic()
        best = o if best is None else max(best, o)
    return best


def wait_for(what, cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, "%s: not within %g s" % (what, timeout))
        time.sleep(0.01)


def enable(rig, c):
    """Enables with a subscriber that sees the holding event; returns that event's armd time."""
    rec = Recorder(rig.sock, 10)
    check(c.call("enable")["state"] == "holding", "enable did not hold")
    hold = None
    deadline = time.monotonic() + 10
    while hold is None and time.monotonic() < deadline:
        rec.collect(0.1)
        hold = event(rec, "state", lambda p: p["state"] == "holding")
    rec.client.close()
    check(hold is not None, "no holding event reached the subscriber")
    return hold["time"]


def latency(rig, t_hold, after, w_send, o, late):
    """The estop's latency [s]: from w_send (monotonic) to the first truth row of the all-zero
    torque that lasts to the end of the truth, which is read up to 0.5 s after w_send. Truth
    rows before `after` [truth s] belong to an earlier enable. late [s]: the worst tick
    lateness armd reported so far; the enable tick may have been that late, which maps the send
    that much later (the check that the zero torque does not come before the send allows it).
    Returns (latency, truth time of the zero onset)."""
    truth = rig.read_truth(cover=w_send + 0.5)
    i0 = next((i for i, r in enumerate(truth) if r[0] > after and any(x != 0.0 for x in r[3])),
              None)
    check(i0 is not None, "the truth shows no torque after the enable")
    d = truth[i0][0] - t_hold  # truth time = armd time + d
    t_send = w_send + o + d
    iz = zero_onset(truth)
    check(iz < len(truth), "torque not zero at the end of the truth after estop: %s" %
          (truth[-1][3],))
    check(iz > i0 and truth[iz][0] >= t_send - 0.002 - late,
          "torque was zero already %.1f ms before the estop was sent (allowed: 2 ms + the "
          "worst tick lateness %.1f ms)" % (1e3 * (t_send - truth[iz][0]), 1e3 * late))
    check(truth[-1][0] - truth[iz][0] >= 0.3, "less than 0.3 s of zero torque in the truth")
    return truth[iz][0] - t_send, truth[iz][0]


def estop_on(sock, w_send_box):
    """Sends estop on the connected socket sock; returns the reply."""
    op = Client.from_socket(sock)
    op.sock.settimeout(10)
    w_send_box.append(time.monotonic())
    return op, op.call_full("estop")


def main(args):
    with Rig(args, "estop-flood", dropin=NO_WATCHDOG_DROPIN) as rig:
        c = rig.client()
        max_clients = c.call("info")["max_clients"]
        o = armd_clock_offset(c)

        # baseline: no flood, estop from a fresh connection
        t_hold = enable(rig, c)
        time.sleep(0.3)  # holding for a while: the truth shows the holding torque
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(rig.sock)
        box = []
        op, m = estop_on(s, box)
        w_reply = time.monotonic()
        check(m.get("result", {}).get("state") == "estop", "baseline estop: %s" % m)
        op.close()
        late = c.call("status")["loop"]["lateness_us"]["max"] * 1e-6
        base, t_zero = latency(rig, t_hold, -1.0, box[0], o, late)
        print("baseline: estop reply after %.1f ms, zero torque in the truth %.1f ms after the "
              "request was sent" % (1e3 * (w_reply - box[0]), 1e3 * base))
        check(c.call("reset")["state"] == "disabled", "reset after the baseline estop")

        # flood: 1 flooder + idle clients fill max_clients; a connection beyond it sends estop
        t_hold = enable(rig, c)
        c.close()
        idle = [rig.client() for _ in range(max_clients - 1)]
        wait_for("%d idle clients counted" % len(idle),
                 lambda: idle[0].call("status")["clients"] == len(idle))
        flooder = Client(rig.sock, timeout=30)
        wait_for("max_clients reached", lambda: idle[0].call("status")["clients"] == max_clients)
        check(idle[0].call("status")["state"] == "holding", "not holding before the flood")
        time.sleep(0.3)  # holding for a while (as in the baseline)
        data = b'{"method": "status"}\n' * N_FLOOD + b'{"id": "last", "method": "status"}\n'
        started, flood_times = threading.Event(), {}

        def flood():
            flood_times["start"] = time.monotonic()
            for k in range(0, len(data), 16384):
                flooder.send_raw(data[k:k + 16384])
                started.set()
            flood_times["written"] = time.monotonic()

        writer = threading.Thread(target=flood)
        writer.start()
        check(started.wait(10), "the flooder could not write")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(rig.sock)
        box = []
        op, m = estop_on(s, box)
        w_reply = time.monotonic()
        check(m.get("result", {}).get("state") == "estop", "estop during the flood: %s" % m)
        # the idle clients are served while the flood goes on
        idle_st, idle_wait = [], 0.0
        for cl in idle:
            w = time.monotonic()
            idle_st.append(cl.call("status"))
            idle_wait = max(idle_wait, time.monotonic() - w)
        check(op.read_message() is None, "the estop's connection was not restricted (not closed "
              "after its reply)")
        op.close()
        op = Client(rig.sock)  # beyond max_clients too: status only
        st = op.call("status")
        check(st["state"] == "estop", "status after the estop: %s" % st["state"])
        late = st["loop"]["lateness_us"]["max"] * 1e-6
        flood_end = None
        try:
            flood_end = flooder.read_message()
        except OSError:
            pass
        writer.join(30)
        check(not writer.is_alive(), "the flooder is still writing after 30 s")
        flood_latency, _ = latency(rig, t_hold, t_zero + 0.01, box[0], o, late)
        print("flood: %d requests written in %.1f ms; estop sent %.1f ms after the flood began; "
              "reply after %.1f ms; zero torque in the truth %.1f ms after the request was sent" %
              (N_FLOOD, 1e3 * (flood_times["written"] - flood_times["start"]),
               1e3 * (box[0] - flood_times["start"]), 1e3 * (w_reply - box[0]),
               1e3 * flood_latency))
        print("idle clients: %d answered, the slowest in %.1f ms; flooder: %s" %
              (len(idle_st), 1e3 * idle_wait,
               "last reply at armd t = %.3f s (state %s)" % (flood_end["result"]["time"],
                                                           flood_end["result"]["state"])
               if flood_end else "dropped"))
        print("estop latency: baseline %.1f ms, under the flood %.1f ms (bound %.1f ms)" %
              (1e3 * base, 1e3 * flood_latency, 1e3 * bound(base)))
        if flood_end is not None:
            check(flood_end.get("id") == "last" and "result" in flood_end,
                  "the flooder's last reply: %s" % flood_end)
            check(flood_end["result"]["state"] == "estop", "the flood was over before the "
                  "estop was applied (nothing was tested): its last status says %s" %
                  flood_end["result"]["state"])
            late = [x["time"] for x in idle_st if x["time"] > flood_end["result"]["time"]]
            check(not late, "idle clients answered only after the flood: %s" % late)
        else:
            check(rig.armd.poll() is None and "closed" in rig.armd_log(),
                  "the flooder's connection ended without armd closing it")
        check(flood_latency <= bound(base),
              "estop under the flood took %.1f ms to zero torque, more than 2 x the baseline "
              "%.1f ms + 20 ms" % (1e3 * flood_latency, 1e3 * base))
        for cl in idle + [flooder, op]:
            cl.close()
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
