/*
 * test_api_parse.c — unit test of the socket API's parser thread (daemon/api_parse.c) through
 * the server (api_harness.c: a real UNIX socket and libev loop, the fake control thread):
 * request lines over API_PARSE_INLINE bytes, parsed off the main thread, answered once each
 * and in order among short ones; a client gone mid-parse; a parse under way at the close.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon/api.h"
#include "daemon/api_internal.h"

#include "tests/daemon/api_harness.h"
#include "tests/daemon/fake_ctl.h"

/* Appends to buf (of size cap, *len used) what fmt says; fails the test when it does not fit. */
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    assert_true(k >= 0 && (size_t)k < cap - *len);
    *len += (size_t)k;
}

/* Lines over API_PARSE_INLINE are parsed on the parser thread (api_parse.c): pipelined behind
 * and between short ones, each still gets exactly one answer, in the order sent: a trajectory
 * of 3000 waypoints (its waypoints all reach the control side), a malformed long line
 * (parse_error, no id), a long request with a member status does not take (invalid_params, its
 * id); another client is served meanwhile. */
static void test_long_lines_answered_in_order(void **state)
{
    (void)state;
    int a = connect_client(), b = connect_client();
    static char buf[512 * 1024];
    size_t len = 0, mark;
    append(buf, sizeof buf, &len,
           "{\"id\": 1, \"method\": \"trajectory\", \"params\": {\"points\": [");
    for (int i = 0; i < 3000; i++)
        append(buf, sizeof buf, &len, "%s{\"t\": %.3f, \"q\": [%.4f, -0.25]}", i ? ", " : "",
               0.01 * (i + 1), 1e-4 * i);
    append(buf, sizeof buf, &len, "]}}\n{\"id\": 2, \"method\": \"status\"}\n");
    mark = len;
    append(buf, sizeof buf, &len, "{\"id\": 3, \"method\": \"status\", \"x\": [");
    for (int i = 0; i < 20000; i++) append(buf, sizeof buf, &len, "1,");
    append(buf, sizeof buf, &len, "\n"); /* unterminated array */
    assert_true(len - mark > API_PARSE_INLINE);
    mark = len;
    append(buf, sizeof buf, &len, "{\"id\": 4, \"method\": \"status\", \"params\": {\"pad\": \"");
    for (int i = 0; i < 20000; i++) append(buf, sizeof buf, &len, "x");
    append(buf, sizeof buf, &len, "\"}}\n{\"id\": 5, \"method\": \"status\"}\n");
    assert_true(len - mark > API_PARSE_INLINE);
    send_all(a, buf, len);
    json_t *r = request(b, "{\"id\": \"b\", \"method\": \"status\"}");
    assert_string_equal(json_string_value(json_object_get(r, "id")), "b");
    json_decref(r);
    r = read_line(a);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    assert_float_equal(json_number_value(json_object_get(json_object_get(r, "result"), "duration")),
                       30.0, 1e-9);
    assert_int_equal(fake.last_points, 3000);
    json_decref(r);
    r = read_line(a);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    r = read_line(a);
    assert_string_equal(error_code(r), "parse_error");
    assert_true(json_is_null(json_object_get(r, "id"))); /* JSON-RPC: no id known */
    json_decref(r);
    r = read_line(a);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 4);
    assert_string_equal(error_code(r), "invalid_params");
    json_decref(r);
    r = read_line(a);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 5);
    json_decref(r);
    close(a);
    close(b);
}

/* A client gone while its long line is parsed: the parse's result is dropped, the server goes
 * on (the sanitizer run checks that nothing is used after it was freed); and a long line still
 * being parsed when the server closes is answered before the close. */
static void test_long_line_client_gone_and_close(void **state)
{
    (void)state;
    static char buf[256 * 1024];
    size_t len = 0;
    append(buf, sizeof buf, &len,
           "{\"id\": 8, \"method\": \"status\", \"jsonrpc\": \"2.0\", "
           "\"params\": {\"pad\": [");
    for (int i = 0; i < 30000; i++) append(buf, sizeof buf, &len, "%s0.5", i ? "," : "");
    append(buf, sizeof buf, &len, "]}}\n");
    int gone = connect_client();
    send_all(gone, buf, len);
    close(gone);
    run_loop_for(0.2);
    int fd = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"status\"}");
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    json_decref(r);
    send_all(fd, buf, len);
    bool parsing = false; /* the line read whole and handed to the parser thread (or done) */
    struct pollfd p = {fd, POLLIN, 0};
    for (int spins = 0; spins < 20000 && !parsing && poll(&p, 1, 0) == 0; spins++) {
        ev_run(loop, EVRUN_NOWAIT);
        for (api_client *cl = srv->clients; cl; cl = cl->next) parsing |= cl->waiting;
    }
    api_close(srv); /* the teardown's close is then a no-op */
    srv = NULL;
    r = read_line(fd);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 8);
    assert_string_equal(error_code(r), "invalid_params");
    json_decref(r);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_long_lines_answered_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line_client_gone_and_close, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
