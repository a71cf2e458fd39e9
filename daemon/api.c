/*
 * api.c — the socket API's transport, the bottom of its stack: listening socket, accepting
 * clients (and the restricted connections beyond max_clients), reading, bounded non-blocking
 * output and dropping slow, idle or vanished clients (see api.h). Every deadline is measured on
 * CLOCK_MONOTONIC (api_mono_now), never on libev's ev_now(), which follows the wall clock. Main
 * thread. It calls nothing above it by name: new input, an emptied output queue and the periodic
 * drain go to the hooks api_open installed (which requests run when is api_sched.c's job, the drain
 * telemetry.c's).
 */
#include "daemon/api.h"

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

#include "daemon/api_internal.h"
#include "daemon/log.h"

#define API_READ_CHUNK 65536
#define API_DRAIN_S    0.01 /* the periodic hook's period (answers, telemetry, events) [s] */

static void client_flush(api_client *cl);

double api_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Frees the clients that were dropped since the last call (never inside their callbacks, and
 * never while the control thread still owes one of them an answer: it points at them). With
 * all, every client (the server closes; nothing waits any more). */
static void api_reap(api_server *s, bool all)
{
    api_client **pp = &s->clients;
    while (*pp) {
        api_client *cl = *pp;
        if (all || (cl->dead && !cl->waiting)) {
            *pp = cl->next;
            free(cl->in);
            free(cl->out);
            free(cl);
        } else {
            pp = &cl->next;
        }
    }
}

void api_client_drop(api_client *cl, const char *why)
{
    if (cl->dead) return;
    api_server *s = cl->srv;
    ev_io_stop(s->loop, &cl->rio);
    ev_io_stop(s->loop, &cl->wio);
    close(cl->fd);
    cl->fd = -1;
    cl->dead = true;
    s->hooks.dropped(cl); /* the layers above forget it (its subscription) */
    if (cl->restricted)
        s->n_restricted--;
    else
        s->n_clients--;
    if (why) log_info("api: client %u closed: %s", cl->id, why);
}

/* Closes the client if it is closing and everything queued has been written. */
static void client_close_if_done(api_client *cl)
{
    if (!cl->dead && cl->closing && cl->out_off == cl->out_len) api_client_drop(cl, NULL);
}

/* Writes as much queued output as the socket takes without blocking (watching for room when
 * some is left); true when all of it went. */
static bool client_write(api_client *cl)
{
    while (!cl->dead && cl->out_off < cl->out_len) {
        ssize_t w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            cl->out_off += (size_t)w;
            cl->out_progress = api_mono_now();
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!ev_is_active(&cl->wio)) ev_io_start(cl->srv->loop, &cl->wio);
            return false;
        } else {
            api_client_drop(cl, "write failed (client gone)");
            return false;
        }
    }
    return !cl->dead;
}

/* Writes the queued output; once all of it went, a closing client is closed and the flushed
 * hook runs (a client held back for its unsent output gets its requests run again). */
static void client_flush(api_client *cl)
{
    if (!client_write(cl)) return;
    cl->out_off = cl->out_len = 0;
    if (ev_is_active(&cl->wio)) ev_io_stop(cl->srv->loop, &cl->wio);
    client_close_if_done(cl);
    cl->srv->hooks.flushed(cl->srv);
}

void api_client_send(api_client *cl, const char *data, size_t len)
{
    if (cl->dead) return;
    size_t pending = cl->out_len - cl->out_off;
    if (pending + len > API_MAX_OUTPUT) {
        char why[96];
        snprintf(why, sizeof why, "not reading (%zu bytes unsent)", pending);
        api_client_drop(cl, why);
        return;
    }
    if (pending == 0) cl->out_progress = api_mono_now(); /* the stall clock starts */
    if (cl->out_off > 0 && cl->out_len + len > cl->out_cap) {
        memmove(cl->out, cl->out + cl->out_off, pending);
        cl->out_off = 0;
        cl->out_len = pending;
    }
    if (cl->out_len + len > cl->out_cap) {
        size_t cap = cl->out_cap ? cl->out_cap : 4096;
        while (cap < cl->out_len + len) cap *= 2;
        char *p = realloc(cl->out, cap);
        if (!p) {
            api_client_drop(cl, "out of memory");
            return;
        }
        cl->out = p;
        cl->out_cap = cap;
    }
    memcpy(cl->out + cl->out_len, data, len);
    cl->out_len += len;
    if (!ev_is_active(&cl->wio)) client_flush(cl);
}

