/*
 * fuzz_api.c — socket API requests, each through dispatch to the reply, against the fake
 * control thread (fake_ctl.c), which abort()s if the API hands it anything outside the
 * documented ranges. The input's first byte picks the connection's kind (bit 0: the operator
 * slot) and whether the arm is enabled; the rest is split into request lines. Asserts: no
 * crash, leak or hang; every reply line is a JSON object; a line that is not a JSON object
 * gets exactly one error (id null), an object with an "id" exactly one reply carrying it,
 * one without none; every subscription ends with a decimation >= 1.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon/api_internal.h"
#include "daemon/payload_est.h"
#include "tests/daemon/fake_ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LINE_MAX_FUZZ (64 * 1024)

static struct ev_loop *loop;
static api_server *srv;
static int peer = -1;    /* the test's end of the connection */
static api_client *conn; /* the server's end */
static char path[108];

static int fake_reload(void *ctx, const ctl_reply_to *to, ctl_error *err)
{
    (void)ctx, (void)err;
    ctl_result res = {0};
    snprintf(res.changed, sizeof res.changed, "[joint a] kp");
    return fake_answer_later(&fake, to, 0, NULL, NULL, &res);
}

/* A fresh connection (the previous one may have been dropped, e.g. for too much output). */
static void connect_peer(void)
{
    if (peer >= 0) close(peer);
    peer = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (peer < 0 || connect(peer, (struct sockaddr *)&a, sizeof a) != 0) abort();
    conn = NULL;
    for (int i = 0; i < 100 && !conn; i++) {
        ev_run(loop, EVRUN_NOWAIT);
        for (api_client *cl = srv->clients; cl; cl = cl->next)
            if (!cl->dead) conn = cl;
    }
    if (!conn) abort();
}

static void setup(void)
{
    fake_init(3, 1000);
    snprintf(path, sizeof path, "/tmp/armd-fuzz-api-%d.sock", (int)getpid());
    loop = ev_loop_new(0);
    api_options o = {
        .path = path, .mode = 0600, .max_clients = 4, .version = "fuzz", .reload = fake_reload};
    char err[256];
    srv = api_open(loop, &fake, &o, err, sizeof err);
    if (!srv) abort();
    connect_peer();
}

/* Reads every complete reply line waiting at the peer; checks each is a JSON object and
 * counts those with an "id" (ids[] collects up to 4 of them, new references). */
static int read_replies(json_t **ids, int max_ids)
{
    static char buf[1 << 20];
    static size_t len;
    int n = 0;
    for (;;) {
        ssize_t k = recv(peer, buf + len, sizeof buf - len, MSG_DONTWAIT);
        if (k <= 0) break;
        len += (size_t)k;
        if (len == sizeof buf) abort(); /* a reply longer than 1 MiB */
    }
    size_t start = 0;
    for (;;) {
        char *nl = memchr(buf + start, '\n', len - start);
        if (!nl) break;
        json_error_t je;
        json_t *v = json_loadb(buf + start, (size_t)(nl - (buf + start)), 0, &je);
        if (!v || !json_is_object(v)) abort(); /* armd wrote something that is not JSON */
        json_t *id = json_object_get(v, "id");
        if (id) {
            if (n < max_ids) ids[n] = json_incref(id);
            n++;
        }
        json_decref(v);
        start = (size_t)(nl - buf) + 1;
    }
    memmove(buf, buf + start, len - start);
    len -= start;
    return n;
}

/* The replies one request line must get: 1 for a non-object (id null) or an object with an
 * "id", 0 for an object without one or a blank line; *want_id the id expected (new ref). */
static int expected_replies(const char *line, size_t len, json_t **want_id)
{
    *want_id = NULL;
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
    if (i == len) return 0;
    json_error_t je;
    json_t *v = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!v || !json_is_object(v)) {
        json_decref(v);
        *want_id = json_null();
        return 1;
    }
    json_t *id = json_object_get(v, "id");
    int n = id ? 1 : 0;
    if (id) *want_id = json_incref(id);
    json_decref(v);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!loop) setup();
    if (size < 1) return 0;
    if (conn->dead) connect_peer();
    conn->restricted = data[0] & 1;
    fake.state = (data[0] & 2) ? CTL_HOLDING : CTL_DISABLED;
    size_t pos = 1;
    while (pos < size) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
        if (len > LINE_MAX_FUZZ) len = LINE_MAX_FUZZ;
        const char *line = (const char *)data + pos;
        pos += len + 1;
        json_t *want_id;
        int want = expected_replies(line, len, &want_id);
        api_sched_request(conn, line, len);
        ctl_poll(&fake); /* the answers of commands */
        /* payload.estimate moves the arm for seconds: ended here as armd's shutdown ends it */
        if (conn->waiting) payload_est_abort(srv->est, "fuzz: no arm to move");
        if (conn->dead) { /* dropped (too much unsent output): nothing more to check */
            json_decref(want_id);
            break;
        }
        if (conn->waiting) abort(); /* the fake answers at once: nothing may stay waiting */
        if (conn->subscribed && conn->decimation < 1) abort();
        json_t *ids[4] = {NULL, NULL, NULL, NULL};
        int got = read_replies(ids, 4);
        if (got != want) abort();
        /* the reply carries the request's id (a real comes back with 10 significant digits) */
        if (want && !(json_is_real(want_id) ? json_is_number(ids[0]) : json_equal(ids[0], want_id)))
            abort();
        for (int i = 0; i < 4; i++) json_decref(ids[i]);
        json_decref(want_id);
    }
    if (!conn->dead) api_telemetry_subscribe(conn, 0);
    return 0;
}
