/* feasible.c — the gains' discrete stability bounds, the character of a live gain change and a
 * payload's gravity torque against the torque limits (see feasible.h for the derivations). */
#include "config/feasible.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int feas_gains_stable(const char *name, double kp, double kd, double dt, char *why, size_t len)
{
    if (!(kp >= 0 && kd >= 0 && isfinite(kp) && isfinite(kd))) {
        snprintf(why, len, "joint %s: kp = %g, kd = %g must be finite and >= 0", name, kp, kd);
        return -1;
    }
    if (!(kd * dt < 2)) {
        snprintf(why, len,
                 "joint %s: kd dt = %g x %g s = %g must be below 2 (the sampled loop's stability "
                 "bound kd dt < 2; kd below %g at this rate)",
                 name, kd, dt, kd * dt, 2 / dt);
        return -1;
    }
    if (kp > 0 && !(kp * dt < 2 * kd)) {
        snprintf(why, len,
                 "joint %s: kp dt = %g x %g s = %g must be below 2 kd = %g (the sampled loop's "
                 "stability bound kp dt^2 < 2 kd dt; kp below %g with this kd, or kd above %g)",
                 name, kp, dt, kp * dt, 2 * kd, 2 * kd / dt, kp * dt / 2);
        return -1;
    }
    return 0;
}

double feas_own_inertia(const armd_config *cfg, int j)
{
    dyn_model_desc desc = cfg->model;
    memset(&desc.payload, 0, sizeof desc.payload);
    for (int i = j + 1; i < desc.n; i++) {
        desc.joint[i].mass = 0;
        memset(desc.joint[i].com, 0, sizeof desc.joint[i].com);
        memset(desc.joint[i].inertia, 0, sizeof desc.joint[i].inertia);
    }
    dyn_model *m = dyn_model_create(&desc, NULL, NULL);
    dyn_data *d = m ? dyn_data_create(m) : NULL;
    double q[CFG_MAX_JOINTS] = {0}, H[CFG_MAX_JOINTS * CFG_MAX_JOINTS], h = 0;
    if (d) {
        dyn_mass_matrix(m, d, q, DYN_ARMATURE, H);
        h = H[j * desc.n + j];
    }
    dyn_data_free(d);
    dyn_model_free(m);
    return h;
}

int feas_damping_stable(const char *name, double damping, double h, double dt, char *why,
                        size_t len)
{
    if (damping > 0 && h > 0 && !(damping * dt < 2 * h)) {
        snprintf(why, len,
                 "joint %s: damping dt = %g x %g s = %g must be below 2 x its inertia (at least "
                 "%.4g, its rotor and own link) = %.4g: the damping stop's sampled-loop bound "
                 "D dt < 2 H_jj",
                 name, damping, dt, damping * dt, h, 2 * h);
        return -1;
    }
    return 0;
}

int feas_integral(const char *name, double ki, double i_limit, char *why, size_t len)
{
    if (ki > 0 && !(i_limit > 0)) {
        snprintf(why, len,
                 "joint %s: ki = %g needs i_limit > 0 (the bound of the error integral [rad s]; "
                 "without it the integral grows without bound)",
                 name, ki);
        return -1;
    }
    return 0;
}

/* The damping ratio zeta = kd / (2 sqrt(kp)) by character: -1 below 1/sqrt(2) (the error
 * overshoots by more than 4.3 % and its response has a resonant peak), +1 above 1 (over-damped:
 * it creeps), 0 between (and without a spring, kp = 0). */
static int damping_side(double kp, double kd)
{
    if (!(kp > 0)) return 0;
    double zeta = kd / (2 * sqrt(kp));
    return zeta < M_SQRT1_2 ? -1 : zeta > 1 + 1e-9 ? 1 : 0;
}

