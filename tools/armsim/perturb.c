/*
 * perturb.c — armsim --perturb (see perturb.h).
 */
#include "tools/armsim/perturb.h"

#include <math.h>
#include <stdbool.h>

/* splitmix64: the next 64 random bits of *s. */
static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A factor 1 + spread u, u uniform in [-1, 1]. */
static double factor(uint64_t *s, double spread)
{
    double u = (double)(next64(s) >> 11) / 9007199254740992.0; /* [0, 1) */
    return 1.0 + spread * (2.0 * u - 1.0);
}

/* Scales the principal moments of I (about the COM) by f[0..2], axes kept; if I satisfied the
 * triangle inequality, the result is clamped to it. */
static void scale_principal(double I[6], const double f[3])
{
    double m[3], R[9];
    dyn_inertia_principal(I, m, R);
    bool was_body = m[2] <= m[0] + m[1] + 1e-12 * (fabs(m[0]) + fabs(m[1]) + fabs(m[2]));
    for (int i = 0; i < 3; i++) m[i] *= f[i];
    if (was_body) { /* keep each moment at most the sum of the other two */
        for (int i = 0; i < 3; i++) {
            double others = m[(i + 1) % 3] + m[(i + 2) % 3];
            if (m[i] > others) m[i] = others;
        }
    }
    /* I = R diag(m) R^T */
    static const int idx[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int e = 0; e < 6; e++) {
        int r = idx[e][0], c = idx[e][1];
        double v = 0;
        for (int k = 0; k < 3; k++) v += R[r * 3 + k] * m[k] * R[c * 3 + k];
        I[e] = v;
    }
}

void perturb_desc(dyn_model_desc *d, uint64_t seed, FILE *log)
{
    uint64_t s = seed;
    for (int j = 0; j < d->n; j++) {
        dyn_joint_desc *jd = &d->joint[j];
        double fm = factor(&s, PERTURB_INERTIAL), fc[3], fi[3];
        for (int k = 0; k < 3; k++) fc[k] = factor(&s, PERTURB_INERTIAL);
        for (int k = 0; k < 3; k++) fi[k] = factor(&s, PERTURB_INERTIAL);
        double fv = factor(&s, PERTURB_FRICTION), fp = factor(&s, PERTURB_FRICTION),
               fn = factor(&s, PERTURB_FRICTION);
        jd->mass *= fm;
        for (int k = 0; k < 3; k++) jd->com[k] *= fc[k];
        scale_principal(jd->inertia, fi);
        jd->viscous *= fv;
        jd->coulomb_pos *= fp;
        jd->coulomb_neg *= fn;
        if (log)
            fprintf(log,
                    "armsim: --perturb %llu: joint %d: mass x %.3f, com x %.3f %.3f %.3f, "
                    "principal moments x %.3f %.3f %.3f, viscous x %.3f, coulomb x %.3f %.3f\n",
                    (unsigned long long)seed, j + 1, fm, fc[0], fc[1], fc[2], fi[0], fi[1], fi[2],
                    fv, fp, fn);
    }
}
