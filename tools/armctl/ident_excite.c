/*
 * ident_excite.c — finite Fourier excitation inside the limits, best conditioned of random
 * candidates (see ident_excite.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/ident_excite.h"

#define GRID        2000 /* points per period checked against the limits */
#define COND_POINTS 200  /* points per period in the condition number */
#define MARGIN      0.8  /* of the velocity, acceleration and torque limits */
#define ROOM_MARGIN 0.8  /* of the room between q0 and a position limit */

void ident_excitation_eval(const ident_excitation *e, double t, double *q, double *qd, double *qdd)
{
    double wf = 2 * M_PI / e->period;
    for (int j = 0; j < e->n; j++) {
        double p = e->q0[j] + e->c[j], v = 0, a = 0;
        for (int l = 1; l <= e->harmonics; l++) {
            double w = l * wf, s = sin(w * t), c = cos(w * t);
            double al = e->a[j][l - 1], bl = e->b[j][l - 1];
            p += (al * s - bl * c) / w;
            v += al * c + bl * s;
            a += -al * w * s + bl * w * c;
        }
        q[j] = p;
        qd[j] = v;
        qdd[j] = a;
    }
}

/* Random coefficients for joint j, decaying with the harmonic, made to start at rest (sum a = 0,
 * sum l b = 0) and c from q(0) = q0. */
static void random_joint(ident_excitation *e, int j, unsigned long long *s)
{
    int L = e->harmonics;
    double sa = 0, slb = 0, sll = 0;
    for (int l = 1; l <= L; l++) {
        double u1 = ident_uniform(s), u2 = ident_uniform(s);
        e->a[j][l - 1] = (2 * u1 - 1) / l;
        e->b[j][l - 1] = (2 * u2 - 1) / l;
        sa += e->a[j][l - 1];
        slb += l * e->b[j][l - 1];
        sll += (double)l * l;
    }
    for (int l = 1; l <= L; l++) {
        e->a[j][l - 1] -= sa / L;
        e->b[j][l - 1] -= slb * l / sll;
    }
}

/* c_j from q(0) = q0. */
static void set_offsets(ident_excitation *e)
{
    double wf = 2 * M_PI / e->period;
    for (int j = 0; j < e->n; j++) {
        double c = 0;
        for (int l = 1; l <= e->harmonics; l++) c += e->b[j][l - 1] / (l * wf);
        e->c[j] = c;
    }
}

/* Scales every joint's series into its limits (positions, the swing cap, velocity and
 * acceleration) on a grid of the period. -1 with why when a joint has no room. */
static int scale_to_limits(ident_excitation *e, const ident_limits *lim, double swing, char *why,
                           size_t why_len)
{
    int n = e->n;
    double up[DYN_MAX_DOF] = {0}, down[DYN_MAX_DOF] = {0}, vmax[DYN_MAX_DOF] = {0},
           amax[DYN_MAX_DOF] = {0};
    set_offsets(e);
    for (int g = 0; g < GRID; g++) {
        double q[DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF];
        ident_excitation_eval(e, e->period * g / GRID, q, qd, qdd);
        for (int j = 0; j < n; j++) {
            up[j] = fmax(up[j], q[j] - e->q0[j]);
            down[j] = fmax(down[j], e->q0[j] - q[j]);
            vmax[j] = fmax(vmax[j], fabs(qd[j]));
            amax[j] = fmax(amax[j], fabs(qdd[j]));
        }
    }
    for (int j = 0; j < n; j++) {
        double room_up = ROOM_MARGIN * (lim->upper[j] - e->q0[j]);
        double room_down = ROOM_MARGIN * (e->q0[j] - lim->lower[j]);
        double k = INFINITY;
        if (up[j] > 0) k = fmin(k, fmin(room_up, swing) / up[j]);
        if (down[j] > 0) k = fmin(k, fmin(room_down, swing) / down[j]);
        if (vmax[j] > 0) k = fmin(k, MARGIN * lim->velocity[j] / vmax[j]);
        if (amax[j] > 0) k = fmin(k, MARGIN * lim->acceleration[j] / amax[j]);
        if (!(k > 1e-6) || !isfinite(k)) {
            snprintf(why, why_len,
                     "joint %d has no room to move around %.4g (limits %.4g .. %.4g): move it "
                     "away from its limits first",
                     j + 1, e->q0[j], lim->lower[j], lim->upper[j]);
            return -1;
        }
        for (int l = 0; l < e->harmonics; l++) {
            e->a[j][l] *= k;
            e->b[j][l] *= k;
        }
    }
    set_offsets(e);
    return 0;
}