int feas_gain_character(const char *name, const double old[3], const double nu[3], char *why,
                        size_t len)
{
    static const char *const key[3] = {"kp", "kd", "ki"};
    for (int k = 0; k < 3; k++) {
        if ((old[k] == 0) != (nu[k] == 0)) {
            snprintf(why, len, "joint %s: %s %g -> %g turns a term of the law %s", name, key[k],
                     old[k], nu[k], nu[k] == 0 ? "off" : "on");
            return -1;
        }
        if (old[k] != 0 && !(nu[k] <= 2 * old[k] && nu[k] >= 0.5 * old[k])) {
            snprintf(why, len, "joint %s: %s %g -> %g is more than a factor of 2", name, key[k],
                     old[k], nu[k]);
            return -1;
        }
    }
    int a = damping_side(old[0], old[1]), b = damping_side(nu[0], nu[1]);
    if (a * b < 0) {
        snprintf(why, len,
                 "joint %s: kp %g -> %g, kd %g -> %g turns the damping ratio kd / (2 sqrt(kp)) "
                 "from %.3g to %.3g, %s to %s",
                 name, old[0], nu[0], old[1], nu[1], old[1] / (2 * sqrt(old[0])),
                 nu[1] / (2 * sqrt(nu[0])),
                 a < 0 ? "under-damped (below 1/sqrt(2))" : "over-damped (above 1)",
                 b < 0 ? "under-damped (below 1/sqrt(2))" : "over-damped (above 1)");
        return -1;
    }
    return 0;
}

void feas_where(const double *q, int n, bool present, char *out, size_t len)
{
    if (present) {
        snprintf(out, len, "at the present pose");
        return;
    }
    snprintf(out, len, "at q =");
    for (int k = 0; k < n; k++) snprintf(out + strlen(out), len - strlen(out), " %.4g", q[k]);
    snprintf(out + strlen(out), len - strlen(out), " (within the joint ranges)");
}

/* One joint's grid values: its limits, then the multiples of pi/2 strictly between (revolute:
 * modulo 2 pi, each angle once). */
typedef struct {
    double v[48];
    int n_lim, n; /* v[0 .. n_lim) are the limits */
} grid_axis;

/* Appends angle a unless it is there already (modulo 2 pi for a revolute joint). */
static void axis_add(grid_axis *g, double a, bool revolute)
{
    for (int i = 0; i < g->n; i++) {
        double d = a - g->v[i];
        if (revolute) d = remainder(d, 2 * M_PI);
        if (fabs(d) < 1e-9) return;
    }
    if (g->n < (int)(sizeof g->v / sizeof g->v[0])) g->v[g->n++] = a;
}

/* The grid's axes within FEAS_GRID_MAX poses: false when even without the limits it exceeds. */
static bool grid_axes(const armd_config *cfg, grid_axis *g)
{
    int n = cfg->n_joints;
    for (int j = 0; j < n; j++) {
        const cfg_joint *J = &cfg->joint[j];
        bool rev = cfg->model.joint[j].type == DYN_REVOLUTE;
        grid_axis *a = &g[j];
        a->n = 0;
        axis_add(a, J->lower, rev);
        axis_add(a, J->upper, rev);
        a->n_lim = a->n;
        for (double k = ceil(J->lower / (M_PI / 2)); rev && k * (M_PI / 2) < J->upper; k++)
            if (k * (M_PI / 2) > J->lower)
                axis_add(a, k * (M_PI / 2) + 0.0, rev); /* + 0.0: no -0 */
    }
    for (;;) {
        double poses = 1;
        int widest = -1;
        for (int j = 0; j < n; j++) {
            poses *= g[j].n;
            if (g[j].n_lim > 0 && g[j].n > g[j].n_lim && (widest < 0 || g[j].n > g[widest].n))
                widest = j;
        }
        if (poses <= FEAS_GRID_MAX) return true;
        if (widest < 0) return false;
        grid_axis *a = &g[widest]; /* its limits out: the quarter turns stay */
        memmove(a->v, a->v + a->n_lim, sizeof(double) * (size_t)(a->n - a->n_lim));
        a->n -= a->n_lim;
        a->n_lim = 0;
    }
}

