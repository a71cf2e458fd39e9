/*
 * contact.c — the external pushes and the wall of contact.h.
 */
#include "tools/armsim/contact.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int contact_init(armsim_contact *c, const armsim_options *o, int n, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    for (int i = 0; i < o->n_push; i++) {
        const armsim_push *p = &o->push[i];
        if (p->joint < 0 || p->joint >= n) {
            snprintf(err, errlen, "--push %d: joint %d, but the arm has %d joint%s", i + 1,
                     p->joint + 1, n, n == 1 ? "" : "s");
            return -1;
        }
        c->push[i] = *p;
        c->push_from_ns[i] = (uint64_t)llround(p->t * 1e9);
        c->push_to_ns[i] = (uint64_t)llround((p->t + p->duration) * 1e9);
    }
    c->n_push = o->n_push;
    for (int i = 0; i < o->n_tool_force; i++) {
        const armsim_tool_force *t = &o->tool_force[i];
        c->tool_force[i] = *t;
        c->tf_from_ns[i] = (uint64_t)llround(t->t * 1e9);
        c->tf_to_ns[i] = (uint64_t)llround((t->t + t->duration) * 1e9);
    }
    c->n_tool_force = o->n_tool_force;
    c->wall = o->wall;
    return 0;
}

void contact_push_torque(const armsim_contact *c, uint64_t t_ns, double *tau)
{
    for (int j = 0; j < c->n; j++) tau[j] = 0.0;
    for (int i = 0; i < c->n_push; i++)
        if (t_ns >= c->push_from_ns[i] && t_ns < c->push_to_ns[i])
            tau[c->push[i].joint] += c->push[i].torque;
}

void contact_tool_force_torque(armsim_contact *c, const dyn_model *m, dyn_data *d, const double *q,
                               uint64_t t_ns, double *tau)
{
    double F[3] = {0, 0, 0};
    bool any = false;
    for (int i = 0; i < c->n_tool_force; i++)
        if (t_ns >= c->tf_from_ns[i] && t_ns < c->tf_to_ns[i]) {
            for (int k = 0; k < 3; k++) F[k] += c->tool_force[i].f[k];
            any = true;
        }
    if (!any) return;
    const int n = c->n;
    dyn_jacobian(m, d, q, c->J);
    for (int j = 0; j < n; j++)
        tau[j] += c->J[j] * F[0] + c->J[n + j] * F[1] + c->J[2 * n + j] * F[2];
}

/* Inertia [kg] of the arm felt by a force along the base-frame direction whose Jacobian row
 * (J^T u, n entries) is g: 1 / (g^T H(q)^-1 g), armature included. 0 when the tool cannot move
 * along it (or H is singular). */
static double effective_mass(const dyn_model *m, dyn_data *d, const double *q, const double *g)
{
    double zero[CFG_MAX_JOINTS] = {0}, x[CFG_MAX_JOINTS];
    if (dyn_forward_chol(m, d, q, zero, g, NULL, DYN_ARMATURE, x) != 0) return 0.0;
    double inv = 0.0;
    for (int j = 0; j < dyn_model_dof(m); j++) inv += g[j] * x[j];
    return inv > 0.0 && isfinite(1.0 / inv) ? 1.0 / inv : 0.0;
}

double contact_wall_torque(armsim_contact *c, const dyn_model *m, dyn_data *d, const double *q,
                           const double *qd, double *tau)
{
    const int n = c->n;
    const armsim_wall *w = &c->wall;
    for (int j = 0; j < n; j++) tau[j] = 0.0;
    if (!w->on) return 0.0;
    double tool[12];
    dyn_fk(m, d, q, NULL, tool);
    double depth = w->side * (tool[4 * w->axis + 3] - w->position); /* pose row-major [R | p] */
    if (depth <= 0.0) return 0.0;
    dyn_jacobian(m, d, q, c->J);
    const double *g = c->J + (size_t)w->axis * (size_t)n; /* d p[axis] / d q */
    double rate = 0.0;
    for (int j = 0; j < n; j++) rate += g[j] * qd[j];
    rate *= w->side;
    double c_wall = 2.0 * WALL_ZETA * sqrt(w->stiffness * effective_mass(m, d, q, g));
    double f = w->stiffness * depth + c_wall * rate;
    if (f <= 0.0) return 0.0; /* leaving faster than the spring pushes: never pull */
    for (int j = 0; j < n; j++) tau[j] = -w->side * f * g[j];
    return f;
}
