/* kinematics.c — forward kinematics, the tool's geometric Jacobian and mechanical energy. */
#include <string.h>

#include "dynamics/dyn_internal.h"

/* Pose of every moving joint frame M_i in the base: M_i = M_{i-1} (Rx(alpha) Rz(theta), p),
 * starting from the internal base B. */
void dyn_poses(const dyn_model *m, dyn_data *d, const double *q)
{
    dyn_frame prev = m->base;
    for (int i = 0; i < m->n; i++) {
        dyn_frame rel;
        dyn_joint_transform(&m->j[i], q[i], rel.R, rel.p);
        dyn_frame_compose(&prev, &rel, &d->pose[i]);
        prev = d->pose[i];
    }
}

static void write_pose(const dyn_frame *f, double out[12])
{
    for (int r = 0; r < 3; r++) {
        out[4 * r] = f->R[3 * r];
        out[4 * r + 1] = f->R[3 * r + 1];
        out[4 * r + 2] = f->R[3 * r + 2];
        out[4 * r + 3] = f->p[r];
    }
}

/* Link frames as described (M_i * link_i) and the tool frame, in the base, 3x4 [R|p]. */
void dyn_fk(const dyn_model *m, dyn_data *d, const double *q, double *link_poses, double *tool)
{
    dyn_poses(m, d, q);
    if (link_poses) {
        for (int i = 0; i < m->n; i++) {
            dyn_frame f;
            dyn_frame_compose(&d->pose[i], &m->link[i], &f);
            write_pose(&f, link_poses + 12 * i);
        }
    }
    if (tool) {
        dyn_frame f;
        dyn_frame_compose(&d->pose[m->n - 1], &m->tool, &f);
        write_pose(&f, tool);
    }
}

/* Shepperd 1978: q from the largest diagonal combination of R; sign chosen so that w >= 0. */
void dyn_rot_to_quat(const double R[9], double quat[4])
{
    const double t = R[0] + R[4] + R[8];
    double w, x, y, z;
    if (t >= R[0] && t >= R[4] && t >= R[8]) {
        double s = 2.0 * sqrt(1.0 + t); /* 4w */
        w = 0.25 * s;
        x = (R[7] - R[5]) / s;
        y = (R[2] - R[6]) / s;
        z = (R[3] - R[1]) / s;
    } else if (R[0] >= R[4] && R[0] >= R[8]) {
        double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]); /* 4x */
        w = (R[7] - R[5]) / s;
        x = 0.25 * s;
        y = (R[1] + R[3]) / s;
        z = (R[2] + R[6]) / s;
    } else if (R[4] >= R[8]) {
        double s = 2.0 * sqrt(1.0 - R[0] + R[4] - R[8]); /* 4y */
        w = (R[2] - R[6]) / s;
        x = (R[1] + R[3]) / s;
        y = 0.25 * s;
        z = (R[5] + R[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 - R[0] - R[4] + R[8]); /* 4z */
        w = (R[3] - R[1]) / s;
        x = (R[2] + R[6]) / s;
        y = (R[5] + R[7]) / s;
        z = 0.25 * s;
    }
    const double sg = w < 0.0 ? -1.0 : 1.0;
    const double nrm = sg / sqrt(w * w + x * x + y * y + z * z);
    quat[0] = w * nrm;
    quat[1] = x * nrm;
    quat[2] = y * nrm;
    quat[3] = z * nrm;
}

/* Geometric Jacobian of the tool origin in the base frame (6 x n, rows vx vy vz wx wy wz):
 * revolute column (z_i x (p_tool - o_i), z_i), prismatic column (z_i, 0). */
void dyn_jacobian(const dyn_model *m, dyn_data *d, const double *q, double *J)
{
    const int n = m->n;
    dyn_poses(m, d, q);
    dyn_frame tf;
    dyn_frame_compose(&d->pose[n - 1], &m->tool, &tf);
    for (int i = 0; i < n; i++) {
        const dyn_frame *f = &d->pose[i];
        double z[3] = {f->R[2], f->R[5], f->R[8]};
        double r[3] = {tf.p[0] - f->p[0], tf.p[1] - f->p[1], tf.p[2] - f->p[2]};
        double zr[3];
        dyn_cross(z, r, zr);
        double sr = m->j[i].sr, pr = m->j[i].pr;
        for (int k = 0; k < 3; k++) {
            J[k * n + i] = sr * zr[k] + pr * z[k];
            J[(3 + k) * n + i] = sr * z[k];
        }
    }
}

/* Kinetic energy sum over links of 1/2 (m v.v + 2 v.(w x h) + w.I w) plus 1/2 armature qd^2;
 * potential -sum m g.p_c over links (payload included), in the base frame. */
double dyn_energy(const dyn_model *m, dyn_data *d, const double *q, const double *qd,
                  double *kinetic, double *potential)
{
    const int n = m->n;
    double ke = 0.0, pe = 0.0;
    double wp[3] = {0, 0, 0}, vp[3] = {0, 0, 0};
    dyn_poses(m, d, q);
    for (int i = 0; i < n; i++) {
        const dyn_joint *jt = &m->j[i];
        double R[9], p[3], t[3], w[3], v[3];
        dyn_joint_transform(jt, q[i], R, p);
        dyn_cross(wp, p, t);
        for (int k = 0; k < 3; k++) t[k] += vp[k];
        dyn_rot_t(R, wp, w);
        dyn_rot_t(R, t, v);
        w[2] += jt->sr * qd[i];
        v[2] += jt->pr * qd[i];
        const dyn_body *b = &jt->body;
        double Iw[3], wh[3];
        dyn_sym_mul(b->I, w, Iw);
        dyn_cross(w, b->h, wh);
        ke += 0.5 * (b->m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
                     2.0 * (v[0] * wh[0] + v[1] * wh[1] + v[2] * wh[2]) +
                     (w[0] * Iw[0] + w[1] * Iw[1] + w[2] * Iw[2]));
        ke += 0.5 * jt->armature * qd[i] * qd[i];
        /* m g.p_c = g.(m p_i + R_i h) in the base */
        double hb[3];
        dyn_rot(d->pose[i].R, b->h, hb);
        for (int k = 0; k < 3; k++) pe -= m->gravity[k] * (b->m * d->pose[i].p[k] + hb[k]);
        memcpy(wp, w, sizeof wp);
        memcpy(vp, v, sizeof vp);
    }
    if (kinetic) *kinetic = ke;
    if (potential) *potential = pe;
    return ke + pe;
}
