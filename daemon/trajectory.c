/*
 * trajectory.c — building, validating and sampling joint trajectories (see trajectory.h).
 * Spline equations: Biagiotti & Melchiorri, "Trajectory Planning for Automatic Machines and
 * Robots" (2008), cubic Hermite / quintic segments (ch. 2) and the C2 cubic spline in terms of
 * knot velocities (ch. 4.4).
 */
#include "daemon/trajectory.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT_SLACK 1e-9  /* relative slack on limits against rounding */
#define ROOT_STEPS  64    /* Newton or bisection steps to a root at most ... */
#define ROOT_TOL    1e-15 /* ... ending when one moves less than this of the segment's length */

void traj_error_count(traj_error *err, int waypoint, const char *field, int got, int n)
{
    ctl_error_set(err, "invalid_params", "waypoint %d: %s has %d values, the arm has %d joints",
                  waypoint, field, got, n);
}

void traj_limits_from_config(traj_limits *lim, const armd_config *cfg)
{
    memset(lim, 0, sizeof *lim);
    lim->n = cfg->n_joints;
    lim->period = cfg->rate_hz > 0 ? 1.0 / cfg->rate_hz : 0;
    for (int j = 0; j < cfg->n_joints; j++) {
        const cfg_joint *cj = &cfg->joint[j];
        snprintf(lim->name[j], CFG_NAME_MAX, "%s", cj->name);
        lim->prismatic[j] = cfg->model.joint[j].type == DYN_PRISMATIC;
        lim->lower[j] = cj->lower;
        lim->upper[j] = cj->upper;
        lim->velocity[j] = cj->velocity;
        lim->acceleration[j] = cj->acceleration;
    }
    static const shaper_kind kinds[] = {[SHAPE_NONE] = SHAPER_NONE,
                                        [SHAPE_ZV] = SHAPER_ZV,
                                        [SHAPE_ZVD] = SHAPER_ZVD,
                                        [SHAPE_EI] = SHAPER_EI};
    const cfg_trajectory *t = &cfg->trajectory;
    if (shaper_design(&lim->shape, kinds[t->shaper], t->shaper_freq, t->shaper_damping))
        shaper_design(&lim->shape, SHAPER_NONE, 0, 0); /* the loader refuses such a mode */
}

/* Unit of positions, velocities, accelerations for joint j. */
static const char *unit(const traj_limits *lim, int j, int order)
{
    static const char *rev[] = {"rad", "rad/s", "rad/s^2"}, *pri[] = {"m", "m/s", "m/s^2"};
    return lim->prismatic[j] ? pri[order] : rev[order];
}

/* c[0] + c[1] x + ... + c[deg] x^deg (Horner). */
static double horner(const double *c, int deg, double x)
{
    double v = c[deg];
    for (int i = deg - 1; i >= 0; i--) v = v * x + c[i];
    return v;
}

/* The root of c (degree deg) in (a, b), where c is monotone and changes sign (fa = c(a), of
 * the other sign than c(b), neither 0): Newton's method kept inside the bracket, which
 * shrinks around the sign change at every step, bisecting where a step would leave it
 * (Numerical Recipes' rtsafe). Ends when a step moves less than ROOT_TOL of the segment's
 * length h, or after ROOT_STEPS (a double root at an end: linear convergence). */
static double root_between(const double *c, int deg, double h, double a, double b, double fa)
{
    double x = 0.5 * (a + b);
    for (int i = 0; i < ROOT_STEPS; i++) {
        double f = c[deg], d = 0;
        for (int k = deg - 1; k >= 0; k--) {
            d = d * x + f;
            f = f * x + c[k];
        }
        if (f == 0) return x;
        if ((f < 0) == (fa < 0))
            a = x;
        else
            b = x;
        double next = x - f / d;
        if (!(next > a && next < b)) next = 0.5 * (a + b); /* also d = 0 */
        if (fabs(next - x) <= ROOT_TOL * h) return next;
        x = next;
    }
    return x;
}

/* The real roots of the polynomial c of degree deg <= 5 inside (0, h), ascending, given crit:
 * the nc roots of its derivative there, ascending (roots_in of the derivative). Between two
 * consecutive ones c is monotone, so each sign change there is exactly one root. A root where
 * the sign does not change (a touching point) is skipped: the callers want the extremes of the
 * antiderivative, and it has none there. Returns how many. */
