/*
 * test_simbus_brake.c — armsim's --brake (a holding brake on every joint while the torque of
 * every joint is off, physics.h) on its in-process bus (tools/armsim/simbus.h) with the real
 * driver (simbus_rig.h), for the OpenManipulator-X example from --q0 0,0,-1.4,0, from where the
 * limp arm falls (joint2 onto its end stop within 0.7 s of the start):
 *  - without --brake it falls as before, disabled;
 *  - with --brake, dxl2 (the example's four servos and its tool servo) and the armlink board (the
 *    example without its tool): the arm stands at q0 to 1e-9 rad for 2 s of simulated time while
 *    disabled (dxl2: and 0.5 s more with the tool servo's torque alone on: it is not a joint's);
 *    enabled and driven with no goal current it falls; disabled, it stands where it was; enabled
 *    again and then left without a packet, it falls until the watchdog (dxl2: Bus Watchdog,
 *    armlink: the board's, both 100 ms) runs out, then stands there.
 * argv[1]: config/examples/open_manipulator_x.ini. Simulated time; each test runs once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "drivers/dxl2_codec.h"
#include "tests/tools/simbus_rig.h"

#define N_JOINTS    4
#define HOLD_EQ     1e-9        /* [rad]: the brake holds the joints this still */
#define CONTROL_NS  2500000ull  /* the example's control tick (400 Hz) [ns] */
#define SLICE_NS    10000000ull /* the held arm is looked at every 10 ms [ns] */
#define WATCHDOG_MS 100         /* the example's bus_watchdog_ms; the board's is set to it */

static const char *omx_ini;
static const double q0[N_JOINTS] = {0, 0, -1.4, 0};
static const char *const brake_args[] = {"--brake", "--q0", "0,0,-1.4,0", NULL};
static const char *const limp_args[] = {"--q0", "0,0,-1.4,0", NULL};

/* The OMX example on protocol type: dxl2 as it is; armlink without the tool (the board has no
 * tool servo) and with the board's watchdog at WATCHDOG_MS. */
static void load_omx(rig *r, cfg_driver_type type)
{
    rig_load(r, omx_ini, type);
    assert_int_equal(r->cfg.n_joints, N_JOINTS);
    assert_int_equal(r->cfg.driver.bus_watchdog_ms, WATCHDOG_MS);
    if (type == DRIVER_ARMLINK) {
        r->cfg.tool.present = false;
        r->cfg.driver.device_watchdog_ms = WATCHDOG_MS;
    }
}

/* Lets `seconds` of simulated time pass, asserting every SLICE_NS that the arm stands at q
 * within HOLD_EQ with no velocity; what: the situation, for the failure message. */
static void assert_held(rig *r, const double *q, double seconds, const char *what)
{
    uint64_t end = simbus_now_ns(r->b) + (uint64_t)llround(seconds * 1e9);
    for (;;) {
        physics_state s;
        simbus_state(r->b, &s);
        for (int j = 0; j < N_JOINTS; j++)
            if (fabs(s.q[j] - q[j]) > HOLD_EQ || s.qd[j] != 0.0)
                fail_msg("%s: at t = %.4f s joint %s is at %.12f rad moving %g rad/s; held at "
                         "%.12f",
                         what, s.t, r->cfg.joint[j].name, s.q[j], s.qd[j], q[j]);
        uint64_t now = simbus_now_ns(r->b);
        if (now >= end) return;
        simbus_advance_to(r->b, now + SLICE_NS < end ? now + SLICE_NS : end);
    }
}

/* The control loop with no goal current for `seconds`: a read and a zero-torque write every
 * CONTROL_NS. */
static void run_limp(rig *r, double seconds)
{
    double tau[CFG_MAX_JOINTS] = {0};
    uint64_t end = simbus_now_ns(r->b) + (uint64_t)llround(seconds * 1e9);
    while (simbus_now_ns(r->b) < end) {
        uint64_t t = simbus_now_ns(r->b);
        drv_state rd;
        drv_fault f;
        if (drv_read(r->d, &rd, &f) != 0 || drv_write(r->d, tau, &f) != 0)
            fail_msg("control loop: %s (%s)", f.message, drv_status_name(f.status));
        simbus_advance_to(r->b, t + CONTROL_NS);
    }
}

static void enable(rig *r, bool on)
{
    drv_fault f;
    if (drv_enable(r->d, on, &f) != 0) fail_msg("drv_enable(%d): %s", on, f.message);
}

