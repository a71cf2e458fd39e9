/* bench.c — timing one dynamics function (bench.h). */
#include "tools/armbench/bench.h"

#include <stdlib.h>
#include <time.h>

#include "tests/dynamics/arm_gen.h"

enum { MAX_REPS = 255 };

const char *const bench_name[NF] = {
    "inverse dynamics",      "gravity only",        "mass matrix",
    "forward dyn. Cholesky", "forward dyn. O(n)",   "Jacobian",
    "collision observer",    "forward kin. (tool)", "inverse kin. (IK)",
    "task rates (qd, qdd)",  "tool wrench",         "task inertia"};

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
 * result is reused), velocities, accelerations, torques; for F_IK the tool pose at each q and a
 * start q0 = q + U(-0.05, 0.05) per joint; out is large enough for a mass matrix. */
typedef struct {
    double q[8][DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF], tau[DYN_MAX_DOF];
    double target[8][12], q0[8][DYN_MAX_DOF];
    double out[DYN_MAX_DOF * DYN_MAX_DOF];
} inputs;

static void fill_inputs(inputs *in, const dyn_model *m, dyn_data *d)
{
    const int n = dyn_model_dof(m);
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < n; i++) in->q[k][i] = rng_uniform(-3, 3);
    for (int i = 0; i < n; i++) {
        in->qd[i] = rng_uniform(-1, 1);
        in->qdd[i] = rng_uniform(-1, 1);
        in->tau[i] = rng_uniform(-1, 1);
    }
    /* the starts from a generator of their own, so that the other rows' inputs and the random
     * chains drawn after them stay what they were before F_IK existed */
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < 8; k++) {
        dyn_fk(m, d, in->q[k], NULL, in->target[k]);
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            in->q0[k][i] = in->q[k][i] + 0.05 * ((double)(x >> 11) * 0x1p-52 - 1.0);
        }
    }
}

/* One call of row f at the it-th position; feeds the result to sink. */
static inline void call_once(int f, const dyn_funcs *fs, const dyn_model *m, dyn_data *d,
                             inputs *in, int it)
{
    const double *qq = in->q[it & 7];
    switch (f) {
    case F_RNEA:
        fs->rnea(m, d, qq, in->qd, in->qdd, NULL, DYN_ALL, in->out);
        break;
    case F_GRAV:
        fs->gravity(m, d, qq, in->out);
        break;
    case F_MASS:
        fs->mass_matrix(m, d, qq, DYN_ALL, in->out);
        break;
    case F_CHOL:
        dyn_forward_chol(m, d, qq, in->qd, in->tau, NULL, DYN_ALL, in->out);
        break;
    case F_ABA:
        fs->forward(m, d, qq, in->qd, in->tau, NULL, DYN_ALL, in->out);
        break;
    case F_JAC:
        fs->jacobian(m, d, qq, in->out);
        break;
    case F_FK:
        fs->fk(m, d, qq, in->out);
        break;
    case F_IK:
        dyn_ik(m, d, in->target[it & 7], in->q0[it & 7], NULL, in->out, NULL);
        break;
    case F_RATES: /* the full task's 6 rows: the first 6 of qd and qdd as the tool's rates */
        dyn_ik_rates(m, d, qq, NULL, in->qd, in->qdd, in->out, in->out + DYN_MAX_DOF);
        break;
    case F_WRENCH: /* tau as the external torques, the observer's damping */
        dyn_tool_wrench(m, d, qq, in->tau, 1e-3, in->out);
        break;
    case F_TASK: /* J, A, Lambda */
        dyn_task_inertia(m, d, qq, in->out, in->out + 6 * DYN_MAX_DOF,
                         in->out + 6 * DYN_MAX_DOF + 36);
        break;
    default: /* the model terms of one observer step (daemon/collision.c): H qd, C^T qd, G, f */
        fs->momentum(m, d, qq, in->qd, DYN_ARMATURE, in->out, in->out + DYN_MAX_DOF);
        fs->gravity(m, d, qq, in->out + 2 * DYN_MAX_DOF);
        fs->friction(m, in->qd, in->out + 3 * DYN_MAX_DOF);
        break;
    }
    sink += in->out[0];
}

/* Median over reps of (time of iters calls) / iters. */
static double median_ns(int f, const dyn_funcs *fs, const dyn_model *m, dyn_data *d, inputs *in,
                        int reps, int iters)
{
    double t[MAX_REPS];
    if (reps > MAX_REPS) reps = MAX_REPS;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (int it = 0; it < iters; it++) call_once(f, fs, m, d, in, it);
        t[r] = (now_ns() - t0) / iters;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp);
    return t[reps / 2];
}

/* Many short repetitions (~20 us each) make the median robust on a shared, loaded machine: a
 * repetition hit by preemption is an outlier, not a shift of every sample. */
double bench_ns(int f, const dyn_funcs *fs, const dyn_model *m, dyn_data *d, int reps)
{
    static inputs in;
    fill_inputs(&in, m, d);
    double est = median_ns(f, fs, m, d, &in, 1, 100);
    int iters = (int)(2e4 / (est > 1 ? est : 1)) + 1;
    return median_ns(f, fs, m, d, &in, reps, iters);
}

void bench_calls(int f, const dyn_funcs *fs, const dyn_model *m, dyn_data *d, int calls)
{
    static inputs in;
    fill_inputs(&in, m, d);
    for (int it = 0; it < calls; it++) call_once(f, fs, m, d, &in, it);
}

double bench_ik_iterations(const dyn_model *m, dyn_data *d, int *failed)
{
    static inputs in;
    fill_inputs(&in, m, d);
    int total = 0;
    *failed = 0;
    for (int k = 0; k < 8; k++) {
        dyn_ik_result r;
        if (dyn_ik(m, d, in.target[k], in.q0[k], NULL, in.out, &r) != DYN_IK_OK) (*failed)++;
        total += r.iterations;
    }
    return total / 8.0;
}