static int roots_in(const double *c, int deg, double h, const double *crit, int nc, double *roots)
{
    while (deg > 0 && c[deg] == 0) deg--; /* then the derivative's top is 0 too: no crit */
    if (deg <= 0) return 0;
    if (deg == 1) {
        double x = -c[0] / c[1];
        if (!(x > 0 && x < h)) return 0;
        roots[0] = x;
        return 1;
    }
    int n = 0;
    double a = 0, fa = horner(c, deg, 0);
    for (int k = 0; k <= nc; k++) {
        double b = k < nc ? crit[k] : h, fb = horner(c, deg, b);
        if (fa != 0 && fb != 0 && (fa < 0) != (fb < 0))
            roots[n++] = root_between(c, deg, h, a, b, fa);
        else if (fb == 0 && k < nc)
            roots[n++] = b; /* an interior root at a critical point */
        a = b;
        fa = fb;
    }
    return n;
}

/* The smallest and largest value of the polynomial c (degree deg) over [0, h], from its value
 * at the ends and at the n roots r of its derivative. */
static void range_of(const double *c, int deg, double h, const double *r, int n, double *lo,
                     double *hi)
{
    *lo = *hi = horner(c, deg, 0);
    for (int i = 0; i <= n; i++) {
        double v = horner(c, deg, i < n ? r[i] : h);
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
    }
}

/* A segment's quintic c [rad|m] and its derivatives: vel (degree 4), acc (3). */
static void derive(const double *c, double vel[5], double acc[4])
{
    for (int i = 0; i < 5; i++) vel[i] = (i + 1) * c[i + 1];
    for (int i = 0; i < 4; i++) acc[i] = (i + 1) * vel[i + 1];
}

/* A bound on the range of c (degree deg <= 5) over [0, h]: the hull of its Bernstein
 * coefficients on [0, h], b_i = sum_k C(i, k) x_k with x_k = c_k h^k / C(deg, k) (Farouki &
 * Rajan 1987), which contains the range and is exact at the ends; the sums as Pascal's
 * triangle, by additions only. c finite (no NaN to order). */
static void hull_of(const double *c, int deg, double h, double *lo, double *hi)
{
    static const double inv_binom[6][6] = {{1},
                                           {1, 1},
                                           {1, 1 / 2., 1},
                                           {1, 1 / 3., 1 / 3., 1},
                                           {1, 1 / 4., 1 / 6., 1 / 4., 1},
                                           {1, 1 / 5., 1 / 10., 1 / 10., 1 / 5., 1}};
    double x[6], hk = 1;
    for (int k = 0; k <= deg; k++, hk *= h) x[k] = c[k] * hk * inv_binom[deg][k];
    for (int r = 0; r < deg; r++)
        for (int i = deg; i > r; i--) x[i] += x[i - 1];
    double l = x[0], u = x[0];
    for (int i = 1; i <= deg; i++) {
        l = x[i] < l ? x[i] : l;
        u = x[i] > u ? x[i] : u;
    }
    *lo = l;
    *hi = u;
}

/* The exact ranges over [0, h] of a segment's position c (lo[0], hi[0]), velocity vel (lo[1],
 * hi[1]) and acceleration acc (lo[2], hi[2]) (derive). The roots of each derivative, from the
 * snap's (linear) up, are found once each, every level bracketed by the one below. */
static void segment_ranges(const double *c, const double vel[5], const double acc[4], double h,
                           double lo[3], double hi[3])
{
    double jerk[3], snap[2];
    for (int i = 0; i < 3; i++) jerk[i] = (i + 1) * acc[i + 1];
    for (int i = 0; i < 2; i++) snap[i] = (i + 1) * jerk[i + 1];
    double r_snap[1], r_jerk[2], r_acc[3], r_vel[4];
    int n_snap = roots_in(snap, 1, h, NULL, 0, r_snap);
    int n_jerk = roots_in(jerk, 2, h, r_snap, n_snap, r_jerk);
    int n_acc = roots_in(acc, 3, h, r_jerk, n_jerk, r_acc);
    int n_vel = roots_in(vel, 4, h, r_acc, n_acc, r_vel);
    range_of(c, 5, h, r_vel, n_vel, &lo[0], &hi[0]);
    range_of(vel, 4, h, r_acc, n_acc, &lo[1], &hi[1]);
    range_of(acc, 3, h, r_jerk, n_jerk, &lo[2], &hi[2]);
}

