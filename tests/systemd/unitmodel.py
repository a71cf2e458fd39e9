"""unitmodel.py — reads armd's generated systemd units and models what systemd does with their
runtime directories, for the tests in tests/systemd. Python 3 standard library only.

The model follows systemd.exec(5), RuntimeDirectory= and RuntimeDirectoryPreserve=:
- at start, every listed directory is created below /run "including their parents";
- at stop, "the innermost subdirectories are removed" — exactly the listed paths, with all they
  contain, never the parents systemd created for them (the man page's example: with
  RuntimeDirectory=foo/bar baz, /run/foo/bar and /run/baz are removed, /run/foo is not);
- unless RuntimeDirectoryPreserve=yes ("not removed when the service is stopped"); "restart"
  keeps them across a restart only, so a stop still removes them; "no" is the default.
"""
import os
import re
import shlex


class UnitError(Exception):
    pass


def parse(text, origin):
    """[(section, key, value)] of a unit file in order. Comments (# ;), blank lines; a line
    ending in a backslash continues on the next (systemd.syntax(7))."""
    out = []
    section = None
    pending = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise UnitError("%s:%d: malformed section header %r" % (origin, n, line))
            section = line[1:-1]
            continue
        if "=" not in line or section is None:
            raise UnitError("%s:%d: not an assignment in a section: %r" % (origin, n, line))
        key, value = line.split("=", 1)
        out.append((section, key.strip(), value.strip()))
    return out


def expand(value, instance, origin):
    """Resolves the specifiers these units use: %i and %I (the instance name) and %%."""
    def one(m):
        c = m.group(1)
        if c == "%":
            return "%"
        if c in "iI":
            if instance is None:
                raise UnitError("%s: %%%s in a unit that is not an instance" % (origin, c))
            return instance
        raise UnitError("%s: specifier %%%s not modelled by unitmodel.py" % (origin, c))
    return re.sub(r"%(.)", one, value)


def inside(path, directory):
    """path is directory or lies below it."""
    path, directory = os.path.normpath(path), os.path.normpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


class Unit:
    """One loaded unit: armd.service, or armd@.service loaded as armd@INSTANCE.service."""

    def __init__(self, text, file_name, instance=None):
        self.file = file_name
        self.instance = instance
        self.name = file_name.replace("@.", "@%s." % instance) if instance else file_name
        self.entries = [(s, k, expand(v, instance, self.name))
                        for s, k, v in parse(text, file_name)]

    def values(self, key, section="Service"):
        """Every assignment of key, in order; an empty assignment resets the list."""
        out = []
        for s, k, v in self.entries:
            if s == section and k == key:
                out = [] if v == "" else out + [v]
        return out

    def value(self, key, section="Service", default=None):
        v = self.values(key, section)
        return v[-1] if v else default

    def argv(self, key):
        """The command line of the one Exec*= line key, without systemd's prefixes
        (-, @, +, !, :)."""
        lines = self.values(key)
        if len(lines) != 1:
            raise UnitError("%s: %d %s= lines, expected 1" % (self.name, len(lines), key))
        return shlex.split(lines[0].lstrip("-@+!:"))

    def option(self, key, option):
        """The argument after option on the command line of key (e.g. --socket)."""
        argv = self.argv(key)
        if option not in argv or argv.index(option) + 1 >= len(argv):
            raise UnitError("%s: %s= has no %s argument: %s" % (self.name, key, option, argv))
        return argv[argv.index(option) + 1]

    @property
    def runtime_dirs(self):
        """Absolute paths of the RuntimeDirectory= entries (below /run for system units)."""
        out = []
        for v in self.values("RuntimeDirectory"):
            for d in v.split():
                if ":" in d or d.startswith("/") or ".." in d.split("/"):
                    raise UnitError("%s: RuntimeDirectory entry %r not modelled" % (self.name, d))
                out.append(os.path.join("/run", d))
        return out

    @property
    def preserve(self):
        v = self.value("RuntimeDirectoryPreserve", default="no")
        if v not in ("no", "yes", "restart"):
            raise UnitError("%s: RuntimeDirectoryPreserve=%s" % (self.name, v))
        return v

    def removed_on_stop(self):
        """What systemd removes (recursively) when this unit stops: the listed runtime
        directories themselves, unless RuntimeDirectoryPreserve=yes."""
        return [] if self.preserve == "yes" else self.runtime_dirs

    @property
    def socket(self):
        return self.option("ExecStart", "--socket")

    @property
    def config(self):
        return self.option("ExecStart", "-c")


def load(unit_dir, instances):
    """armd.service and armd@NAME.service for every NAME in instances, from unit_dir."""
    with open(os.path.join(unit_dir, "armd.service")) as f:
        single = f.read()
    with open(os.path.join(unit_dir, "armd@.service")) as f:
        template = f.read()
    return [Unit(single, "armd.service")] + [Unit(template, "armd@.service", i) for i in instances]


def conflicts(units):
    """Every way in which units step on each other's runtime files, as sentences; [] when none:
    two units with one socket, an instance directory inside another's, a socket outside its own
    unit's runtime directories (systemd would neither create its directory nor leave it writable
    under ProtectSystem=strict), and anything one unit's stop removes that another unit owns
    (its socket or one of its runtime directories)."""
    out = []
    for u in units:
        if not any(inside(u.socket, d) for d in u.runtime_dirs):
            out.append("%s: socket %s is outside its runtime directories %s" %
                       (u.name, u.socket, u.runtime_dirs))
    for k, u in enumerate(units):
        for v in units[k + 1:]:
            if os.path.normpath(u.socket) == os.path.normpath(v.socket):
                out.append("%s and %s share the socket %s" % (u.name, v.name, u.socket))
            if u.instance is not None and v.instance is not None:
                for a in u.runtime_dirs:
                    for b in v.runtime_dirs:
                        if inside(a, b) or inside(b, a):
                            out.append("%s's runtime directory %s and %s's %s overlap" %
                                       (u.name, a, v.name, b))
    for u in units:
        for gone in u.removed_on_stop():
            for v in units:
                if v is u:
                    continue
                for owned in [v.socket] + v.runtime_dirs:
                    if inside(owned, gone):
                        out.append("stopping %s removes %s and with it %s of %s" %
                                   (u.name, gone, owned, v.name))
    return out
