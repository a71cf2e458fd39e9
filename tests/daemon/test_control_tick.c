/*
 * test_control_tick.c — unit test of the control thread's tick (daemon/control*.c) against a
 * fake driver defined in this file (the only mock; the real driver and armsim are exercised
 * by test_control_noalloc and the integration tests). The fake arm stands still at q = 0 and
 * can be told to fail reads or writes, so that the tick's reactions can be driven exactly:
 *  - writes that keep failing while reads succeed fault (they are counted apart from reads);
 *  - a read gap shorter than max_read_gap_ms is ridden out and reported, a longer one faults;
 *  - a non-finite gain or torque that got past validation is a fault naming it, never a
 *    silent zero torque while the state says holding;
 *  - a reload that changes [arm] controller is refused while moving and resets the integral
 *    while holding, like controller.set.
 *
 * usage: test_daemon_control_tick CONFIG.ini (a 2-joint arm: config/examples/planar2.ini)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "daemon/control.h"

/* ------------------------------------------------------------------------ fake driver */
struct drv {
    int n;
};

static struct {
    _Atomic int fail_writes;          /* every write fails */
    _Atomic int fail_reads;           /* every read fails ... */
    _Atomic int64_t fail_reads_until; /* ... or every read before this CLOCK_MONOTONIC [ns] */
    _Atomic int64_t last_ok_read;     /* CLOCK_MONOTONIC [ns] of the last read that succeeded */
    _Atomic uint64_t writes;
    _Atomic double q[2];             /* the fake arm's position [rad] */
    double last_tau[CFG_MAX_JOINTS]; /* written by the control thread only */
} fake;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int fake_fail(drv_fault *f, const char *what)
{
    f->status = DRV_ETIMEOUT;
    f->device_id = 1;
    snprintf(f->message, sizeof f->message, "fake: no reply to the %s", what);
    return -1;
}

int drv_read(drv *d, drv_state *out, drv_fault *f)
{
    if (atomic_load(&fake.fail_reads) || now_ns() < atomic_load(&fake.fail_reads_until))
        return fake_fail(f, "read");
    atomic_store(&fake.last_ok_read, now_ns());
    memset(out, 0, sizeof *out);
    out->n = d->n;
    for (int j = 0; j < d->n && j < 2; j++) out->q[j] = atomic_load(&fake.q[j]);
    out->has_velocity = true;
    out->host_time_ns = (uint64_t)now_ns();
    return 0;
}

int drv_write(drv *d, const double *tau, drv_fault *f)
{
    if (atomic_load(&fake.fail_writes)) return fake_fail(f, "write");
    memcpy(fake.last_tau, tau, sizeof(double) * (size_t)d->n);
    atomic_fetch_add(&fake.writes, 1);
    return 0;
}

int drv_enable(drv *d, bool on, drv_fault *f)
{
    (void)d, (void)on, (void)f;
    return 0;
}

double drv_torque_capacity(const drv *d, int joint)
{
    (void)d, (void)joint;
    return INFINITY;
}

const char *drv_status_name(drv_status s)
{
    return s == DRV_ETIMEOUT ? "timeout" : "other";
}

void drv_close(drv *d)
{
    free(d);
}

/* ---------------------------------------------------------------------------- harness */
static const char *config_path;
static armd_config cfg;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A started controller for the test config at 1 kHz with the fake arm; the fake reset. */
static ctl *start(void)
{
    memset(&fake, 0, sizeof fake);
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(config_path, &cfg, &rep), 0);
    cfg_report_free(&rep);
    cfg.rate_hz = 1000;
    cfg.safety.on_fault = ON_FAULT_TORQUE_OFF;
    cfg.safety.max_failed_reads = 3;
    cfg.safety.max_read_gap_ms = 100;
    cfg.realtime.priority = 50; /* SCHED_FIFO where allowed: fewer host stalls in the test */
    for (int j = 0; j < cfg.n_joints; j++) cfg.joint[j].following_error = 1.0;
    cfg.trajectory.path_tolerance = 1.0;
    dyn_model *m = dyn_model_create(&cfg.model, NULL, NULL);
    assert_non_null(m);
    drv *d = calloc(1, sizeof *d);
    d->n = cfg.n_joints;
    ctl_error e;
    ctl *c = ctl_create(&cfg, m, d, &e);
    assert_non_null(c);
    assert_int_equal(ctl_start(c, &e), 0);
    return c;
}