void api_client_send_json(api_client *cl, json_t *msg)
{
    size_t n;
    char *line = api_json_line(msg, &n);
    if (!line) return;
    api_client_send(cl, line, n);
    free(line);
}

void api_client_close_when_flushed(api_client *cl)
{
    cl->closing = true;
    ev_io_stop(cl->srv->loop, &cl->rio);
    client_close_if_done(cl);
}

void api_client_refuse(api_client *cl, const char *code, const char *message)
{
    json_t *e = json_pack("{s:n, s:{s:s, s:s}}", "id", "error", "code", code, "message", message);
    if (e) {
        api_client_send_json(cl, e);
        json_decref(e);
    }
    api_client_close_when_flushed(cl);
}

void api_client_resume_reading(api_client *cl)
{
    if (!cl->dead && !cl->eof && !cl->closing && !ev_is_active(&cl->rio))
        ev_io_start(cl->srv->loop, &cl->rio);
}

/* Reads once what the client sent (at most API_READ_CHUNK, API_RESTRICTED_LINE on a restricted
 * connection) into its input; at end of file a last unterminated line counts as a line. Only
 * a complete line restarts the idle clock (bytes that end no request keep no slot). */
static void client_read(api_client *cl)
{
    size_t chunk = cl->restricted ? API_RESTRICTED_LINE : API_READ_CHUNK;
    if (cl->in_cap - cl->in_len < chunk + 1) {
        size_t cap = cl->in_cap ? cl->in_cap * 2 : 2 * chunk;
        while (cap - cl->in_len < chunk + 1) cap *= 2;
        char *p = realloc(cl->in, cap);
        if (!p) {
            api_client_drop(cl, "out of memory");
            return;
        }
        cl->in = p;
        cl->in_cap = cap;
    }
    ssize_t r = recv(cl->fd, cl->in + cl->in_len, chunk, MSG_DONTWAIT);
    if (r > 0) {
        if (memchr(cl->in + cl->in_len, '\n', (size_t)r)) cl->last_input = api_mono_now();
        cl->in_len += (size_t)r;
    } else if (r == 0) {
        cl->eof = true;
        ev_io_stop(cl->srv->loop, &cl->rio);
        if (cl->in_len > 0 && cl->in[cl->in_len - 1] != '\n') cl->in[cl->in_len++] = '\n';
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        api_client_drop(cl, strerror(errno));
    }
}

/* The client sent something: read it and hand it to the input hook (the scheduler). */
static void client_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    api_client *cl = w->data;
    api_server *s = cl->srv;
    client_read(cl);
    if (!cl->dead) s->hooks.input(cl);
    api_reap(s, false);
}

static void client_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    api_client *cl = w->data;
    client_flush(cl);
    api_reap(cl->srv, false);
}

/* Drops the clients whose peer has already closed both directions (POLLHUP) but whose end of
 * file the loop has not read yet, so that connections that are gone never take the place of
 * a new one. A half-closed peer (shutdown for writing, still reading replies) is kept. */
static void drop_hung_up(api_server *s)
{
    for (api_client *cl = s->clients; cl; cl = cl->next) {
        if (cl->dead) continue;
        struct pollfd p = {.fd = cl->fd, .events = 0};
        if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)))
            api_client_drop(cl, "peer gone");
    }
}

/* Makes room for one more restricted connection: the oldest one whose request has not run
 * goes (the oldest of all when every one is waiting for its answer), but first what it has
 * already sent is read and served, so that a flood of new connections cannot push out an
 * estop that waits in a socket buffer (its command runs; its reply may be lost). */