/* The time in segment k [s from the plan's start] where the polynomial c (degree deg) reaches
 * the value v nearest to, for a message. */
static double time_of(const traj_plan *p, int k, const double *c, int deg, double v)
{
    double best = 0, err = INFINITY;
    for (int s = 0; s <= 64; s++) {
        double tau = p->h[k] * s / 64, e = fabs(horner(c, deg, tau) - v);
        if (e < err) err = e, best = tau;
    }
    return p->t0[k] + best;
}

/* "waypoint W joint NAME" for a message about joint j near waypoint wp, or "joint NAME" on a
 * shaped plan (whose segments are not between waypoints). */
static const char *head_of(char *buf, size_t len, const traj_plan *p, const traj_limits *lim,
                           int wp, int j)
{
    if (p->shaped)
        snprintf(buf, len, "joint %s", lim->name[j]);
    else
        snprintf(buf, len, "waypoint %d joint %s", wp, lim->name[j]);
    return buf;
}

/* Where in the plan segment wp lies, for a message: "between the start and waypoint 0",
 * "between waypoint 2 and waypoint 3", or on a shaped plan (whose segments are not between
 * waypoints) "on the path shaped by [trajectory] shaper". */
static const char *where_of(char *buf, size_t len, const traj_plan *p, int wp)
{
    if (p->shaped)
        snprintf(buf, len, "on the path shaped by [trajectory] shaper");
    else if (wp <= 0)
        snprintf(buf, len, "between the start and waypoint %d", wp);
    else
        snprintf(buf, len, "between waypoint %d and waypoint %d", wp - 1, wp);
    return buf;
}

int traj_validate_segment(const traj_plan *p, const traj_limits *lim, int k, int first_wp,
                          traj_error *err)
{
    int wp = first_wp + k;
    char where[64], head[CFG_NAME_MAX + 48]; /* for a message (where_of, head_of) */
    for (int j = 0; j < p->n; j++) {
        const double *c = traj_coef(p, k, j);
        for (int i = 0; i < TRAJ_NCOEF; i++) {
            if (!isfinite(c[i]) || !isfinite(p->h[k])) {
                ctl_error_set(err, "limits", "%s: the path %s is not finite (segment of %.4g s)",
                              head_of(head, sizeof head, p, lim, wp, j),
                              where_of(where, sizeof where, p, wp), p->h[k]);
                return -1;
            }
        }
        double vlim = lim->velocity[j] * (1 + LIMIT_SLACK) + 1e-12;
        double alim = lim->acceleration[j] * (1 + LIMIT_SLACK) + 1e-12;
        double span = lim->upper[j] - lim->lower[j];
        double plo = lim->lower[j] - LIMIT_SLACK * span - 1e-12;
        double phi = lim->upper[j] + LIMIT_SLACK * span + 1e-12;
        /* a plan that starts past a limit (enabled on a hard stop) may come back in, but never
         * go further out than where it starts */
        double q0 = traj_coef(p, 0, j)[0];
        plo = fmin(plo, q0);
        phi = fmax(phi, q0);
        /* q, qd, qdd: their Bernstein hulls (cheap); where one is not within its limits, the
         * exact ranges (roots), which the checks below then judge */
        double vel[5], acc[4], lo[3], hi[3];
        derive(c, vel, acc);
        hull_of(c, 5, p->h[k], &lo[0], &hi[0]);
        hull_of(vel, 4, p->h[k], &lo[1], &hi[1]);
        hull_of(acc, 3, p->h[k], &lo[2], &hi[2]);
        if (!(lo[0] >= plo && hi[0] <= phi && -lo[1] <= vlim && hi[1] <= vlim && -lo[2] <= alim &&
              hi[2] <= alim))
            segment_ranges(c, vel, acc, p->h[k], lo, hi);
        if (!(lo[0] >= plo && hi[0] <= phi)) {
            double q = lo[0] < plo ? lo[0] : hi[0];
            ctl_error_set(err, "limits",
                          "%s: the path reaches q = %.4g %s at t = %.4g s (%s), "
                          "outside the position limits [%.4g, %.4g] %s",
                          head_of(head, sizeof head, p, lim, wp, j), q, unit(lim, j, 0),
                          time_of(p, k, c, 5, q), where_of(where, sizeof where, p, wp),
                          lim->lower[j], lim->upper[j], unit(lim, j, 0));
            return -1;
        }
        if (!(-lo[1] <= vlim && hi[1] <= vlim)) {
            double v = -lo[1] > hi[1] ? lo[1] : hi[1];
            ctl_error_set(err, "limits",
                          "%s: the path reaches velocity %.4g %s at t = %.4g s (%s), "
                          "over the limit %.4g %s",
                          head_of(head, sizeof head, p, lim, wp, j), v, unit(lim, j, 1),
                          time_of(p, k, vel, 4, v), where_of(where, sizeof where, p, wp),
                          lim->velocity[j], unit(lim, j, 1));
            return -1;
        }
        if (!(-lo[2] <= alim && hi[2] <= alim)) {
            double a = -lo[2] > hi[2] ? lo[2] : hi[2];
            ctl_error_set(err, "limits",
                          "%s: the path reaches acceleration %.4g %s at t = %.4g s "
                          "(%s), over the limit %.4g %s",
                          head_of(head, sizeof head, p, lim, wp, j), a, unit(lim, j, 2),
                          time_of(p, k, acc, 3, a), where_of(where, sizeof where, p, wp),
                          lim->acceleration[j], unit(lim, j, 2));
            return -1;
        }
    }
    return 0;
}

