/* feasible_impedance.c — the cartesian_impedance law's spring and damper against the sampled
 * loop over the arm's poses (feasible.h, feas_impedance). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/feasible.h"

static const char *const axis_name[6] = {
    "x", "y", "z", "rotation about x", "rotation about y", "rotation about z"};

typedef struct {
    const cfg_impedance *imp;
    const dyn_model *m;
    dyn_data *d;
    int n;
    double dt;
    bool present;
    char *why;
    size_t len;
} imp_ctx;

/* One pose: the fastest mode of the spring against the task inertia within the bounds. */
static int imp_visit(void *ctx, const double *q)
{
    imp_ctx *x = ctx;
    double J[6 * DYN_MAX_DOF], A[36], Lambda[36], M[36], w[6], V[36], s[6];
    if (dyn_task_inertia(x->m, x->d, q, J, A, Lambda) < 0) return 0; /* H singular: no law */
    double z_lo = INFINITY, z_hi = 0;
    for (int i = 0; i < 6; i++) {
        s[i] = sqrt(x->imp->stiffness[i]);
        if (!(x->imp->stiffness[i] > 0)) continue;
        z_lo = fmin(z_lo, x->imp->damping_ratio[i]);
        z_hi = fmax(z_hi, x->imp->damping_ratio[i]);
    }
    if (isinf(z_lo)) return 0; /* no spring at all: only the capped guide damping */
    for (int i = 0; i < 36; i++) M[i] = s[i / 6] * A[i] * s[i % 6]; /* S A S: omega^2 */
    dyn_sym_eigen(6, M, w, V);
    int k = 0;
    for (int i = 1; i < 6; i++)
        if (w[i] > w[k]) k = i;
    const double omega = sqrt(fmax(w[k], 0)), wdt = omega * x->dt;
    if (z_hi * wdt < 1 && wdt < 4 * z_lo) return 0;
    int axis = 0; /* the axis the mode moves most (in spring-weighted coordinates) */
    for (int i = 1; i < 6; i++)
        if (fabs(V[i * 6 + k]) > fabs(V[axis * 6 + k])) axis = i;
    char where[200];
    feas_where(q, x->n, x->present, where, sizeof where);
    snprintf(x->why, x->len,
             "%s: the spring's fastest mode has omega = %.4g rad/s %s: omega dt = %.3g must be "
             "below 4 x the least damping ratio (%g) and 1 / the largest (%g); lower the "
             "stiffness (%g %s), raise the damping ratio or rate_hz",
             axis_name[axis], omega, where, wdt, z_lo, z_hi, x->imp->stiffness[axis],
             axis < 3 ? "N/m" : "N m/rad");
    return -1;
}

int feas_impedance(const armd_config *cfg, const cfg_impedance *imp, const dyn_payload *payload,
                   const double *q, char *why, size_t len)
{
    if (!(cfg->rate_hz > 0)) return 0;
    for (int i = 0; i < 6; i++)
        if (!(imp->stiffness[i] >= 0 && isfinite(imp->stiffness[i]) && imp->damping_ratio[i] >= 0 &&
              isfinite(imp->damping_ratio[i]))) {
            snprintf(why, len, "%s: stiffness %g and damping ratio %g must be finite and >= 0",
                     axis_name[i], imp->stiffness[i], imp->damping_ratio[i]);
            return -1;
        }
    dyn_model_desc desc = cfg->model;
    desc.payload = *payload;
    dyn_model *m = dyn_model_create(&desc, NULL, NULL);
    dyn_data *d = m ? dyn_data_create(m) : NULL;
    int rc = 0;
    if (m && d) { /* else an invalid model: its own validation says why */
        imp_ctx x = {imp, m, d, cfg->n_joints, 1 / cfg->rate_hz, true, why, len};
        if (q) rc = imp_visit(&x, q);
        x.present = false;
        if (rc == 0) rc = feas_grid_visit(cfg, imp_visit, &x);
    }
    dyn_data_free(d);
    dyn_model_free(m);
    return rc;
}