static void evict_restricted(api_server *s)
{
    api_client *victim = NULL;
    for (api_client *cl = s->clients; cl; cl = cl->next) {
        if (cl->dead || !cl->restricted) continue;
        bool better = !victim || (victim->served && !cl->served) ||
                      (victim->served == cl->served && cl->id < victim->id);
        if (better) victim = cl;
    }
    if (!victim) return;
    if (!victim->served && !victim->eof && !victim->closing) {
        client_read(victim);
        if (!victim->dead) s->hooks.input(victim);
    }
    char why[128];
    snprintf(why, sizeof why,
             "evicted (%d restricted connections beyond max_clients; the oldest goes)",
             API_RESTRICTED_MAX);
    if (!victim->dead) api_client_drop(victim, why);
}

/* Accepts every pending connection. Up to max_clients get the whole API; every one beyond is
 * restricted: its first request line is served if it is estop, status or disable, then it is
 * closed (see API_RESTRICTED_*). Whatever other clients hold, a new connection's estop runs. */
static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    api_server *s = w->data;
    for (;;) {
        int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                log_warn("api: accept on %s: %s", s->path, strerror(errno));
            break;
        }
        if (s->n_clients >= s->max_clients) drop_hung_up(s); /* before counting this one */
        bool restricted = s->n_clients >= s->max_clients;
        if (restricted && s->n_restricted >= API_RESTRICTED_MAX) evict_restricted(s);
        api_client *cl = calloc(1, sizeof *cl);
        if (!cl) {
            close(fd);
            continue;
        }
        cl->srv = s;
        cl->fd = fd;
        cl->id = ++s->next_client_id;
        ev_io_init(&cl->rio, client_read_cb, fd, EV_READ);
        ev_io_init(&cl->wio, client_write_cb, fd, EV_WRITE);
        cl->rio.data = cl->wio.data = cl;
        cl->connected = cl->last_input = cl->out_progress = api_mono_now();
        cl->restricted = restricted;
        cl->next = s->clients;
        s->clients = cl;
        if (restricted) {
            s->n_restricted++;
            log_debug("api: client %u connected, restricted (max_clients = %d reached): one "
                      "request, estop, status or disable",
                      cl->id, s->max_clients);
        } else {
            s->n_clients++;
            log_debug("api: client %u connected", cl->id);
        }
        ev_io_start(loop, &cl->rio);
    }
    api_reap(s, false);
}

/* Drops the clients whose queued output has not moved for stall_timeout (they stopped
 * reading), closes the restricted ones that sent no complete line within API_RESTRICTED_S and
 * those that neither sent a request nor subscribed for idle_timeout (telling them why first). */
static void drop_stalled_and_idle(api_server *s)
{
    double now = api_mono_now();
    for (api_client *cl = s->clients; cl; cl = cl->next) {
        if (cl->dead) continue;
        size_t pending = cl->out_len - cl->out_off;
        if (pending > 0 && now - cl->out_progress > s->stall_timeout) {
            char why[128];
            snprintf(why, sizeof why, "not reading (%zu bytes unsent for %.1f s)", pending,
                     now - cl->out_progress);
            api_client_drop(cl, why);
        } else if (cl->restricted && !cl->served && !cl->closing &&
                   now - cl->connected > API_RESTRICTED_S) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "no complete request line within %.0f s on a connection beyond max_clients "
                     "(%d); closing",
                     API_RESTRICTED_S, s->max_clients);
            log_info("api: client %u: %s", cl->id, msg);
            api_client_refuse(cl, "idle_timeout", msg);
        } else if (!cl->restricted && !cl->subscribed && !cl->closing && !cl->waiting &&
                   now - cl->last_input > s->idle_timeout) {
            char msg[128];
            snprintf(msg, sizeof msg, "no request for %.0f s (idle_timeout); closing",
                     now - cl->last_input);
            log_info("api: client %u: %s", cl->id, msg);
            api_client_refuse(cl, "idle_timeout", msg);
        }
    }
}

/* Every API_DRAIN_S: the periodic hook (answers that came in without a wake-up, telemetry and
 * events out), then stalled and idle clients dropped. */
