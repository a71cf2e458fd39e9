#!/usr/bin/env python3
"""test_manpages.py — every manual page (Markdown source, daemon/armd.8.md, tools/NAME/NAME.1.md)
documents exactly the options its program really takes.

Usage: test_manpages.py PROGRAM PAGE.md [PROGRAM PAGE.md ...]

For each pair: the program's own usage text (PROGRAM --help; armbench, which has no --help, prints
its usage line and exits 2) names its options; each long option of it must appear in the page as
a bold term (**--option**), and each option the page defines (a definition-list term: a line
starting with **-) must be one the usage text names, so neither can drift from the other. The
page's title line must name the program and carry the @VERSION@ that meson fills in.
"""
import os
import re
import subprocess
import sys

LONG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# "-x, --long" (C programs) or "-x ARG, --long ARG" (Python's argparse)
SHORT_DEF = re.compile(r"^\s*(-[a-zA-Z])(?: [A-Z][A-Z_:]*)?,\s+--", re.M)


def usage_options(program):
    """The long options (and the short ones defined as '-x, --long') of the usage text."""
    run = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=30)
    text = run.stdout + run.stderr
    if run.returncode not in (0, 2) or "usage" not in text.lower() and "SYNOPSIS" not in text:
        raise SystemExit("%s --help: exit %d, no usage text:\n%s" % (program, run.returncode, text))
    return set(LONG.findall(text)) | set(SHORT_DEF.findall(text))


def page_options(page):
    """(every option written in bold anywhere, the options of the definition-list terms)."""
    text = open(page, encoding="utf-8").read()
    plain = text.replace("\\*", "")  # escaped asterisks (drop-ins/\*.ini) are not markup
    bold = set()
    for span in re.findall(r"\*\*([^*]+)\*\*", plain):
        bold |= set(LONG.findall(span))
        bold |= set(re.findall(r"^-[a-zA-Z]$", span))
    defined = set()
    for line in text.splitlines():
        if line.startswith("**-"):
            defined |= set(LONG.findall(line)) | set(re.findall(r"\*\*(-[a-zA-Z])\*\*", line))
    return text, bold, defined


def main(args):
    if len(args) < 2 or len(args) % 2:
        raise SystemExit(__doc__)
    failures = []
    for program, page in zip(args[0::2], args[1::2]):
        name = os.path.basename(program)
        real = usage_options(program)
        text, bold, defined = page_options(page)
        title = text.splitlines()[0] if text else ""
        if not re.match(r"^%% %s [18] .*@VERSION@" % re.escape(name.upper()), title):
            failures.append("%s: title line %r does not name %s with @VERSION@" % (page, title, name))
        for opt in sorted(real - bold):
            failures.append("%s: %s --help names %s, the page does not document it" % (page, name, opt))
        for opt in sorted(defined - real):
            failures.append("%s: the page defines %s, which %s --help does not name" % (page, opt, name))
        print("%s: %d options in --help, %d defined in %s" % (name, len(real), len(defined), page))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