/* Gravity with and without the payload at q: the first joint above its limit with it and within
 * it without, as why ("at the present pose" or "at q = ..."); 0 when none. */
static int check_pose(const armd_config *cfg, const dyn_model *with, const dyn_model *bare,
                      dyn_data *d, const double *q, bool present, char *why, size_t len)
{
    double gw[CFG_MAX_JOINTS], gb[CFG_MAX_JOINTS];
    dyn_gravity(with, d, q, gw);
    dyn_gravity(bare, d, q, gb);
    for (int j = 0; j < cfg->n_joints; j++) {
        double lim = cfg->joint[j].torque;
        if (!(fabs(gw[j]) > lim) || fabs(gb[j]) > lim) continue;
        const char *u = cfg->model.joint[j].type == DYN_PRISMATIC ? "N" : "N m";
        char where[200];
        feas_where(q, cfg->n_joints, present, where, sizeof where);
        snprintf(why, len,
                 "joint %s needs %.2f %s to hold the arm with this payload %s (the arm alone "
                 "%.2f %s), above its torque limit of %.2f %s",
                 cfg->joint[j].name, fabs(gw[j]), u, where, fabs(gb[j]), u, lim, u);
        return -1;
    }
    return 0;
}

int feas_grid_visit(const armd_config *cfg, int (*visit)(void *ctx, const double *q), void *ctx)
{
    grid_axis g[CFG_MAX_JOINTS];
    if (!grid_axes(cfg, g)) return 0;
    int n = cfg->n_joints, idx[CFG_MAX_JOINTS] = {0};
    double p[CFG_MAX_JOINTS];
    for (;;) {
        for (int j = 0; j < n; j++) p[j] = g[j].v[idx[j]];
        if (visit(ctx, p)) return -1;
        int j = 0;
        while (j < n && ++idx[j] == g[j].n) idx[j++] = 0;
        if (j == n) return 0;
    }
}

/* feas_payload's grid visit: check_pose away from the present pose. */
typedef struct {
    const armd_config *cfg;
    const dyn_model *with, *bare;
    dyn_data *d;
    char *why;
    size_t len;
} payload_ctx;

static int payload_visit(void *ctx, const double *q)
{
    payload_ctx *p = ctx;
    return check_pose(p->cfg, p->with, p->bare, p->d, q, false, p->why, p->len);
}

int feas_payload(const armd_config *cfg, const dyn_payload *payload, const double *q, char *why,
                 size_t len)
{
    if (cfg->n_joints <= 0 || !(payload->mass > 0)) return 0;
    int rc = 0;
    dyn_model_desc desc = cfg->model;
    memset(&desc.payload, 0, sizeof desc.payload);
    dyn_model *bare = dyn_model_create(&desc, NULL, NULL);
    desc.payload = *payload;
    dyn_model *with = dyn_model_create(&desc, NULL, NULL);
    dyn_data *d = with ? dyn_data_create(with) : NULL;
    if (!bare || !with || !d) goto out; /* an invalid model: its own validation says why */
    if (q && check_pose(cfg, with, bare, d, q, true, why, len)) {
        rc = -1;
        goto out;
    }
    if (cfg->max_payload > 0 && !(payload->mass <= cfg->max_payload)) {
        snprintf(why, len, "%g kg is above [arm] max_payload = %g kg (the arm's rated payload)",
                 payload->mass, cfg->max_payload);
        rc = -1;
        goto out;
    }
    payload_ctx pc = {cfg, with, bare, d, why, len};
    rc = feas_grid_visit(cfg, payload_visit, &pc);
out:
    dyn_data_free(d);
    dyn_model_free(with);
    dyn_model_free(bare);
    return rc;
}
