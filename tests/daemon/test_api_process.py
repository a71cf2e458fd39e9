#!/usr/bin/env python3
"""Integration: armd's command line without an arm: --version, --help (man-page-like),
--check-config (valid file: summary and exit 0; a rate that does not fit on the bus: exit 1;
an invalid file: exit 2), usage errors (exit 2), a port that cannot be opened (exit 1 naming
the port), a socket path already served by another armd (exit 1)."""
import os
import shutil
import subprocess
import tempfile

from test_api_lib import Rig, check, run


def armd(args, *argv, expect):
    p = subprocess.run([args.armd] + list(argv), capture_output=True, text=True, timeout=30)
    check(p.returncode == expect, "armd %s: exit %d, expected %d\n%s%s" %
          (" ".join(argv), p.returncode, expect, p.stdout, p.stderr))
    return p.stdout + p.stderr


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
    for w in ("j1", "j6", "total mass", "G(0)", "bus time per tick", "valid"):
        check(w in out, "--check-config output lacks %r:\n%s" % (w, out))
    print(out.strip().splitlines()[-2])

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
