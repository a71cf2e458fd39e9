/*
 * payload_fit.c — least-squares payload mass and centre from the torques that move the arm (see
 * payload_fit.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/payload_fit.h"

/* unknowns: m, m c (3), inertia about the tool origin (ixx ixy ixz iyy iyz izz) */
#define NT            10
#define PAYLOAD_SWING 0.5 /* default pose offsets [rad], or 40 % of a joint's range */
#define COND_MAX      1e6 /* a fit of m and m c with a worse conditioning is refused */
#define COND_INERTIA  1e3 /* all ten unknowns are solved for when this well conditioned */
/* the robust refit: equations off by more than this many robust standard deviations are left
 * out (a normal error lies beyond 5 sd once in 1.7 million), at most PAYLOAD_REFITS times */
#define PAYLOAD_OUTLIER 5.0
#define PAYLOAD_REFITS  6

/* The normal equations of a least-squares problem: Y^T Y, Y^T b, b^T b over rows equations. */
typedef struct {
    double a[NT][NT], r[NT], bb;
    long rows;
} normal_eq;

struct payload_acc {
    dyn_model *m;
    dyn_data *d;
    int n;
    double v_min;
    double *y, *b; /* the equations kept for the robust refit: y[i*NT + k], b[i] */
    long rows, cap;
};
payload_acc *payload_acc_create(const dyn_model_desc *unloaded, double v_min)
{
    payload_acc *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    dyn_model_desc desc = *unloaded;
    memset(&desc.payload, 0, sizeof desc.payload);
    a->m = dyn_model_create(&desc, NULL, NULL);
    a->d = a->m ? dyn_data_create(a->m) : NULL;
    if (!a->d) {
        payload_acc_free(a);
        return NULL;
    }
    a->n = desc.n;
    a->v_min = v_min;
    return a;
}

void payload_acc_free(payload_acc *a)
{
    if (!a) return;
    dyn_data_free(a->d);
    dyn_model_free(a->m);
    free(a->y);
    free(a->b);
    free(a);
}

/* Inverse dynamics (gravity, inertia, Coriolis; no armature, no friction) with payload p, less
 * t0 (the same without payload), into column col of y (y[j*NT + col]). */
static void column(payload_acc *a, const dyn_payload *p, const double *q, const double *qd,
                   const double *qdd, const double *t0, int col, double *y)
{
    double t[DYN_MAX_DOF];
    dyn_set_payload(a->m, p);
    dyn_rnea(a->m, a->d, q, qd, qdd, NULL, DYN_GRAVITY, t);
    for (int j = 0; j < a->n; j++) y[j * NT + col] = t[j] - t0[j];
}

/* The regressor at (q, qd, qdd): y[j*NT + k] for joint j, unknown k, each column the inverse
 * dynamics of a unit payload less that of none (strobing the recursion): m = 1 at the tool
 * origin; m = 1 at e_k with the inertia about its centre that cancels its own about the origin
 * (I_c = -(1 - e_k e_k^T)), less the first column; and mass 0 with one unit entry of the inertia
 * (about the tool origin, which is then the centre). The model's payload is left at "none". */
static void regressor(payload_acc *a, const double *q, const double *qd, const double *qdd,
                      double *y)
{
    static const int diag[3] = {0, 3, 5}; /* ixx, iyy, izz in ixx ixy ixz iyy iyz izz */
    double t0[DYN_MAX_DOF];
    dyn_payload p;
    memset(&p, 0, sizeof p);
    dyn_set_payload(a->m, &p);
    dyn_rnea(a->m, a->d, q, qd, qdd, NULL, DYN_GRAVITY, t0);
    p.mass = 1;
    column(a, &p, q, qd, qdd, t0, 0, y);
    for (int k = 0; k < 3; k++) {
        memset(&p, 0, sizeof p);
        p.mass = 1;
        p.com[k] = 1;
        for (int i = 0; i < 3; i++)
            if (i != k) p.inertia[diag[i]] = -1;
        column(a, &p, q, qd, qdd, t0, 1 + k, y);
        for (int j = 0; j < a->n; j++) y[j * NT + 1 + k] -= y[j * NT];
    }
    for (int e = 0; e < 6; e++) {
        memset(&p, 0, sizeof p);
        p.inertia[e] = 1;
        column(a, &p, q, qd, qdd, t0, 4 + e, y);
    }
    memset(&p, 0, sizeof p);
    dyn_set_payload(a->m, &p);
}

