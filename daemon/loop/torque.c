/*
 * torque.c — the law in use and the tick's torques (see torque.h). Control thread only.
 */
#include "daemon/loop/torque.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void torque_init(torque *t, int n, cfg_controller law)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->law = law;
}

void torque_switch(torque *t, cfg_controller law)
{
    t->floating = false;
    if (law == t->law) return;
    t->law = law;
    for (int j = 0; j < t->n; j++) t->ls.integral[j] = 0;
}

void torque_float(torque *t)
{
    torque_switch(t, CTRL_GRAVITY_COMP);
    t->floating = true;
}

void torque_restart(torque *t)
{
    law_reset(&t->ls, t->n);
    t->floating = false;
}

/* Index of the first non-finite value of v[0..n), -1 when all are finite. */
static int first_nonfinite(const double *v, int n)
{
    for (int j = 0; j < n; j++)
        if (!isfinite(v[j])) return j;
    return -1;
}

bool torque_law(torque *t, const law_params *p, const law_dyn *dy, const double *q,
                const double *qd, const double *q_des, const double *qd_des, const double *qdd_des,
                double dt, uint32_t trajectory, double *tau, char *why, size_t len)
{
    law_compute(t->law, p, dy, q, qd, q_des, qd_des, qdd_des, dt, &t->ls, tau);
    if (t->floating) law_add_damping(p, qd, tau);
    int j = first_nonfinite(tau, t->n);
    if (j >= 0) {
        snprintf(why, len, "non-finite torque on %s from the %s law (trajectory %u)", p->name[j],
                 cfg_controller_name(t->law), trajectory);
        return false;
    }
    t->saturations += (uint64_t)law_limit(p, dt, &t->ls, tau);
    return true;
}

bool torque_damp(torque *t, const law_params *p, const law_dyn *dy, const double *q,
                 const double *qd, double dt, double *tau)
{
    law_damp(p, dy, q, qd, tau);
    if (first_nonfinite(tau, t->n) >= 0) return false;
    law_limit(p, dt, &t->ls, tau);
    return true;
}

void torque_zero(torque *t, double *tau)
{
    for (int j = 0; j < t->n; j++) tau[j] = t->ls.tau_prev[j] = 0;
}
