#!/usr/bin/env python3
"""test_conf_page.py — armd.conf(5) documents exactly the keys the loader accepts.

Usage: test_conf_page.py CONF_KEYS PAGE.md [CONF_RELOAD FILE.ini ...]

CONF_KEYS (tests/config/conf_keys.c) prints the loader's own key table, "SECTION<TAB>KEY" per
line, from config/cfg_arm.c's cfg_section_names and cfg_known_keys. The page (Markdown for
go-md2man) has a "## [SECTION]" heading per section; under it each key is a definition-list
term: a line starting with "**" (one or more bold key names, e.g. "**a**, **d** = *M*")
followed by a line starting with ": ". The test fails when a key of a section is missing from
that section of the page, when the page documents a key the section does not have, when a
section has no heading, and when a key's definition does not say whether a reload applies it
(*live*) or it needs a restart (*restart*). The title line must carry @VERSION@.

With CONF_RELOAD (tests/config/conf_reload.c) and INI files: for every key line of those files,
CONF_RELOAD changes the value and asks cfg_compare (what a reload runs) whether the change is
live or needs a restart; the page's mark must agree, and the files must not disagree with each
other. Keys no file could change validly are listed, not failed.
"""
import re
import subprocess
import sys


def loader_keys(program):
    """{section: [keys]} in the loader's order."""
    out = subprocess.run([program], capture_output=True, text=True, check=True, timeout=30).stdout
    keys = {}
    for line in out.splitlines():
        section, key = line.split("\t")
        keys.setdefault(section, []).append(key)
    if not keys:
        raise SystemExit("%s printed no keys" % program)
    return keys


def reload_verdicts(program, inis):
    """{(section, key): {"live"|"restart"|"unchecked", ...}} over every file."""
    verdicts = {}
    for ini in inis:
        out = subprocess.run([program, ini], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise SystemExit("%s %s: exit %d\n%s" % (program, ini, out.returncode, out.stderr))
        for line in out.stdout.splitlines():
            section, key, verdict = line.split("\t")
            verdicts.setdefault((section, key), set()).add(verdict)
    return verdicts


def page_keys(text):
    """({section: {key: definition text}}, [problems]) from the page's "## [SECTION]" parts."""
    lines = text.splitlines()
    sections, problems, section = {}, [], None
    for i, line in enumerate(lines):
        m = re.match(r"^##\s+\[([^\]]+)\]\s*$", line)
        if m:
            section = m.group(1)
            if section in sections:
                problems.append("page: section [%s] has two headings" % section)
            sections[section] = {}
            continue
        if re.match(r"^#\s", line):  # a top-level heading ends the sections
            section = None
            continue
        if section is None or not line.startswith("**"):
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith(": "):
            continue  # bold text in a paragraph, not a term
        body = []
        for nxt in lines[i + 1:]:
            if nxt.startswith(": ") or nxt.startswith("  "):
                body.append(nxt)
            else:
                break
        term = line.split(" = ")[0]
        for key in re.findall(r"\*\*([a-z][a-z0-9_]*)\*\*", term):
            if key in sections[section]:
                problems.append("page: [%s] %s is documented twice" % (section, key))
            sections[section][key] = " ".join(body)
    return sections, problems


def main(args):
    if len(args) < 2 or len(args) == 3:
        raise SystemExit(__doc__)
    program, page = args[:2]
    text = open(page, encoding="utf-8").read()
    failures = []
    if not re.match(r"^% ARMD\.CONF 5 .*@VERSION@", text.splitlines()[0] if text else ""):
        failures.append("%s: title line does not name ARMD.CONF 5 with @VERSION@" % page)
    real = loader_keys(program)
    documented, problems = page_keys(text)
    failures += ["%s: %s" % (page, p) for p in problems]
    for section, keys in real.items():
        if section not in documented:
            failures.append("%s: no '## [%s]' section for the loader's [%s]" % (page, section, section))
            continue
        for key in keys:
            if key not in documented[section]:
                failures.append("%s: [%s] %s: the loader accepts it, the page does not document it"
                                % (page, section, key))
            else:
                body = documented[section][key]
                marks = [m for m in ("*live*", "*restart*") if m in body]
                if len(marks) != 1:
                    failures.append("%s: [%s] %s: its definition must say *live* or *restart* "
                                    "(exactly one)" % (page, section, key))
    for section, keys in documented.items():
        if section not in real:
            failures.append("%s: documents a section [%s] the loader does not know" % (page, section))
            continue
        for key in keys:
            if key not in real[section]:
                failures.append("%s: [%s] %s: documented, but the loader has no such key"
                                % (page, section, key))
    n = sum(len(k) for k in real.values())
    checked, unchecked = 0, []
    if len(args) > 2:
        verdicts = reload_verdicts(args[2], args[3:])
        for section, keys in real.items():
            for key in keys:
                seen = verdicts.get((section, key), set()) - {"unchecked"}
                if not seen:
                    unchecked.append("[%s] %s" % (section, key))
                    continue
                checked += 1
                if len(seen) > 1:
                    failures.append("[%s] %s: cfg_compare calls it live in one file and restart in "
                                    "another" % (section, key))
                    continue
                body = documented.get(section, {}).get(key)
                if body is None:
                    continue  # reported above
                verdict = seen.pop()
                if "*%s*" % verdict not in body:
                    failures.append("%s: [%s] %s: a reload takes it as %s (cfg_compare), the page "
                                    "says otherwise" % (page, section, key, verdict))
        print("reload: %d keys checked against cfg_compare; not changeable in the files: %s"
              % (checked, ", ".join(unchecked) or "none"))
    if failures:
        print("\n".join(failures))
        print("FAIL: %d problem(s); the loader has %d keys in %d sections" % (len(failures), n, len(real)))
        return 1
    print("ok: %d keys in %d sections documented, each live or restart" % (n, len(real)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
