#!/usr/bin/env python3
"""test_manpage_render.py — every manual page the build installs reads as a manual page: no
Markdown is left over after go-md2man and groff, and no font runs on past its text.

Usage: test_manpage_render.py BUILD_DIR SOURCE_DIR

The pages are the ones meson installs into a man directory (BUILD_DIR/meson-info/
intro-installed.json), so a page added anywhere in the tree is checked without being listed
here. Each is rendered to text as man(1) shows it (groff -man -Tutf8, overstriking removed) and
fails on:
  - an emphasis go-md2man left as text: *word*, _word_, ** or __ (an emphasis written
    directly against another one, as in **[joint** *NAME***]**, is not recognised);
  - a backtick (a code span that did not close);
  - a backslash before a Markdown character (\\_, \\*, ...: an escape that was not needed);
  - a line starting with # (a heading go-md2man did not take as one);
  - a link to something that is no address: [N] (the mean) is a Markdown link, shown as
    "N <the mean>".
In the Markdown source, a <word> outside code is HTML to go-md2man, which drops it: it must be
written \\<word>.
In the roff itself, a font must be back to roman at every request (.PP, .TP, .SH ...): roff's
\\fP returns to the previous font only, so an emphasis inside another one (**[joint *NAME*]**)
leaves the rest of the paragraph in italic or bold. go-md2man's own code spans
(\\fB\\fC...\\fR) are fine.

Each failure names the page, the line of the rendered text (or of the roff) and, when it can be
found, the line of the Markdown source to fix.
"""
import glob
import json
import os
import re
import subprocess
import sys

MAN_PATH = re.compile(r"/man([1-9])/[^/]+\.\1$")
ARTEFACTS = [
    (re.compile(r"(?<![\w*])\*\w[^*\n]*?(?<=[^\s*])\*(?![\w*])"), "an emphasis left as *text*"),
    (re.compile(r"(?<![\w_])_[A-Za-z][^_\n]*?(?<=[^\s_])_(?![\w_])"), "an emphasis left as _text_"),
    (re.compile(r"\*\*|__"), "a strong emphasis left as ** or __"),
    (re.compile(r"[`\u2018]"), "a backtick (a code span that did not close)"),
    (re.compile(r"\\[_*`#\[\]]"), "a Markdown escape left as text"),
    (re.compile(r"^\s*#+(\s|$)"), "a Markdown heading left as text"),
    (re.compile("\u27e8(?![a-z]+://|mailto:)[^\u27e9]*\u27e9"),
     "a Markdown link to no address ([text] (words) is a link: write \\[text\\])"),
]
# <tag ...> or </tag> not preceded by a backslash; autolinks (<https://...>, <a@b>) are fine
HTML = re.compile(r"(?<!\\)</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
FONT = re.compile(r"\\f(\[[^\]]*\]|\(..|.)")


def installed_pages(build):
    """The built files meson installs as manual pages."""
    with open(os.path.join(build, "meson-info", "intro-installed.json"), encoding="utf-8") as f:
        installed = json.load(f)
    return sorted(src for src, dest in installed.items() if MAN_PATH.search(dest))


def source_of(page, source):
    """(the Markdown source of a built page NAME.N: SOURCE_DIR/**/NAME.N.md outside build trees,
    the text go-md2man read: meson's copy NAME.N.md beside the page, the same lines with
    @VERSION@ filled in, else the source), or (None, None)."""
    name = os.path.basename(page) + ".md"
    built = os.path.join(os.path.dirname(page), name)
    for path in sorted(glob.glob(os.path.join(source, "**", name), recursive=True)):
        rel = os.path.relpath(path, source)
        if not rel.startswith(("build", "obj-")):
            return path, built if os.path.exists(built) else path
    return None, None


def render(page):
    """The page as man(1) shows it on a terminal, as plain text lines."""
    run = subprocess.run(["groff", "-k", "-man", "-Tutf8", "-P-c", "-rLL=100n", page],
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, LC_ALL="C.UTF-8"))
    if run.returncode:
        raise SystemExit("groff -man %s: exit %d: %s" % (page, run.returncode, run.stderr))
    return re.sub(r".\x08", "", run.stdout).splitlines()


