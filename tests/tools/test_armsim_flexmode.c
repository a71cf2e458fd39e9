/*
 * test_armsim_flexmode.c — armsim plays a flexible link (config flex_* keys, dynamics/flex.h):
 * a real armsim process simulates tests/tools/data/flexbeam1.ini (one joint on a 1 m beam with
 * one bending mode, the joint held nearly still by a large armature, no torque, no damping);
 * gravity across the straight beam starts a free vibration of the mode about its static sag.
 * The period counted from the truth file's modal coordinate (hub_y1) must match the clamped
 * beam's dyn_flex_mode_omega within 1 % (El-Rayyes 1990 eq 2.24 with beta L = 1.8751), and the
 * truth's tool deflection must be the mode's tip value D_1(L) = 2 times the coordinate. Also:
 * a rigid arm's truth header has no flexible columns.
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

#include "dynamics/flex.h"
#include "tests/tools/sim_harness.h"

#define SIM_S 1.2 /* simulated time to record [s] */

/* Index of column name in a CSV header line, or -1. */
static int column(const char *header, const char *name)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", header);
    buf[strcspn(buf, "\r\n")] = 0;
    int k = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++)
        if (strcmp(tok, name) == 0) return k;
    return -1;
}

/* Reads columns a, b, c of a truth CSV into t, x, y (up to max rows); returns the row count. */
static size_t read_cols(const char *path, const char *ca, const char *cb, const char *cc, double *t,
                        double *x, double *y, size_t max)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    assert_non_null(fgets(line, sizeof line, f));
    int ia = column(line, ca), ib = column(line, cb), ic = column(line, cc);
    assert_true(ia >= 0 && ib >= 0 && ic >= 0);
    size_t n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        int k = 0;
        for (char *save, *tok = strtok_r(line, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save), k++) {
            if (k == ia) t[n] = atof(tok);
            if (k == ib) x[n] = atof(tok);
            if (k == ic) y[n] = atof(tok);
        }
        n++;
    }
    fclose(f);
    return n;
}

/* The last t in the truth file [s] (0 if none yet). */
static double last_t(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0.0;
    char line[4096];
    double t = 0.0;
    while (fgets(line, sizeof line, f))
        if (line[0] >= '0' && line[0] <= '9' && strchr(line, '\n')) t = atof(line);
    fclose(f);
    return t;
}

/* The clamped mode's angular frequency [rad/s] from the config, as armsim builds the model. */
static double expected_omega(const char *ini)
{
    armd_config *cfg = calloc(1, sizeof *cfg);
    dyn_model_desc *parts = calloc(1, sizeof *parts);
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(ini, cfg, &rep), 0);
    cfg_report_free(&rep);
    assert_true(cfg->flexible);
    char err[300];
    assert_int_equal(cfg_flex_rigid_parts(cfg, parts, err, sizeof err), 0);
    dyn_flex_model *m = dyn_flex_create(parts, &cfg->flex, NULL, NULL);
    assert_non_null(m);
    double w = dyn_flex_mode_omega(m, 0, 0, 0, NULL);
    dyn_flex_free(m);
    free(parts);
    free(cfg);
    return w;
}

static void test_first_mode_frequency(void **state)
{
    (void)state;
    const char *ini = getenv("ARMSIM_FLEXBEAM1_INI");
    assert_non_null(ini);
    const double w = expected_omega(ini);
    assert_true(fabs(w / (2 * M_PI) - 10.0) < 0.2); /* the INI's own arithmetic */
    sim_proc s;
    const char *extra[] = {"--rate", "10000", NULL};
    assert_int_equal(sim_start(&s, ini, extra), 0);
    /* wait for SIM_S of simulated time (no wall-clock assertion: a slow host just waits) */
    for (int i = 0; i < 600 && last_t(s.truth) < SIM_S; i++) sim_sleep(0.1);
    assert_int_equal(sim_stop(&s), 0);
    const size_t max = 200000;
    double *t = malloc(max * sizeof *t), *y = malloc(max * sizeof *y), *d = malloc(max * sizeof *d);
    size_t n = read_cols(s.truth, "t", "hub_y1", "defl_y", t, y, d, max);
    sim_cleanup(&s);
    assert_true(n > 2 && t[n - 1] >= SIM_S);
    /* the sag oscillates about its mean; count upward crossings of the mean */
    double mean = 0.0, amp = 0.0;
    size_t used = 0;
    for (size_t i = 0; i < n && t[i] <= SIM_S; i++, used++) mean += y[i];
    mean /= (double)used;
    double first = -1, last = -1;
    int cycles = -1;
    for (size_t i = 1; i < used; i++) {
        amp = fmax(amp, fabs(y[i] - mean));
        if (y[i - 1] < mean && y[i] >= mean) {
            double tc = t[i - 1] + (t[i] - t[i - 1]) * (mean - y[i - 1]) / (y[i] - y[i - 1]);
            if (first < 0) first = tc;
            last = tc;
            cycles++;
        }
    }
    assert_true(amp > 1e-4); /* it vibrates: the static sag is ~0.5 mm per coordinate */
    assert_true(cycles >= 8);
    const double f_sim = cycles / (last - first), f_exp = w / (2 * M_PI);
    printf("first mode: armsim %.4f Hz, dyn_flex_mode_omega %.4f Hz (%+.3f %%)\n", f_sim, f_exp,
           100 * (f_sim / f_exp - 1));
    assert_true(fabs(f_sim / f_exp - 1.0) < 0.01);
    /* deflection of the tool = D_1(L) y = 2 y across the beam (base y at q ~ 0), the same sign
     * as the coordinate: checked where the deflection is largest */
    size_t k = 0;
    for (size_t i = 0; i < used; i++)
        if (fabs(y[i]) > fabs(y[k])) k = i;
    assert_true(fabs(d[k] - 2.0 * y[k]) < 0.01 * fabs(2.0 * y[k]));
    free(t);
    free(y);
    free(d);
}

/* A rigid arm's truth file keeps its columns: nothing after mono. */
static void test_rigid_header_unchanged(void **state)
{
    (void)state;
    sim_proc s;
    assert_int_equal(sim_start(&s, getenv("ARMSIM_PLANAR2_INI"), NULL), 0);
    for (int i = 0; i < 600 && last_t(s.truth) <= 0.0; i++) sim_sleep(0.1);
    assert_int_equal(sim_stop(&s), 0);
    FILE *f = fopen(s.truth, "r");
    assert_non_null(f);
    char line[4096];
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    sim_cleanup(&s);
    assert_string_equal(line, "t,q1,q2,qd1,qd2,tau1,tau2,ext1,ext2,wall_force,tool_x,tool_y,"
                              "tool_z,mono\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_first_mode_frequency, sim_teardown),
        cmocka_unit_test_teardown(test_rigid_header_unchanged, sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
