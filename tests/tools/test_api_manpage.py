#!/usr/bin/env python3
"""test_api_manpage.py — armd-api(7) (daemon/armd-api.7.md) documents exactly the socket API armd
has: its methods, its notifications, the states the safety state machine accepts each judged
method in, which methods a restricted connection may call, and every error code armd sends.

Usage: test_api_manpage.py API_NAMES PAGE.md DAEMON_SRC_DIR [RENDERED_PAGE]

API_NAMES (tests/tools/api_names.c) prints the lists from armd's own tables: the method table
(daemon/api_methods.c), the notification names (daemon/telemetry.c) and sf_command_allowed
(daemon/safety.c). The page's "# METHODS" and "# NOTIFICATIONS" sections have one "### NAME"
subsection each; every method's subsection has a "**States:**" paragraph: "any" or the states,
then optionally "; also on a restricted connection." for the methods a connection beyond
max_clients may call. The error codes are the one-word codes armd's sources hand to their error
functions; each must be a term of the page's "# ERRORS" section, and each term one of them.
With RENDERED_PAGE (go-md2man's output), man(1) (or groff) renders it and no Markdown may show.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

STATES = ["disabled", "holding", "moving", "fault", "estop"]
# The functions through which armd's sources give a client an error code (their argument after
# the first ones), e.g. api_fail(e, "invalid_params", ...), ctl_error_set(err, "busy", ...),
# pe_fail(pe, err && err->code[0] ? err->code : "failed", ...).
ERROR_FUNCS = r"(?:api_fail|ctl_error_set|out_refuse|refuse_enable|refuse|pe_fail|pe_refuse|" \
              r"api_client_refuse)"
ERROR_CALL = re.compile(ERROR_FUNCS + r"\s*\((?:[^;\"()]|\([^()]*\))*?,\s*"
                        r"(?:[^;\"]*\?\s*[^;\":]*:\s*)?\"([a-z_]+)\"")
# Codes that never reach a client: ctl_create's (daemon/host/life.c) go to armd's log at start.
NOT_FOR_CLIENTS = {"config"}


def code_lists(api_names):
    """(methods {name: restricted_ok}, notifications [names], judged {method: set of states})."""
    out = subprocess.run([api_names], capture_output=True, text=True, timeout=30, check=True).stdout
    methods, notes, judged = {}, [], {}
    for line in out.splitlines():
        kind, name, *rest = line.split()
        if kind == "method":
            methods[name] = rest == ["restricted"]
        elif kind == "notification":
            notes.append(name)
        elif kind == "states":
            judged[name] = set(rest)
    if len(methods) < 10 or len(notes) < 2 or len(judged) < 5:
        raise SystemExit("%s printed too little:\n%s" % (api_names, out))
    return methods, notes, judged


def error_codes(src):
    """Every error code the sources under src (daemon/) give a client."""
    codes = set()
    for f in glob.glob(os.path.join(src, "**", "*.c"), recursive=True):
        codes |= set(ERROR_CALL.findall(open(f, encoding="utf-8").read()))
    if len(codes) < 15:
        raise SystemExit("only %d error codes found in %s: has ERROR_FUNCS gone stale?" %
                         (len(codes), src))
    return codes - NOT_FOR_CLIENTS


def sections(text):
    """{top-level section: {subsection: its text}} and {top-level section: its text}."""
    subs, tops, top, sub = {}, {}, None, None
    for line in text.splitlines():
        if line.startswith("# "):
            top, sub = line[2:].strip(), None
            subs.setdefault(top, {})
            tops[top] = ""
        elif line.startswith("### ") and top:  # go-md2man: ### is .SS
            sub = line[4:].strip()
            subs[top][sub] = ""
        elif top:
            tops[top] += line + "\n"
            if sub:
                subs[top][sub] += line + "\n"
    return subs, tops


def states_of(name, block, failures):
    """(the states a method's **States:** paragraph names, whether it allows restricted ones)."""
    m = re.search(r"^\*\*States:\*\*(.*?)(?:\n\n|\Z)", block, re.M | re.S)
    if not m:
        failures.append("method %s: no **States:** paragraph" % name)
        return None, False
    para = " ".join(m.group(1).split())
    head = re.match(r"\s*([a-z, ]+?)\s*(?=[.;(]|$)", para)
    words = [w for w in re.split(r"[,\s]+|\band\b|\bor\b", head.group(1) if head else "") if w]
    if words == ["any"]:
        states = set(STATES)
    else:
        states = set(words)
        for w in words:
            if w not in STATES:
                failures.append("method %s: **States:** names %r, not a state (%s or any)" %
                                (name, w, ", ".join(STATES)))
    return states, "restricted connection" in para


def rendered_text(page):
    """The rendered manual page as plain text (None when neither man nor groff is here)."""
    env = dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0", LC_ALL="C.UTF-8")
    if shutil.which("man"):
        cmd = ["man", "-l", "-P", "cat", page]
    elif shutil.which("groff"):
        cmd = ["groff", "-man", "-Tutf8", "-P-cbou", page]
    else:
        return None
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    if run.returncode != 0:
        raise SystemExit("%s: exit %d: %s" % (" ".join(cmd), run.returncode, run.stderr))
    return re.sub(r".\x08", "", run.stdout)


def main(args):
    if len(args) not in (3, 4):
        raise SystemExit(__doc__)
    methods, notes, judged = code_lists(args[0])
    page = open(args[1], encoding="utf-8").read()
    subs, tops = sections(page)
    failures = []
    if not re.match(r"^% ARMD-API 7 .*@VERSION@", page):
        failures.append("%s: the title line must be '%% ARMD-API 7 ... @VERSION@ ...'" % args[1])
    documented = subs.get("METHODS", {})
    for name in sorted(set(methods) - set(documented)):
        failures.append("method %s is in armd's method table, armd-api(7) does not document it" %
                        name)
    for name in sorted(set(documented) - set(methods)):
        failures.append("armd-api(7) documents method %s, armd's method table has no such method" %
                        name)
    for name in sorted(set(methods) & set(documented)):
        states, restricted = states_of(name, documented[name], failures)
        if states is None:
            continue
        if name in judged and states != judged[name]:
            failures.append("method %s: the page says states %s, armd's state machine accepts it "
                            "in %s" % (name, sorted(states), sorted(judged[name])))
        if restricted != methods[name]:
            failures.append("method %s: a restricted connection %s call it, the page says it %s" %
                            (name, "may" if methods[name] else "may not",
                             "may" if restricted else "may not"))
    shown = subs.get("NOTIFICATIONS", {})
    for name in sorted(set(notes) - set(shown)):
        failures.append("armd sends notification %s, armd-api(7) does not document it" % name)
    for name in sorted(set(shown) - set(notes)):
        failures.append("armd-api(7) documents notification %s, armd sends none of that name" %
                        name)
    codes = error_codes(args[2])
    terms = set()
    for line in tops.get("ERRORS", "").splitlines():
        if line.startswith("**"):
            terms |= set(re.findall(r"\*\*([a-z_]+)\*\*", line))
    for code in sorted(codes - terms):
        failures.append("armd answers error code %s, the ERRORS section of armd-api(7) does not "
                        "list it" % code)
    for code in sorted(terms - codes):
        failures.append("armd-api(7) lists error code %s, armd never answers it" % code)
    if len(args) == 4:
        text = rendered_text(args[3])
        if text is not None:
            # Markdown left over: emphasis, code, a link (man shows its target in angle
            # brackets), a heading, the version placeholder; the page itself uses none of these
            for mark in ("*", "`", "](", "\u27e8", "##", "@VERSION@"):
                for line in text.splitlines():
                    if mark in line:
                        failures.append("%s renders with literal %r: %s" %
                                        (args[3], mark, line.strip()))
                        break
            if "ARMD-API(7)" not in text:
                failures.append("%s: the rendered page has no ARMD-API(7) header" % args[3])
    for f in failures:
        print("FAIL:", f)
    print("%d methods, %d notifications, %d error codes checked; %d failures" %
          (len(methods), len(notes), len(codes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
