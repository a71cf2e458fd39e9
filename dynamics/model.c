/* model.c — converts a description (standard DH, modified DH, URDF) into the internal form. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics/dyn_internal.h"

static void frame_identity(dyn_frame *f)
{
    memset(f, 0, sizeof *f);
    f->R[0] = f->R[4] = f->R[8] = 1.0;
}

static void frame_rx(double alpha, double x, dyn_frame *f)
{
    frame_identity(f);
    double c = cos(alpha), s = sin(alpha);
    f->R[4] = c;
    f->R[5] = -s;
    f->R[7] = s;
    f->R[8] = c;
    f->p[0] = x;
}

static void frame_rz(double theta, dyn_frame *f)
{
    frame_identity(f);
    double c = cos(theta), s = sin(theta);
    f->R[0] = c;
    f->R[1] = -s;
    f->R[3] = s;
    f->R[4] = c;
}

/* A rotation whose third column is the unit vector z (any orthonormal completion). */
static void frame_axis(const double axis[3], dyn_frame *f)
{
    frame_identity(f);
    double nz = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double z[3] = {axis[0] / nz, axis[1] / nz, axis[2] / nz};
    /* helper vector least aligned with z */
    double t[3] = {0, 0, 0};
    int k = fabs(z[0]) < fabs(z[1]) ? (fabs(z[0]) < fabs(z[2]) ? 0 : 2)
                                    : (fabs(z[1]) < fabs(z[2]) ? 1 : 2);
    t[k] = 1.0;
    double x[3], y[3];
    dyn_cross(t, z, x);
    double nx = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    for (int i = 0; i < 3; i++) x[i] /= nx;
    dyn_cross(z, x, y);
    for (int i = 0; i < 3; i++) {
        f->R[3 * i] = x[i];
        f->R[3 * i + 1] = y[i];
        f->R[3 * i + 2] = z[i];
    }
}

static void frame_inverse_rot(const dyn_frame *f, dyn_frame *out)
{
    frame_identity(out);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) out->R[3 * i + k] = f->R[3 * k + i];
}

/* Splits one joint's description into: pre (pre-motion frame in the described parent link
 * frame), qoff, and link (the described link frame in the moving joint frame M_i). */
static void convert_joint(const dyn_joint_desc *jd, dyn_frame *pre, double *qoff, dyn_frame *link)
{
    int prismatic = jd->type == DYN_PRISMATIC;
    dyn_frame t;
    switch (jd->form) {
    case DYN_DH_STANDARD: /* Rz(theta) Tz(d) | Tx(a) Rx(alpha) */
        if (prismatic) {
            frame_rz(jd->theta, pre);
            *qoff = jd->d;
        } else {
            frame_identity(pre);
            pre->p[2] = jd->d;
            *qoff = jd->theta;
        }
        frame_rx(jd->alpha, jd->a, link);
        break;
    case DYN_DH_MODIFIED: /* Rx(alpha) Tx(a) | Rz(theta) Tz(d) */
        frame_rx(jd->alpha, jd->a, pre);
        if (prismatic) {
            frame_rz(jd->theta, &t);
            *qoff = jd->d;
        } else {
            frame_identity(&t);
            t.p[2] = jd->d;
            *qoff = jd->theta;
        }
        dyn_frame_compose(pre, &t, pre);
        frame_identity(link);
        break;
    default: { /* URDF: origin(xyz, rpy) * Ra | Rz/Tz(q) | Ra^T */
        dyn_frame o, ra;
        frame_identity(&o);
        dyn_rpy_to_R(jd->origin_rpy, o.R);
        memcpy(o.p, jd->origin_xyz, sizeof o.p);
        frame_axis(jd->axis, &ra);
        dyn_frame_compose(&o, &ra, pre);
        *qoff = 0.0;
        frame_inverse_rot(&ra, link);
        break;
    }
    }
}

/* Adds the payload (given in the tool frame) to the last link's own body. */
static void apply_payload(dyn_model *m, const dyn_payload *pl)
{
    dyn_body pb, pm;
    m->payload = *pl;
    dyn_body_from_com(pl->mass, pl->com, pl->inertia, &pb);
    dyn_body_transform(&m->tool, &pb, &pm);
    dyn_joint *last = &m->j[m->n - 1];
    last->body = m->last_link;
    dyn_body_add(&last->body, &pm);
}

/* Splits a rotation as R = Rz(phi) Rx(alpha) Rz(psi) (z-x-z Euler angles). phi comes from the
 * third column (the joint axis), choosing the sign of sin(alpha) that gives the smaller |phi|
 * (so a DH twist Rx(alpha) gives phi = psi = 0 exactly); psi is read from the remainder
 * Rx(-alpha) Rz(-phi) R, which stays well conditioned near alpha = 0. */
static void split_zxz(const double R[9], double *phi, double *ca, double *sa, double *psi)
{
    double zx = R[2], zy = R[5], zz = R[8];
    double p1 = atan2(zx, -zy), p2 = atan2(-zx, zy);
    *phi = fabs(p2) < fabs(p1) ? p2 : p1;
    double cp = cos(*phi), sp = sin(*phi);
    double y = -sp * zx + cp * zy; /* = -sin(alpha) */
    double h = hypot(y, zz);
    *ca = zz / h;
    *sa = -y / h;
    dyn_frame rz, rx, t;
    frame_rz(-*phi, &rz);
    frame_identity(&rx);
    rx.R[4] = rx.R[8] = *ca;
    rx.R[5] = *sa;
    rx.R[7] = -*sa;
    dyn_frame r = {{R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8]}, {0, 0, 0}};
    dyn_frame_compose(&rz, &r, &t);
    dyn_frame_compose(&rx, &t, &t);
    *psi = atan2(t.R[3], t.R[0]);
}

