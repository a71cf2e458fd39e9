/*
 * simbus_rig.c — see simbus_rig.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "tests/tools/simbus_rig.h"

/* Loads ini with the driver type forced to type; aborts the test on errors. */
void rig_load(rig *r, const char *ini, cfg_driver_type type)
{
    cfg_report rep;
    cfg_report_init(&rep);
    int nerr = cfg_load(ini, &r->cfg, &rep);
    if (nerr) cfg_report_print(&rep, stderr);
    cfg_report_free(&rep);
    assert_int_equal(nerr, 0);
    r->cfg.driver.type = type;
    r->unit_a = type == DRIVER_DXL2 ? DXL2_CURRENT_UNIT_A : 1e-6;
    r->vel_unit = type == DRIVER_DXL2 ? DXL2_VELOCITY_UNIT_RPM : 1e-3;
}

/* The bus with armsim options args (NULL-terminated), the driver opened on it and probed. */
void rig_start(rig *r, const char *const *args)
{
    char *argv[16] = {"armsim"};
    int argc = 1;
    while (args && args[argc - 1]) {
        assert_true(argc < 15);
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    assert_int_equal(armsim_parse_options(argc, argv, &r->opt, stderr), 0);
    char err[512];
    r->b = simbus_create(&r->cfg, &r->opt, err, sizeof err);
    if (!r->b) fail_msg("simbus_create: %s", err);
    assert_true(simbus_now_ns(r->b) == SIMBUS_START_NS);
    drv_fault f;
    r->d = drv_open_link(&r->cfg, simbus_link(r->b), &f);
    if (!r->d) fail_msg("drv_open_link: %s", f.message);
    if (drv_probe(r->d, &f) != 0) fail_msg("drv_probe: %s", f.message);
    assert_true(drv_now_ns(r->d) == simbus_now_ns(r->b));
}

/* Probed and enabled; the clock moved on to the next whole tick. */
void rig_start_enabled(rig *r, const char *const *args)
{
    rig_start(r, args);
    drv_fault f;
    if (drv_enable(r->d, true, &f) != 0) fail_msg("drv_enable: %s", f.message);
    simbus_advance_to(r->b, (simbus_now_ns(r->b) / TICK_NS + 1) * TICK_NS);
}

void rig_stop(rig *r)
{
    drv_close(r->d);
    simbus_free(r->b);
}

/* The bus time of n bytes at the config's baud, 10 bits per byte [ns]. */
uint64_t rig_bytes_ns(const rig *r, size_t n)
{
    return (uint64_t)n * 10u * 1000000000u / (uint64_t)r->cfg.driver.baud;
}

/* The joint torque the devices apply for tau written: each servo's share rounded to the
 * current unit (drv_torques_to_current), back to joint torque (armsim), summed. */
double rig_applied(const rig *r, int j, double tau)
{
    const cfg_joint *J = &r->cfg.joint[j];
    double sum = 0;
    for (int k = 0; k < J->n_ids; k++) {
        double raw = (double)lround(units_tau_to_amps(J, k, tau) / r->unit_a);
        sum += units_amps_to_tau(J, k, raw * r->unit_a);
    }
    return sum;
}

/* One read (and after a good one a zero-torque write) per tick. */
void rig_read_ticks(rig *r, int ticks, bool *ok, uint64_t *t_req, drv_status want)
{
    drv_fault f;
    double tau[CFG_MAX_JOINTS] = {0};
    for (int i = 0; i < ticks; i++) {
        uint64_t t = simbus_now_ns(r->b);
        t_req[i] = t;
        drv_state rd;
        ok[i] = drv_read(r->d, &rd, &f) == 0;
        if (!ok[i] && f.status != want)
            fail_msg("read %d: %s (%s), expected %s", i, drv_status_name(f.status), f.message,
                     drv_status_name(want));
        if (ok[i] && drv_write(r->d, tau, &f) != 0) fail_msg("drv_write: %s", f.message);
        simbus_advance_to(r->b, t + TICK_NS);
    }
}
