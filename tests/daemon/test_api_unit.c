/*
 * test_api_unit.c — unit test of the socket API (daemon/api*.c, telemetry.c, the payload
 * procedure payload_est.c) against a fake control thread (fake_ctl.c, the only mock: the real
 * control thread and the real armd + armsim are exercised by the integration tests). A real UNIX
 * socket and a real libev loop (api_harness.c); the test drives the loop between its client's
 * writes and reads. The connections beyond max_clients are test_api_restricted.c's, the long
 * lines parsed on the parser thread test_api_parse.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "daemon/api.h"
#include "daemon/api_internal.h"
#include "daemon/payload_est.h"

#include "tests/daemon/api_harness.h"
#include "tests/daemon/fake_ctl.h"

/* The default socket /run/armd/NAME/armd.sock of an armd started by hand: a missing last
 * directory is made (0755), a missing grandparent is an error naming the directory. */
static void test_socket_dir_made(void **state)
{
    (void)state;
    char dir[64], path[108];
    snprintf(dir, sizeof dir, "/tmp/armd-test-api-dir-%d", (int)getpid());
    snprintf(path, sizeof path, "%s/arm0/armd.sock", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    fake_init(2, 1000);
    struct ev_loop *l = ev_loop_new(0);
    api_options o = {.path = path, .mode = 0600, .group = "", .max_clients = 4, .version = "test"};
    char err[256] = "";
    api_server *s = api_open(l, &fake, &o, err, sizeof err);
    assert_non_null(s);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    char sub[80];
    snprintf(sub, sizeof sub, "%s/arm0", dir);
    assert_int_equal(stat(sub, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755);
    api_close(s);
    snprintf(path, sizeof path, "%s/no/such/armd.sock", dir);
    assert_null(api_open(l, &fake, &o, err, sizeof err));
    assert_non_null(strstr(err, "cannot create the socket's directory"));
    assert_non_null(strstr(err, "/no/such"));
    ev_loop_destroy(l);
    fake_close();
    rmdir(sub);
    rmdir(dir);
}

/* ---------------------------------------------------------------------------- tests */
static void test_info_and_status(void **state)
{
    (void)state;
    int fd = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"info\"}");
    json_t *res = json_object_get(r, "result");
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    assert_int_equal(json_integer_value(json_object_get(res, "dof")), 2);
    assert_string_equal(json_string_value(json_array_get(json_object_get(res, "joints"), 1)), "b");
    json_decref(r);
    r = request(fd, "{\"id\": \"x\", \"method\": \"status\", \"params\": {}}");
    res = json_object_get(r, "result");
    assert_string_equal(json_string_value(json_object_get(r, "id")), "x");
    assert_string_equal(json_string_value(json_object_get(res, "state")), "disabled");
    assert_true(json_is_null(json_object_get(res, "fault")));
    assert_true(json_is_null(json_array_get(json_object_get(res, "q"), 1))); /* NaN -> null */
    assert_float_equal(json_number_value(json_array_get(json_object_get(res, "q"), 0)), 0.5, 1e-12);
    json_decref(r);
    close(fd);
}

/* The present CLOCK_REALTIME - CLOCK_MONOTONIC offset [s]. */
static double realtime_offset(void)
{
    struct timespec m, w;
    clock_gettime(CLOCK_MONOTONIC, &m);
    clock_gettime(CLOCK_REALTIME, &w);
    return (double)(w.tv_sec - m.tv_sec) + (double)(w.tv_nsec - m.tv_nsec) * 1e-9;
}

/* Fails unless |a - b| <= tol, in double precision (cmocka's assert_float_equal is float). */
#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            fail_msg("%s = %.9f, expected %.9f +- %g", #a, a_, b_, tol);                           \
    } while (0)

/* status, telemetry and events carry mono = the control time's CLOCK_MONOTONIC time (the fake's
 * time 0 is FAKE_MONO0) to the microsecond, and wall = mono + the realtime clock's offset (to
 * 200 µs: the offset is read twice, here and by the server, and either may be preempted; 10
 * significant digits put wall off by up to 0.5 s). */
