/*
 * test_simbus_faults.c — faults on armsim's in-process bus at chosen moments of simulated time,
 * seen through the real driver (PUMA 560 example, dxl2, no retries unless said): a lost reply
 * fails exactly one read, a silence fails reads until it ends, and the servos' Bus Watchdog
 * takes the torque away when nothing is written for longer than it. argv[1]: puma560.ini.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/tools/simbus_rig.h"

static const char *puma_ini;

/* simbus_lose_replies(1): exactly the next read fails, with a timeout; the one after succeeds. */
static void test_lost_reply(void **state)
{
    (void)state;
    static rig r;
    rig_load(&r, puma_ini, DRIVER_DXL2);
    r.cfg.driver.retries = 0; /* a retry would hide the lost reply */
    rig_start_enabled(&r, NULL);
    bool ok[10];
    uint64_t t[10];
    rig_read_ticks(&r, 3, ok, t, DRV_OK);
    assert_true(ok[0] && ok[1] && ok[2]);
    simbus_lose_replies(r.b, 1);
    rig_read_ticks(&r, 3, ok, t, DRV_ETIMEOUT);
    assert_false(ok[0]);
    assert_true(ok[1] && ok[2]);
    assert_true(drv_counters_get(r.d)->timeouts == 1);
    rig_stop(&r);
}

/* simbus_silence_until: every read whose request reaches the servos before the end fails with a
 * timeout (each one waits its whole deadline), the first one after it succeeds. */
static void test_silence(void **state)
{
    (void)state;
    static rig r;
    rig_load(&r, puma_ini, DRIVER_DXL2);
    r.cfg.driver.retries = 0;
    rig_start_enabled(&r, NULL);
    const uint64_t request_ns = rig_bytes_ns(&r, 14 + (size_t)r.cfg.n_joints); /* the Sync Read */
    uint64_t end = simbus_now_ns(r.b) + 20 * TICK_NS;
    simbus_silence_until(r.b, end);
    bool ok[40];
    uint64_t t[40];
    rig_read_ticks(&r, 40, ok, t, DRV_ETIMEOUT);
    int failed = 0;
    for (int i = 0; i < 40; i++) {
        bool before = t[i] + request_ns < end;
        if (ok[i] == before)
            fail_msg("read %d, request at end %+lld ns: %s", i,
                     (long long)(t[i] + request_ns) - (long long)end, ok[i] ? "ok" : "failed");
        failed += !ok[i];
    }
    print_message("%d reads failed during a 20 ms silence\n", failed);
    /* each failed read waited its deadline, longer than a tick: fewer than 20, more than 1 */
    assert_true(failed > 1 && failed < 20);
    rig_stop(&r);
}

/* The servos' Bus Watchdog (PUMA: 100 ms): a torque written, then nothing: it acts until 100 ms
 * after the Sync Write reached the servos and is gone after; the next read reports the
 * expired watchdog. */
static void test_bus_watchdog(void **state)
{
    (void)state;
    static rig r;
    rig_load(&r, puma_ini, DRIVER_DXL2);
    assert_int_equal(r.cfg.driver.bus_watchdog_ms, 100);
    rig_start_enabled(&r, NULL);
    drv_fault f;
    double tau[CFG_MAX_JOINTS] = {0, 0, 0, 0, 0, 1.0};
    if (drv_write(r.d, tau, &f) != 0) fail_msg("drv_write: %s", f.message);
    uint64_t t_w = simbus_now_ns(r.b);
    physics_state s;
    simbus_advance_to(r.b, t_w + 99 * TICK_NS);
    simbus_state(r.b, &s);
    assert_true(fabs(s.tau[5] - rig_applied(&r, 5, 1.0)) < 1e-12);
    simbus_advance_to(r.b, t_w + 101 * TICK_NS);
    simbus_state(r.b, &s);
    assert_true(s.tau[5] == 0.0);
    drv_state rd;
    assert_int_equal(drv_read(r.d, &rd, &f), -1);
    assert_int_equal(f.status, DRV_EALERT);
    assert_non_null(strstr(f.message, "Bus Watchdog expired"));
    rig_stop(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_simbus_faults PUMA560.ini\n");
        return 2;
    }
    puma_ini = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_reply),
        cmocka_unit_test(test_silence),
        cmocka_unit_test(test_bus_watchdog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
