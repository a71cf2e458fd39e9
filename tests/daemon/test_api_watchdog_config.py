#!/usr/bin/env python3
"""Process: a configuration that switches the servos' bus watchdog off ([driver]
bus_watchdog_ms = 0) in a drop-in is refused by `armd --check-config` and by `armd -c` (exit 2,
the message names the drop-in, the line, the key and why), unless allow_no_watchdog = true says
so, and then --check-config passes with a warning. Real armd, real INI files (no arm needed:
armd stops at the configuration)."""
import os
import shutil
import subprocess
import tempfile

from test_api_lib import check, run

WHY = ("0 switches the servos' bus watchdog off, so a silent bus (armd killed, crashed or hung, a "
       "cable pulled) leaves the last torque applied")


def armd(args, *argv):
    p = subprocess.run([args.armd] + list(argv), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    return p.returncode, p.stdout.decode(errors="replace")


def main(args):
    d = tempfile.mkdtemp(prefix="armd-test-wdconfig-")
    try:
        cfg = os.path.join(d, "arm.ini")
        shutil.copy(args.config, cfg)
        os.mkdir(os.path.join(d, "arm.d"))
        dropin = os.path.join(d, "arm.d", "20-wd.ini")
        with open(dropin, "w") as f:
            f.write("[driver]\nbus_watchdog_ms = 0\n")
        code, out = armd(args, "--check-config", cfg)
        print("--check-config, watchdog off: exit %d\n%s" % (code, out.strip()))
        check(code == 2, "--check-config exit %d, expected 2" % code)
        check("%s:2: [driver] bus_watchdog_ms: %s" % (dropin, WHY) in out,
              "the refusal does not name file, line, key and why:\n" + out)
        check("allow_no_watchdog = true" in out, "the refusal does not say how to allow it")
        code, out = armd(args, "-c", cfg, "--port", os.path.join(d, "none"), "--socket",
                         os.path.join(d, "s.sock"))
        check(code == 2, "armd -c started (exit %d) with the watchdog off:\n%s" % (code, out))
        check(WHY in out and "not starting" in out, "armd -c did not say why:\n" + out)
        with open(dropin, "a") as f:
            f.write("allow_no_watchdog = true\n")
        code, out = armd(args, "--check-config", cfg)
        print("--check-config, allowed: exit %d" % code)
        check(code == 0, "--check-config exit %d with allow_no_watchdog:\n%s" % (code, out))
        check("%s:2: [driver] bus_watchdog_ms: warning: " % dropin in out,
              "no warning at the key:\n" + out)
        check("warning: no watchdog" in out, "no watchdog warning in the summary:\n" + out)
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    run(main)