static void test_clock_stamps(void **state)
{
    (void)state;
    int fd = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"status\"}");
    json_t *res = json_object_get(r, "result");
    double t = json_number_value(json_object_get(res, "time"));
    double mono = json_number_value(json_object_get(res, "mono"));
    double wall = json_number_value(json_object_get(res, "wall"));
    assert_near(mono, FAKE_MONO0 + t, 1e-7);
    assert_near(wall - mono, realtime_offset(), 200e-6);
    json_decref(r);
    r = request(fd, "{\"id\": 2, \"method\": \"subscribe\", \"params\": {\"rate_hz\": 1000}}");
    json_decref(r);
    /* two state events (the fake's first is before the API's event cursor). Subscribed, the
     * replies to the enables, telemetry and the state event arrive interleaved in whatever
     * order the server's periodic drain meets them (a slow build drains many times per
     * request): read every line until both replies, the event and 3 telemetry lines are in */
    const char *enables = "{\"id\": 3, \"method\": \"enable\"}\n"
                          "{\"id\": 4, \"method\": \"enable\"}\n";
    send_all(fd, enables, strlen(enables));
    int seen = 0, events = 0, replies = 0;
    for (int i = 0; i < 5000 && (seen < 3 || !events || replies < 2); i++) {
        api_telemetry_drain(srv);
        json_t *m = read_line(fd);
        assert_non_null(m);
        json_t *p = json_object_get(m, "params");
        const char *method = json_string_value(json_object_get(m, "method"));
        if (!method) { /* a reply: to the enables, in order */
            assert_int_equal(json_integer_value(json_object_get(m, "id")), 3 + replies);
            assert_non_null(json_object_get(m, "result"));
            replies++;
        } else if (strcmp(method, "telemetry") == 0 || strcmp(method, "state") == 0) {
            t = json_number_value(json_object_get(p, "time"));
            mono = json_number_value(json_object_get(p, "mono"));
            wall = json_number_value(json_object_get(p, "wall"));
            assert_near(mono, FAKE_MONO0 + t, 1e-7);
            assert_near(wall - mono, realtime_offset(), 200e-6);
            seen += method[0] == 't';
            events += method[0] == 's';
        }
        json_decref(m);
    }
    assert_int_equal(replies, 2);
    assert_true(seen >= 3);
    assert_int_equal(events, 1);
    close(fd);
}

static void test_bad_input_keeps_connection(void **state)
{
    (void)state;
    int fd = connect_client();
    json_t *r = request(fd, "this is not json");
    assert_string_equal(error_code(r), "parse_error");
    assert_true(json_is_null(json_object_get(r, "id")));
    json_decref(r);
    r = request(fd, "{\"id\": 2, \"method\": \"fly\"}");
    assert_string_equal(error_code(r), "unknown_method");
    assert_non_null(strstr(error_message(r), "fly"));
    json_decref(r);
    r = request(fd, "[1, 2]");
    assert_string_equal(error_code(r), "invalid_request");
    json_decref(r);
    r = request(fd, "{\"id\": 3, \"method\": \"move_to\", \"params\": {\"q\": [1, 2, 3]}}");
    assert_string_equal(error_code(r), "invalid_params");
    assert_non_null(strstr(error_message(r), "params.q"));
    json_decref(r);
    r = request(fd, "{\"id\": 4, \"method\": \"gains.set\", \"params\": {\"kq\": 1}}");
    assert_string_equal(error_code(r), "invalid_params");
    assert_non_null(strstr(error_message(r), "kq"));
    json_decref(r);
    r = request(fd, "{\"id\": 5, \"method\": \"trajectory\", \"params\": {\"points\": "
                    "[{\"t\": 1, \"q\": [0, 0]}, {\"t\": 2, \"q\": [0, \"x\"]}]}}");
    assert_string_equal(error_code(r), "invalid_params");
    assert_non_null(strstr(error_message(r), "points[1].q[1]"));
    json_decref(r);
    r = request(fd, "{\"id\": 6, \"method\": \"hold\"}"); /* the fake refuses: disabled */
    assert_string_equal(error_code(r), "bad_state");
    json_decref(r);
    /* garbage bytes, still open */
    r = request(fd, "\x01\x02\xff\xfe{{{");
    assert_string_equal(error_code(r), "parse_error");
    json_decref(r);
    /* no id: no reply; the next reply is for id 9 */
    const char *no_id = "{\"method\": \"enable\"}\n";
    send_all(fd, no_id, strlen(no_id));
    r = request(fd, "{\"id\": 9, \"method\": \"status\"}");
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 9);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "state")),
                        "holding");
    json_decref(r);
    close(fd);
}