/* Room for n more equations; -1 when memory is short. */
static int reserve(payload_acc *a, long n)
{
    if (a->rows + n <= a->cap) return 0;
    long cap = a->cap ? 2 * a->cap : 4096;
    while (cap < a->rows + n) cap *= 2;
    double *y = realloc(a->y, sizeof(double) * NT * (size_t)cap);
    if (!y) return -1;
    a->y = y;
    double *b = realloc(a->b, sizeof(double) * (size_t)cap);
    if (!b) return -1;
    a->b = b;
    a->cap = cap;
    return 0;
}

int payload_acc_add(payload_acc *a, const double *q, const double *qd, const double *qdd,
                    const double *tau)
{
    int n = a->n, used = 0;
    for (int j = 0; j < n; j++) {
        if (!(isfinite(q[j]) && isfinite(qd[j]) && isfinite(qdd[j]) && isfinite(tau[j]))) return 0;
        used += fabs(qd[j]) >= a->v_min;
    }
    if (!used || reserve(a, used) != 0) return 0;
    double y[DYN_MAX_DOF * NT], model[DYN_MAX_DOF];
    regressor(a, q, qd, qdd, y);
    dyn_rnea(a->m, a->d, q, qd, qdd, NULL, DYN_ALL, model);
    for (int j = 0; j < n; j++) {
        if (!(fabs(qd[j]) >= a->v_min)) continue;
        memcpy(a->y + a->rows * NT, y + j * NT, sizeof(double) * NT);
        a->b[a->rows] = tau[j] - model[j];
        a->rows++;
    }
    return used;
}

/* The normal equations of the kept equations (keep NULL: all of them). */
static void normal_equations(const payload_acc *acc, const unsigned char *keep, normal_eq *ne)
{
    memset(ne, 0, sizeof *ne);
    for (long i = 0; i < acc->rows; i++) {
        if (keep && !keep[i]) continue;
        const double *row = acc->y + i * NT, b = acc->b[i];
        for (int c1 = 0; c1 < NT; c1++) {
            for (int c2 = c1; c2 < NT; c2++) ne->a[c1][c2] += row[c1] * row[c2];
            ne->r[c1] += row[c1] * b;
        }
        ne->bb += b * b;
        ne->rows++;
    }
    for (int c1 = 0; c1 < NT; c1++)
        for (int c2 = 0; c2 < c1; c2++) ne->a[c1][c2] = ne->a[c2][c1];
}

/* Least squares for the unknowns free[0..k) with the others held at th[] (updated in place):
 * A_ff th_f = r_f - A_fo th_o, solved in column-scaled form. *cond gets the scaled matrix's
 * condition number, inv (k x k, row-major) the inverse of A_ff (times the residual variance:
 * the covariance of th_f). Returns -1 when worse conditioned than COND_MAX. */
static int solve_free(const normal_eq *acc, const int *free, int k, double *th, double *cond,
                      double *inv)
{
    double s[NT], a[NT * NT], v[NT * NT], ev[NT], r[NT];
    for (int i = 0; i < k; i++) {
        double d = acc->a[free[i]][free[i]];
        s[i] = d > 0 ? sqrt(d) : 1;
    }
    for (int i = 0; i < k; i++) {
        double ri = acc->r[free[i]];
        for (int o = 0; o < NT; o++) {
            bool is_free = false;
            for (int f = 0; f < k; f++) is_free = is_free || free[f] == o;
            if (!is_free) ri -= acc->a[free[i]][o] * th[o];
        }
        r[i] = ri / s[i];
        for (int j = 0; j < k; j++) a[i * k + j] = acc->a[free[i]][free[j]] / (s[i] * s[j]);
    }
    dyn_sym_eigen(k, a, ev, v);
    double lmax = 0, lmin = INFINITY;
    for (int i = 0; i < k; i++) {
        lmax = fmax(lmax, ev[i]);
        lmin = fmin(lmin, ev[i]);
    }
    *cond = lmin > 0 ? sqrt(lmax / lmin) : INFINITY;
    if (!(*cond <= COND_MAX)) return -1;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            double x = 0;
            for (int e = 0; e < k; e++) x += v[i * k + e] * v[j * k + e] / ev[e];
            inv[i * k + j] = x / (s[i] * s[j]);
        }
    for (int i = 0; i < k; i++) {
        double x = 0;
        for (int j = 0; j < k; j++) x += inv[i * k + j] * r[j] * s[j];
        th[free[i]] = x;
    }
    return 0;
}

/* The residual sum of squares at th: b'b - 2 th'r + th'A th. */
static double rss_at(const normal_eq *acc, const double *th)
{
    double rss = acc->bb;
    for (int i = 0; i < NT; i++) {
        rss -= 2 * th[i] * acc->r[i];
        for (int j = 0; j < NT; j++) rss += th[i] * acc->a[i][j] * th[j];
    }
    return fmax(rss, 0);
}

