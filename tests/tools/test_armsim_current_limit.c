/*
 * test_armsim_current_limit.c — servo sizing against the joints' torque limits, end to end:
 * armsim playing the PUMA 560 example (config/examples/puma560.ini, j2: 186.4 N m at 28.03 N m/A
 * = 6.65 A, twice the XM430's factory Current Limit) sizes its servos for the arm, so the dxl2
 * probe passes and the full torque limit reaches the simulated joint; with --current-limit 1.0
 * (undersized servos) the probe fails with DRV_EPROBE, the servo's ID and a message naming the
 * joint, both currents and the key to change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/drivers.h"
#include "tests/tools/sim_harness.h"

/* Path of config/examples/puma560.ini: next to the planar2 example (env ARMSIM_PLANAR2_INI). */
static const char *puma_ini(void)
{
    static char path[512];
    const char *planar = getenv("ARMSIM_PLANAR2_INI");
    assert_non_null(planar);
    const char *slash = strrchr(planar, '/');
    int dir = slash ? (int)(slash - planar + 1) : 0;
    assert_true(snprintf(path, sizeof path, "%.*spuma560.ini", dir, planar) < (int)sizeof path);
    return path;
}

static sim_proc sim; /* static: sim_teardown reaches it after a failed assertion */

/* Starts armsim on the PUMA example with the extra options and opens the driver on it. */
static drv *start_puma(const char *const *extra, armd_config **cfg_out)
{
    const char *ini = puma_ini();
    assert_int_equal(sim_start(&sim, ini, extra), 0);
    armd_config *cfg = sim_load_config(ini, sim.link, -1);
    drv_fault f;
    drv *d = drv_open(cfg, &f);
    if (!d) fail_msg("drv_open: %s", f.message);
    *cfg_out = cfg;
    return d;
}

static void stop_puma(drv *d, armd_config *cfg)
{
    drv_close(d);
    assert_int_equal(sim_stop(&sim), 0);
    sim_cleanup(&sim);
    free(cfg);
}

/* Default armsim: servos sized for the arm. The probe passes and j2's full torque limit is
 * applied (before the sizing it topped out at 1193 x 2.69 mA x 28.03 N m/A = 89.9 N m). */
static void test_sized_servos_pass_and_deliver(void **state)
{
    (void)state;
    armd_config *cfg;
    drv *d = start_puma(NULL, &cfg);
    drv_fault f;
    if (drv_probe(d, &f) != 0)
        fail_msg("drv_probe: %s (device %d): %s", drv_status_name(f.status), f.device_id,
                 f.message);
    const cfg_joint *j2 = &cfg->joint[1];
    assert_string_equal(j2->name, "j2");
    double tau[CFG_MAX_JOINTS] = {0};
    tau[1] = j2->torque;
    assert_int_equal(drv_enable(d, true, &f), 0);
    /* the measured torque comes from Present Current; one unit is 2.69 mA x torque_per_amp */
    double tol = 1.5 * DXL2_CURRENT_UNIT_A * j2->torque_per_amp;
    drv_state s = {0};
    double t0 = sim_elapsed();
    do { /* a few ticks: the physics publishes the applied torque at its next step */
        assert_int_equal(drv_write(d, tau, &f), 0);
        sim_sleep(0.005);
        if (drv_read(d, &s, &f) != 0) fail_msg("drv_read: %s", f.message);
    } while (fabs(s.tau[1] - tau[1]) > tol && sim_elapsed() - t0 < 2.0);
    print_message("j2 commanded %.2f N m, measured %.2f N m\n", tau[1], s.tau[1]);
    tau[1] = 0;
    (void)drv_write(d, tau, &f);
    (void)drv_enable(d, false, &f);
    assert_true(fabs(s.tau[1] - j2->torque) <= tol);
    stop_puma(d, cfg);
}

/* --current-limit 1.0: every servo undersized; the first joint (j1, 97.6 N m at 16.28 N m/A)
 * is reported with its servo's ID. */
static void test_undersized_servos_fail_probe(void **state)
{
    (void)state;
    const char *extra[] = {"--current-limit", "1.0", NULL};
    armd_config *cfg;
    drv *d = start_puma(extra, &cfg);
    drv_fault f;
    assert_int_equal(drv_probe(d, &f), -1);
    print_message("probe: %s (device %d): %s\n", drv_status_name(f.status), f.device_id, f.message);
    const cfg_joint *j1 = &cfg->joint[0];
    assert_int_equal(f.status, DRV_EPROBE);
    assert_int_equal(f.device_id, j1->id[0]);
    char want[192];
    snprintf(want, sizeof want, "[joint %s] torque %g needs", j1->name, j1->torque);
    assert_non_null(strstr(f.message, want));
    /* the current each servo needs at the torque limit */
    double need = j1->torque / (j1->n_ids * j1->torque_per_amp);
    snprintf(want, sizeof want, "%.2f A per servo", need);
    assert_non_null(strstr(f.message, want));
    /* the servo's limit: 1.0 A in whole 2.69 mA units */
    double lim = nearbyint(1.0 / DXL2_CURRENT_UNIT_A) * DXL2_CURRENT_UNIT_A;
    snprintf(want, sizeof want, "servo %d's Current Limit (address 38) is %.2f A", j1->id[0], lim);
    assert_non_null(strstr(f.message, want));
    assert_non_null(strstr(f.message, "lower torque to"));
    stop_puma(d, cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sized_servos_pass_and_deliver, sim_teardown),
        cmocka_unit_test_teardown(test_undersized_servos_fail_probe, sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
