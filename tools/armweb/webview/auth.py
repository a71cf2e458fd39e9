"""auth.py — the credential of armweb's control (--control): a random token written to a file
beside armd's socket (or --token-file), mode 0640, group armd, so that exactly the users who may
use armd's socket can read it; every command must carry it as `Authorization: Bearer TOKEN`.

The file is written atomically and without following symbolic links: a new file of a random
name (O_CREAT | O_EXCL | O_NOFOLLOW), its group and mode set through its descriptor, then
renamed over the final name; at exit it is removed if it is still the one written.
"""
import grp
import hmac
import logging
import os
import secrets
import stat

log = logging.getLogger("armweb")

TOKEN_NAME = "armweb.token"
DEFAULT_GROUP = "armd"


class TokenError(Exception):
    """The token file could not be written; the message names the file and why."""


def default_token_file(socket_path):
    """armweb.token in the directory of armd's socket (the instance's runtime directory)."""
    return os.path.join(os.path.dirname(os.path.abspath(socket_path)), TOKEN_NAME)


def token_gid(group):
    """The group id for the token file: GROUP's, else (GROUP missing) the process's own with a
    warning, since then only armweb's user can read the token."""
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        log.warning("group %s does not exist: the control token is readable by armweb's own "
                    "group (gid %d) only", group, os.getegid())
        return os.getegid()


class TokenFile:
    """The token and its file; a context manager that removes the file at exit."""

    def __init__(self, path, group=DEFAULT_GROUP):
        self.path = os.path.abspath(path)
        self.group = group
        self.token = secrets.token_urlsafe(32)
        self.ident = None  # (st_dev, st_ino) of the file written

    def write(self):
        """Writes the token file; TokenError when the directory is unusable or unwritable."""
        directory, name = os.path.split(self.path)
        try:
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise TokenError("%s: %s" % (directory, e.strerror))
        try:
            st = os.fstat(dfd)
            if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
                raise TokenError("%s: writable by every user (and not sticky): anyone could "
                                 "replace the token file; use --token-file elsewhere" % directory)
            self._write_in(dfd, name)
        finally:
            os.close(dfd)

    def _write_in(self, dfd, name):
        gid = token_gid(self.group)
        tmp = ".%s.%s" % (name, secrets.token_hex(8))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW |
                         os.O_CLOEXEC, 0o600, dir_fd=dfd)
        except OSError as e:
            raise TokenError("%s: cannot create %s there: %s" %
                             (os.path.dirname(self.path), tmp, e.strerror))
        try:
            try:
                if os.fstat(fd).st_gid != gid:
                    os.fchown(fd, -1, gid)
            except OSError as e:
                log.warning("%s: cannot give it group %s: %s; only armweb's own user can read "
                            "it", self.path, self.group, e.strerror)
            os.fchmod(fd, 0o640)  # after the chown, and whatever the umask
            os.write(fd, (self.token + "\n").encode())
            os.fsync(fd)
            st = os.fstat(fd)
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except OSError as e:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise TokenError("%s: %s" % (self.path, e.strerror))
        finally:
            os.close(fd)
        self.ident = (st.st_dev, st.st_ino)

    def remove(self):
        """Removes the file if it is still the one written (another armweb may have replaced
        it since)."""
        if self.ident is None:
            return
        try:
            st = os.lstat(self.path)
            if (st.st_dev, st.st_ino) == self.ident:
                os.unlink(self.path)
        except OSError:
            pass
        self.ident = None

    def __enter__(self):
        self.write()
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def check(self, authorization):
        """Why the Authorization header value does not carry the token (a sentence), or None
        when it does. Compared in constant time."""
        if not authorization:
            return ("this command needs armweb's control token, as the header "
                    "`Authorization: Bearer TOKEN`; the token is in %s (readable by root and "
                    "group %s)" % (self.path, self.group))
        scheme, _, given = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return "the Authorization header is not `Bearer TOKEN`"
        if not hmac.compare_digest(given.strip().encode(), self.token.encode()):
            return "the control token is wrong (armweb writes a new one at each start, to %s)" \
                % self.path
        return None