int traj_validate(const traj_plan *p, const traj_limits *lim, int first_wp, traj_error *err)
{
    for (int k = 0; k < p->n_seg; k++)
        if (traj_validate_segment(p, lim, k, first_wp, err)) return -1;
    return 0;
}

/* Checks each waypoint's own values: times finite, within [period, TRAJ_MAX_DURATION] and at
 * least a period apart; positions, velocities and accelerations finite and within the limits.
 * Every comparison is written so that NaN fails it. */
static int check_points(const traj_limits *lim, const traj_waypoint *pts, int n_pts, int first,
                        traj_error *err)
{
    double min_step = lim->period * (1 - LIMIT_SLACK);
    for (int i = first; i < n_pts; i++) {
        const traj_waypoint *w = &pts[i];
        double prev = i == first ? 0 : pts[i - 1].t;
        if (!isfinite(w->t)) {
            ctl_error_set(err, "invalid_params", "waypoint %d: t is not a finite number", i);
            return -1;
        }
        if (!(w->t <= TRAJ_MAX_DURATION)) {
            ctl_error_set(
                err, "invalid_params",
                "waypoint %d: t = %.4g s is beyond %.0f s, the longest a trajectory may last", i,
                w->t, TRAJ_MAX_DURATION);
            return -1;
        }
        if (i == first && !(w->t > 0 && w->t >= min_step)) {
            ctl_error_set(
                err, "invalid_params",
                "waypoint %d: t = %.4g s must be at least one control period (%.4g s) after "
                "the start (the trajectory starts from the present desired state at t = 0)",
                i, w->t, lim->period);
            return -1;
        }
        if (i > first && !(w->t > prev && w->t - prev >= min_step)) {
            ctl_error_set(
                err, "invalid_params",
                "waypoint %d: t = %.4g s is not at least one control period (%.4g s) after "
                "waypoint %d (t = %.4g s); times must increase by a period or more",
                i, w->t, lim->period, i - 1, prev);
            return -1;
        }
        if (w->has_qdd && !w->has_qd) {
            ctl_error_set(err, "invalid_params", "waypoint %d: qdd is given without qd", i);
            return -1;
        }
        for (int j = 0; j < lim->n; j++) {
            const char *nm = lim->name[j];
            if (!isfinite(w->q[j]) || (w->has_qd && !isfinite(w->qd[j])) ||
                (w->has_qdd && !isfinite(w->qdd[j]))) {
                ctl_error_set(err, "invalid_params",
                              "waypoint %d joint %s: value is not a finite number", i, nm);
                return -1;
            }
            if (!(w->q[j] >= lim->lower[j] && w->q[j] <= lim->upper[j])) {
                ctl_error_set(
                    err, "limits",
                    "waypoint %d joint %s: q = %.4g %s is outside the position limits [%.4g, "
                    "%.4g] %s",
                    i, nm, w->q[j], unit(lim, j, 0), lim->lower[j], lim->upper[j], unit(lim, j, 0));
                return -1;
            }
            if (w->has_qd && !(fabs(w->qd[j]) <= lim->velocity[j])) {
                ctl_error_set(
                    err, "limits",
                    "waypoint %d joint %s: qd = %.4g %s is over the velocity limit %.4g %s", i, nm,
                    w->qd[j], unit(lim, j, 1), lim->velocity[j], unit(lim, j, 1));
                return -1;
            }
            if (w->has_qdd && !(fabs(w->qdd[j]) <= lim->acceleration[j])) {
                ctl_error_set(
                    err, "limits",
                    "waypoint %d joint %s: qdd = %.4g %s is over the acceleration limit %.4g "
                    "%s",
                    i, nm, w->qdd[j], unit(lim, j, 2), lim->acceleration[j], unit(lim, j, 2));
                return -1;
            }
        }
    }
    return 0;
}

