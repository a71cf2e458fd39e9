/*
 * traj_shape.c — convolving a built plan with an input shaper's impulse train (see
 * traj_shape.h, impulses in shaper.h). Main thread only (allocates scratch).
 *
 * A plan is piecewise polynomial (degree <= 5); a sum of time-shifted copies of it,
 * q_s(t) = sum_i A_i q(t - t_i), is too, with breakpoints at every original breakpoint plus
 * every t_i. On each new segment every copy lies in one piece of the original (or before its
 * start, or after its end), and that piece's polynomial re-expanded about the new segment's
 * start (a Taylor shift) is added with weight A_i. Exact up to rounding: no resampling.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/traj_shape.h"

/* qsort's order of two doubles (ascending). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Adds w * c(x + d) to out as a polynomial in x (the Taylor shift of c by d:
 * out_j += w sum_{k >= j} C(k, j) c_k d^{k - j}). */
static void add_shifted(double out[TRAJ_NCOEF], const double c[TRAJ_NCOEF], double d, double w)
{
    static const double binom[TRAJ_NCOEF][TRAJ_NCOEF] = {
        {1}, {1, 1}, {1, 2, 1}, {1, 3, 3, 1}, {1, 4, 6, 4, 1}, {1, 5, 10, 10, 5, 1}};
    for (int j = 0; j < TRAJ_NCOEF; j++) {
        double s = 0, dp = 1;
        for (int k = j; k < TRAJ_NCOEF; k++, dp *= d) s += binom[k][j] * c[k] * dp;
        out[j] += w * s;
    }
}

