#!/usr/bin/env python3
"""Integration: armd's command line without an arm: --version, --help (man-page-like),
--check-config (valid file: summary and exit 0; a rate that does not fit on the bus: exit 1;
an invalid file: exit 2), usage errors (exit 2), a port that cannot be opened (exit 1 naming
the port), a socket path already served by another armd (exit 1)."""
import os
import re
import shutil
import subprocess
import tempfile

from test_api_lib import Rig, check, run


def armd(args, *argv, expect):
    p = subprocess.run([args.armd] + list(argv), capture_output=True, text=True, timeout=30)
    check(p.returncode == expect, "armd %s: exit %d, expected %d\n%s%s" %
          (" ".join(argv), p.returncode, expect, p.stdout, p.stderr))
    return p.stdout + p.stderr


def number_after(out, pattern):
    """The number captured by pattern's group 1 in out (fails the test when missing)."""
    m = re.search(pattern, out, re.M)
    check(m is not None, "--check-config output lacks %r:\n%s" % (pattern, out))
    return float(m.group(1))


def check_summary_numbers(out):
    """The numbers of the PUMA 560 example's summary, derived by hand from the sources:
    - total mass = sum of the published link masses (config/examples/puma560.ini cites them):
      0 + 17.4 + 4.8 + 0.82 + 0.34 + 0.09 = 23.45 kg (no payload);
    - G(0) of j2 (zero pose, as tests/dynamics/test_puma.c): g (m2 x2 + m3 x3 + (m4+m5+m6) xw)
      with x2 = a2 - 0.3638 = 0.068, x3 = a2 + a3 - 0.0203 = 0.4318, xw = a2 + a3 = 0.4521:
      9.81 (17.4 * 0.068 + 4.8 * 0.4318 + 1.25 * 0.4521) = 9.81 * 3.820965 = 37.4837 N m;
    - bus time (drivers/README.md): t = 10 B / baud + R + T * 100 us with, for 6 dxl2 servos,
      B = Sync Read (14 + 6 out, 6 * 21 back) + Sync Write (14 + 3 * 6) = 20 + 126 + 32 = 178
      bytes, baud 4e6, R = 6 * return_delay 0, T = 1: 445 + 0 + 100 = 545 us;
    - period: the example runs at 1 kHz, 1000 us."""
    mass = number_after(out, r"^total mass:\s*([0-9.]+) kg")
    g2 = number_after(out, r"^2\s+j2\s.*\s([-0-9.]+) Nm\s*$")
    bus = number_after(out, r"^bus time per tick:\s*([0-9.]+) us")
    period = number_after(out, r"\(period ([0-9.]+) us\)")
    print("summary: total mass %g kg, G(0) j2 %g N m, bus time %g us, period %g us" %
          (mass, g2, bus, period))
    check(abs(mass - 23.45) < 0.001, "total mass %g kg, expected 23.45" % mass)
    check(abs(g2 - 37.4837) < 0.001, "G(0) of j2 %g N m, expected 37.484" % g2)
    check(abs(bus - 545) < 0.5, "bus time %g us, expected 545" % bus)
    check(abs(period - 1000) < 0.5, "period %g us, expected 1000" % period)


def main(args):
    check(armd(args, "--version", expect=0).startswith("armd "), "--version")
    h = armd(args, "--help", expect=0)
    for w in ("SYNOPSIS", "OPTIONS", "SIGNALS", "FILES", "EXIT STATUS", "SEE ALSO",
              "--check-config", "--socket", "--port", "SIGHUP"):
        check(w in h, "--help lacks %s" % w)
    armd(args, expect=2)
    armd(args, "-c", args.config, "extra", expect=2)
    armd(args, "--bogus", expect=2)

    out = armd(args, "--check-config", args.config, expect=0)
    for w in ("j1", "j6", "total mass", "G(0)", "bus time per tick", "valid",
              "dynamics: generated code of arm puma560, built in"):
        check(w in out, "--check-config output lacks %r:\n%s" % (w, out))
    print(out.strip().splitlines()[-2])
    check_summary_numbers(out)

    d = tempfile.mkdtemp(prefix="armd-test-process-")
    try:
        cfg = os.path.join(d, "arm.ini")
        shutil.copy(args.config, cfg)
        os.mkdir(os.path.join(d, "arm.d"))
        with open(os.path.join(d, "arm.d", "10-fast.ini"), "w") as f:
            f.write("[arm]\nrate_hz = 4000\n")
        out = armd(args, "--check-config", cfg, expect=1)
        check("error" in out and "rate_hz" in out, "a 4 kHz loop should not fit:\n" + out)
        with open(os.path.join(d, "arm.d", "10-fast.ini"), "w") as f:
            f.write("[arm]\nrate_hz = fast\n")
        out = armd(args, "--check-config", cfg, expect=2)
        check("rate_hz" in out, "invalid rate not named:\n" + out)
        armd(args, "-c", cfg, expect=2)
        os.unlink(os.path.join(d, "arm.d", "10-fast.ini"))
        missing = os.path.join(d, "no-such-tty")
        out = armd(args, "-c", cfg, "--port", missing, "--socket", os.path.join(d, "s"), expect=1)
        check(missing in out and "<3>" in out, "missing port not named as an error:\n" + out)
    finally:
        shutil.rmtree(d, ignore_errors=True)

    with Rig(args, "process") as rig:
        out = armd(args, "-c", rig.config, "--port", rig.link, "--socket", rig.sock, expect=1)
        check("already" in out, "a second armd on the same socket:\n" + out)
        check(rig.client().call("status")["state"] == "disabled", "first armd disturbed")
        log = rig.armd_log()
        check("<5>armd " in log and "socket " + rig.sock in log, "no start summary:\n" + log)
        check(rig.stop_armd() == 0, "armd did not exit 0")


if __name__ == "__main__":
    run(main)
