/*
 * test_simbus.c — the real driver (drivers/) over armsim's in-process bus (tools/armsim/simbus.h)
 * on simulated time: no process, no pseudo-terminal, no sleeping. For the PUMA 560 example (dxl2)
 * and the planar test arm as an armlink board, the driver probes, enables, then writes a
 * constant torque and reads the state every 1 ms tick:
 *  - a read is the true state at its request's arrival within the encoder's resolution (half a
 *    count, half a velocity unit), and its bus time is drv_tick_bus_time_us's formula;
 *  - the applied torque is the one written, quantised to the current unit, and the motion is the
 *    configured model's, integrated here by RK4 at armsim's step;
 *  - two runs of the same script read the same bits (noise and dropped replies included);
 *  - --truth writes every physics step.
 * Faults at chosen moments: test_simbus_faults.c. The rig: simbus_rig.h.
 * Arms: argv[1] = config/examples/puma560.ini, argv[2] = tests/tools/data/planar2.ini.
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
#include <unistd.h>

#include "dynamics/dynamics.h"
#include "tests/tools/simbus_rig.h"

#define N_TICKS   300    /* ticks of the constant-torque run */
#define N_SETTLE  20     /* ticks before the prediction starts (the torque surely on) */
#define SMOOTHING "0.05" /* --friction-smoothing [rad/s]: the same in armsim and here */
/* [rad|rad/s]: armsim against the RK4 here: the same model and steps, only the order of the
 * additions may differ */
#define PREDICT_EQ 1e-9

static const char *puma_ini, *planar_ini;

/* Asserts that a read is the state s within the quantisation: half an encoder count, half a
 * velocity unit (+ 1e-9 for the conversions' rounding). */
static void assert_reads(const rig *r, const drv_state *rd, const physics_state *s, int tick)
{
    for (int j = 0; j < r->cfg.n_joints; j++) {
        const cfg_joint *J = &r->cfg.joint[j];
        double q_tol = 0.5 * 2 * M_PI / J->counts_per_rev / fabs(J->gear_ratio) + 1e-9;
        double qd_tol = 0.5 * units_rpm_to_qd(J, 0, r->vel_unit) * J->direction[0] + 1e-9;
        if (fabs(rd->q[j] - s->q[j]) > q_tol || fabs(rd->qd[j] - s->qd[j]) > qd_tol)
            fail_msg("tick %d, joint %s: read q %.9f qd %.9f, true q %.9f qd %.9f (tolerance %.2g, "
                     "%.2g)",
                     tick, J->name, rd->q[j], rd->qd[j], s->q[j], s->qd[j], q_tol, qd_tol);
    }
}

/* One classical RK4 step of h [s] of the configured model at constant tau (armsim's rk4_step
 * without end stops, pushes or wall, none of which act here). */
static void rk4(const dyn_model *m, dyn_data *w, int n, double *q, double *qd, const double *tau,
                double h)
{
    double a1[CFG_MAX_JOINTS], a2[CFG_MAX_JOINTS], a3[CFG_MAX_JOINTS], a4[CFG_MAX_JOINTS];
    double v2[CFG_MAX_JOINTS], v3[CFG_MAX_JOINTS], v4[CFG_MAX_JOINTS], x[CFG_MAX_JOINTS];
    assert_int_equal(dyn_forward_aba(m, w, q, qd, tau, NULL, DYN_ALL, a1), 0);
    for (int j = 0; j < n; j++) {
        x[j] = q[j] + 0.5 * h * qd[j];
        v2[j] = qd[j] + 0.5 * h * a1[j];
    }
    assert_int_equal(dyn_forward_aba(m, w, x, v2, tau, NULL, DYN_ALL, a2), 0);
    for (int j = 0; j < n; j++) {
        x[j] = q[j] + 0.5 * h * v2[j];
        v3[j] = qd[j] + 0.5 * h * a2[j];
    }
    assert_int_equal(dyn_forward_aba(m, w, x, v3, tau, NULL, DYN_ALL, a3), 0);
    for (int j = 0; j < n; j++) {
        x[j] = q[j] + h * v3[j];
        v4[j] = qd[j] + h * a3[j];
    }
    assert_int_equal(dyn_forward_aba(m, w, x, v4, tau, NULL, DYN_ALL, a4), 0);
    for (int j = 0; j < n; j++) {
        q[j] += h / 6.0 * (qd[j] + 2.0 * v2[j] + 2.0 * v3[j] + v4[j]);
        qd[j] += h / 6.0 * (a1[j] + 2.0 * a2[j] + 2.0 * a3[j] + a4[j]);
    }
}