/* The inertia about the tool origin of a point mass m at c = h / m (ixx ixy ixz iyy iyz izz). */
static void point_inertia(const double *th, double *io)
{
    double m = th[0], c[3] = {0, 0, 0};
    if (m > 0)
        for (int i = 0; i < 3; i++) c[i] = th[1 + i] / m;
    double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    io[0] = m * (cc - c[0] * c[0]);
    io[1] = -m * c[0] * c[1];
    io[2] = -m * c[0] * c[2];
    io[3] = m * (cc - c[1] * c[1]);
    io[4] = -m * c[1] * c[2];
    io[5] = m * (cc - c[2] * c[2]);
}

double payload_acc_rms(const payload_acc *a, const dyn_payload *p, long *rows)
{
    double th[NT] = {p->mass, p->mass * p->com[0], p->mass * p->com[1], p->mass * p->com[2]};
    double io[6];
    point_inertia(th, io); /* about the origin: about the centre + the point mass's */
    for (int i = 0; i < 6; i++) th[4 + i] = p->inertia[i] + io[i];
    double ss = 0;
    for (long i = 0; i < a->rows; i++) {
        double e = a->b[i];
        for (int c = 0; c < NT; c++) e -= a->y[i * NT + c] * th[c];
        ss += e * e;
    }
    if (rows) *rows = a->rows;
    return a->rows ? sqrt(ss / (double)a->rows) : NAN;
}

int payload_acc_absorb(payload_acc *a, const payload_acc *b)
{
    if (reserve(a, b->rows) != 0) return -1;
    memcpy(a->y + a->rows * NT, b->y, sizeof(double) * NT * (size_t)b->rows);
    memcpy(a->b + a->rows, b->b, sizeof(double) * (size_t)b->rows);
    a->rows += b->rows;
    return 0;
}

/* An inertia tensor a body can have (ixx ixy ixz iyy iyz izz about its centre): finite, principal
 * moments >= 0 and each at most the sum of the other two (the triangle inequality). */
static int inertia_physical(const double *in)
{
    double w[3], axes[9];
    for (int i = 0; i < 6; i++)
        if (!isfinite(in[i])) return 0;
    dyn_inertia_principal(in, w, axes);
    double tol = 1e-9 * (fabs(w[0]) + fabs(w[1]) + fabs(w[2])) + 1e-300;
    return w[0] >= -tol && w[2] <= w[0] + w[1] + tol;
}

/* The least-squares theta of the equations ne: all ten unknowns when the motion shows the
 * inertia (condition number <= COND_INERTIA), else m and m c with the inertia of a point mass at
 * the centre found (iterated). *k gets the unknowns solved for, cov their unscaled covariance
 * (k x k). -1 with why when even m and m c are not told apart. */
