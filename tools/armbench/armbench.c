/* armbench — nanoseconds per call of the dynamics core on the PUMA 560 and on random chains of
 * n = 2..64 joints (median of several repetitions), plus the growth ratio time(64)/time(8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/puma560_desc.h"

enum { F_RNEA, F_GRAV, F_MASS, F_CHOL, F_ABA, F_OBS, NF };
enum { MAX_REPS = 255 };
static const char *fname[NF] = {"inverse dynamics",      "gravity only",      "mass matrix (CRBA)",
                                "forward dyn. Cholesky", "forward dyn. O(n)", "collision observer"};

static volatile double sink;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Random joint inputs for a model of n joints: 8 positions q [rad or m] cycled per call (so no
 * result is reused), velocities, accelerations, torques; out is large enough for a mass matrix. */
typedef struct {
    double q[8][DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF], tau[DYN_MAX_DOF];
    double out[DYN_MAX_DOF * DYN_MAX_DOF];
} inputs;

static void fill_inputs(inputs *in, int n)
{
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < n; i++) in->q[k][i] = rng_uniform(-3, 3);
    for (int i = 0; i < n; i++) {
        in->qd[i] = rng_uniform(-1, 1);
        in->qdd[i] = rng_uniform(-1, 1);
        in->tau[i] = rng_uniform(-1, 1);
    }
}

/* One call of function f (the table's row) at the it-th position; feeds the result to sink. */
static inline void call_once(int f, const dyn_model *m, dyn_data *d, inputs *in, int it)
{
    const double *qq = in->q[it & 7];
    switch (f) {
    case F_RNEA:
        dyn_rnea(m, d, qq, in->qd, in->qdd, NULL, DYN_ALL, in->out);
        break;
    case F_GRAV:
        dyn_gravity(m, d, qq, in->out);
        break;
    case F_MASS:
        dyn_mass_matrix(m, d, qq, DYN_ALL, in->out);
        break;
    case F_CHOL:
        dyn_forward_chol(m, d, qq, in->qd, in->tau, NULL, DYN_ALL, in->out);
        break;
    case F_ABA:
        dyn_forward_aba(m, d, qq, in->qd, in->tau, NULL, DYN_ALL, in->out);
        break;
    default: /* the model terms of one observer step (daemon/collision.c): H qd, C^T qd, G, f */
        dyn_momentum(m, d, qq, in->qd, DYN_ARMATURE, in->out, in->out + DYN_MAX_DOF);
        dyn_gravity(m, d, qq, in->out + 2 * DYN_MAX_DOF);
        dyn_friction(m, in->qd, in->out + 3 * DYN_MAX_DOF);
        break;
    }
    sink += in->out[0];
}

/* Median over reps of (time of iters calls)/iters [ns]. Many short repetitions (~20 us each)
 * make the median robust on a shared, loaded machine: a repetition hit by preemption is an
 * outlier, not a shift of every sample. */
static double bench(int f, const dyn_model *m, dyn_data *d, int reps, int iters)
{
    static inputs in;
    fill_inputs(&in, dyn_model_dof(m));
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (int it = 0; it < iters; it++) call_once(f, m, d, &in, it);
        t[r] = (now_ns() - t0) / iters;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp);
    return t[reps / 2];
}

/* "--calls F N": N calls of function F (0..5, the table's rows) on the PUMA 560 and no timing,
 * for instruction counting (valgrind --tool=callgrind; per call = inclusive cost / N). */
static int run_calls(int f, int calls)
{
    dyn_model_desc desc;
    puma560_desc(&desc);
    dyn_model *m = dyn_model_create(&desc, NULL, NULL);
    dyn_data *d = m ? dyn_data_create(m) : NULL;
    if (!d) {
        fprintf(stderr, "armbench: could not build the PUMA 560\n");
        return 1;
    }
    rng_seed(2024);
    static inputs in;
    fill_inputs(&in, dyn_model_dof(m));
    for (int it = 0; it < calls; it++) call_once(f, m, d, &in, it);
    dyn_data_free(d);
    dyn_model_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--calls") == 0) {
        int f = atoi(argv[2]), calls = atoi(argv[3]);
        if (f < 0 || f >= NF || calls < 1) {
            fprintf(stderr, "armbench: --calls F N needs F in 0..%d and N >= 1\n", NF - 1);
            return 2;
        }
        return run_calls(f, calls);
    }
    int reps = 201;
    double budget = 2e4; /* ns of work per repetition */
    if (argc > 1 && strcmp(argv[1], "--quick") == 0) reps = 31;
    if (argc > 1 && strcmp(argv[1], "--quick") != 0) {
        fprintf(stderr, "usage: armbench [--quick | --calls F N]\n");
        return 2;
    }
    static const int sizes[] = {2, 4, 8, 16, 32, 64};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    double res[NS + 1][NF];
    dyn_model_desc desc;
    rng_seed(2024);
    for (int s = 0; s <= NS; s++) {
        if (s == 0)
            puma560_desc(&desc);
        else
            arm_random(&desc, sizes[s - 1], DYN_DH_STANDARD, 0.25, 1);
        dyn_model *m = dyn_model_create(&desc, NULL, NULL);
        dyn_data *d = m ? dyn_data_create(m) : NULL;
        if (!d) {
            fprintf(stderr, "armbench: could not build model %d\n", s);
            return 1;
        }
        for (int f = 0; f < NF; f++) {
            double est = bench(f, m, d, 1, 100);
            int iters = (int)(budget / (est > 1 ? est : 1)) + 1;
            res[s][f] = bench(f, m, d, reps, iters);
        }
        dyn_data_free(d);
        dyn_model_free(m);
    }
    printf("armbench: ns per call, median of %d repetitions (all effects: gravity, armature, "
           "friction)\n\n",
           reps);
    printf("%-24s %9s", "function", "PUMA560");
    for (int s = 0; s < NS; s++) printf("   n=%-5d", sizes[s]);
    printf(" %10s\n", "t64/t8");
    for (int f = 0; f < NF; f++) {
        printf("%-24s %9.0f", fname[f], res[0][f]);
        for (int s = 1; s <= NS; s++) printf(" %9.0f", res[s][f]);
        printf(" %10.1f\n", res[NS][f] / res[3][f]);
    }
    printf("\n(t64/t8 = 8 for linear cost, 64 for quadratic, 512 for cubic)\n");
    return 0;
}