/* Compares armsim's state s with the model's q, qd (PREDICT_EQ). */
static void assert_predicted(const rig *r, const physics_state *s, const double *q,
                             const double *qd, int tick)
{
    for (int j = 0; j < r->cfg.n_joints; j++)
        if (fabs(s->q[j] - q[j]) > PREDICT_EQ || fabs(s->qd[j] - qd[j]) > PREDICT_EQ)
            fail_msg("tick %d, joint %s: armsim q %.12f qd %.12f, the model %.12f %.12f", tick,
                     r->cfg.joint[j].name, s->q[j], s->qd[j], q[j], qd[j]);
}

/* A constant torque tau for N_TICKS ticks, read and written every tick. Checks every read against
 * the true state at its tick (the request's arrival lies within the physics step that ends at the
 * tick), the bus time of a tick (tick_bus_ns), that the first write acts from the physics step
 * that holds its arrival (write_bytes after it was written), the torque applied, and from tick
 * N_SETTLE on the motion against the model's prediction. */
static void constant_torque(rig *r, const double *tau, bool no_gravity, uint64_t tick_bus_ns,
                            size_t write_bytes)
{
    const int n = r->cfg.n_joints;
    dyn_model_desc desc = r->cfg.model;
    desc.friction_smoothing = atof(SMOOTHING);
    if (no_gravity) desc.gravity[0] = desc.gravity[1] = desc.gravity[2] = 0.0;
    dyn_model *m = dyn_model_create(&desc, NULL, NULL);
    dyn_data *w = dyn_data_create(m);
    assert_non_null(w);
    const double h = (double)llround(1e9 / r->opt.rate_hz) * 1e-9;
    const int steps_per_tick = (int)(TICK_NS / (uint64_t)llround(1e9 / r->opt.rate_hz));
    double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], held[CFG_MAX_JOINTS];
    drv_fault f;
    uint64_t stuffed = 0;  /* bytes the formula does not count */
    uint64_t t_arrive = 0; /* when the first write reaches the devices */
    for (int i = 0; i < N_TICKS; i++) {
        uint64_t t = simbus_now_ns(r->b);
        assert_true(t % TICK_NS == 0);
        physics_state s;
        simbus_state(r->b, &s);
        if (i == 0) { /* torque off until the first write reaches the devices */
            for (int j = 0; j < n; j++) {
                q[j] = s.q[j];
                qd[j] = s.qd[j];
                assert_true(s.tau[j] == 0.0);
            }
        } else if (i == 1) {
            for (int k = 0; k < steps_per_tick; k++) {
                bool on = t - TICK_NS + (uint64_t)(k + 1) * (TICK_NS / steps_per_tick) > t_arrive;
                for (int j = 0; j < n; j++) held[j] = on ? rig_applied(r, j, tau[j]) : 0.0;
                rk4(m, w, n, q, qd, held, h);
            }
            assert_predicted(r, &s, q, qd, i);
        }
        if (i == N_SETTLE) { /* the prediction starts from the true state, the torque applied */
            for (int j = 0; j < n; j++) {
                q[j] = s.q[j];
                qd[j] = s.qd[j];
                held[j] = s.tau[j];
                if (fabs(s.tau[j] - rig_applied(r, j, tau[j])) > 1e-12)
                    fail_msg("joint %s: %.9f N m applied, %.9f written (%.9f after rounding)",
                             r->cfg.joint[j].name, s.tau[j], tau[j], rig_applied(r, j, tau[j]));
            }
        } else if (i > N_SETTLE) {
            for (int k = 0; k < steps_per_tick; k++) rk4(m, w, n, q, qd, held, h);
            assert_predicted(r, &s, q, qd, i);
        }
        drv_state rd;
        if (drv_read(r->d, &rd, &f) != 0) fail_msg("tick %d: drv_read: %s", i, f.message);
        assert_reads(r, &rd, &s, i);
        assert_true(rd.host_time_ns == simbus_now_ns(r->b));
        if (r->cfg.driver.type == DRIVER_ARMLINK) /* the board's time: the state's */
            assert_true(rd.device_time_us == (uint64_t)llround(s.t * 1e6));
        if (i == 0) t_arrive = simbus_now_ns(r->b) + rig_bytes_ns(r, write_bytes);
        if (drv_write(r->d, tau, &f) != 0) fail_msg("tick %d: drv_write: %s", i, f.message);
        /* the formula leaves out byte stuffing (dxl2: one more byte after each FF FF FD in a
         * packet's data, at most 3 in a servo's 10 state bytes) */
        uint64_t bus = simbus_now_ns(r->b) - t, byte = rig_bytes_ns(r, 1);
        uint64_t most = tick_bus_ns + 3u * (uint64_t)r->cfg.n_joints * byte;
        if (bus < tick_bus_ns || bus > most || (bus - tick_bus_ns) % byte != 0)
            fail_msg("tick %d: the bus took %llu ns, the formula says %llu (+ whole stuffed bytes)",
                     i, (unsigned long long)bus, (unsigned long long)tick_bus_ns);
        stuffed += (bus - tick_bus_ns) / byte;
        simbus_advance_to(r->b, t + TICK_NS);
    }
    physics_state s;
    simbus_state(r->b, &s);
    print_message("%s: %d ticks; joint 1 moved %.4f rad, joint %d %.4f rad; %llu stuffed bytes\n",
                  r->cfg.name, N_TICKS, s.q[0], n, s.q[n - 1], (unsigned long long)stuffed);
    /* the torque did move the arm: well beyond the reading tolerance */
    assert_true(fabs(s.q[n - 1]) > 0.01);
    dyn_data_free(w);
    dyn_model_free(m);
}

