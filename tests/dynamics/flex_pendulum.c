/* flex_pendulum.c — El-Rayyes 1990 case 3 built and simulated (see flex_pendulum.h). */
#include "tests/dynamics/flex_pendulum.h"

#include <math.h>
#include <string.h>

#define FP_MAXX 8

void flex_pendulum_desc(dyn_model_desc *d, dyn_flex_desc *f, int rigid_rods, double EI)
{
    memset(d, 0, sizeof *d);
    memset(f, 0, sizeof *f);
    d->n = 2;
    d->gravity[1] = -9.81;
    for (int i = 0; i < 2; i++) {
        dyn_joint_desc *j = &d->joint[i];
        j->type = DYN_REVOLUTE;
        j->form = DYN_URDF;
        j->axis[2] = 1.0;
        j->origin_xyz[0] = i ? FP_LENGTH : 0.0;
        if (rigid_rods) {
            j->mass = FP_MASS;
            j->com[0] = 0.5 * FP_LENGTH;
            j->inertia[3] = j->inertia[5] = FP_MASS * FP_LENGTH * FP_LENGTH / 12.0;
        } else {
            dyn_flex_link *l = &f->link[i];
            l->modes_y = FP_MODES;
            l->length = FP_LENGTH;
            l->mass = FP_MASS;
            l->EI_z = l->EI_y = EI;
        }
    }
    d->tool_xyz[0] = FP_LENGTH;
    d->payload.mass = FP_TIP_MASS;
}

typedef struct {
    const dyn_flex_model *fm; /* NULL: the rigid model */
    dyn_flex_data *fd;
    const dyn_model *rm;
    dyn_data *rd;
    int nx;
} fp_sim;

/* d/dt (x, xd) with zero joint torques and gravity. */
static int fp_deriv(fp_sim *s, const double *y, double *dy)
{
    const double tau[2] = {0, 0};
    memcpy(dy, y + s->nx, sizeof(double) * s->nx);
    if (s->fm)
        return dyn_flex_forward(s->fm, s->fd, y, y + s->nx, tau, NULL, DYN_GRAVITY, dy + s->nx);
    return dyn_forward_chol(s->rm, s->rd, y, y + s->nx, tau, NULL, DYN_GRAVITY, dy + s->nx);
}

/* One classical Runge-Kutta step of size h. */
static int fp_rk4(fp_sim *s, double *y, double h)
{
    const int n = 2 * s->nx;
    double k1[2 * FP_MAXX], k2[2 * FP_MAXX], k3[2 * FP_MAXX], k4[2 * FP_MAXX], t[2 * FP_MAXX];
    int err = fp_deriv(s, y, k1);
    for (int i = 0; i < n; i++) t[i] = y[i] + 0.5 * h * k1[i];
    err |= fp_deriv(s, t, k2);
    for (int i = 0; i < n; i++) t[i] = y[i] + 0.5 * h * k2[i];
    err |= fp_deriv(s, t, k3);
    for (int i = 0; i < n; i++) t[i] = y[i] + h * k3[i];
    err |= fp_deriv(s, t, k4);
    for (int i = 0; i < n; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    return err ? -1 : 0;
}

int flex_pendulum_run(double EI, int steps, double h, double *q, double *tip)
{
    dyn_model_desc d;
    dyn_flex_desc f;
    flex_pendulum_desc(&d, &f, EI == 0.0, EI);
    fp_sim s = {0};
    dyn_model *rm = NULL;
    dyn_flex_model *fm = NULL;
    int err = 0;
    if (EI == 0.0) {
        rm = dyn_model_create(&d, NULL, NULL);
        s.rm = rm;
        s.rd = rm ? dyn_data_create(rm) : NULL;
        s.nx = 2;
        err = !s.rd;
    } else {
        fm = dyn_flex_create(&d, &f, NULL, NULL);
        s.fm = fm;
        s.fd = fm ? dyn_flex_data_create(fm) : NULL;
        s.nx = fm ? dyn_flex_nx(fm) : 0;
        err = !s.fd || s.nx > FP_MAXX;
    }
    double y[2 * FP_MAXX] = {FP_Q1, FP_Q2};
    for (int k = 0; k < steps && !err; k++) {
        err = fp_rk4(&s, y, h) != 0;
        q[2 * k] = y[0], q[2 * k + 1] = y[1];
        if (!tip) continue;
        for (int i = 0; i < 2; i++) {
            double w = 0.0;
            if (fm) {
                const int c = dyn_flex_mode_index(fm, i, 0);
                for (int m = 0; m < FP_MODES; m++) w += y[c + m] * dyn_flex_tip_shape(fm, i, 0, m);
            }
            tip[2 * k + i] = w;
        }
    }
    dyn_data_free(s.rd);
    dyn_model_free(rm);
    dyn_flex_data_free(s.fd);
    dyn_flex_free(fm);
    return err ? -1 : 0;
}

int flex_pendulum_energy(double EI, int steps, double h, int every, double *drift, double *pot0,
                         double *max_elastic)
{
    dyn_model_desc d;
    dyn_flex_desc f;
    flex_pendulum_desc(&d, &f, 0, EI);
    dyn_flex_model *m = dyn_flex_create(&d, &f, NULL, NULL);
    fp_sim s = {m, m ? dyn_flex_data_create(m) : NULL, NULL, NULL, m ? dyn_flex_nx(m) : 0};
    int err = !s.fd || s.nx > FP_MAXX;
    double y[2 * FP_MAXX] = {FP_Q1, FP_Q2};
    *drift = *max_elastic = 0.0;
    const double E0 = err ? 0.0 : dyn_flex_energy(m, s.fd, y, y + s.nx, 0, NULL, pot0, NULL);
    for (int k = 1; k <= steps && !err; k++) {
        err = fp_rk4(&s, y, h) != 0;
        if (k % every) continue;
        double el;
        const double E = dyn_flex_energy(m, s.fd, y, y + s.nx, 0, NULL, NULL, &el);
        *drift = fmax(*drift, fabs(E - E0));
        *max_elastic = fmax(*max_elastic, el);
    }
    dyn_flex_data_free(s.fd);
    dyn_flex_free(m);
    return err ? -1 : 0;
}
