#!/usr/bin/env python3
"""armgen as a user runs it: --help; usage errors (exit 2, a sentence); an invalid INI (exit 2,
file:line: [section] key: message, nothing written); an output it cannot write (exit 1);
--counts (a table with every function); C to standard output naming the module and the model
hash, the same hash armd --check-config reports for the configuration; --shared writes the
shared object beside the configuration and armd --check-config then says it uses it."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg)
        sys.exit(1)


def run(cmd, expect):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    check(p.returncode == expect, "%s: exit %d, expected %d\nstdout: %s\nstderr: %s" %
          (" ".join(cmd), p.returncode, expect, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--armgen", required=True)
    ap.add_argument("--armd", required=True)
    ap.add_argument("--config", required=True)
    a = ap.parse_args()
    g = a.armgen
    h = run([g, "--help"], 0).stdout
    for w in ("SYNOPSIS", "--shared", "--counts", "EXIT STATUS"):
        check(w in h, "--help lacks " + w)
    check("no configuration" in run([g], 2).stderr, "no -c: no sentence")
    check("C identifier" in run([g, "-c", a.config, "--symbol", "9x"], 2).stderr, "bad symbol")
    check("exclude" in run([g, "-c", a.config, "--shared", "--counts"], 2).stderr, "--shared --counts")

    d = tempfile.mkdtemp(prefix="armgen-test-")
    try:
        bad = os.path.join(d, "bad.ini")
        with open(a.config) as f:
            text = f.read()
        with open(bad, "w") as f:
            f.write(text.replace("mass = 17.4\n", "mass = -17.4\n", 1))
        out = os.path.join(d, "bad.c")
        e = run([g, "-c", bad, "-o", out], 2).stderr
        check(re.search(r"bad\.ini:\d+: \[joint j2\] mass: ", e), "bad mass not located:\n" + e)
        check("not valid, nothing generated" in e and not os.path.exists(out), "bad INI output")
        check("does-not-exist" in run([g, "-c", os.path.join(d, "does-not-exist.ini")], 2).stderr,
              "missing file not named")
        e = run([g, "-q", "-c", a.config, "-o", os.path.join(d, "no", "such", "dir.c")], 1).stderr
        check("cannot write" in e, "unwritable output: " + e)

        counts = run([g, "-q", "-c", a.config, "--counts"], 0).stdout
        for fn in ("rnea", "gravity", "coriolis", "mass_matrix", "forward", "jacobian",
                   "momentum", "friction"):
            check(re.search(r"^%s\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+$" % fn, counts, re.M),
                  "--counts lacks %s:\n%s" % (fn, counts))
        print(counts)

        c = run([g, "-q", "-c", a.config], 0).stdout
        check("const dyn_gen_module armgen_module" in c, "no module in the C output")
        m = re.search(r"model hash (0x[0-9a-f]{16})", c)
        check(m, "no model hash in the C output")
        cc = run([a.armd, "--check-config", a.config], 0).stdout
        check("model hash " + m.group(1) in cc, "armd reports another hash than %s:\n%s" %
              (m.group(1), cc))

        ini = os.path.join(d, "arm.ini")
        with open(ini, "w") as f:
            f.write(text.replace("mass = 17.4\n", "mass = 17.45\n", 1))
        check("general core" in run([a.armd, "--check-config", ini], 0).stdout, "not general")
        e = run([g, "-q", "--shared", "-c", ini], 0).stderr
        print(e.strip())
        check(os.path.exists(os.path.join(d, "arm.dyn.so")) and
              os.path.exists(os.path.join(d, "arm.dyn.c")), "--shared: no arm.dyn.so / .c")
        cc = run([a.armd, "--check-config", ini], 0).stdout
        check("dynamics: generated code of arm puma560 from " + os.path.join(d, "arm.dyn.so")
              in cc, "armd does not use the shared object:\n" + cc)
    finally:
        shutil.rmtree(d)
    print("ok")


main()