/* The largest |tau_j| / torque limit over the period by the configured model (friction
 * included), and the joint. */
static double torque_ratio(const ident_excitation *e, dyn_model *m, dyn_data *d,
                           const ident_limits *lim, int *worst)
{
    double r = 0;
    for (int g = 0; g < GRID; g += 4) {
        double q[DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF], tau[DYN_MAX_DOF];
        ident_excitation_eval(e, e->period * g / GRID, q, qd, qdd);
        dyn_rnea(m, d, q, qd, qdd, NULL, DYN_ALL, tau);
        for (int j = 0; j < e->n; j++) {
            double x = fabs(tau[j]) / lim->torque[j];
            if (x > r) {
                r = x;
                *worst = j;
            }
        }
    }
    return r;
}

int ident_excitation_design(ident_fit *fit, const dyn_model_desc *model, const ident_limits *lim,
                            const double *q0, double period, int harmonics, double swing,
                            int candidates, unsigned long long seed, ident_excitation *out,
                            double *cond, char *why, size_t why_len)
{
    int n = model->n;
    dyn_model *m = dyn_model_create(model, NULL, NULL);
    dyn_data *d = m ? dyn_data_create(m) : NULL;
    double *q = malloc(sizeof(double) * 3 * COND_POINTS * (size_t)n);
    if (!d || !q) {
        dyn_data_free(d);
        dyn_model_free(m);
        free(q);
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    double *qd = q + COND_POINTS * n, *qdd = qd + COND_POINTS * n;
    unsigned long long s = seed ? seed : 1;
    *cond = INFINITY;
    int rc = -1;
    snprintf(why, why_len, "no candidate excitation stayed inside the torque limits");
    for (int k = 0; k < candidates; k++) {
        ident_excitation e;
        memset(&e, 0, sizeof e);
        e.n = n;
        e.harmonics = harmonics;
        e.period = period;
        memcpy(e.q0, q0, sizeof(double) * (size_t)n);
        for (int j = 0; j < n; j++) random_joint(&e, j, &s);
        if (scale_to_limits(&e, lim, swing, why, why_len) != 0) break;
        /* torque: shrink the worst joint's series until the model's torque fits */
        int ok = 0;
        for (int it = 0; it < 30 && !ok; it++) {
            int worst = 0;
            double ratio = torque_ratio(&e, m, d, lim, &worst);
            ok = ratio <= MARGIN;
            if (!ok)
                for (int l = 0; l < harmonics; l++) {
                    e.a[worst][l] *= 0.85;
                    e.b[worst][l] *= 0.85;
                }
            set_offsets(&e);
        }
        if (!ok) continue;
        for (int g = 0; g < COND_POINTS; g++)
            ident_excitation_eval(&e, period * g / COND_POINTS, q + g * n, qd + g * n, qdd + g * n);
        double c = ident_condition(fit, COND_POINTS, q, qd, qdd);
        if (c < *cond) {
            *cond = c;
            *out = e;
            rc = 0;
        }
    }
    if (rc == 0 && why_len) why[0] = 0;
    dyn_data_free(d);
    dyn_model_free(m);
    free(q);
    return rc;
}
