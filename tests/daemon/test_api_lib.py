"""test_api_lib.py — shared helpers for armd's integration tests (real armd, the real socket,
through the armd package in tools/python), in one of two rigs:
 - real time (Rig): armsim as a process on a pseudo-terminal, armd's control thread on the wall
   clock; for the I/O path (pty, socket, signals, processes);
 - lockstep (Rig(..., lockstep="paused" | "free")): `armd --lockstep`, armsim's arm in armd's
   own process on a simulated clock; the quality tests run here, on simulated time, once, with
   no host stall in their figures. Paused: simulated time advances only by rig.run(seconds)
   (sim.run) and the tick each command needs, so the same test gives the same telemetry; free:
   it runs as fast as the machine computes (for armctl's procedures, which wait for events).
Python 3 standard library only.

Processes are started in a private temporary directory and always stopped (SIGTERM, then
SIGKILL) when the test ends. Results are judged against armsim's truth file; the two clocks
have different origins and are aligned on an instant both see: the enable (armd's `holding`
event and the first truth row with torque, enable_clock_offset). Truth rows are selected by time.
"""
import argparse
import bisect
import ctypes
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# the Python client from the source tree (never an installed copy)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "python"))
import armd  # noqa: E402


class TestFailure(Exception):
    pass


def check(cond, message):
    """Fails the test with message unless cond."""
    if not cond:
        raise TestFailure(message)


class TestSkipped(Exception):
    """The test cannot run on this machine; run() prints "SKIP: <why>" and exits 77 (meson's
    SKIP). Only for what is truly missing, never for a check that failed."""