static int fit(const normal_eq *ne, double *th, int *k, double *cond, double *cov, char *why,
               size_t why_len)
{
    static const int all[NT] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, mh[4] = {0, 1, 2, 3};
    memset(th, 0, sizeof(double) * NT);
    *k = NT;
    if (solve_free(ne, all, NT, th, cond, cov) == 0 && *cond <= COND_INERTIA) return 0;
    *k = 4;
    memset(th, 0, sizeof(double) * NT);
    for (int it = 0; it < 50; it++) {
        double before[4] = {th[0], th[1], th[2], th[3]};
        if (solve_free(ne, mh, 4, th, cond, cov) != 0) {
            snprintf(why, why_len,
                     "the motion does not tell the payload's mass and centre apart "
                     "(condition number %.3g): the tool must turn to several orientations "
                     "against gravity",
                     *cond);
            return -1;
        }
        point_inertia(th, th + 4);
        double change = 0;
        for (int i = 0; i < 4; i++) change = fmax(change, fabs(th[i] - before[i]));
        if (change <= 1e-12 * (1 + fabs(th[0]))) break;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Marks in keep[] the equations whose residual at th is within PAYLOAD_OUTLIER robust standard
 * deviations (1.4826 x the median absolute residual); abs[] is scratch. Returns how many
 * changed. */
static long mark_inliers(const payload_acc *acc, const double *th, unsigned char *keep,
                         double *abs_res)
{
    for (long i = 0; i < acc->rows; i++) {
        double e = acc->b[i];
        for (int c = 0; c < NT; c++) e -= acc->y[i * NT + c] * th[c];
        abs_res[i] = fabs(e);
    }
    double *sorted = abs_res + acc->rows;
    memcpy(sorted, abs_res, sizeof(double) * (size_t)acc->rows);
    qsort(sorted, (size_t)acc->rows, sizeof(double), cmp_double);
    double sigma = 1.4826 * sorted[acc->rows / 2];
    double limit = PAYLOAD_OUTLIER * sigma + 1e-12;
    long changed = 0;
    for (long i = 0; i < acc->rows; i++) {
        unsigned char in = abs_res[i] <= limit;
        changed += in != keep[i];
        keep[i] = in;
    }
    return changed;
}

int payload_acc_solve(const payload_acc *acc, payload_fit_result *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->rows = acc->rows;
    if (acc->rows <= NT) {
        snprintf(why, why_len,
                 "%ld equations from moving joints; more than %d needed (did the arm move?)",
                 acc->rows, NT);
        return -1;
    }
    normal_eq ne;
    normal_equations(acc, NULL, &ne);
    double th[NT], cov[NT * NT], cond;
    int k;
    if (fit(&ne, th, &k, &cond, cov, why, why_len) != 0) return -1;
    /* the robust refit: equations the fit leaves far off (a host stall between a state and a
     * torque, a bump) are left out and the rest fitted again, until the set settles */
    unsigned char *keep = malloc((size_t)acc->rows);
    double *scratch = malloc(sizeof(double) * 2 * (size_t)acc->rows);
    if (!keep || !scratch) {
        free(keep);
        free(scratch);
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    memset(keep, 1, (size_t)acc->rows);
    for (int pass = 0; pass < PAYLOAD_REFITS; pass++) {
        if (mark_inliers(acc, th, keep, scratch) == 0) break;
        normal_eq trimmed;
        normal_equations(acc, keep, &trimmed);
        double th2[NT], cov2[NT * NT], cond2;
        int k2;
        if (trimmed.rows <= NT || fit(&trimmed, th2, &k2, &cond2, cov2, why, why_len) != 0) break;
        ne = trimmed;
        memcpy(th, th2, sizeof th);
        memcpy(cov, cov2, sizeof cov);
        cond = cond2;
        k = k2;
    }
    free(keep);
    free(scratch);
    out->rows = ne.rows;
    out->rows_left_out = acc->rows - ne.rows;
    out->cond = cond;
    double rss = rss_at(&ne, th), var = rss / (double)(ne.rows - k);
    out->residual_rms = sqrt(rss / (double)ne.rows);
    out->mass = th[0];
    out->sd_mass = sqrt(var * cov[0]);
    out->com_known = th[0] > 1e-9 && th[0] > 3 * out->sd_mass;
    for (int i = 0; i < 3 && out->com_known; i++) {
        double c = th[1 + i] / th[0];
        out->com[i] = c;
        double vv = var * (cov[(1 + i) * k + 1 + i] - 2 * c * cov[(1 + i) * k] + c * c * cov[0]);
        out->sd_com[i] = sqrt(fmax(vv, 0)) / th[0];
    }
    out->inertia_known = k == NT && out->com_known;
    if (out->inertia_known) { /* about the centre: I_o - m (|c|^2 1 - c c^T) */
        double io_point[6];
        point_inertia(th, io_point);
        for (int i = 0; i < 6; i++) out->inertia[i] = th[4 + i] - io_point[i];
        out->inertia_known = inertia_physical(out->inertia);
        if (!out->inertia_known) memset(out->inertia, 0, sizeof out->inertia);
    }
    return 0;
}

/* The offset of a joint for the default poses: PAYLOAD_SWING or 40 % of its range, towards dir
 * (+1 or -1) when there is room that way, else the other way. */
static double swing(const cfg_joint *cj, double q, int dir)
{
    double a = fmin(PAYLOAD_SWING, 0.4 * (cj->upper - cj->lower));
    double room_up = cj->upper - q, room_down = q - cj->lower;
    if (dir > 0) return a <= room_up ? a : -fmin(a, room_down);
    return a <= room_down ? -a : fmin(a, room_up);
}

int payload_default_poses(const armd_config *cfg, const double *q0, double poses[][CFG_MAX_JOINTS])
{
    /* columns: the joint before the wrist (the elbow of a 6-axis arm), then the wrist's three */
    static const int pattern[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0},  {0, 0, 0, 1},
                                     {0, 1, 1, 1}, {1, 0, 0, 0}, {1, 1, -1, 0}, {1, 0, 1, 1}};
    int n = cfg->n_joints, first = n - 4;
    int n_poses = (int)(sizeof pattern / sizeof pattern[0]);
    for (int k = 0; k < n_poses; k++)
        for (int j = 0; j < n; j++) {
            int dir = j >= first && j >= 0 ? pattern[k][j - first] : 0;
            poses[k][j] = q0[j] + (dir ? swing(&cfg->joint[j], q0[j], dir) : 0);
        }
    return n_poses;
}