/* Solves the C2 spline velocity equations for the interior knots a+1..b-1 of one joint
 * (velocities at a and b known):
 *   h_k v_{k-1} + 2 (h_{k-1} + h_k) v_k + h_{k-1} v_{k+1}
 *     = 3 (h_{k-1} (q_{k+1} - q_k) / h_k + h_k (q_k - q_{k-1}) / h_{k-1})
 * with the Thomas algorithm (the system is diagonally dominant). cp, dp: scratch of m. */
static void spline_velocities(const double *t, const double *q, double *v, int a, int b, double *cp,
                              double *dp)
{
    int m = b - a - 1;
    for (int i = 0; i < m; i++) {
        int k = a + 1 + i;
        double hp = t[k] - t[k - 1], hn = t[k + 1] - t[k];
        double lo = hn, di = 2 * (hp + hn), up = hp;
        double r = 3 * (hp * (q[k + 1] - q[k]) / hn + hn * (q[k] - q[k - 1]) / hp);
        if (i == 0) r -= lo * v[a];
        if (i == m - 1) r -= up * v[b];
        if (i == 0) {
            cp[i] = up / di;
            dp[i] = r / di;
        } else {
            double den = di - lo * cp[i - 1];
            cp[i] = up / den;
            dp[i] = (r - lo * dp[i - 1]) / den;
        }
    }
    for (int i = m - 1; i >= 0; i--) {
        v[a + 1 + i] = dp[i] - (i < m - 1 ? cp[i] * v[a + 2 + i] : 0);
    }
}

