#!/usr/bin/env python3
"""Unit: `meson install` installs every module of the Python client (tools/python/armd/*.py)
into the armd/ directory of the interpreter's module directory, as meson's own install plan
(`meson introspect --installed BUILDDIR`) says. Args: MESON BUILDDIR PACKAGE_DIR INSTALL_DIR."""
import json
import os
import subprocess
import sys


def main():
    meson, build, package, install_dir = sys.argv[1:5]
    plan = json.loads(subprocess.run([meson, "introspect", "--installed", build], check=True,
                                     capture_output=True, text=True).stdout)
    plan = {os.path.realpath(src): dest for src, dest in plan.items()}
    modules = sorted(f for f in os.listdir(package) if f.endswith(".py"))
    failed = False
    for name in modules:
        dest = plan.get(os.path.realpath(os.path.join(package, name)))
        want = os.path.join(install_dir, name)
        if dest != want:
            print("FAIL: armd/%s is installed to %s, expected %s" % (name, dest, want))
            failed = True
    if not install_dir.rstrip("/").endswith("-packages/armd"):
        print("FAIL: %s is not a package directory of a Python module path" % install_dir)
        failed = True
    if failed or len(modules) < 8:
        print("FAIL: %d modules checked" % len(modules))
        sys.exit(1)
    print("ok: %d modules of armd install to %s" % (len(modules), install_dir))


if __name__ == "__main__":
    main()
