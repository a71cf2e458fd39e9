/*
 * api_harness.c — the socket API's unit-test harness (api_harness.h): a server on a real UNIX
 * socket and libev loop with the fake control thread (fake_ctl.c), and a test's client side.
 */
#include "tests/daemon/api_harness.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/daemon/fake_ctl.h"

struct ev_loop *loop;
api_server *srv;
char sock_path[108];

static int fake_reload(void *ctx, const ctl_reply_to *to, ctl_error *err)
{
    (void)ctx;
    (void)err;
    ctl_result res = {0};
    snprintf(res.changed, sizeof res.changed, "[joint a] kp");
    return fake_answer_later(&fake, to, 0, NULL, NULL, &res);
}

static double opt_idle_timeout, opt_stall_timeout; /* 0 = api defaults */

int setup(void **state)
{
    (void)state;
    fake_init(2, 1000);
    snprintf(sock_path, sizeof sock_path, "/tmp/armd-test-api-%d.sock", (int)getpid());
    loop = ev_loop_new(0);
    api_options o = {.path = sock_path,
                     .mode = 0600,
                     .group = "",
                     .max_clients = 4,
                     .stall_timeout = opt_stall_timeout,
                     .idle_timeout = opt_idle_timeout,
                     .version = "test",
                     .reload = fake_reload};
    char err[256];
    srv = api_open(loop, &fake, &o, err, sizeof err);
    assert_non_null(srv);
    return 0;
}

/* setup with short stall and idle timeouts (0.3 s) */
int setup_short_timeouts(void **state)
{
    opt_idle_timeout = opt_stall_timeout = 0.3;
    int r = setup(state);
    opt_idle_timeout = opt_stall_timeout = 0;
    return r;
}

int teardown(void **state)
{
    (void)state;
    api_close(srv);
    ev_loop_destroy(loop);
    fake_close();
    assert_int_equal(access(sock_path, F_OK), -1); /* socket file removed */
    return 0;
}

int connect_client(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    for (int i = 0; i < 5; i++) ev_run(loop, EVRUN_NOWAIT);
    return fd;
}

void send_all(int fd, const char *data, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ev_run(loop, EVRUN_NOWAIT);
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 10) <= 0) continue;
        ssize_t w = send(fd, data + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EAGAIN) continue;
        assert_true(w > 0);
        off += (size_t)w;
    }
}

/* Reads one line, running the server loop meanwhile; returns it parsed, or NULL at EOF. */
json_t *read_line(int fd)
{
    static char buf[1 << 16];
    size_t len = 0;
    for (int spins = 0; spins < 2000; spins++) {
        ev_run(loop, EVRUN_NOWAIT);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 1) <= 0) continue;
        char ch;
        ssize_t r;
        while ((r = recv(fd, &ch, 1, MSG_DONTWAIT)) == 1) {
            if (ch == '\n') {
                json_error_t e;
                json_t *v = json_loadb(buf, len, 0, &e);
                assert_non_null(v);
                return v;
            }
            assert_true(len < sizeof buf);
            buf[len++] = ch;
        }
        if (r == 0) return NULL;
    }
    fail_msg("no reply from the server");
    return NULL;
}

/* Runs the server loop for about `seconds` of real time. */
void run_loop_for(double seconds)
{
    for (int i = 0; i < (int)(seconds * 1000); i++) {
        ev_run(loop, EVRUN_NOWAIT);
        poll(NULL, 0, 1);
    }
}

json_t *request(int fd, const char *line)
{
    send_all(fd, line, strlen(line));
    send_all(fd, "\n", 1);
    return read_line(fd);
}

const char *error_code(json_t *reply)
{
    return json_string_value(json_object_get(json_object_get(reply, "error"), "code"));
}
const char *error_message(json_t *reply)
{
    return json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
}

/* Sends method with params; the reply must be invalid_params with a message naming names. */
void expect_invalid(int fd, const char *method, const char *params, const char *names)
{
    char line[512];
    snprintf(line, sizeof line, "{\"id\": 3, \"method\": \"%s\", \"params\": %s}", method, params);
    json_t *r = request(fd, line);
    assert_string_equal(error_code(r), "invalid_params");
    if (!strstr(error_message(r), names))
        fail_msg("%s %s: '%s' does not name %s", method, params, error_message(r), names);
    json_decref(r);
}
