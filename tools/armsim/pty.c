/*
 * pty.c — pseudo-terminal setup (posix_openpt, grantpt, unlockpt, raw mode) and the symlink.
 */
#include "tools/armsim/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

/* Replaces link_path by a symlink to target; an existing non-symlink is never touched. */
static int make_link(const char *link_path, const char *target, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(link_path, &st) == 0) {
        if (!S_ISLNK(st.st_mode)) {
            snprintf(err, errlen, "--link %s: exists and is not a symlink; not replacing it",
                     link_path);
            return -1;
        }
        if (unlink(link_path) != 0) {
            snprintf(err, errlen, "--link %s: cannot remove the stale symlink: %s", link_path,
                     strerror(errno));
            return -1;
        }
    }
    if (symlink(target, link_path) != 0) {
        snprintf(err, errlen, "--link %s: cannot create the symlink: %s", link_path,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int pty_open(armsim_pty *p, const char *link_path, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->master = p->slave_keep = -1;
    p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (p->master < 0 || grantpt(p->master) != 0 || unlockpt(p->master) != 0) {
        snprintf(err, errlen, "cannot open a pseudo-terminal: %s", strerror(errno));
        pty_close(p);
        return -1;
    }
    if (ptsname_r(p->master, p->slave_name, sizeof p->slave_name) != 0) {
        snprintf(err, errlen, "ptsname: %s", strerror(errno));
        pty_close(p);
        return -1;
    }
    p->slave_keep = open(p->slave_name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (p->slave_keep < 0) {
        snprintf(err, errlen, "cannot open %s: %s", p->slave_name, strerror(errno));
        pty_close(p);
        return -1;
    }
    struct termios t;
    if (tcgetattr(p->slave_keep, &t) == 0) {
        cfmakeraw(&t);
        tcsetattr(p->slave_keep, TCSANOW, &t);
    }
    int fl = fcntl(p->master, F_GETFL);
    fcntl(p->master, F_SETFL, fl | O_NONBLOCK);
    if (make_link(link_path, p->slave_name, err, errlen) != 0) {
        pty_close(p);
        return -1;
    }
    snprintf(p->link, sizeof p->link, "%s", link_path);
    return 0;
}

int pty_write_all(armsim_pty *p, const uint8_t *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(p->master, buf + done, n - done);
        if (w > 0) {
            done += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd pfd = {.fd = p->master, .events = POLLOUT};
            if (poll(&pfd, 1, 100) < 0 && errno != EINTR) return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

void pty_close(armsim_pty *p)
{
    if (p->link[0]) {
        char target[sizeof p->slave_name];
        ssize_t n = readlink(p->link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            if (!strcmp(target, p->slave_name)) unlink(p->link);
        }
        p->link[0] = '\0';
    }
    if (p->slave_keep >= 0) close(p->slave_keep);
    if (p->master >= 0) close(p->master);
    p->slave_keep = p->master = -1;
}
