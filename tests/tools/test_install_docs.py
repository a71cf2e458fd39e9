#!/usr/bin/env python3
"""test_install_docs.py — every user can read the examples: `meson install` puts a copy of each
example configuration (config/examples/*.ini) and the Python client's example
(tools/python/examples/pick_and_place.py) in DATADIR/doc/armd/examples/, mode 0644 (rw-r--r--)
and byte for byte the source, and debian/armd.install takes each of them into the package.
/etc/armd/examples/ is root:armd 0750 (systemd/armd.tmpfiles), so these copies are the ones a
user outside the armd group reads.

Usage: test_install_docs.py MESON BUILD_DIR SOURCE_DIR

It runs `meson install --no-rebuild --destdir TMP` for real (nothing outside TMP is written).
"""
import glob
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile


def build_option(build, name):
    """The value of a meson option of the build (prefix, datadir, ...)."""
    with open(os.path.join(build, "meson-info", "intro-buildoptions.json"), encoding="utf-8") as f:
        return next(o["value"] for o in json.load(f) if o["name"] == name)


def main(args):
    if len(args) != 3:
        raise SystemExit(__doc__)
    meson, build, source = args
    wanted = sorted(glob.glob(os.path.join(source, "config", "examples", "*.ini")))
    wanted.append(os.path.join(source, "tools", "python", "examples", "pick_and_place.py"))
    if len(wanted) < 2:
        raise SystemExit("no config/examples/*.ini under %s" % source)
    docdir = os.path.join(build_option(build, "prefix"), build_option(build, "datadir"), "doc",
                          "armd", "examples")
    with open(os.path.join(source, "debian", "armd.install"), encoding="utf-8") as f:
        packaged = set(line.strip() for line in f)
    failures = []
    tmp = tempfile.mkdtemp(prefix="armd-install-docs.")
    try:
        run = subprocess.run([meson, "install", "--no-rebuild", "--quiet", "-C", build,
                              "--destdir", tmp], capture_output=True, text=True, timeout=120)
        if run.returncode:
            raise SystemExit("meson install --destdir %s: exit %d\n%s%s" % (
                tmp, run.returncode, run.stdout, run.stderr))
        for src in wanted:
            name = os.path.basename(src)
            dest = os.path.join(tmp + docdir, name)
            if not os.path.isfile(dest):
                failures.append("%s is not installed as %s" % (src, os.path.join(docdir, name)))
                continue
            mode = stat.S_IMODE(os.stat(dest).st_mode)
            if mode != 0o644:
                failures.append("%s: mode %04o, not 0644 (rw-r--r--)" % (os.path.join(docdir, name),
                                                                        mode))
            with open(src, "rb") as a, open(dest, "rb") as b:
                if a.read() != b.read():
                    failures.append("%s differs from %s" % (os.path.join(docdir, name), src))
            line = "usr/share/doc/armd/examples/" + name
            if line not in packaged:
                failures.append("debian/armd.install lacks %s (the package would leave it out)"
                                % line)
            print("%s: installed" % os.path.join(docdir, name))
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