int traj_build(traj_plan *p, const traj_limits *lim, const traj_state *start,
               const traj_waypoint *pts, int n_pts, double same_tol, traj_error *err)
{
    int n = lim->n;
    if (n_pts < 1) {
        ctl_error_set(err, "invalid_params", "a trajectory needs at least one waypoint");
        return -1;
    }
    if (n_pts > TRAJ_MAX_POINTS || n_pts > p->cap) {
        ctl_error_set(err, "invalid_params",
                      "%d waypoints are more than the %d a trajectory may have", n_pts,
                      p->cap < TRAJ_MAX_POINTS ? p->cap : TRAJ_MAX_POINTS);
        return -1;
    }
    for (int j = 0; j < n; j++) {
        if (!isfinite(start->q[j]) || !isfinite(start->qd[j]) || !isfinite(start->qdd[j])) {
            ctl_error_set(err, "internal", "joint %s: the start state is not finite", lim->name[j]);
            return -1;
        }
    }
    int first = 0;
    if (pts[0].t == 0) { /* a t = 0 point must be the start itself */
        for (int j = 0; j < n; j++) {
            if (!(fabs(pts[0].q[j] - start->q[j]) <= same_tol)) {
                ctl_error_set(
                    err, "invalid_params",
                    "waypoint 0 joint %s: at t = 0 the trajectory is at the present desired "
                    "position %.4g %s, not %.4g %s; give the first waypoint a later time",
                    lim->name[j], start->q[j], unit(lim, j, 0), pts[0].q[j], unit(lim, j, 0));
                return -1;
            }
        }
        first = 1;
        if (n_pts == 1) {
            ctl_error_set(err, "invalid_params",
                          "a trajectory needs a waypoint after t = 0 (waypoint 0 is the start)");
            return -1;
        }
    }
    if (check_points(lim, pts, n_pts, first, err)) return -1;

    int m = n_pts - first; /* knots 0..m: 0 = start, k = pts[first + k - 1] */
    size_t K = (size_t)m + 1;
    double *t = malloc(K * sizeof *t), *q = malloc(K * sizeof *q), *v = malloc(K * sizeof *v);
    double *a = malloc(K * sizeof *a), *cp = malloc(K * sizeof *cp), *dp = malloc(K * sizeof *dp);
    bool *fixed = calloc(K, sizeof *fixed), *has_a = calloc(K, sizeof *has_a);
    if (!t || !q || !v || !a || !cp || !dp || !fixed || !has_a) {
        ctl_error_set(err, "internal", "out of memory building a trajectory of %d waypoints",
                      n_pts);
        free(t), free(q), free(v), free(a), free(cp), free(dp), free(fixed), free(has_a);
        return -1;
    }
    t[0] = 0;
    fixed[0] = has_a[0] = true;
    for (int k = 1; k <= m; k++) {
        const traj_waypoint *w = &pts[first + k - 1];
        t[k] = w->t;
        fixed[k] = w->has_qd || k == m;
        has_a[k] = w->has_qd && w->has_qdd;
    }
    p->n_seg = m;
    p->duration = t[m];
    p->first_quintic = m >= 1 && has_a[1];
    p->shaped = false;
    for (int k = 0; k < m; k++) {
        p->t0[k] = t[k];
        p->h[k] = t[k + 1] - t[k];
    }
    for (int j = 0; j < n; j++) {
        q[0] = start->q[j];
        v[0] = start->qd[j];
        a[0] = start->qdd[j];
        for (int k = 1; k <= m; k++) {
            const traj_waypoint *w = &pts[first + k - 1];
            q[k] = w->q[j];
            v[k] = w->has_qd ? w->qd[j] : 0;
            a[k] = has_a[k] ? w->qdd[j] : 0;
        }
        for (int s = 0; s < m;) { /* runs between knots of known velocity */
            int e = s + 1;
            while (!fixed[e]) e++;
            if (e - s > 1) spline_velocities(t, q, v, s, e, cp, dp);
            s = e;
        }
        for (int k = 0; k < m; k++) {
            double *c = traj_coef(p, k, j);
            if (has_a[k] && has_a[k + 1])
                traj_quintic(q[k], v[k], a[k], q[k + 1], v[k + 1], a[k + 1], p->h[k], c);
            else
                traj_cubic(q[k], v[k], q[k + 1], v[k + 1], p->h[k], c);
        }
    }
    free(t), free(q), free(v), free(a), free(cp), free(dp), free(fixed), free(has_a);
    if (traj_shape(p, &lim->shape, start, err)) return -1;
    return traj_validate(p, lim, first, err);
}

double traj_min_quintic_time(double d, double v, double a)
{
    d = fabs(d);
    double tv = v > 0 ? 1.875 * d / v : 0;
    double ta = a > 0 ? sqrt(10.0 / sqrt(3.0) * d / a) : 0;
    return tv > ta ? tv : ta;
}

/* One quintic segment from start to goal at rest over T. */
static void fill_move(traj_plan *p, const traj_state *start, const double *goal, double T)
{
    p->n_seg = 1;
    p->duration = T;
    p->first_quintic = true;
    p->shaped = false;
    p->t0[0] = 0;
    p->h[0] = T;
    for (int j = 0; j < p->n; j++)
        traj_quintic(start->q[j], start->qd[j], start->qdd[j], goal[j], 0, 0, T,
                     traj_coef(p, 0, j));
}

/* Shapes the move in p with lim's shaper (if any) and validates what is then in p. From rest
 * the shaped move stays within the unshaped one's velocity and acceleration bounds (positive
 * impulses summing to 1 average it); from a moving start its re-anchored first piece may not,
 * so the minimum-time search checks both. */
static int shape_and_validate(traj_plan *p, const traj_limits *lim, const traj_state *start,
                              traj_error *err)
{
    if (traj_shape(p, &lim->shape, start, err)) return -1;
    return traj_validate(p, lim, 0, err);
}