static void test_commands_reach_control(void **state)
{
    (void)state;
    int fd = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"trajectory\", \"params\": {\"mode\": "
                            "\"append\", \"points\": [{\"t\": 0.5, \"q\": [0.1, 0.2]}, {\"t\": "
                            "2.5, \"q\": [0.3, 0.4], \"qd\": [0, 0]}]}}");
    json_t *res = json_object_get(r, "result");
    assert_int_equal(json_integer_value(json_object_get(res, "id")), 7);
    assert_float_equal(json_number_value(json_object_get(res, "duration")), 2.5, 1e-12);
    assert_int_equal(fake.last_points, 2);
    assert_true(fake.last_append);
    assert_float_equal(fake.last_q0[1], 0.2, 1e-12);
    json_decref(r);
    r = request(fd, "{\"id\": 2, \"method\": \"gains.set\", \"params\": {\"kp\": 100, \"kd\": "
                    "[20, 30]}}");
    res = json_object_get(r, "result");
    assert_float_equal(json_number_value(json_array_get(json_object_get(res, "kp"), 1)), 100,
                       1e-12);
    assert_float_equal(json_number_value(json_array_get(json_object_get(res, "kd"), 1)), 30, 1e-12);
    json_decref(r);
    r = request(fd, "{\"id\": 3, \"method\": \"reload\"}");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "changed")),
                        "[joint a] kp");
    json_decref(r);
    r = request(fd, "{\"id\": 4, \"method\": \"controller.set\", \"params\": {\"name\": \"pd\"}}");
    assert_string_equal(error_code(r), "invalid_params");
    json_decref(r);
    close(fd);
}

/* The recording methods: record.start records every sample the server drains (the fake hands
 * out 20 new ticks a read) whatever the client reads; record.fetch pages through them by index
 * (consecutive ticks, no loss, the page's size as asked); another connection can neither start
 * one meanwhile (busy) nor fetch this one; bad params are refused naming them (the duration's
 * bound stated); record.stop ends it and keeps the samples. */
static void test_record_pages(void **state)
{
    (void)state;
    int fd = connect_client(), other = connect_client();
    expect_invalid(fd, "record.start", "{\"duration\": 601}", "(0, 600]");
    expect_invalid(fd, "record.start", "{}", "params.duration");
    expect_invalid(fd, "record.start", "{\"duration\": 1, \"fields\": [\"q\", \"qq\"]}",
                   "params.fields[1]");
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"record.start\", \"params\": "
                            "{\"duration\": 1, \"fields\": [\"q\", \"tau_meas\"]}}");
    json_t *res = json_object_get(r, "result");
    assert_int_equal(json_integer_value(json_object_get(res, "capacity")), 1001);
    assert_int_equal(json_array_size(json_object_get(res, "fields")), 2);
    json_decref(r);
    r = request(other, "{\"id\": 2, \"method\": \"record.start\", \"params\": "
                       "{\"duration\": 1}}");
    assert_string_equal(error_code(r), "busy");
    json_decref(r);
    r = request(other, "{\"id\": 3, \"method\": \"record.fetch\"}");
    assert_string_equal(error_code(r), "no_recording");
    json_decref(r);
    run_loop_for(0.1); /* a few drains: 20 samples each */
    expect_invalid(fd, "record.fetch", "{\"max\": 0}", "params.max");
    expect_invalid(fd, "record.fetch", "{\"from\": 1.5}", "params.from");
    uint64_t tick = 0;
    long from = 0;
    for (int page = 0; page < 3; page++) {
        char line[160];
        snprintf(line, sizeof line,
                 "{\"id\": 4, \"method\": \"record.fetch\", \"params\": {\"from\": %ld, "
                 "\"max\": 7}}",
                 from);
        r = request(fd, line);
        res = json_object_get(r, "result");
        json_t *recs = json_object_get(res, "records");
        assert_int_equal(json_integer_value(json_object_get(res, "from")), from);
        assert_int_equal(json_array_size(recs), 7);
        assert_true(json_integer_value(json_object_get(res, "samples")) >= 20);
        assert_int_equal(json_integer_value(json_object_get(res, "lost")), 0);
        for (size_t i = 0; i < 7; i++) {
            json_t *o = json_array_get(recs, i);
            assert_int_equal(json_integer_value(json_object_get(o, "index")), from + (long)i);
            uint64_t t = (uint64_t)json_integer_value(json_object_get(o, "tick"));
            if (tick) assert_int_equal(t, tick + 1);
            tick = t;
            assert_float_equal(json_number_value(json_array_get(json_object_get(o, "q"), 0)), 0.25,
                               0);
            assert_null(json_object_get(o, "qd"));
            assert_null(json_object_get(o, "lost_before"));
        }
        json_decref(r);
        from += 7;
    }
    r = request(fd, "{\"id\": 5, \"method\": \"record.stop\"}");
    res = json_object_get(r, "result");
    assert_true(json_is_true(json_object_get(res, "done")));
    assert_string_equal(json_string_value(json_object_get(res, "end")), "stopped");
    long n = (long)json_integer_value(json_object_get(res, "samples"));
    json_decref(r);
    run_loop_for(0.05);
    char line[160];
    snprintf(line, sizeof line,
             "{\"id\": 6, \"method\": \"record.fetch\", \"params\": {\"from\": %ld}}", n - 2);
    r = request(fd, line);
    res = json_object_get(r, "result");
    assert_int_equal(json_integer_value(json_object_get(res, "samples")), n); /* stopped */
    assert_int_equal(json_array_size(json_object_get(res, "records")), 2);
    json_decref(r);
    close(fd); /* the owner's disconnect frees it: the other connection may start one */
    run_loop_for(0.02);
    r = request(other, "{\"id\": 7, \"method\": \"record.start\", \"params\": "
                       "{\"duration\": 1}}");
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    close(other);
}