/* The original piece containing time s [s] (last piece whose start is <= s). */
static int piece_at(const double *t0, int m, double s)
{
    int lo = 0, hi = m - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (t0[mid] <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The sorted, merged breakpoints {0} u {t0_k + t_i} u {T + t_i} of the shaped plan into bp
 * (room for (m + 1) n + 1); returns how many. Points closer than eps [s] are merged. */
static int breakpoints(const double *t0, int m, double T, const shaper *sh, double eps, double *bp)
{
    int nb = 0;
    bp[nb++] = 0;
    for (int i = 0; i < sh->n; i++) {
        for (int k = 0; k < m; k++) bp[nb++] = t0[k] + sh->t[i];
        bp[nb++] = T + sh->t[i];
    }
    qsort(bp, (size_t)nb, sizeof *bp, cmp_double);
    int out = 1;
    for (int i = 1; i < nb; i++)
        if (bp[i] - bp[out - 1] > eps) bp[out++] = bp[i];
    bp[out - 1] = T + shaper_duration(sh); /* the end exactly */
    return out;
}

/* Solves the 3 x 3 system A x = b by Gaussian elimination with partial pivoting; -1 if a
 * pivot is below 1e-12 (A is scaled to order 1 by the caller). */
static int solve3(double A[3][3], double b[3], double x[3])
{
    for (int c = 0; c < 3; c++) {
        int piv = c;
        for (int r = c + 1; r < 3; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c])) piv = r;
        if (!(fabs(A[piv][c]) > 1e-12)) return -1;
        for (int k = 0; k < 3; k++) {
            double tmp = A[c][k];
            A[c][k] = A[piv][k];
            A[piv][k] = tmp;
        }
        double tb = b[c];
        b[c] = b[piv];
        b[piv] = tb;
        for (int r = c + 1; r < 3; r++) {
            double f = A[r][c] / A[c][c];
            for (int k = c; k < 3; k++) A[r][k] -= f * A[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int r = 2; r >= 0; r--) {
        double v = b[r];
        for (int k = r + 1; k < 3; k++) v -= A[r][k] * x[k];
        x[r] = v / A[r][r];
    }
    return 0;
}

/* The input before t = 0 for one joint, as a polynomial pre[0..5] in t < 0.
 * At rest (qd = qdd = 0) it is the start position held: the convolution is then exact.
 * Moving, a quintic that joins the plan's first piece C2 at t = 0 (q0, qd0, the piece's own
 * acceleration a0) and whose d3, d4, d5 make the shaped path start exactly at the start state:
 *   sum_{i>=1} A_i P^(r)(-t_i) = (start^(r) - A_0 plan^(r)(0)),  r = 0, 1, 2,
 * three linear equations (time scaled by t_n). Falls back to the quadratic extension
 * q0 + qd0 t + qdd0 t^2 / 2 if they are singular. */
static void pre_start(const shaper *sh, double q0, double qd0, double qdd0, double a0,
                      double pre[TRAJ_NCOEF])
{
    memset(pre, 0, TRAJ_NCOEF * sizeof *pre);
    pre[0] = q0;
    pre[1] = qd0;
    pre[2] = 0.5 * qdd0;
    if (qd0 == 0 && qdd0 == 0) {
        pre[1] = pre[2] = 0;
        return;
    }
    double tau = shaper_duration(sh), A[3][3] = {{0}}, b[3], x[3];
    double m1 = 0, m2 = 0; /* sum_{i>=1} A_i x_i^k, x_i = -t_i / tau */
    for (int i = 1; i < sh->n; i++) {
        double xi = -sh->t[i] / tau, w = sh->a[i];
        m1 += w * xi;
        m2 += w * xi * xi;
        for (int k = 0; k < 3; k++) {
            int e = 3 + k; /* the power of d_e */
            A[0][k] += w * pow(xi, e);
            A[1][k] += w * e * pow(xi, e - 1);
            A[2][k] += w * e * (e - 1) * pow(xi, e - 2);
        }
    }
    /* rows: value, slope * tau, curvature * tau^2; unknowns d_e tau^e */
    b[0] = -(qd0 * tau * m1 + 0.5 * a0 * tau * tau * m2);
    b[1] = -a0 * tau * tau * m1;
    b[2] = (qdd0 - a0) * tau * tau;
    if (solve3(A, b, x)) return;
    pre[2] = 0.5 * a0;
    for (int k = 0; k < 3; k++) pre[3 + k] = x[k] / pow(tau, 3 + k);
}

int traj_shape(traj_plan *p, const shaper *sh, const traj_state *start, traj_error *err)
{
    if (sh->n <= 1 || p->n_seg <= 0) return 0;
    int m = p->n_seg, n = p->n;
    double T = p->duration, tn = shaper_duration(sh);
    size_t nbp = (size_t)(m + 1) * (size_t)sh->n + 1, nc = (size_t)m * (size_t)n * TRAJ_NCOEF;
    double *bp = malloc(nbp * sizeof *bp), *t0 = malloc((size_t)m * sizeof *t0);
    double *c = malloc(nc * sizeof *c);
    traj_state end;
    if (!bp || !t0 || !c) {
        ctl_error_set(err, "internal", "out of memory shaping a trajectory");
        free(bp), free(t0), free(c);
        return -1;
    }
    memcpy(t0, p->t0, (size_t)m * sizeof *t0);
    memcpy(c, p->c, nc * sizeof *c);
    traj_end_state(p, &end);
    int nb = breakpoints(t0, m, T, sh, 1e-9 * (T + tn) + 1e-12, bp);
    if (nb - 1 > p->cap) {
        ctl_error_set(err, "invalid_params",
                      "shaped by [trajectory] shaper the trajectory has %d pieces, more than the "
                      "%d a plan holds; send fewer waypoints",
                      nb - 1, p->cap);
        free(bp), free(t0), free(c);
        return -1;
    }
    double pre[CFG_MAX_JOINTS * TRAJ_NCOEF];
    for (int j = 0; j < n; j++)
        pre_start(sh, start->q[j], start->qd[j], start->qdd[j], 2 * c[(size_t)j * TRAJ_NCOEF + 2],
                  pre + (size_t)j * TRAJ_NCOEF);
    for (int s = 0; s + 1 < nb; s++) {
        double a = bp[s], mid = 0.5 * (bp[s] + bp[s + 1]);
        p->t0[s] = a;
        p->h[s] = bp[s + 1] - a;
        for (int j = 0; j < n; j++) {
            double *out = p->c + ((size_t)s * (size_t)n + (size_t)j) * TRAJ_NCOEF;
            memset(out, 0, TRAJ_NCOEF * sizeof *out);
            for (int i = 0; i < sh->n; i++) {
                double src = mid - sh->t[i]; /* the copy's own time, inside this segment */
                if (src < 0) {               /* before the start: pre_start's polynomial */
                    add_shifted(out, pre + (size_t)j * TRAJ_NCOEF, a - sh->t[i], sh->a[i]);
                } else if (src >= T) { /* after the end: held */
                    out[0] += sh->a[i] * end.q[j];
                } else {
                    int k = piece_at(t0, m, src);
                    add_shifted(out, c + ((size_t)k * (size_t)n + (size_t)j) * TRAJ_NCOEF,
                                a - sh->t[i] - t0[k], sh->a[i]);
                }
            }
        }
    }
    p->n_seg = nb - 1;
    p->duration = bp[nb - 1];
    p->first_quintic = true; /* a degree-5 segment 0: re-anchored, it is kept as it is */
    /* at a moving start, segment 0 starts at the start state already (pre_start); at rest
     * from a cubic first piece its acceleration at 0 is A_0 times the piece's: made 0 here */
    p->shaped = true;
    traj_reanchor(p, start);
    free(bp), free(t0), free(c);
    return 0;
}
