/*
 * flexsim.c — builds armsim's flexible arm (see flexsim.h).
 */
#include "tools/armsim/flexsim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *err;
    size_t len;
    int have;
} issue_ctx;

static void on_issue(void *ctx, int joint, const char *field, int is_error, const char *message)
{
    issue_ctx *c = ctx;
    if (!is_error || c->have) return;
    snprintf(c->err, c->len, "flexible model: joint %d %s: %s", joint + 1, field, message);
    c->have = 1;
}

/* Modes of link i in direction dir (0 = y, 1 = z, 2 = torsion). */
static int modes(const dyn_flex_link *l, int dir)
{
    return dir == 0 ? l->modes_y : dir == 1 ? l->modes_z : l->modes_x;
}

/* The highest clamped mode frequency [rad/s] of the arm (dyn_flex_mode_omega: sqrt(K_kk /
 * M_kk) of the clamped beam, El-Rayyes 1990 eqs 2.24-2.25 and 2.42), and the RK4 substeps that
 * keep omega_max h <= FLEXSIM_OMEGA_H at step dt. */
static int size_substeps(flexsim *f, const armd_config *cfg, double dt, char *err, size_t len)
{
    f->omega_max = 0.0;
    for (int i = 0; i < f->n; i++)
        for (int dir = 0; dir < 3; dir++)
            for (int k = 0; k < f->modes[i][dir]; k++) {
                double w = dyn_flex_mode_omega(f->m, i, dir, k, NULL);
                if (w > f->omega_max)
                    f->omega_max = w, f->omega_link = i, f->omega_dir = dir, f->omega_k = k;
            }
    f->substeps = (int)ceil(f->omega_max * dt / FLEXSIM_OMEGA_H);
    if (f->substeps < 1) f->substeps = 1;
    if (f->substeps > FLEXSIM_MAX_SUBSTEPS) {
        static const char *const dname[3] = {"bending along y", "bending along z", "torsion"};
        snprintf(err, len,
                 "joint '%s': %s mode %d at %.1f Hz is too fast for the physics step %.3g ms: RK4 "
                 "needs omega h <= %.1f, i.e. %d substeps (at most %d); raise --rate to %.0f Hz or "
                 "more, or drop that mode (flex_modes)",
                 cfg->joint[f->omega_link].name, dname[f->omega_dir], f->omega_k + 1,
                 f->omega_max / (2.0 * M_PI), dt * 1e3, FLEXSIM_OMEGA_H, f->substeps,
                 FLEXSIM_MAX_SUBSTEPS,
                 ceil(f->omega_max / (FLEXSIM_OMEGA_H * FLEXSIM_MAX_SUBSTEPS)));
        return -1;
    }
    return 0;
}

int flexsim_create(flexsim *f, const armd_config *cfg, const dyn_model_desc *desc,
                   const dyn_flex_desc *flex, double dt, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->n = f->nx = desc->n;
    f->substeps = 1;
    armd_config *tmp = malloc(sizeof *tmp);
    if (!tmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *tmp = *cfg;
    tmp->model = *desc;
    tmp->flex = *flex;
    dyn_model_desc *parts = malloc(sizeof *parts);
    int rc = parts ? cfg_flex_rigid_parts(tmp, parts, err, errlen) : -1;
    if (rc == 0) {
        issue_ctx ic = {err, errlen, 0};
        f->m = dyn_flex_create(parts, flex, on_issue, &ic);
        if (!f->m && !ic.have) snprintf(err, errlen, "flexible model: invalid");
        if (!f->m) rc = -1;
    }
    free(parts);
    free(tmp);
    if (rc != 0) return -1;
    f->d = dyn_flex_data_create(f->m);
    f->nx = dyn_flex_nx(f->m);
    f->n_extra = f->nx - f->n + 3;
    if (!f->d) {
        snprintf(err, errlen, "out of memory");
        flexsim_free(f);
        return -1;
    }
    for (int i = 0; i < f->n; i++)
        for (int dir = 0; dir < 3; dir++) f->modes[i][dir] = modes(&flex->link[i], dir);
    if (size_substeps(f, cfg, dt, err, errlen) != 0) {
        flexsim_free(f);
        return -1;
    }
    return 0;
}

void flexsim_free(flexsim *f)
{
    if (f->d) dyn_flex_data_free(f->d);
    if (f->m) dyn_flex_free(f->m);
    f->d = NULL;
    f->m = NULL;
}

void flexsim_header(const flexsim *f, const armd_config *cfg, char *buf, size_t len)
{
    static const char dch[3] = {'y', 'z', 'x'};
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; f->m && i < f->n; i++)
        for (int dir = 0; dir < 3; dir++)
            for (int k = 0; k < f->modes[i][dir] && used < len; k++)
                used += (size_t)snprintf(buf + used, len - used, ",%s_%c%d", cfg->joint[i].name,
                                         dch[dir], k + 1);
    if (f->m && used < len) snprintf(buf + used, len - used, ",defl_x,defl_y,defl_z");
}

void flexsim_truth(const flexsim *f, const double *x, double *extra)
{
    if (!f->m) return;
    memcpy(extra, x + f->n, sizeof(double) * (size_t)(f->nx - f->n));
    dyn_flex_tool_deflection(f->m, f->d, x, extra + f->nx - f->n);
}