/* Torque Enable 1 on the tool servo alone, with a Write past the (idle) driver; its status
 * reply says it took it. */
static void tool_torque_on(rig *r)
{
    const drv_link *l = simbus_link(r->b);
    uint8_t pkt[DXL2_MAX_PACKET], one = 1, buf[256];
    int n = dxl2_build_write(pkt, sizeof pkt, (uint8_t)r->cfg.tool.id, DXL2_ADDR_TORQUE_ENABLE,
                             &one, 1);
    assert_true(n > 0);
    assert_int_equal(l->write(l->ctx, pkt, (size_t)n), 0);
    dxl2_framer fr;
    dxl2_framer_reset(&fr);
    uint64_t deadline = simbus_now_ns(r->b) + 3000000ull;
    int replies = 0;
    ssize_t got;
    while ((got = l->read(l->ctx, buf, sizeof buf, deadline)) > 0)
        for (size_t used = 0; used < (size_t)got;) {
            used += dxl2_framer_push(&fr, buf + used, (size_t)got - used);
            dxl2_packet p;
            while (dxl2_framer_next(&fr, &p) == DXL2_OK) {
                assert_int_equal(p.id, r->cfg.tool.id);
                assert_int_equal(p.error, 0);
                replies++;
            }
        }
    assert_int_equal(replies, 1);
}

/* Joint2's distance from where it was in `from` [rad]. */
static double moved(rig *r, const physics_state *from, physics_state *now)
{
    simbus_state(r->b, now);
    return fabs(now->q[1] - from->q[1]);
}

/* The brake through the torque's life on either protocol (see the top). */
static void brake_run(cfg_driver_type type)
{
    static rig r;
    load_omx(&r, type);
    rig_start(&r, brake_args);
    assert_held(&r, q0, 2.0, "disabled");
    if (r.cfg.tool.present) {
        tool_torque_on(&r);
        assert_held(&r, q0, 0.5, "the tool servo's torque alone on");
    }

    physics_state s0 = {0}, s1, s2;
    memcpy(s0.q, q0, sizeof q0);
    enable(&r, true);
    run_limp(&r, 0.3);
    double fell = moved(&r, &s0, &s1);
    print_message("enabled, no goal current: joint2 fell %.3f rad in 0.3 s\n", fell);
    assert_true(fell > 0.05 && fabs(s1.qd[1]) > 0.1);

    enable(&r, false);
    simbus_state(r.b, &s1);
    assert_held(&r, s1.q, 1.0, "disabled again");

    enable(&r, true);
    run_limp(&r, 0.1); /* the last packet: the watchdog runs from here */
    simbus_state(r.b, &s1);
    simbus_advance_to(r.b, simbus_now_ns(r.b) + (WATCHDOG_MS + 20) * 1000000ull);
    fell = moved(&r, &s1, &s2);
    print_message("left alone: joint2 fell %.3f rad until the watchdog ran out\n", fell);
    assert_true(fell > 1e-3);
    assert_held(&r, s2.q, 1.0, "the watchdog run out");
    rig_stop(&r);
}

static void test_dxl2(void **state)
{
    (void)state;
    brake_run(DRIVER_DXL2);
}

static void test_armlink(void **state)
{
    (void)state;
    brake_run(DRIVER_ARMLINK);
}

/* Without --brake the limp arm falls while disabled, as it always did: 0.7 s after the start
 * joint2 is on its end stop, within 10 mrad of its upper limit (1.5 rad; the stop is the stiff
 * spring of physics_impl.h, and the arm comes to rest 2.3 mrad into it). */
static void test_no_brake(void **state)
{
    (void)state;
    static rig r;
    load_omx(&r, DRIVER_DXL2);
    rig_start(&r, limp_args);
    simbus_advance_to(r.b, SIMBUS_START_NS + 700000000ull);
    physics_state s;
    simbus_state(r.b, &s);
    print_message("no brake: joint2 at %.5f rad 0.7 s after the start (upper limit %.5f)\n", s.q[1],
                  r.cfg.joint[1].upper);
    assert_true(fabs(s.q[1] - r.cfg.joint[1].upper) < 0.01);
    rig_stop(&r);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_simbus_brake OPEN_MANIPULATOR_X.ini\n");
        return 2;
    }
    omx_ini = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_brake),
        cmocka_unit_test(test_dxl2),
        cmocka_unit_test(test_armlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