static ctl_status status(ctl *c)
{
    ctl_status st;
    ctl_status_get(c, &st);
    return st;
}

/* Waits (at most timeout s) for the state; returns the last status. */
static ctl_status wait_state(ctl *c, ctl_state want, double timeout)
{
    ctl_status st = status(c);
    for (double t = 0; t < timeout && st.state != want; t += 0.002) {
        sleep_s(0.002);
        st = status(c);
    }
    return st;
}

static void wait_ticks(ctl *c, uint64_t n)
{
    uint64_t t0 = status(c).ticks;
    for (int i = 0; i < 5000 && status(c).ticks < t0 + n; i++) sleep_s(0.001);
}

static void enable(ctl *c)
{
    ctl_error e;
    assert_int_equal(ctl_enable(c, NULL, &e), 0);
    assert_int_equal(status(c).state, CTL_HOLDING);
}

/* ------------------------------------------------------------------------------ tests */
static void writes_failing_while_reads_succeed_fault(void **state)
{
    (void)state;
    ctl *c = start();
    enable(c);
    wait_ticks(c, 20);
    atomic_store(&fake.fail_writes, 1);
    /* reads keep succeeding: before writes were counted apart, every good read reset the
     * count and this never faulted */
    ctl_status st = wait_state(c, CTL_FAULT, 2.0);
    assert_int_equal(st.state, CTL_FAULT);
    assert_non_null(strstr(st.fault, "consecutive failed writes"));
    assert_true(st.failed_writes >= 3);
    assert_int_equal(st.failed_reads, 0);
    ctl_free(c);
}

static void short_read_gap_ridden_out_long_one_faults(void **state)
{
    (void)state;
    ctl *c = start();
    enable(c);
    wait_ticks(c, 20);
    /* 20 ms without a reply (20 failed reads at 1 kHz, more than max_failed_reads = 3) but
     * shorter than max_read_gap_ms = 100: ridden out */
    atomic_store(&fake.fail_reads_until, now_ns() + 20000000);
    sleep_s(0.05);
    wait_ticks(c, 20);
    ctl_status st = status(c);
    assert_int_equal(st.state, CTL_HOLDING);
    assert_true(st.failed_reads >= 3);
    assert_int_equal(st.read_gaps, 1);
    /* the tick times the gap between the reads that bound it, so it can come out a little
     * short of the 20 ms the fake was silent for when a read straddles the switch */
    assert_true(st.longest_read_gap_ms >= 10 && st.longest_read_gap_ms < 100);
    /* a device that stays silent: fault once the gap passes 100 ms, naming it */
    atomic_store(&fake.fail_reads, 1);
    st = wait_state(c, CTL_FAULT, 3.0);
    /* not before the gap tolerance, counted from the last read that returned a state (which
     * may precede the switch by a period or a stall) */
    double silent_ms = (double)(now_ns() - atomic_load(&fake.last_ok_read)) * 1e-6;
    assert_int_equal(st.state, CTL_FAULT);
    assert_non_null(strstr(st.fault, "consecutive failed reads, no state for"));
    assert_true(silent_ms >= 100);
    for (int j = 0; j < st.n; j++) assert_true(st.tau[j] == 0);
    ctl_free(c);
}

/* Reloads a copy of the running configuration with one joint's kp replaced. */
static int reload_kp(ctl *c, double kp, ctl_error *e)
{
    static armd_config cand;
    cand = *ctl_config(c);
    cand.joint[1].kp = kp;
    char changed[256];
    return ctl_reload(c, &cand, changed, sizeof changed, NULL, e);
}