def raw_html(md):
    """(line number, tag) for each <word ...> of the Markdown source outside code: go-md2man
    takes it for HTML and drops it from the page (write \\<word> instead)."""
    found, fenced = [], False
    with open(md, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            if fenced or line.startswith(("    ", "\t")):
                continue
            for m in HTML.finditer(re.sub(r"`[^`]*`", "", line)):
                found.append((n, m.group(0)))
    return found


def code_lines(md):
    """The stripped lines of the Markdown source's code blocks (fenced or indented): literal by
    design, so an INI comment '# ...' or a '**' there is no artefact."""
    found, fenced = set(), False
    if md is None:
        return found
    with open(md, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced or line.startswith(("    ", "\t")):
                found.add(line.strip())
    return found


def font_leaks(roff_lines):
    """(line number, font) for each request line reached with a font other than roman still on,
    following roff: \\fX selects X and remembers the font before it, \\fP goes back to that one,
    \\fR and \\f[] select roman."""
    cur, prev, leaks, opened = "R", "R", [], 0
    for n, line in enumerate(roff_lines, 1):
        if line.startswith((".", "'")):
            if cur != "R" and not line.startswith((".\\\"", "'\\\"")):
                leaks.append((opened, cur))
                cur, prev = "R", "R"
            continue
        for m in FONT.finditer(line):
            f = m.group(1).strip("[]").lstrip("(")
            if f == "P":
                cur, prev = prev, cur
            else:
                cur, prev = (f or "R"), cur
            if cur != "R" and cur != prev:
                opened = n
    return leaks


def md_line(md, needle, context):
    """The line of the Markdown source that holds needle literally (any line when needle is
    empty) and shares the most words with context, or None."""
    if md is None:
        return None
    words = set(re.findall(r"\w{3,}", context))
    best, best_score = None, 0
    with open(md, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if needle not in line:
                continue
            score = len(words & set(re.findall(r"\w{3,}", line)))
            if score > best_score:
                best, best_score = n, score
    return best


def where(md, needle, context):
    """ " (source FILE:LINE)" for the Markdown line of needle and context, or ""."""
    n = md_line(md[1], needle, context)
    return " (source %s:%d)" % (md[0], n) if n else ""


def check(page, source):
    """The failures of one page, each a sentence naming the page and line."""
    failures = []
    md = source_of(page, source)
    code = code_lines(md[1])
    for n, line in enumerate(render(page), 1):
        if line.strip() and line.strip() in code:
            continue
        for pattern, what in ARTEFACTS:
            m = pattern.search(line)
            if m:
                failures.append("%s: rendered line %d has %s: %r%s" % (
                    page, n, what, line.strip(), where(md, m.group(0), line)))
    with open(page, encoding="utf-8") as f:
        roff = f.read().splitlines()
    for n, font in font_leaks(roff):
        failures.append("%s: roff line %d: font %s is still on at the next request (an emphasis "
                        "inside another one?): %r%s" % (page, n, font, roff[n - 1], where(md, "", FONT.sub("", roff[n - 1]))))
    if md[1]:
        for n, tag in raw_html(md[1]):
            failures.append("%s: source %s:%d: %s is dropped as HTML by go-md2man (write \\%s)" % (
                page, md[0], n, tag, tag))
    return failures


def main(args):
    if len(args) != 2:
        raise SystemExit(__doc__)
    build, source = args
    pages = installed_pages(build)
    if not pages:
        raise SystemExit("no manual page among the installed files of %s (meson-info/"
                         "intro-installed.json); was it configured with -Dman=disabled?" % build)
    failures = []
    for page in pages:
        if not os.path.exists(page):
            failures.append("%s: not built (meson compile -C %s)" % (page, build))
            continue
        page_failures = check(page, source)
        print("%s: %s" % (page, "%d problem(s)" % len(page_failures) if page_failures else "clean"))
        failures += page_failures
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