/* payload.get/set reach the control side and every bad payload is refused with a message naming
 * the member; payload.estimate checks its params and the arm's state before it moves anything. */
static void test_payload_methods(void **state)
{
    (void)state;
    int fd = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"payload.get\"}");
    assert_float_equal(json_number_value(json_object_get(json_object_get(r, "result"), "mass")), 0,
                       0);
    json_decref(r);
    r = request(fd, "{\"id\": 2, \"method\": \"payload.set\", \"params\": {\"mass\": 2, \"com\": "
                    "[0.1, 0, 0.05]}}");
    json_t *res = json_object_get(r, "result");
    assert_float_equal(json_number_value(json_object_get(res, "mass")), 2, 0);
    assert_float_equal(json_number_value(json_array_get(json_object_get(res, "com"), 2)), 0.05, 0);
    assert_float_equal(fake.payload.mass, 2, 0);
    assert_float_equal(fake.payload.com[0], 0.1, 0);
    json_decref(r);
    static const struct {
        const char *params, *names;
    } bad[] = {
        {"{}", "params.mass"},
        {"{\"mass\": -1}", "params.mass"},
        {"{\"mass\": 1e300}", "params.mass"},
        {"{\"mass\": \"2\"}", "params.mass"},
        {"{\"mass\": 1, \"com\": [1e300, 0, 0]}", "params.com[0]"},
        {"{\"mass\": 1, \"com\": [0, 0]}", "params.com"},
        {"{\"mass\": 1, \"com\": [0, null, 0]}", "params.com[1]"},
        {"{\"mass\": 1, \"inertia\": [-1, 0, 0, 1, 0, 1]}", "payload.inertia"},
        {"{\"mass\": 1, \"inertia\": [1, 0, 0, 1, 0, 1e300]}", "params.inertia[5]"},
        {"{\"mass\": 1, \"cog\": [0, 0, 0]}", "cog"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_invalid(fd, "payload.set", bad[i].params, bad[i].names);
    assert_float_equal(fake.payload.mass, 2, 0); /* none of them reached the control side */
    /* estimate: refused while disabled, and bad params before that */
    r = request(fd, "{\"id\": 4, \"method\": \"payload.estimate\"}");
    assert_string_equal(error_code(r), "bad_state");
    json_decref(r);
    static const struct {
        const char *params, *names;
    } bad_est[] = {
        {"{\"poses\": []}", "params.poses"},
        {"{\"poses\": [[0, 0], [0]]}", "params.poses[1]"},
        {"{\"poses\": [[0, 3]]}", "params.poses[0][1]"},
        {"{\"move_time\": -1}", "params.move_time"},
        {"{\"settle\": 1}", "settle"},
        {"{\"move_time\": 1e-9}", "params.move_time"},
        {"{\"apply\": 1}", "params.apply"},
        {"{\"pose\": []}", "pose"},
    };
    for (size_t i = 0; i < sizeof bad_est / sizeof bad_est[0]; i++)
        expect_invalid(fd, "payload.estimate", bad_est[i].params, bad_est[i].names);
    close(fd);
}

/* payload.estimate reads its own samples every step (the fake's ctl_samples_read hands out the
 * next ticks); a hole in them (ticks the control thread's ring overwrote before they were read)
 * ends it with an error naming the ticks and no further move, and the procedure is free again.
 * While it runs another client's estimate is refused as busy. */
static void test_payload_estimate_hole(void **state)
{
    (void)state;
    for (int j = 0; j < 2; j++) {
        fake.cfg.joint[j].lower = -1;
        fake.cfg.joint[j].upper = 1;
    }
    int fd = connect_client(), other = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"enable\"}");
    json_decref(r);
    const char *est = "{\"id\": 2, \"method\": \"payload.estimate\", \"params\": {\"poses\": "
                      "[[0.5, 0.5]], \"move_time\": 1}}\n";
    send_all(fd, est, strlen(est));
    run_loop_for(0.05); /* about 10 steps: samples read without a hole, the first move sent */
    assert_true(payload_est_running(srv->est));
    assert_int_equal(fake.commands, 2); /* enable, the move to the pose */
    assert_float_equal(fake.last_q0[1], 0.5, 0);
    struct pollfd p = {fd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 0), 0); /* no reply yet: the move goes on */
    r = request(other, "{\"id\": 3, \"method\": \"payload.estimate\"}");
    assert_string_equal(error_code(r), "busy");
    assert_string_equal(error_message(r),
                        "a payload estimate is running for client 1; wait for it");
    json_decref(r);

    unsigned long long last = fake.tick; /* the last tick the estimate read */
    fake.tick += 5000;                   /* the ring overwrote the next 5000 samples */
    r = read_line(fd);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
    assert_string_equal(error_code(r), "failed");
    char want[256];
    snprintf(want, sizeof want,
             "samples lost: ticks %llu to %llu (5000 samples) were overwritten before the "
             "estimate read them (the main loop stalled); no fit across a hole, run it again",
             last + 1, last + 5000);
    assert_string_equal(error_message(r), want);
    json_decref(r);
    assert_false(payload_est_running(srv->est));
    run_loop_for(0.02);
    assert_int_equal(fake.commands, 2); /* no move after the hole */
    close(fd);
    close(other);
}

