"""fanout.py — server-sent events to every browser, none of which can hold anyone up.

Runs on armweb's one asyncio loop. Telemetry samples from armd are gathered into a batch that is
encoded once and offered to every browser every `batch_period` seconds (10 per second: the page
redraws at that rate, armd's samples arrive at up to 60 Hz); other messages (status, gains,
events, the link to armd) are offered at once. Each browser has a queue of at most
`queue_limit` encoded messages: offering never waits, and when a browser's queue is full its
OLDEST message is dropped (counted), so a browser that reads slowly sees gaps, never a delay
for the others or for armd's connection. What one browser can hold in armweb is therefore its
queue plus what aiohttp buffers for one write (64 KiB) — server.py closes a browser whose
write has made no progress for a while.
"""
import asyncio
import collections
import json


def sse(event, data):
    """One server-sent event (text/event-stream): `event:` line, JSON `data:` line, blank
    line. JSON has no raw line feed, so one data line is enough."""
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data, separators=(",", ":")))).encode()


def _rounded(v, digits):
    """v (a number, a list of numbers, or None) rounded to `digits` decimals: 0.1 ms, 1 urad
    and 0.1 mN m are below what the page can show, and the stream gets a third shorter."""
    if isinstance(v, list):
        return [round(x, digits) if isinstance(x, float) else x for x in v]
    return round(v, digits) if isinstance(v, float) else v


class Browser:
    """One browser's bounded queue of encoded events."""

    def __init__(self, limit):
        self.queue = collections.deque(maxlen=limit)
        self.wake = asyncio.Event()
        self.dropped = 0
        self.closed = False

    def offer(self, msg):
        """Queues msg without waiting; a full queue loses its oldest message."""
        if len(self.queue) == self.queue.maxlen:
            self.dropped += 1
        self.queue.append(msg)
        self.wake.set()

    def close(self):
        """Ends the stream: take() returns None from now on, a waiting one at once."""
        self.closed = True
        self.wake.set()

    async def take(self, timeout):
        """Every queued message joined into one write (b"" after timeout seconds with none;
        None once closed)."""
        if not self.queue and not self.closed:
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), timeout)
            except asyncio.TimeoutError:
                return b""
        if self.closed:
            return None
        data = b"".join(self.queue)
        self.queue.clear()
        return data


class Fanout:
    """The browsers, the telemetry batch being gathered, and the counters /metrics shows."""

    def __init__(self, batch_period=0.1, queue_limit=50, batch_limit=64, max_browsers=32):
        self.batch_period = batch_period
        self.queue_limit = queue_limit    # messages per browser (5 s of batches)
        self.batch_limit = batch_limit    # samples per batch (~1 s at 60 Hz)
        self.max_browsers = max_browsers
        self.browsers = set()
        self.batch = []
        self.dropped_batches = 0   # messages dropped from slow browsers' queues, all browsers
        self.dropped_browsers = 0  # browsers closed for not reading (server.py counts them)

    def full(self):
        return len(self.browsers) >= self.max_browsers

    def join(self, snapshot):
        """A new browser, its queue starting with the snapshot messages (the state now)."""
        b = Browser(self.queue_limit)
        for msg in snapshot:
            b.offer(msg)
        self.browsers.add(b)
        return b

    def leave(self, b):
        self.browsers.discard(b)
        self.dropped_batches += b.dropped

    def close(self):
        """Ends every browser's stream (armweb stopping)."""
        for b in self.browsers:
            b.close()

    def dropped_total(self):
        return self.dropped_batches + sum(b.dropped for b in self.browsers)

    def publish(self, event, data):
        """Offers one event to every browser now."""
        if self.browsers:
            msg = sse(event, data)
            for b in self.browsers:
                b.offer(msg)

    def add_sample(self, sample):
        """Adds one telemetry sample to the batch being gathered (the oldest goes when full:
        nothing grows while no flush runs)."""
        if self.browsers:
            if len(self.batch) >= self.batch_limit:
                del self.batch[0]
            self.batch.append(sample)

    def flush(self):
        """Offers the gathered batch as one `telemetry` event, column-wise: time[k], state of
        the last sample, q[k][n], q_des[k][n], tau[k][n] (rad / m, N m / N), and with a tool
        tool_opening[k] (m) and tool_force[k] (N); pose, the last sample's tool frame (position
        [m], orientation as a unit quaternion w x y z); wrench, the last sample's wrench at the
        tool (force [N], torque [N m], base frame; null numbers while the observer is off)."""
        if not self.batch:
            return
        s = self.batch
        self.batch = []
        batch = {
            "time": [_rounded(x.get("time"), 4) for x in s],
            "state": s[-1].get("state"),
            "q": [_rounded(x.get("q"), 6) for x in s],
            "q_des": [_rounded(x.get("q_des"), 6) for x in s],
            "tau": [_rounded(x.get("tau"), 4) for x in s],
        }
        pose = s[-1].get("pose")
        if isinstance(pose, dict):  # the tool frame of the last sample (the page's readout)
            batch["pose"] = {"position": _rounded(pose.get("position"), 6),
                             "orientation": _rounded(pose.get("orientation"), 6)}
        wrench = s[-1].get("wrench")
        if isinstance(wrench, dict):  # the wrench at the tool of the last sample (readout)
            batch["wrench"] = {"force": _rounded(wrench.get("force"), 3),
                               "torque": _rounded(wrench.get("torque"), 3)}
        if isinstance(s[-1].get("tool"), dict):
            tools = [x.get("tool") if isinstance(x.get("tool"), dict) else {} for x in s]
            batch["tool_opening"] = [_rounded(t.get("opening"), 6) for t in tools]
            batch["tool_force"] = [_rounded(t.get("force"), 3) for t in tools]
        self.publish("telemetry", batch)

    async def run(self):
        """Flushes the batch every batch_period seconds, for ever."""
        while True:
            await asyncio.sleep(self.batch_period)
            self.flush()