static void drain_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    api_server *s = w->data;
    s->hooks.periodic(s);
    drop_stalled_and_idle(s);
    api_reap(s, false);
}

bool api_socket_in_use(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) return false;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    int r = connect(fd, (struct sockaddr *)&a, sizeof a);
    close(fd);
    return r == 0;
}

/* Creates the socket's directory (mode 0755) when it is missing and its parent exists: the
 * default /run/armd/NAME/armd.sock of an armd started by hand (under systemd the unit's
 * RuntimeDirectory made it). Only that one level, never a whole tree. */
static int make_socket_dir(const char *path, char *err, size_t err_len)
{
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = 0;
    struct stat st;
    if (stat(dir, &st) == 0) return 0;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "cannot create the socket's directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (chmod(dir, 0755) != 0) log_warn("api: chmod 0755 %s: %s", dir, strerror(errno));
    return 0;
}

/* Removes a stale socket file at path; fails if it is not a socket or a server answers. */
static int remove_stale_socket(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, err_len, "%s exists and is not a socket", path);
        return -1;
    }
    if (api_socket_in_use(path)) {
        snprintf(err, err_len, "%s: another armd is already listening there", path);
        return -1;
    }
    if (unlink(path) != 0) {
        snprintf(err, err_len, "cannot remove stale socket %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

api_server *api_transport_open(struct ev_loop *loop, const api_options *opt, const api_hooks *hooks,
                               char *err, size_t err_len)
{
    if (strlen(opt->path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        snprintf(err, err_len, "socket path too long (max 107 bytes): %s", opt->path);
        return NULL;
    }
    if (make_socket_dir(opt->path, err, err_len) != 0) return NULL;
    if (remove_stale_socket(opt->path, err, err_len) != 0) return NULL;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, err_len, "socket: %s", strerror(errno));
        return NULL;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", opt->path);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        snprintf(err, err_len, "cannot create socket %s: %s", opt->path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (chmod(opt->path, opt->mode & 07777) != 0)
        log_warn("api: chmod %04o %s: %s", opt->mode, opt->path, strerror(errno));
    if (opt->group && opt->group[0]) {
        struct group *g = getgrnam(opt->group);
        if (!g)
            log_warn("api: socket group '%s' does not exist; %s keeps its default group",
                     opt->group, opt->path);
        else if (chown(opt->path, (uid_t)-1, g->gr_gid) != 0)
            log_warn("api: chown %s to group %s: %s", opt->path, opt->group, strerror(errno));
    }
    if (listen(fd, 64) != 0) {
        snprintf(err, err_len, "listen on %s: %s", opt->path, strerror(errno));
        close(fd);
        unlink(opt->path);
        return NULL;
    }
    api_server *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        unlink(opt->path);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    s->loop = loop;
    s->fd = fd;
    s->hooks = *hooks;
    snprintf(s->path, sizeof s->path, "%s", opt->path);
    s->max_clients = opt->max_clients > 0 ? opt->max_clients : 16;
    s->stall_timeout = opt->stall_timeout > 0 ? opt->stall_timeout : 2;
    s->idle_timeout = opt->idle_timeout > 0 ? opt->idle_timeout : 300;
    ev_io_init(&s->accept_io, accept_cb, fd, EV_READ);
    s->accept_io.data = s;
    ev_io_start(loop, &s->accept_io);
    ev_timer_init(&s->drain, drain_cb, API_DRAIN_S, API_DRAIN_S);
    s->drain.data = s;
    ev_timer_start(loop, &s->drain);
    return s;
}

void api_transport_close(api_server *s)
{
    for (api_client *cl = s->clients; cl;
         cl = cl->next) { /* what fits now; only the dropped hook */
        client_write(cl);
        api_client_drop(cl, NULL);
    }
    api_reap(s, true);
    ev_io_stop(s->loop, &s->accept_io);
    ev_timer_stop(s->loop, &s->drain);
    if (s->fd >= 0) close(s->fd);
    unlink(s->path);
    free(s);
}

int api_client_count(const api_server *s)
{
    return s->n_clients + s->n_restricted;
}