static void test_oversized_line_closes(void **state)
{
    (void)state;
    int fd = connect_client();
    size_t n = API_MAX_LINE + 100;
    char *big = malloc(n);
    memset(big, 'a', n);
    send_all(fd, big, n);
    free(big);
    json_t *r = read_line(fd);
    assert_string_equal(error_code(r), "line_too_long");
    json_decref(r);
    assert_null(read_line(fd)); /* closed */
    close(fd);
}

/* A command's reply comes with the control thread's answer; meanwhile that client's next
 * request waits (replies keep the order of requests) and the other clients are served. */
static void test_waiting_client_keeps_order_others_served(void **state)
{
    (void)state;
    int a = connect_client(), b = connect_client();
    fake.hold_answers = true;
    const char *two = "{\"id\": 1, \"method\": \"enable\"}\n{\"id\": 2, \"method\": \"status\"}\n";
    send_all(a, two, strlen(two));
    json_t *r = request(b, "{\"id\": 9, \"method\": \"status\"}");
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 9);
    json_decref(r);
    struct pollfd p = {a, POLLIN, 0};
    for (int i = 0; i < 50; i++) ev_run(loop, EVRUN_NOWAIT);
    assert_int_equal(poll(&p, 1, 20), 0); /* nothing for a while the answer is held */
    fake.hold_answers = false;
    r = read_line(a);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "state")),
                        "holding");
    json_decref(r);
    r = read_line(a);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
    json_decref(r);
    close(a);
    close(b);
}

/* A client that sends 2000 requests in one write gets a few run per loop iteration: another
 * client's request is answered long before the flood is through. */
static void test_flood_does_not_hold_others_up(void **state)
{
    (void)state;
    int flood = connect_client(), other = connect_client();
    static char big[2000 * 40];
    size_t len = 0;
    for (int i = 0; i < 2000; i++)
        len += (size_t)snprintf(big + len, sizeof big - len,
                                "{\"id\": %d, \"method\": \"status\"}\n", i);
    send_all(flood, big, len);
    json_t *r = request(other, "{\"id\": \"me\", \"method\": \"status\"}");
    assert_string_equal(json_string_value(json_object_get(r, "id")), "me");
    json_decref(r);
    /* count the flooder's replies so far */
    int replies = 0;
    char buf[65536];
    ssize_t k;
    while ((k = recv(flood, buf, sizeof buf, MSG_DONTWAIT)) > 0)
        for (ssize_t j = 0; j < k; j++) replies += buf[j] == '\n';
    printf("the other client was answered after %d of the flooder's 2000 requests\n", replies);
    assert_true(replies < 200);
    close(flood);
    close(other);
}

