/*
 * test_api_restricted.c — unit test of the connections beyond max_clients (daemon/api.c,
 * api_sched.c): each is restricted to one request, estop, status or disable, then closed; one
 * without a complete line is closed after API_RESTRICTED_S; at API_RESTRICTED_MAX the oldest is
 * evicted, its buffered request served first. The server with the fake control thread and
 * max_clients 4 (api_harness.c).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon/api.h"
#include "daemon/api_internal.h"
#include "tests/daemon/api_harness.h"
#include "tests/daemon/fake_ctl.h"

#define PARTIAL "{\"id\": 1, \"method\": \"sta" /* a request line never finished */

/* The state in a reply's result (NULL: none). */
static const char *result_state(json_t *r)
{
    return json_string_value(json_object_get(json_object_get(r, "result"), "state"));
}

/* Fills max_clients (4) with connections holding a partial line, into fds. */
static void fill_normal(int fds[4])
{
    for (int i = 0; i < 4; i++) {
        fds[i] = connect_client();
        send_all(fds[i], PARTIAL, strlen(PARTIAL));
    }
    run_loop_for(0.01);
    assert_int_equal(srv->n_clients, 4);
}

/* Churn leaks nothing; beyond max_clients every connection gets one request, estop, status or
 * disable (anything else: "restricted"), then is closed; the full clients are still served. */
static void test_max_clients_and_churn(void **state)
{
    (void)state;
    for (int i = 0; i < 300; i++) close(connect_client());
    for (int i = 0; i < 5; i++) ev_run(loop, EVRUN_NOWAIT);
    assert_int_equal(api_client_count(srv), 0);
    int fds[4];
    for (int i = 0; i < 4; i++) fds[i] = connect_client();
    int op = connect_client();
    json_t *r = request(op, "{\"id\": 1, \"method\": \"enable\"}");
    assert_string_equal(error_code(r), "restricted");
    assert_non_null(strstr(error_message(r), "estop, status or disable"));
    json_decref(r);
    assert_null(read_line(op)); /* one request, then closed */
    close(op);
    op = connect_client();
    r = request(op, "{\"id\": 2, \"method\": \"status\"}");
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    assert_null(read_line(op));
    close(op);
    op = connect_client();
    r = request(op, "{\"id\": 3, \"method\": \"estop\"}");
    assert_string_equal(result_state(r), "estop");
    assert_int_equal(fake.estops, 1);
    json_decref(r);
    assert_null(read_line(op));
    close(op);
    op = connect_client(); /* a restricted line is short */
    char big[API_RESTRICTED_LINE + 100];
    memset(big, 'a', sizeof big);
    send_all(op, big, sizeof big);
    r = read_line(op);
    assert_string_equal(error_code(r), "line_too_long");
    json_decref(r);
    assert_null(read_line(op));
    close(op);
    r = request(fds[3], "{\"id\": 1, \"method\": \"status\"}");
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    for (int i = 0; i < 4; i++) close(fds[i]);
}

/* A restricted connection that sends no complete line is closed API_RESTRICTED_S after it
 * connected, with an idle_timeout error; bytes without a newline do not keep it. Beyond it a
 * full client's idle clock is not restarted by such bytes either (0.3 s idle timeout). */
static void test_restricted_deadline(void **state)
{
    (void)state;
    int fds[4];
    fill_normal(fds);
    int op = connect_client();
    double t0 = api_mono_now();
    send_all(op, PARTIAL, strlen(PARTIAL));
    /* 0.8 s of a byte now and then (fds[0] is closed early). The sends are not checked: on a
     * loaded machine the loop can overshoot past API_RESTRICTED_S, when armd has rightly closed
     * op and a send fails; when op was closed is what the assertions on t below judge */
    for (int i = 0; i < 8; i++) {
        run_loop_for(0.1);
        (void)!send(op, " ", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)!send(fds[0], " ", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    assert_int_equal(api_client_count(srv), 1); /* only op is left: 0.3 s went by long ago */
    json_t *r = read_line(fds[0]);
    assert_string_equal(error_code(r), "idle_timeout");
    json_decref(r);
    r = read_line(op);
    double t = api_mono_now() - t0;
    assert_string_equal(error_code(r), "idle_timeout");
    json_decref(r);
    assert_true(t >= API_RESTRICTED_S && t < API_RESTRICTED_S + 0.5);
    assert_null(read_line(op));
    close(op);
    for (int i = 0; i < 4; i++) close(fds[i]);
}

/* Every slot squatted: max_clients with partial lines, API_RESTRICTED_MAX restricted ones with
 * partial lines. A new connection's estop runs and is answered; the oldest squatter went. */
static void test_estop_with_every_slot_squatted(void **state)
{
    (void)state;
    int fds[4], sq[API_RESTRICTED_MAX];
    fill_normal(fds);
    for (int i = 0; i < API_RESTRICTED_MAX; i++) {
        sq[i] = connect_client();
        send_all(sq[i], PARTIAL, strlen(PARTIAL));
    }
    run_loop_for(0.01);
    assert_int_equal(srv->n_restricted, API_RESTRICTED_MAX);
    int op = connect_client();
    json_t *r = request(op, "{\"id\": 1, \"method\": \"estop\"}");
    assert_string_equal(result_state(r), "estop");
    assert_int_equal(fake.estops, 1);
    json_decref(r);
    assert_null(read_line(sq[0]));                               /* evicted, the oldest */
    assert_int_equal(srv->n_restricted, API_RESTRICTED_MAX - 1); /* op closed after its reply */
    assert_int_equal(api_client_count(srv), 4 + API_RESTRICTED_MAX - 1);
    close(op);
    for (int i = 0; i < API_RESTRICTED_MAX; i++) close(sq[i]);
    for (int i = 0; i < 4; i++) close(fds[i]);
}

/* The oldest restricted connection's estop is in its socket buffer, not yet read (its read
 * watcher held back, as when the loop has not got to it), when a new connection evicts it:
 * the estop is read and run first. */
static void test_evicted_estop_is_served(void **state)
{
    (void)state;
    int fds[4], sq[API_RESTRICTED_MAX];
    fill_normal(fds);
    for (int i = 0; i < API_RESTRICTED_MAX; i++) sq[i] = connect_client();
    api_client *oldest = NULL;
    for (api_client *cl = srv->clients; cl; cl = cl->next)
        if (cl->restricted && (!oldest || cl->id < oldest->id)) oldest = cl;
    assert_non_null(oldest);
    ev_io_stop(loop, &oldest->rio);
    const char *estop = "{\"id\": 7, \"method\": \"estop\"}\n";
    send_all(sq[0], estop, strlen(estop));
    run_loop_for(0.01);
    assert_int_equal(fake.estops, 0); /* not read yet */
    int op = connect_client();
    assert_int_equal(fake.estops, 1);
    json_t *r = read_line(sq[0]); /* its reply, if it went out before the eviction, or EOF */
    if (r) {
        assert_string_equal(result_state(r), "estop");
        json_decref(r);
        assert_null(read_line(sq[0]));
    }
    close(op);
    for (int i = 0; i < API_RESTRICTED_MAX; i++) close(sq[i]);
    for (int i = 0; i < 4; i++) close(fds[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_max_clients_and_churn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restricted_deadline, setup_short_timeouts, teardown),
        cmocka_unit_test_setup_teardown(test_estop_with_every_slot_squatted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evicted_estop_is_served, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
