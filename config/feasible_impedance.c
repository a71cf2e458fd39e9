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

/* One pose: every stiff axis's K dt < 2 D with D as the law computes it (feasible.h). */
static int imp_visit(void *ctx, const double *q)
{
    imp_ctx *x = ctx;
    double J[6 * DYN_MAX_DOF], lam[6], light[6];
    if (dyn_task_inertia(x->m, x->d, q, J, lam, light) != 0) return 0; /* H singular: no law */
    for (int i = 0; i < 6; i++) {
        double K = x->imp->stiffness[i], z = x->imp->damping_ratio[i];
        if (!(K > 0) || !(light[i] > 0)) continue;
        double D = fmin(2 * z * sqrt(K * lam[i]), light[i] / x->dt); /* law_impedance_damping */
        if (K * x->dt < 2 * D) continue;
        const char *u = i < 3 ? "N/m" : "N m/rad", *mu = i < 3 ? "kg" : "kg m^2";
        char where[200] = "at the present pose";
        if (!x->present) {
            snprintf(where, sizeof where, "at q =");
            for (int k = 0; k < x->n; k++)
                snprintf(where + strlen(where), sizeof where - strlen(where), " %.4g", q[k]);
            snprintf(where + strlen(where), sizeof where - strlen(where),
                     " (within the joint ranges)");
        }
        snprintf(x->why, x->len,
                 "%s: stiffness %g %s with damping ratio %g is past the sampled loop's bound %s: "
                 "the tool's inertia along it is %.4g %s (at least %.4g %s), damping D = %.4g, "
                 "and K dt = %.4g must be below 2 D = %.4g; lower the stiffness, raise the "
                 "damping ratio or the loop rate",
                 axis_name[i], K, u, z, where, lam[i], mu, light[i], mu, D, K * x->dt, 2 * D);
        return -1;
    }
    return 0;
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