/* PUMA 560 over dxl2: the Sync Write gets no reply, so the host's clock passes only the read:
 * drv_tick_bus_time_us minus the Sync Write's bytes (14 + 3 n). */
static void test_dxl2_motion(void **state)
{
    (void)state;
    static rig r;
    rig_load(&r, puma_ini, DRIVER_DXL2);
    const char *args[] = {"--no-gravity", "--friction-smoothing", SMOOTHING, NULL};
    rig_start_enabled(&r, args);
    double tau[CFG_MAX_JOINTS] = {30.0, 0, 0, 0, 0, 1.0};
    uint64_t tick_ns = (uint64_t)llround(drv_tick_bus_time_us(&r.cfg) * 1e3) -
                       rig_bytes_ns(&r, 14 + 3 * (size_t)r.cfg.n_joints);
    constant_torque(&r, tau, true, tick_ns, 14 + 3 * (size_t)r.cfg.n_joints); /* Sync Write */
    rig_stop(&r);
}

/* The planar arm (a mirrored twin on the elbow) over armlink, under gravity: both requests are
 * acknowledged, so a tick takes drv_tick_bus_time_us exactly. */
static void test_armlink_motion(void **state)
{
    (void)state;
    static rig r;
    rig_load(&r, planar_ini, DRIVER_ARMLINK);
    const char *args[] = {"--friction-smoothing", SMOOTHING, "--q0", "0.3,-0.2", NULL};
    rig_start_enabled(&r, args);
    double tau[CFG_MAX_JOINTS] = {1.5, -0.4};
    int channels = 0; /* the board's: the highest configured channel + 1 */
    for (int j = 0; j < r.cfg.n_joints; j++)
        for (int k = 0; k < r.cfg.joint[j].n_ids; k++)
            if (r.cfg.joint[j].id[k] + 1 > channels) channels = r.cfg.joint[j].id[k] + 1;
    constant_torque(&r, tau, false, (uint64_t)llround(drv_tick_bus_time_us(&r.cfg) * 1e3),
                    8 + 4 * (size_t)channels); /* WRITE_TORQUE */
    rig_stop(&r);
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

/* A script on the PUMA with encoder noise and dropped replies: 200 ticks of a torque that
 * changes every tick; returns the checksum of every read (the fault's status for a failed one),
 * the bus's clock and the final true state. *timeouts: the reads that timed out. */
static uint64_t scripted_run(const char *seed, uint64_t *timeouts)
{
    static rig r;
    rig_load(&r, puma_ini, DRIVER_DXL2);
    r.cfg.driver.retries = 0;
    const char *args[] = {"--noise",        "2",    "--drop", "0.02", "--seed", seed,
                          "--faults-after", "1000", NULL};
    rig_start_enabled(&r, args);
    simbus_faults_start(r.b); /* the drops from now, once enabled (armsim's SIGUSR1) */
    uint64_t h = 0xCBF29CE484222325ull;
    drv_fault f;
    for (int i = 0; i < 200; i++) {
        uint64_t t = simbus_now_ns(r.b);
        drv_state rd;
        if (drv_read(r.d, &rd, &f) == 0) {
            h = fnv(h, rd.q, sizeof(double) * (size_t)rd.n);
            h = fnv(h, rd.qd, sizeof(double) * (size_t)rd.n);
            h = fnv(h, rd.tau, sizeof(double) * (size_t)rd.n);
            h = fnv(h, &rd.host_time_ns, sizeof rd.host_time_ns);
        } else {
            h = fnv(h, &f.status, sizeof f.status);
        }
        double tau[CFG_MAX_JOINTS] = {40.0 * sin(i * 0.05), 20.0, -10.0, 0.0, 1.0, 0.5};
        if (drv_write(r.d, tau, &f) != 0) fail_msg("drv_write: %s", f.message);
        simbus_advance_to(r.b, t + TICK_NS > simbus_now_ns(r.b) ? t + TICK_NS : simbus_now_ns(r.b));
    }
    physics_state s;
    simbus_state(r.b, &s);
    h = fnv(h, s.q, sizeof(double) * (size_t)s.n);
    h = fnv(h, s.qd, sizeof(double) * (size_t)s.n);
    uint64_t now = simbus_now_ns(r.b);
    h = fnv(h, &now, sizeof now);
    *timeouts = drv_counters_get(r.d)->timeouts;
    rig_stop(&r);
    return h;
}

/* Same script, same options, same seed: the same bits; another seed: other bits. */
static void test_deterministic(void **state)
{
    (void)state;
    uint64_t to1, to2, to3;
    uint64_t h1 = scripted_run("7", &to1), h2 = scripted_run("7", &to2);
    uint64_t h3 = scripted_run("8", &to3);
    print_message("checksums %016llx %016llx (seed 8: %016llx); timeouts %llu %llu %llu\n",
                  (unsigned long long)h1, (unsigned long long)h2, (unsigned long long)h3,
                  (unsigned long long)to1, (unsigned long long)to2, (unsigned long long)to3);
    assert_true(to1 > 0); /* the dropped replies were part of what was compared */
    assert_true(h1 == h2);
    assert_true(to1 == to2);
    assert_true(h1 != h3);
}

/* --truth in process: one row per physics step from t = 0 to now, none lost, mono the simulated
 * clock. */
static void test_truth_lossless(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_simbus.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/truth.csv", dir);
    static rig r;
    rig_load(&r, puma_ini, DRIVER_DXL2);
    const char *args[] = {"--truth", path, NULL};
    rig_start_enabled(&r, args);
    bool ok[100];
    uint64_t t[100];
    rig_read_ticks(&r, 100, ok, t, DRV_OK);
    uint64_t now = simbus_now_ns(r.b);
    rig_stop(&r);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char line[4096];
    size_t rows = 0;
    double t_last = -1, mono_last = 0;
    assert_non_null(fgets(line, sizeof line, in)); /* the header */
    int mono_col = 0;
    for (char *c = strtok(line, ",\n"); c && strcmp(c, "mono"); c = strtok(NULL, ",\n")) mono_col++;
    while (fgets(line, sizeof line, in)) {
        int col = 0;
        for (char *c = strtok(line, ","); c; c = strtok(NULL, ","), col++) {
            if (col == 0) {
                double tr = atof(c);
                assert_true(fabs(tr - (double)rows * 1e-4) < 1e-7); /* no row missing */
                t_last = tr;
            } else if (col == mono_col) {
                mono_last = atof(c);
            }
        }
        rows++;
    }
    fclose(in);
    unlink(path);
    rmdir(dir);
    size_t steps = (size_t)((now - SIMBUS_START_NS) / 100000u);
    print_message("%zu truth rows for %zu steps, last t %.4f s, mono %.4f s\n", rows, steps, t_last,
                  mono_last);
    assert_true(rows == steps + 1);
    assert_true(fabs(mono_last - (double)now * 1e-9) < 1e-4 + 1e-9);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_simbus PUMA560.ini PLANAR2.ini\n");
        return 2;
    }
    puma_ini = argv[1];
    planar_ini = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dxl2_motion),
        cmocka_unit_test(test_armlink_motion),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_truth_lossless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