static void test_subscriber_that_never_reads_is_dropped(void **state)
{
    (void)state;
    int lazy = connect_client();
    int good = connect_client();
    const char *sub = "{\"id\": 1, \"method\": \"subscribe\", \"params\": {\"rate_hz\": 1000}}\n";
    send_all(lazy, sub, strlen(sub));
    json_t *r = request(good, "{\"id\": 1, \"method\": \"subscribe\", \"params\": "
                              "{\"rate_hz\": 100}}");
    /* the good client may see telemetry before its reply */
    while (!json_object_get(r, "id")) {
        json_decref(r);
        r = read_line(good);
    }
    assert_float_equal(json_number_value(json_object_get(json_object_get(r, "result"), "rate_hz")),
                       100, 1e-9);
    json_decref(r);
    /* run the loop long enough for the lazy client's queue to overflow; the good one reads */
    int telemetry = 0;
    for (int i = 0; i < 40000 && api_client_count(srv) == 2; i++) {
        ev_run(loop, EVRUN_NOWAIT);
        api_telemetry_drain(srv);
        struct pollfd p = {good, POLLIN, 0};
        if (poll(&p, 1, 0) > 0) {
            char buf[65536];
            ssize_t k = recv(good, buf, sizeof buf, MSG_DONTWAIT);
            for (ssize_t j = 0; j < k; j++) telemetry += buf[j] == '\n';
        }
    }
    assert_int_equal(api_client_count(srv), 1);
    assert_true(telemetry > 0);
    r = request(good, "{\"id\": 2, \"method\": \"unsubscribe\"}");
    while (!json_object_get(r, "id")) {
        json_decref(r);
        r = read_line(good);
    }
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    close(lazy);
    close(good);
}

static void test_idle_client_closed_subscriber_kept(void **state)
{
    (void)state;
    int idle = connect_client();
    int sub = connect_client();
    int talker = connect_client();
    json_t *r = request(sub, "{\"id\": 1, \"method\": \"subscribe\", \"params\": "
                             "{\"rate_hz\": 1}}");
    json_decref(r);
    for (int i = 0; i < 6; i++) { /* 0.6 s, talking every 0.1 s */
        run_loop_for(0.1);
        r = request(talker, "{\"id\": 2, \"method\": \"status\"}");
        assert_non_null(json_object_get(r, "result"));
        json_decref(r);
    }
    r = read_line(idle);
    assert_non_null(r);
    assert_string_equal(error_code(r), "idle_timeout");
    json_decref(r);
    assert_null(read_line(idle));               /* closed */
    assert_int_equal(api_client_count(srv), 2); /* the subscriber and the talker stay */
    close(idle);
    close(sub);
    close(talker);
}

static void test_stalled_reader_dropped_after_stall_timeout(void **state)
{
    (void)state;
    int lazy = connect_client();
    int rcv = 4096;
    setsockopt(lazy, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    const char *sub = "{\"id\": 1, \"method\": \"subscribe\", \"params\": {\"rate_hz\": 1000}}\n";
    send_all(lazy, sub, strlen(sub));
    /* telemetry (20 lines of ~150 bytes per drain here) fills the socket buffers within about
     * 100 drains; then nothing moves: dropped 0.3 s (at most 300 drains of >= 1 ms) later,
     * long before the 4 MiB limit (about 1400 drains) */
    int drains = 0;
    while (drains < 5000 && api_client_count(srv) == 1) {
        ev_run(loop, EVRUN_NOWAIT);
        api_telemetry_drain(srv);
        drains++;
        poll(NULL, 0, 1);
    }
    assert_true(drains < 1000);
    assert_int_equal(api_client_count(srv), 0);
    close(lazy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_socket_dir_made),
        cmocka_unit_test_setup_teardown(test_info_and_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_stamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_client_closed_subscriber_kept,
                                        setup_short_timeouts, teardown),
        cmocka_unit_test_setup_teardown(test_stalled_reader_dropped_after_stall_timeout,
                                        setup_short_timeouts, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input_keeps_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commands_reach_control, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized_line_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_waiting_client_keeps_order_others_served, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_flood_does_not_hold_others_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_payload_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_payload_estimate_hole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscriber_that_never_reads_is_dropped, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
