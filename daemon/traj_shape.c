/*
 * traj_shape.c — convolving a built plan with an input shaper's impulse train (see
 * traj_shape in trajectory.h, impulses in shaper.h). Main thread only (allocates scratch).
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

#include "daemon/trajectory.h"

#define NCOEF 6

/* qsort's order of two doubles (ascending). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Adds w * c(x + d) to out as a polynomial in x (the Taylor shift of c by d:
 * out_j += w sum_{k >= j} C(k, j) c_k d^{k - j}). */
static void add_shifted(double out[NCOEF], const double c[NCOEF], double d, double w)
{
    static const double binom[NCOEF][NCOEF] = {{1},          {1, 1},          {1, 2, 1},
                                               {1, 3, 3, 1}, {1, 4, 6, 4, 1}, {1, 5, 10, 10, 5, 1}};
    for (int j = 0; j < NCOEF; j++) {
        double s = 0, dp = 1;
        for (int k = j; k < NCOEF; k++, dp *= d) s += binom[k][j] * c[k] * dp;
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

int traj_shape(traj_plan *p, const shaper *sh, const traj_state *start, traj_error *err)
{
    if (sh->n <= 1 || p->n_seg <= 0) return 0;
    int m = p->n_seg, n = p->n;
    double T = p->duration, tn = shaper_duration(sh);
    size_t nbp = (size_t)(m + 1) * (size_t)sh->n + 1, nc = (size_t)m * (size_t)n * NCOEF;
    double *bp = malloc(nbp * sizeof *bp), *t0 = malloc((size_t)m * sizeof *t0);
    double *c = malloc(nc * sizeof *c);
    traj_state end;
    if (!bp || !t0 || !c) {
        if (err) {
            snprintf(err->code, sizeof err->code, "internal");
            snprintf(err->message, sizeof err->message, "out of memory shaping a trajectory");
        }
        free(bp), free(t0), free(c);
        return -1;
    }
    memcpy(t0, p->t0, (size_t)m * sizeof *t0);
    memcpy(c, p->c, nc * sizeof *c);
    traj_end_state(p, &end);
    int nb = breakpoints(t0, m, T, sh, 1e-9 * (T + tn) + 1e-12, bp);
    if (nb - 1 > p->cap) {
        if (err) {
            snprintf(err->code, sizeof err->code, "invalid_params");
            snprintf(err->message, sizeof err->message,
                     "shaped by [trajectory] shaper the trajectory has %d pieces, more than the %d "
                     "a plan holds; send fewer waypoints",
                     nb - 1, p->cap);
        }
        free(bp), free(t0), free(c);
        return -1;
    }
    for (int s = 0; s + 1 < nb; s++) {
        double a = bp[s], mid = 0.5 * (bp[s] + bp[s + 1]);
        p->t0[s] = a;
        p->h[s] = bp[s + 1] - a;
        for (int j = 0; j < n; j++) {
            double *out = p->c + ((size_t)s * (size_t)n + (size_t)j) * NCOEF;
            memset(out, 0, NCOEF * sizeof *out);
            for (int i = 0; i < sh->n; i++) {
                double src = mid - sh->t[i]; /* the copy's own time, inside this segment */
                if (src < 0) {               /* before the start: its quadratic extension */
                    double pre[NCOEF] = {start->q[j], start->qd[j], 0.5 * start->qdd[j]};
                    add_shifted(out, pre, a - sh->t[i], sh->a[i]);
                } else if (src >= T) { /* after the end: held */
                    out[0] += sh->a[i] * end.q[j];
                } else {
                    int k = piece_at(t0, m, src);
                    add_shifted(out, c + ((size_t)k * (size_t)n + (size_t)j) * NCOEF,
                                a - sh->t[i] - t0[k], sh->a[i]);
                }
            }
        }
    }
    p->n_seg = nb - 1;
    p->duration = bp[nb - 1];
    p->first_quintic = true; /* a degree-5 segment 0: re-anchored, it is kept as it is */
    p->shaped = true;
    traj_reanchor(p, start);
    free(bp), free(t0), free(c);
    return 0;
}
