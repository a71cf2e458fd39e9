/*
 * client.c — armctl's connection to armd (see client.h).
 */
#include "tools/armctl/client.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define QUEUE_MAX 100000 /* notifications kept while waiting for a reply */

struct armctl_conn {
    int fd; /* -1 until the first call connects */
    char *path;
    char connect_error[768]; /* why connecting failed (then every call fails with it) */
    char *buf;
    size_t len, cap;
    long next_id;
    json_t *queue; /* notifications received while waiting for a reply */
};

armctl_conn *conn_new(const char *path)
{
    armctl_conn *c = calloc(1, sizeof *c);
    c->fd = -1;
    c->path = strdup(path);
    c->queue = json_array();
    return c;
}

void conn_permission_text(const char *path, const char *group, char *out, size_t out_len)
{
    snprintf(out, out_len,
             "permission denied on %s: your user must be in the group '%s' (sudo usermod -aG "
             "%s $USER, then log in again)",
             path, group, group);
}

/* The name of the group that owns path, else that of its directory (which a user outside the
 * group may not search), else "armd" (the package's group). */
static void socket_group(const char *path, char *out, size_t out_len)
{
    struct stat st;
    char dir[sizeof((struct sockaddr_un *)0)->sun_path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    bool known = stat(path, &st) == 0 || (slash && stat(dir, &st) == 0);
    struct group *g = known ? getgrgid(st.st_gid) : NULL;
    snprintf(out, out_len, "%s", g ? g->gr_name : "armd");
}

/* Connects c to its socket once; 0, or -1 with the reason in c->connect_error. */
static int connect_once(armctl_conn *c)
{
    if (c->fd >= 0) return 0;
    if (c->connect_error[0]) return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(c->path) >= sizeof a.sun_path) {
        snprintf(c->connect_error, sizeof c->connect_error, "socket path too long: %s", c->path);
        return -1;
    }
    snprintf(a.sun_path, sizeof a.sun_path, "%s", c->path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        c->fd = fd;
        return 0;
    }
    int e = errno;
    if (fd >= 0) close(fd);
    if (e == EACCES || e == EPERM) {
        char group[256];
        socket_group(c->path, group, sizeof group);
        conn_permission_text(c->path, group, c->connect_error, sizeof c->connect_error);
    } else {
        snprintf(c->connect_error, sizeof c->connect_error, "cannot connect to armd at %s: %s%s",
                 c->path, strerror(e),
                 e == ENOENT || e == ECONNREFUSED
                     ? " (is armd running? use -s SOCKET, --arm NAME or $ARMD_SOCKET)"
                     : "");
    }
    return -1;
}

const char *conn_error(const armctl_conn *c)
{
    return c->fd < 0 && c->connect_error[0] ? c->connect_error : NULL;
}

void conn_close(armctl_conn *c)
{
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    free(c->path);
    free(c->buf);
    json_decref(c->queue);
    free(c);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads one line (a parsed JSON value) waiting at most timeout_ms; NULL on timeout (*closed
 * = 0) or end of connection / unparsable data (*closed = 1). */
static json_t *read_message(armctl_conn *c, int timeout_ms, int *closed)
{
    long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    *closed = 0;
    for (;;) {
        char *nl = c->buf ? memchr(c->buf, '\n', c->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            json_t *v = json_loadb(c->buf, n, 0, NULL);
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            if (!v) {
                *closed = 1;
                return NULL;
            }
            return v;
        }
        int wait = -1;
        if (deadline >= 0) {
            long long left = deadline - now_ms();
            if (left <= 0) return NULL;
            wait = (int)left;
        }
        struct pollfd p = {c->fd, POLLIN, 0};
        int r = poll(&p, 1, wait);
        if (r < 0 && errno == EINTR) return NULL;
        if (r <= 0) continue;
        if (c->cap - c->len < 65536) {
            c->cap = c->cap ? c->cap * 2 : 131072;
            c->buf = realloc(c->buf, c->cap);
        }
        ssize_t k = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (k <= 0) {
            if (k < 0 && errno == EINTR) return NULL;
            *closed = 1;
            return NULL;
        }
        c->len += (size_t)k;
    }
}

json_t *conn_call(armctl_conn *c, const char *method, json_t *params, char *err, size_t err_len)
{
    if (connect_once(c)) {
        json_decref(params);
        snprintf(err, err_len, "%s", c->connect_error);
        return NULL;
    }
    long id = ++c->next_id;
    json_t *req = json_pack("{s:I, s:s}", "id", (json_int_t)id, "method", method);
    if (params) json_object_set_new(req, "params", params);
    char *text = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    size_t n = strlen(text), off = 0;
    text = realloc(text, n + 1);
    text[n++] = '\n';
    while (off < n) {
        ssize_t w = send(c->fd, text + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            snprintf(err, err_len, "connection to armd lost: %s", strerror(errno));
            free(text);
            return NULL;
        }
        off += (size_t)w;
    }
    free(text);
    for (;;) {
        int closed;
        json_t *m = read_message(c, -1, &closed);
        if (!m) {
            if (!closed) continue;
            snprintf(err, err_len, "connection to armd closed before the reply to '%s'", method);
            return NULL;
        }
        json_t *mid = json_object_get(m, "id");
        if (!mid) {
            if (json_array_size(c->queue) < QUEUE_MAX) json_array_append(c->queue, m);
            json_decref(m);
            continue;
        }
        if (json_is_integer(mid) && json_integer_value(mid) == id) {
            json_t *res = json_object_get(m, "result");
            if (res) {
                json_incref(res);
                json_decref(m);
                return res;
            }
        }
        json_t *e = json_object_get(m, "error");
        if (e) {
            snprintf(err, err_len, "%s: %s", json_string_value(json_object_get(e, "code")),
                     json_string_value(json_object_get(e, "message")));
            json_decref(m);
            return NULL;
        }
        json_decref(m);
    }
}

json_t *conn_next(armctl_conn *c, int timeout_ms, int *closed)
{
    *closed = 0;
    if (json_array_size(c->queue) > 0) {
        json_t *m = json_array_get(c->queue, 0);
        json_incref(m);
        json_array_remove(c->queue, 0);
        return m;
    }
    if (c->fd < 0) {
        *closed = 1;
        return NULL;
    }
    long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    for (;;) {
        int left = -1;
        if (deadline >= 0) {
            long long l = deadline - now_ms();
            if (l <= 0) return NULL;
            left = (int)l;
        }
        json_t *m = read_message(c, left, closed);
        if (!m) return NULL;
        if (!json_object_get(m, "id")) return m;
        json_decref(m);
    }
}
