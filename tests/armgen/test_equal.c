/* test_equal.c — proof of equality: every function of an arm's generated code (tools/armgen)
 * against the general core, at 10,000 random states per arm.
 *   test_armgen_equal CONFIG.ini...
 * For each configuration: load it (the config loader, as armd and armgen do), build the model,
 * find the module generated from it (built in for the examples, built for the test arms; the
 * model hash must match, so a missing module fails), then at each state compare inverse
 * dynamics under all 8 flag sets with and without a tool wrench, gravity, Coriolis, the mass
 * matrix (with and without armature), forward dynamics (16 cases; both must agree on success,
 * and the values when it succeeds), the Jacobian, the momentum terms, friction and the tool
 * pose.
 * Equal means |a_i - b_i| <= 1e-12 max(1, max_k |b_k|) over the output vector b of the general
 * core: relative to the largest entry, absolute below 1. States: q uniform within the joint
 * limits, qd in [-2, 2], qdd in [-5, 5], tau in [-50, 50], wrench components in [-20, 20]; a
 * tenth of them with some joints at rest (qd = 0, friction's middle branch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tools/armgen/builtin.h"

extern const dyn_gen_module *const armgen_test_modules[];

enum { STATES = 10000, N = DYN_MAX_DOF, F_COUNT = 9 };
static const double TOL = 1e-12;
static const char *const fname[F_COUNT] = {"rnea",        "gravity",  "coriolis",
                                           "mass_matrix", "forward",  "jacobian",
                                           "momentum",    "friction", "fk"};

/* The generated module whose hash is the model's, or NULL. */
static const dyn_gen_module *find_module(const dyn_model *m)
{
    const dyn_gen_module *const *lists[] = {armgen_builtin, armgen_test_modules};
    for (int l = 0; l < 2; l++)
        for (int i = 0; lists[l][i]; i++)
            if (dyn_funcs_for(m, lists[l][i]) == &lists[l][i]->funcs) return lists[l][i];
    return NULL;
}

/* The largest |a_i - b_i| / max(1, max |b|). */
static double diff(const double *a, const double *b, int k)
{
    double scale = 1.0, e = 0.0;
    for (int i = 0; i < k; i++) scale = fmax(scale, fabs(b[i]));
    for (int i = 0; i < k; i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= e)) e = d; /* NaN counts */
    }
    return e / scale;
}

typedef struct {
    double q[N], qd[N], qdd[N], tau[N], w[6];
} state;

static void random_state(const armd_config *cfg, int k, state *s)
{
    for (int i = 0; i < cfg->n_joints; i++) {
        s->q[i] = rng_uniform(cfg->joint[i].lower, cfg->joint[i].upper);
        s->qd[i] = (k % 10 == 0 && i % 2 == 0) ? 0.0 : rng_uniform(-2, 2);
        s->qdd[i] = rng_uniform(-5, 5);
        s->tau[i] = rng_uniform(-50, 50);
    }
    for (int j = 0; j < 6; j++) s->w[j] = rng_uniform(-20, 20);
}

/* One state: every function and case, the worst difference per function into worst[]. */
static void compare_state(const dyn_funcs *G, const dyn_funcs *F, const dyn_model *m, dyn_data *d,
                          const state *s, int n, double *worst, long *solved)
{
    static double a[N * N], b[N * N], a2[N], b2[N];
    for (unsigned c = 0; c < 16; c++) {
        const double *w = (c & 8) ? s->w : NULL;
        F->rnea(m, d, s->q, s->qd, s->qdd, w, c & 7, a);
        G->rnea(m, d, s->q, s->qd, s->qdd, w, c & 7, b);
        worst[0] = fmax(worst[0], diff(a, b, n));
        int ra = F->forward(m, d, s->q, s->qd, s->tau, w, c & 7, a);
        int rb = G->forward(m, d, s->q, s->qd, s->tau, w, c & 7, b);
        if (ra != rb) worst[4] = INFINITY;
        if (ra == 0 && rb == 0) worst[4] = fmax(worst[4], diff(a, b, n)), ++*solved;
    }
    F->gravity(m, d, s->q, a);
    G->gravity(m, d, s->q, b);
    worst[1] = fmax(worst[1], diff(a, b, n));
    F->coriolis(m, d, s->q, s->qd, a);
    G->coriolis(m, d, s->q, s->qd, b);
    worst[2] = fmax(worst[2], diff(a, b, n));
    for (unsigned flags = 0; flags <= DYN_ARMATURE; flags += DYN_ARMATURE) {
        F->mass_matrix(m, d, s->q, flags, a);
        G->mass_matrix(m, d, s->q, flags, b);
        worst[3] = fmax(worst[3], diff(a, b, n * n));
        F->momentum(m, d, s->q, s->qd, flags, a, a2);
        G->momentum(m, d, s->q, s->qd, flags, b, b2);
        worst[6] = fmax(worst[6], fmax(diff(a, b, n), diff(a2, b2, n)));
    }
    F->jacobian(m, d, s->q, a);
    G->jacobian(m, d, s->q, b);
    worst[5] = fmax(worst[5], diff(a, b, 6 * n));
    F->friction(m, s->qd, a);
    G->friction(m, s->qd, b);
    worst[7] = fmax(worst[7], diff(a, b, n));
    F->fk(m, d, s->q, a);
    G->fk(m, d, s->q, b);
    worst[8] = fmax(worst[8], diff(a, b, 12));
}

/* The whole comparison for the configuration whose path is *state. */
static void test_config(void **st)
{
    const char *path = *st;
    static armd_config cfg;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, &cfg, &rep);
    if (errors) cfg_report_print(&rep, stderr);
    cfg_report_free(&rep);
    assert_int_equal(errors, 0);
    dyn_model *m = dyn_model_create(&cfg.model, NULL, NULL);
    assert_non_null(m);
    dyn_data *d = dyn_data_create(m);
    const dyn_gen_module *gen = find_module(m);
    if (!gen) {
        print_error("%s: no generated module has this model's hash 0x%016llx\n", path,
                    dyn_model_hash(m));
        fail();
    }
    const int n = dyn_model_dof(m);
    double worst[F_COUNT] = {0};
    long solved = 0; /* forward-dynamics cases both solved (the others: both refused) */
    rng_seed(20240611);
    for (int k = 0; k < STATES; k++) {
        state s;
        random_state(&cfg, k, &s);
        compare_state(&dyn_general, &gen->funcs, m, d, &s, n, worst, &solved);
    }
    print_message("%s: forward dynamics solved in %ld of %d cases by both, refused by both in "
                  "the others\n",
                  path, solved, 16 * STATES);
    int bad = 0;
    for (int f = 0; f < F_COUNT; f++) {
        print_message("%s: %-12s largest difference %.2g\n", path, fname[f], worst[f]);
        if (!(worst[f] <= TOL)) {
            print_error("%s: %s differs from the general core by %.3g (> %g)\n", path, fname[f],
                        worst[f], TOL);
            bad = 1;
        }
    }
    dyn_data_free(d);
    dyn_model_free(m);
    if (bad) fail();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_armgen_equal CONFIG.ini...\n");
        return 2;
    }
    struct CMUnitTest *tests = calloc((size_t)argc - 1, sizeof *tests);
    if (!tests) return 1;
    for (int i = 1; i < argc; i++) {
        tests[i - 1].name = argv[i];
        tests[i - 1].test_func = test_config;
        tests[i - 1].initial_state = argv[i];
    }
    int rc = _cmocka_run_group_tests("armgen_equal", tests, (size_t)argc - 1, NULL, NULL);
    free(tests);
    return rc;
}