/* Snaps a twist within 1e-14 (far below any physical meaning; cos(pi/2) in double is 6e-17)
 * of 0, +-pi/2 or pi to it exactly and records the kind, so the recursions use the sign
 * permutation instead of the general Rx(alpha). */
static void classify_twist(dyn_joint *jt)
{
    const double tol = 1e-14;
    jt->twist = DYN_TWIST_GENERAL;
    if (fabs(jt->sa) < tol) {
        jt->sa = 0.0;
        jt->ca = jt->ca > 0.0 ? 1.0 : -1.0;
        jt->twist = jt->ca > 0.0 ? DYN_TWIST_0 : DYN_TWIST_180;
    } else if (fabs(jt->ca) < tol) {
        jt->ca = 0.0;
        jt->sa = jt->sa > 0.0 ? 1.0 : -1.0;
        jt->twist = jt->sa > 0.0 ? DYN_TWIST_P90 : DYN_TWIST_M90;
    }
}

/* Builds the internal form (dyn_internal.h): per joint the constant pre-motion pose (R0, p0) =
 * (parent's link-in-M) * pre, inertials moved from the described link frame into M_i, the tool
 * frame moved into M_{n-1}; then every R0 = Rz(phi) Rx(alpha) Rz(psi) is reduced to Rx(alpha)
 * by turning each moving frame about its own z axis by beta_i = phi_{i+1} (and the internal
 * base by phi_0), psi + beta_i joining the joint angle offset. */
dyn_model *dyn_model_create(const dyn_model_desc *desc, dyn_issue_fn issue, void *ctx)
{
    if (!desc || dyn_desc_validate(desc, issue, ctx) > 0) return NULL;
    dyn_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    const int n = desc->n;
    m->n = n;
    dyn_frame parent_link;
    frame_identity(&parent_link);
    double phi[DYN_MAX_DOF + 1], psi[DYN_MAX_DOF], qoff[DYN_MAX_DOF];
    dyn_frame r0[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        const dyn_joint_desc *jd = &desc->joint[i];
        dyn_joint *jt = &m->j[i];
        dyn_frame pre;
        convert_joint(jd, &pre, &qoff[i], &m->link[i]);
        dyn_frame_compose(&parent_link, &pre, &r0[i]);
        split_zxz(r0[i].R, &phi[i], &jt->ca, &jt->sa, &psi[i]);
        classify_twist(jt);
        m->type[i] = jd->type;
        jt->sr = jd->type == DYN_PRISMATIC ? 0.0 : 1.0;
        jt->pr = 1.0 - jt->sr;
        dyn_body bl;
        dyn_body_from_com(jd->mass, jd->com, jd->inertia, &bl);
        dyn_body_transform(&m->link[i], &bl, &jt->body);
        jt->armature = jd->armature;
        jt->viscous = jd->viscous;
        jt->coulomb_pos = jd->coulomb_pos;
        jt->coulomb_neg = jd->coulomb_neg;
        parent_link = m->link[i];
    }
    phi[n] = 0.0;
    frame_rz(phi[0], &m->base);
    for (int i = 0; i < n; i++) {
        dyn_joint *jt = &m->j[i];
        const double beta = phi[i + 1];
        dyn_frame back, turn; /* back: parent's M into M'; turn: this joint's M in M' */
        frame_rz(-phi[i], &back);
        dyn_rot(back.R, r0[i].p, jt->p0);
        jt->toff = jt->sr * qoff[i] + psi[i] + beta;
        jt->doff = jt->pr * qoff[i];
        frame_rz(-beta, &turn);
        dyn_body b = jt->body;
        dyn_body_transform(&turn, &b, &jt->body);
        dyn_frame_compose(&turn, &m->link[i], &m->link[i]);
    }
    dyn_frame tool;
    frame_identity(&tool);
    dyn_rpy_to_R(desc->tool_rpy, tool.R);
    memcpy(tool.p, desc->tool_xyz, sizeof tool.p);
    dyn_frame_compose(&m->link[n - 1], &tool, &m->tool);
    m->last_link = m->j[n - 1].body;
    apply_payload(m, &desc->payload);
    dyn_set_gravity(m, desc->gravity);
    m->friction_smoothing = desc->friction_smoothing;
    return m;
}

void dyn_model_free(dyn_model *m)
{
    free(m);
}

int dyn_model_dof(const dyn_model *m)
{
    return m->n;
}

dyn_joint_type dyn_model_joint_type(const dyn_model *m, int i)
{
    return m->type[i];
}

/* O(1): the last link's body becomes link + new payload. */
void dyn_set_payload(dyn_model *m, const dyn_payload *p)
{
    static const dyn_payload none = {0};
    apply_payload(m, p ? p : &none);
}

/* Gravity in the base frame, and in the internal base B for the recursions. */
void dyn_set_gravity(dyn_model *m, const double g[3])
{
    memcpy(m->gravity, g, sizeof m->gravity);
    dyn_rot_t(m->base.R, g, m->gravity_b);
}

dyn_data *dyn_data_create(const dyn_model *m)
{
    if (!m) return NULL;
    dyn_data *d = calloc(1, sizeof *d);
    if (d) d->n = m->n;
    return d;
}

void dyn_data_free(dyn_data *d)
{
    free(d);
}