int traj_build_move(traj_plan *p, const traj_limits *lim, const traj_state *start,
                    const double *goal, double duration, traj_error *err)
{
    int n = lim->n;
    for (int j = 0; j < n; j++) {
        if (!isfinite(goal[j])) {
            ctl_error_set(err, "invalid_params", "waypoint 0 joint %s: q is not a finite number",
                          lim->name[j]);
            return -1;
        }
        if (!(goal[j] >= lim->lower[j] && goal[j] <= lim->upper[j])) {
            ctl_error_set(err, "limits",
                          "waypoint 0 joint %s: q = %.4g %s is outside the position limits [%.4g, "
                          "%.4g] %s",
                          lim->name[j], goal[j], unit(lim, j, 0), lim->lower[j], lim->upper[j],
                          unit(lim, j, 0));
            return -1;
        }
        if (!isfinite(start->q[j]) || !isfinite(start->qd[j]) || !isfinite(start->qdd[j])) {
            ctl_error_set(err, "internal", "joint %s: the start state is not finite", lim->name[j]);
            return -1;
        }
    }
    if (!isfinite(duration)) {
        ctl_error_set(err, "invalid_params", "duration is not a finite number");
        return -1;
    }
    if (duration > 0) {
        if (!(duration >= lim->period * (1 - LIMIT_SLACK) && duration <= TRAJ_MAX_DURATION)) {
            ctl_error_set(
                err, "invalid_params",
                "duration = %.4g s is outside [%.4g, %.0f] s (one control period to an hour)",
                duration, lim->period, TRAJ_MAX_DURATION);
            return -1;
        }
        fill_move(p, start, goal, duration);
        return shape_and_validate(p, lim, start, err);
    }
    double T = fmax(0.01, lim->period); /* at least 10 ms */
    for (int j = 0; j < n; j++) {
        double tj =
            traj_min_quintic_time(goal[j] - start->q[j], lim->velocity[j], lim->acceleration[j]);
        if (tj > T) T = tj;
    }
    T *= 1.001; /* rounding margin */
    /* a moving start can need longer than the rest-to-rest bound: grow until valid */
    for (int i = 0; i < 400 && T <= TRAJ_MAX_DURATION; i++) {
        fill_move(p, start, goal, T);
        if (traj_validate(p, lim, 0, NULL) == 0 && shape_and_validate(p, lim, start, NULL) == 0)
            return 0;
        T *= 1.05;
    }
    if (!(T <= TRAJ_MAX_DURATION)) {
        ctl_error_set(
            err, "limits",
            "the move would take more than %.0f s at the velocity and acceleration limits",
            TRAJ_MAX_DURATION);
        return -1;
    }
    fill_move(p, start, goal, T);
    return shape_and_validate(p, lim, start, err);
}

/* ------------------------------------------------------------------------- stop profile */

void traj_stop_init(traj_stop *s, int n, const double *q, const double *qd, const double *acc_limit)
{
    s->n = n;
    s->duration = 0;
    for (int j = 0; j < n; j++) {
        s->q0[j] = q[j];
        s->v0[j] = qd[j];
        s->a[j] = acc_limit[j] > 0 ? acc_limit[j] : 1.0;
        s->t_stop[j] = fabs(qd[j]) / s->a[j];
        if (s->t_stop[j] > s->duration) s->duration = s->t_stop[j];
    }
}

/* Constant deceleration a toward rest: v(t) = v0 - sign(v0) a t, q(t) = q0 + v0 t - sign(v0)
 * a t^2 / 2, for t < t_stop; then at rest at q0 + v0 t_stop / 2. */
void traj_stop_sample(const traj_stop *s, double t, double *q, double *qd, double *qdd)
{
    for (int j = 0; j < s->n; j++) {
        double sg = s->v0[j] > 0 ? 1.0 : (s->v0[j] < 0 ? -1.0 : 0.0);
        double ts = s->t_stop[j];
        if (t < ts) {
            q[j] = s->q0[j] + s->v0[j] * t - 0.5 * sg * s->a[j] * t * t;
            qd[j] = s->v0[j] - sg * s->a[j] * t;
            qdd[j] = -sg * s->a[j];
        } else {
            q[j] = s->q0[j] + 0.5 * s->v0[j] * ts;
            qd[j] = 0;
            qdd[j] = 0;
        }
    }
}