static void nonfinite_gain_faults_naming_it(void **state)
{
    (void)state;
    ctl *c = start();
    enable(c);
    wait_ticks(c, 20);
    ctl_error e;
    /* ctl_reload trusts its (normally validated) candidate: the tick is the last line */
    assert_int_equal(reload_kp(c, NAN, &e), 0);
    ctl_status st = wait_state(c, CTL_FAULT, 1.0);
    assert_int_equal(st.state, CTL_FAULT);
    assert_string_equal(st.fault, "non-finite gain kp on elbow (trajectory 0)");
    for (int j = 0; j < st.n; j++) assert_true(fake.last_tau[j] == 0);
    ctl_free(c);
}

static void nonfinite_torque_is_a_fault_not_a_zero(void **state)
{
    (void)state;
    ctl *c = start();
    enable(c);
    wait_ticks(c, 20);
    /* the arm is pushed 2 rad away (within following_error = 3 here) and a finite but absurd
     * gain multiplies the error: kp e overflows to inf in the law. law_limit used to turn
     * that into a zero torque while the state said holding (a real arm falls) */
    static armd_config cand;
    cand = *ctl_config(c);
    for (int j = 0; j < cand.n_joints; j++) {
        cand.joint[j].following_error = 3;
        cand.joint[j].kp = 1e308;
    }
    ctl_error e;
    char changed[256];
    assert_int_equal(ctl_reload(c, &cand, changed, sizeof changed, NULL, &e), 0);
    atomic_store(&fake.q[0], -2.0);
    ctl_status st = wait_state(c, CTL_FAULT, 1.0);
    assert_int_equal(st.state, CTL_FAULT);
    assert_non_null(strstr(st.fault, "non-finite torque on "));
    assert_non_null(strstr(st.fault, " from the computed_torque law (trajectory 0)"));
    for (int j = 0; j < st.n; j++) assert_true(fake.last_tau[j] == 0);
    ctl_free(c);
}

static void reload_switches_law_only_while_holding(void **state)
{
    (void)state;
    ctl *c = start();
    enable(c);
    ctl_error e;
    double q[CFG_MAX_JOINTS] = {0.02, -0.02};
    uint32_t id;
    double dur;
    assert_int_equal(ctl_move_to(c, q, 1.0, &id, &dur, NULL, &e), 0);
    static armd_config cand;
    cand = *ctl_config(c);
    cand.controller = CTRL_PD_GRAVITY;
    char changed[256];
    assert_int_equal(ctl_reload(c, &cand, changed, sizeof changed, NULL, &e), -1);
    assert_string_equal(e.code, "bad_state");
    assert_non_null(strstr(e.message, "[arm] controller = pd_gravity"));
    ctl_status st = status(c);
    assert_int_equal(st.state, CTL_MOVING);
    assert_int_equal(st.controller, CTRL_COMPUTED_TORQUE); /* the law did not switch */
    assert_int_equal(ctl_config(c)->controller, CTRL_COMPUTED_TORQUE);
    assert_int_equal(ctl_hold(c, NULL, &e), 0);
    assert_int_equal(ctl_reload(c, &cand, changed, sizeof changed, NULL, &e), 0);
    assert_non_null(strstr(changed, "controller"));
    wait_ticks(c, 2);
    st = status(c);
    assert_int_equal(st.state, CTL_HOLDING);
    assert_int_equal(st.controller, CTRL_PD_GRAVITY);
    ctl_free(c);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONFIG.ini\n", argv[0]);
        return 2;
    }
    config_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_failing_while_reads_succeed_fault),
        cmocka_unit_test(short_read_gap_ridden_out_long_one_faults),
        cmocka_unit_test(nonfinite_gain_faults_naming_it),
        cmocka_unit_test(nonfinite_torque_is_a_fault_not_a_zero),
        cmocka_unit_test(reload_switches_law_only_while_holding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
