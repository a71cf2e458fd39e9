/*
 * params.c — the standard inertial and friction parameters (DYN_PARAMS per joint) and the
 * regressor linear in them, by strobing the Newton-Euler recursion with unit parameters (seed
 * 000 §4 and seed 001 §3.2 use the same device for the mass matrix and the Coriolis terms).
 */
#include <stdlib.h>
#include <string.h>

#include "dynamics/dyn_internal.h"

enum { P_M = 0, P_H = 1, P_I = 4, P_ARM = 10, P_VISC = 11, P_CPOS = 12, P_CNEG = 13 };

void dyn_params_from_desc(const dyn_model_desc *desc, double *pi)
{
    for (int i = 0; i < desc->n; i++) {
        const dyn_joint_desc *jd = &desc->joint[i];
        double *p = pi + DYN_PARAMS * i;
        dyn_body b;
        dyn_body_from_com(jd->mass, jd->com, jd->inertia, &b);
        p[P_M] = b.m;
        memcpy(p + P_H, b.h, sizeof b.h);
        memcpy(p + P_I, b.I, sizeof b.I);
        p[P_ARM] = jd->armature;
        p[P_VISC] = jd->viscous;
        p[P_CPOS] = jd->coulomb_pos;
        p[P_CNEG] = jd->coulomb_neg;
    }
}

void dyn_params_to_desc(const double *pi, dyn_model_desc *desc)
{
    for (int i = 0; i < desc->n; i++) {
        dyn_joint_desc *jd = &desc->joint[i];
        const double *p = pi + DYN_PARAMS * i;
        double m = p[P_M], c[3] = {0, 0, 0};
        if (m != 0)
            for (int k = 0; k < 3; k++) c[k] = p[P_H + k] / m;
        /* about the COM: I_c = I_o - m (|c|^2 E - c c^T) */
        double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        jd->mass = m;
        memcpy(jd->com, c, sizeof c);
        jd->inertia[0] = p[P_I + 0] - m * (cc - c[0] * c[0]);
        jd->inertia[1] = p[P_I + 1] + m * c[0] * c[1];
        jd->inertia[2] = p[P_I + 2] + m * c[0] * c[2];
        jd->inertia[3] = p[P_I + 3] - m * (cc - c[1] * c[1]);
        jd->inertia[4] = p[P_I + 4] + m * c[1] * c[2];
        jd->inertia[5] = p[P_I + 5] - m * (cc - c[2] * c[2]);
        jd->armature = p[P_ARM];
        jd->viscous = p[P_VISC];
        jd->coulomb_pos = p[P_CPOS];
        jd->coulomb_neg = p[P_CNEG];
    }
}

/* The parameters p (link frame) moved into M_i (model.c's form); for the last joint the link
 * alone, the payload added on top again. */
void dyn_set_joint_params(dyn_model *m, int i, const double *p)
{
    dyn_joint *jt = &m->j[i];
    dyn_body bl = {p[P_M], {p[P_H], p[P_H + 1], p[P_H + 2]}, {0}};
    memcpy(bl.I, p + P_I, sizeof bl.I);
    dyn_body_transform(&m->link[i], &bl, &jt->body);
    if (i == m->n - 1) {
        m->last_link = jt->body;
        dyn_payload pl = m->payload;
        dyn_set_payload(m, &pl);
    }
    jt->armature = p[P_ARM];
    jt->viscous = p[P_VISC];
    jt->coulomb_pos = p[P_CPOS];
    jt->coulomb_neg = p[P_CNEG];
}

void dyn_regressor(dyn_model *m, dyn_data *d, const double *q, const double *qd, const double *qdd,
                   double *Y, double *tau_known)
{
    const int n = m->n, cols = DYN_PARAMS * n;
    double unit[DYN_PARAMS], tau[DYN_MAX_DOF];
    dyn_joint saved[DYN_MAX_DOF];
    memcpy(saved, m->j, sizeof(dyn_joint) * (size_t)n);
    dyn_body saved_last = m->last_link;
    memset(unit, 0, sizeof unit);
    for (int i = 0; i < n; i++) dyn_set_joint_params(m, i, unit);
    /* what no parameter explains: the payload (all links massless) */
    dyn_rnea(m, d, q, qd, qdd, NULL, DYN_GRAVITY, tau);
    if (tau_known) memcpy(tau_known, tau, sizeof(double) * (size_t)n);
    dyn_payload none, pl = m->payload;
    memset(&none, 0, sizeof none);
    dyn_set_payload(m, &none);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < DYN_PARAMS; k++) {
            unit[k] = 1;
            dyn_set_joint_params(m, i, unit);
            unit[k] = 0;
            dyn_rnea(m, d, q, qd, qdd, NULL, DYN_ALL, tau);
            for (int r = 0; r < n; r++) Y[r * cols + DYN_PARAMS * i + k] = tau[r];
        }
        dyn_set_joint_params(m, i, unit);
    }
    /* restored exactly: the internal bodies as they were, not converted back and forth */
    memcpy(m->j, saved, sizeof(dyn_joint) * (size_t)n);
    m->last_link = saved_last;
    m->payload = pl;
}