def arg_parser():
    """The integration tests' command line (a test may add its own options)."""
    p = argparse.ArgumentParser()
    p.add_argument("--armd", required=True)
    p.add_argument("--armsim", required=True)
    p.add_argument("--armctl", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--keep", action="store_true", help="keep the run directory")
    return p


def parse_args():
    return arg_parser().parse_args()


def realtime_prefix():
    """["chrt", "-f", "40"] where FIFO scheduling is allowed, else []: the simulator stands in
    for hardware, which does not slow down when the machine running the tests is busy."""
    try:
        if subprocess.call(["chrt", "-f", "40", "true"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0:
            return ["chrt", "-f", "40"]
    except OSError:
        pass
    return []


class Client(armd.Client):
    """A connection to armd's socket: the armd package's client (tools/python/armd), so that
    every integration test exercises it, with the interface the tests were written against:
    call() fails the test on an error reply, call_full() returns the whole reply,
    read_message() reads the next line as it comes. Notifications read while waiting for a
    reply stay queued for next_notification() (the Recorder reads them). Every wait is bounded
    by the socket's timeout (timeout [s], changed with c.sock.settimeout())."""

    def __init__(self, path, timeout=10.0):
        super().__init__(path, timeout=timeout)

    def wait_limit(self):
        """The socket's timeout [s] (math.inf when blocking): the bound of every wait."""
        t = self.sock.gettimeout()
        return math.inf if t is None else t

    def read_message(self):
        """The next JSON line, or None at end of connection (socket.timeout after the
        socket's timeout)."""
        return super().read_message(timeout=self.wait_limit())

    def call_full(self, method, params=None):
        """Sends a request and returns the whole reply object (result or error)."""
        try:
            return self.request(method, params, timeout=self.wait_limit())
        except armd.ConnectionClosed:
            raise TestFailure("armd closed the connection before replying to " + method)

    def call(self, method, params=None):
        """The result of a request; fails the test on an error reply."""
        m = self.call_full(method, params)
        check("result" in m, "%s failed: %s" % (method, m.get("error")))
        return m["result"]


READY_POSE = ("--q0", "0,1.5708,-1.5708,0,0,0")
# 1 kHz. The tests run on a shared machine whose host stalls for several ms at times, and now
# and then holds one virtual CPU, and armd's control thread on it, for 100 ms and more while
# the simulated plant runs on (a real machine beside an arm never should): tolerate 400 ms
# without a good read ([safety] max_read_gap_ms, 20 in the example) rather than a count of
# failures, so that a busy build machine does not fault the arm mid-test; the servos' bus
# watchdog (100 ms in the example) is 500 ms for the same reason, still longer than the gap so
# that armd, not the watchdog, judges a silent bus. Cases about a silent bus set real values
# (REAL_GAP_DROPIN). (90 ms / 100 ms were exceeded by a 113 ms stall in one fresh-clone run,
# faulting daemon_api_collision_react; 50 ms before them by 52 and 57 ms gaps.)
# The control thread asks for SCHED_FIFO as on a real machine (armd runs on with a warning where
# the system refuses), so that builds running beside the tests do not stall it.
DEFAULT_DROPIN = ("[arm]\nrate_hz = 1000\n[safety]\nmax_read_gap_ms = 400\n"
                  "[driver]\nbus_watchdog_ms = 500\n[realtime]\npriority = 50\n")
# The example's bus watchdog and a read gap just below it: for the cases about a silent bus.
REAL_GAP_DROPIN = (DEFAULT_DROPIN.replace("max_read_gap_ms = 400", "max_read_gap_ms = 90")
                   .replace("bus_watchdog_ms = 500", "bus_watchdog_ms = 100"))
# The servos' bus watchdog off, so that only armd can zero the torque (the cases about armd's
# own torque-off paths).
NO_WATCHDOG_DROPIN = DEFAULT_DROPIN.replace("bus_watchdog_ms = 500\n",
                                            "bus_watchdog_ms = 0\nallow_no_watchdog = true\n")
# Lockstep: the loop at 1 kHz, everything else as the example has it (no host stalls to ride
# out on simulated time, so no widened tolerance).
LOCKSTEP_DROPIN = "[arm]\nrate_hz = 1000\n"
# armsim's truth in lockstep: every 10th physics step (1 kHz at armsim's 10 kHz): the rows
# follow armd's ticks, and formatting every step would cost more than the simulation itself.
LOCKSTEP_TRUTH_DECIMATE = 10
SIMBUS_START = 1.0  # armsim's simulated clock at its start [s] (tools/armsim/simbus.h)


def _die_with_parent():
    """In the child: get SIGTERM when the test driver dies (e.g. killed by meson's timeout), so
    that no armd or armsim outlives its test."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Rig:
    """armsim + armd on a pseudo-terminal in a temporary directory."""

    def __init__(self, args, name, sim_args=READY_POSE, dropin=None, armd_env=None,
                 lockstep=None, truth_decimate=LOCKSTEP_TRUTH_DECIMATE):
        """The config is a copy of args.config in the run directory (arm.ini) with dropin as
        the drop-in arm.d/10-test.ini (default: the loop at 1 kHz, DEFAULT_DROPIN, or
        LOCKSTEP_DROPIN in lockstep). The simulated PUMA starts in its ready pose (upright),
        where friction holds it while armd is still disabled; at the zero pose it would fall
        onto its shoulder end stop before it could be enabled. lockstep: None (armsim on a pty,
        real time), "paused" or "free" (armd --lockstep, sim_args are armsim's options)."""
        check(lockstep in (None, "paused", "free"), "lockstep: None, 'paused' or 'free'")
        self.lockstep = lockstep
        self.truth_decimate = truth_decimate
        self._clock = None  # lockstep: the connection rig.run() asks on
        if dropin is None:
            dropin = LOCKSTEP_DROPIN if lockstep else DEFAULT_DROPIN
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="armd-test-%s-" % name)
        self.config = os.path.join(self.dir, "arm.ini")
        shutil.copy(args.config, self.config)
        self.dropin_dir = os.path.join(self.dir, "arm.d")
        os.mkdir(self.dropin_dir)
        if dropin:
            with open(os.path.join(self.dropin_dir, "10-test.ini"), "w") as f:
                f.write(dropin)
        self.link = os.path.join(self.dir, "arm.tty")
        self.truth = os.path.join(self.dir, "truth.csv")
        self.sock = os.path.join(self.dir, "armd.sock")
        self.sim = None
        self.sim_ready = None
        self.armd = None
        self.sim_args = list(sim_args)
        self.armd_env = armd_env  # armd's environment (None: this process's)

    def __enter__(self):
        self.start_sim()
        self.start_armd()
        return self

    def __exit__(self, *exc):
        self.stop()
        if exc[0] is None and not self.args.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print("run directory kept:", self.dir)
            for f in ("armd.log", "armsim.log"):
                p = os.path.join(self.dir, f)
                if os.path.exists(p):
                    print("---- %s (tail)" % f)
                    print("".join(open(p, errors="replace").readlines()[-40:]))
        return False

    def start_sim(self):
        if self.lockstep:
            return  # the simulated arm lives in armd
        log = open(os.path.join(self.dir, "armsim.log"), "w")
        self.sim = subprocess.Popen(
            realtime_prefix() + [self.args.armsim, "-c", self.config, "--link", self.link, "--truth", self.truth]
            + self.sim_args, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        deadline = time.time() + 15
        while time.time() < deadline:
            text = open(os.path.join(self.dir, "armsim.log"), errors="replace").read()
            if "ready" in text and os.path.exists(self.link):
                self.sim_ready = time.monotonic()  # truth time >= time.monotonic() - this
                return
            check(self.sim.poll() is None, "armsim exited early:\n" + text)
            time.sleep(0.05)
        raise TestFailure("armsim did not become ready")

    def start_armd(self, extra=()):
        log = open(os.path.join(self.dir, "armd.log"), "w")
        if self.lockstep:
            cmd = ([self.args.armd, "-c", self.config, "--socket", self.sock, "--lockstep"]
                   + (["--paused"] if self.lockstep == "paused" else []) + list(extra)
                   + ["--", "--truth", self.truth, "--truth-decimate", str(self.truth_decimate)]
                   + self.sim_args)
        else:
            cmd = ([self.args.armd, "-c", self.config, "--port", self.link, "--socket", self.sock]
                   + list(extra))
        self.armd = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent, env=self.armd_env)
        deadline = time.time() + 15
        while time.time() < deadline:
            if os.path.exists(self.sock):
                try:
                    c = Client(self.sock)
                    c.call("status")
                    c.close()
                    return
                except (OSError, TestFailure, armd.Error):
                    pass
            check(self.armd.poll() is None, "armd exited early:\n" + self.armd_log())
            time.sleep(0.05)
        raise TestFailure("armd did not open its socket")

    def armd_log(self):
        return open(os.path.join(self.dir, "armd.log"), errors="replace").read()

    def client(self):
        return Client(self.sock)

    def run(self, seconds):
        """Lockstep: lets simulated time advance by seconds [s] (sim.run on a connection of the
        rig's own) and returns the control time reached [s]. Paused, nothing else advances it."""
        check(self.lockstep, "rig.run is for lockstep rigs")
        if self._clock is None:
            self._clock = Client(self.sock, timeout=120)
        return self._clock.call("sim.run", {"seconds": seconds})["time"]

    def recorder(self, rate_hz):
        """A telemetry and event Recorder for this rig: in lockstep it reads in a thread of its
        own (a subscriber that does not read would hold simulated time) and its collect(seconds)
        lets that much simulated time pass."""
        return Recorder(self.sock, rate_hz, rig=self if self.lockstep else None)

    def clock_offset(self):
        """Lockstep: d with truth time = armd time + d, exact: both clocks are the simulated one
        (armd's mono = its time + control time 0; the truth's t = mono - SIMBUS_START)."""
        st = Client(self.sock).call("status")
        return st["mono"] - st["time"] - SIMBUS_START
    def stop_armd(self, sig=signal.SIGTERM, timeout=10):
        """Stops armd; returns its exit status."""
        if self._clock is not None:
            self._clock.close()
            self._clock = None
        if not self.armd or self.armd.poll() is not None:
            return self.armd.returncode if self.armd else None
        self.armd.send_signal(sig)
        try:
            return self.armd.wait(timeout)
        except subprocess.TimeoutExpired:
            self.armd.kill()
            self.armd.wait()
            raise TestFailure("armd did not stop within %g s after signal %d" % (timeout, sig))

    def stop_sim(self):
        if self.sim and self.sim.poll() is None:
            self.sim.send_signal(signal.SIGTERM)
            try:
                self.sim.wait(10)
            except subprocess.TimeoutExpired:
                self.sim.kill()
                self.sim.wait()

    def stop(self):
        try:
            self.stop_armd()
        except TestFailure:
            pass
        self.stop_sim()

    def read_truth(self, cover=None):
        """Rows of armsim's truth file: (t, q[n], qd[n], tau[n]). armsim writes them from a
        ring a little behind (far behind on a loaded machine); with cover (a time.monotonic()
        instant, e.g. now) the file is read again until its rows reach that instant, at most
        20 s (armsim's time runs from before its ready line, minus what it had to skip)."""
        return truth_rows(self.read_truth_columns(cover))

    def read_truth_columns(self, cover=None):
        """The truth file as read_truth_columns(path) reads it: (header names, rows of floats),
        with cover as in read_truth."""
        head, rows = read_truth_columns(self.truth)
        if cover is None or self.lockstep:  # lockstep: every row up to now is in the file
            return head, rows
        want = cover - self.sim_ready - 0.06  # 60 ms: skipped time, scheduling
        deadline = time.monotonic() + 20
        while (not rows or rows[-1][0] < want) and time.monotonic() < deadline:
            time.sleep(0.05)
            head, rows = read_truth_columns(self.truth)
        return head, rows


def read_truth_columns(path):
    """armsim's truth CSV at path as (header names, rows of floats in the file's column order);
    see tools/armsim/truth.h for the columns ("t,q1..qn,qd1..qdn,tau1..taun,ext1..extn,
    wall_force"; find them by name, e.g. with truth_column). The header must start with "t,q1,";
    every other line must have one number per header column, else the test fails (naming the
    line). Only the LAST line may be incomplete (no newline): armsim writes the file in chunks,
    so a file read while armsim runs, or after it was SIGKILLed, can end in the middle of a row;
    that partial row is ignored."""
    rows = []
    with open(path) as f:
        # one read() is a prefix of the file even while armsim appends; readlines() is not (a
        # line cut at the momentary end would be continued by its own next "line")
        lines = f.read().splitlines(keepends=True)
    check(lines and lines[0].startswith("t,q1,") and lines[0].endswith("\n"),
          "%s: no truth header: %r" % (path, lines[0][:60] if lines else ""))
    head = lines[0].strip().split(",")
    width = len(head)
    check(len(set(head)) == width, "%s: a column named twice in the header" % path)
    for k, line in enumerate(lines[1:], 2):
        if not line.endswith("\n"):
            check(k == len(lines), "%s:%d: an incomplete line before the last" % (path, k))
            break  # the partly written last line
        try:
            v = [float(x) for x in line.split(",")]
        except ValueError:
            raise TestFailure("%s:%d: not a row of numbers: %r" % (path, k, line[:80]))
        check(len(v) == width, "%s:%d: %d values, expected %d" % (path, k, len(v), width))
        rows.append(v)
    return head, rows


def truth_column(head, name):
    """Index of the truth column called name (e.g. "q1", "ext2", "wall_force"); fails the test
    when the file has none."""
    check(name in head, "the truth file has no column %r (columns: %s)" % (name, ",".join(head)))
    return head.index(name)


def truth_joints(head):
    """Number of joints of a truth header (columns q1..qn)."""
    n = 0
    while "q%d" % (n + 1) in head:
        n += 1
    check(n > 0, "truth header without q1")
    return n


def truth_rows(columns):
    """(t, q[n], qd[n], tau[n]) per row from read_truth_columns' (header, rows), the columns
    found by name."""
    head, rows = columns
    n = truth_joints(head)
    it = truth_column(head, "t")
    iq = [truth_column(head, "q%d" % (j + 1)) for j in range(n)]
    iqd = [truth_column(head, "qd%d" % (j + 1)) for j in range(n)]
    itau = [truth_column(head, "tau%d" % (j + 1)) for j in range(n)]
    return [(v[it], [v[i] for i in iq], [v[i] for i in iqd], [v[i] for i in itau]) for v in rows]


def read_truth(path):
    """Rows (t, q[n], qd[n], tau[n]) of armsim's truth CSV at path, found by column name (the
    file also has ext1..extn and wall_force: read_truth_columns). Fails the test as
    read_truth_columns does."""
    return truth_rows(read_truth_columns(path))


def truth_times(truth):
    return [r[0] for r in truth]


def rows_between(truth, t0, t1):
    """Truth rows with t0 <= t <= t1 [s, truth time] (selected by time, whatever the rate)."""
    times = truth_times(truth)
    return truth[bisect.bisect_left(times, t0):bisect.bisect_right(times, t1)]


def zero_onset(truth):
    """Index of the first truth row from which every joint's applied torque is exactly 0 until
    the end (len(truth) when the last row is not zero)."""
    i = len(truth)
    while i > 0 and all(x == 0.0 for x in truth[i - 1][3]):
        i -= 1
    return i


def first_torque(truth):
    """Index of the first truth row with any non-zero applied torque, or None."""
    for i, r in enumerate(truth):
        if any(x != 0.0 for x in r[3]):
            return i
    return None


def event(rec, method, pred=lambda p: True):
    """The params of the first notification `method` a Recorder received matching pred."""
    for m in rec.events:
        if m.get("method") == method and pred(m["params"]):
            return m["params"]
    return None


def enable_clock_offset(rec, truth):
    """d with truth time = armd time + d, from an instant both clocks see: the `holding` state
    event (armd time of the enable) and the first truth row with any non-zero torque (armd's
    first write after enabling). Good to about one control tick (1 ms at 1 kHz): the truth
    row may come up to a tick after the event's time stamp."""
    hold = event(rec, "state", lambda p: p["state"] == "holding")
    check(hold is not None, "no holding event reached the subscriber")
    i0 = first_torque(truth)
    check(i0 is not None, "the truth never shows torque")
    return truth[i0][0] - hold["time"]


class Recorder:
    """Collects telemetry notifications from a subscribed client until stopped. With a lockstep
    rig (rig.recorder) a thread reads all the time, so that the recorder never holds simulated
    time back, and collect(seconds) lets that much simulated time pass (rig.run)."""

    def __init__(self, sock, rate_hz, rig=None):
        self.client = Client(sock)
        self.period = 1.0 / self.client.call("subscribe", {"rate_hz": rate_hz})["rate_hz"]
        self.samples = []
        self.events = []
        self.rig = rig
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if rig is not None:
            self._thread = threading.Thread(target=self._read_all, daemon=True)
            self._thread.start()

    def _read_all(self):
        while not self._stop.is_set():
            try:
                m = self.client.next_notification(timeout=0.2)
            except armd.ClientTimeout:
                continue
            except (armd.ConnectionClosed, OSError):
                break
            with self._lock:
                self._take(m)

    def collect(self, seconds):
        """Takes the notifications that arrive within seconds [s] (and those the client
        queued while waiting for replies, first). Lockstep: seconds of simulated time, every
        sample up to then."""
        if self.rig is not None:
            t = self.rig.run(seconds)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with self._lock:  # the last sample the decimation gives up to t
                    if self.samples and self.samples[-1]["time"] >= t - self.period - 1e-9:
                        return
                time.sleep(0.005)
            raise TestFailure("the recorder did not see simulated time %.3f s" % t)
        end = time.time() + seconds
        while time.time() < end:
            try:
                m = self.client.next_notification(timeout=0.2)
            except armd.ClientTimeout:
                continue
            except armd.ConnectionClosed:
                break
            self._take(m)

    def close(self):
        """Stops the reading thread (lockstep) and closes the connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.client.close()

    def _take(self, m):
        if m.get("method") == "telemetry":
            self.samples.append(m["params"])
        elif "method" in m:
            self.events.append(m)


def align_offset(samples, truth):
    """Time offset d with truth time = telemetry time + d, from matching measured positions
    during motion against the truth (nearest neighbour, then the median)."""
    moving = [s for s in samples if max(abs(v) for v in s["qd_des"]) > 0.05]
    check(len(moving) >= 10, "not enough moving samples to align the clocks")
    picks = moving[:: max(1, len(moving) // 30)]
    coarse = truth[::10]
    offsets = []
    for s in picks:
        best, best_t = None, None
        for r in coarse:
            d = sum((a - b) ** 2 for a, b in zip(r[1], s["q"]))
            if best is None or d < best:
                best, best_t = d, r[0]
        offsets.append(best_t - s["time"])
    offsets.sort()
    d0 = offsets[len(offsets) // 2]
    # refine at full resolution within +-5 ms
    times = [r[0] for r in truth]
    refined = []
    for s in picks:
        lo = bisect.bisect_left(times, s["time"] + d0 - 0.005)
        hi = bisect.bisect_right(times, s["time"] + d0 + 0.005)
        best, best_t = None, None
        for r in truth[lo:hi]:
            d = sum((a - b) ** 2 for a, b in zip(r[1], s["q"]))
            if best is None or d < best:
                best, best_t = d, r[0]
        if best_t is not None:
            refined.append(best_t - s["time"])
    refined.sort()
    return refined[len(refined) // 2] if refined else d0


def truth_at(truth, times, t):
    """Truth row (linear interpolation of q) at time t."""
    i = bisect.bisect_left(times, t)
    i = min(max(i, 1), len(truth) - 1)
    a, b = truth[i - 1], truth[i]
    w = 0.0 if b[0] == a[0] else (t - a[0]) / (b[0] - a[0])
    w = min(max(w, 0.0), 1.0)
    return [x + w * (y - x) for x, y in zip(a[1], b[1])]


def tracking_errors(samples, truth, t_from, t_to, d=None):
    """Per-joint RMS and max |q_des - q_true| over telemetry times [t_from, t_to], with truth
    time = telemetry time + d (d None: fitted by align_offset, which matches armd's own
    measured q and so would absorb a constant delay of armd's; prefer enable_clock_offset)."""
    if d is None:
        d = align_offset(samples, truth)
    times = [r[0] for r in truth]
    n = len(samples[0]["q"])
    sq = [0.0] * n
    mx = [0.0] * n
    k = 0
    for s in samples:
        if not (t_from <= s["time"] <= t_to):
            continue
        qt = truth_at(truth, times, s["time"] + d)
        for j in range(n):
            e = s["q_des"][j] - qt[j]
            sq[j] += e * e
            mx[j] = max(mx[j], abs(e))
        k += 1
    check(k > 10, "too few samples in the tracking window")
    return [math.sqrt(x / k) for x in sq], mx, d


def judge_loop_windows(bases, loaded, what):
    """Fails unless the control loop in the best of the `loaded` windows kept up with the
    median of the baseline windows, all measured in the same run (this machine misses periods
    on its own, in bursts that can fall into any one window; a load that delays the loop does
    so in every window). Windows: {"seconds", "late_ticks", "late_per_s", "p50", "p99"} with
    the lateness quantiles in us. Allowed: late ticks (overrun episodes) at most 2 x the
    baselines' rate over the same time + 10; lateness p50 at most 2 x the baselines' + 50 us,
    p99 at most 2 x + 100 us. `what` names the load. Returns a sentence with the numbers."""
    def median(key):
        return sorted(b[key] for b in bases)[len(bases) // 2]

    base_rate = median("late_per_s")
    best = min(loaded, key=lambda w: w["late_per_s"])
    allowed = 2 * base_rate * best["seconds"] + 10
    check(best["late_ticks"] <= allowed, "%d late ticks in %.1f s in the best of %d windows "
          "with %s (at most %.0f: 2 x the baselines' %.1f per s + 10)" %
          (best["late_ticks"], best["seconds"], len(loaded), what, allowed, base_rate))
    for key, slack in (("p50", 50), ("p99", 100)):
        got, limit = min(w[key] for w in loaded), 2 * median(key) + slack
        check(got <= limit, "tick lateness %s %.1f us in the best of %d windows with %s (at "
              "most %.1f: 2 x the baselines' %.1f + %d)" %
              (key, got, len(loaded), what, limit, median(key), slack))
    return ("best window with %s: %d late ticks (allowed %.0f), lateness p50 %.1f us, p99 "
            "%.1f us; baselines' median p50 %.1f us, p99 %.1f us" %
            (what, best["late_ticks"], allowed, min(w["p50"] for w in loaded),
             min(w["p99"] for w in loaded), median("p50"), median("p99")))


def run(main, parse=parse_args):
    """Runs a test function with parse()'s arguments; prints the failure and exits non-zero on
    failure, or "SKIP: ..." and 77 on TestSkipped."""
    args = parse()
    try:
        main(args)
    except TestSkipped as e:
        print("SKIP:", e)
        sys.exit(77)
    except TestFailure as e:
        print("FAIL:", e)
        sys.exit(1)
    print("ok")
