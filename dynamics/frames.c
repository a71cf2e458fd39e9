/* frames.c — rigid transforms and inertial parameters moved between frames (load-time math). */
#include <math.h>

#include "dynamics/dyn_internal.h"

/* out = a * b: the pose of frame b (given in a) expressed in a's outer frame. */
void dyn_frame_compose(const dyn_frame *a, const dyn_frame *b, dyn_frame *out)
{
    dyn_frame r;
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            r.R[3 * i + k] = a->R[3 * i] * b->R[k] + a->R[3 * i + 1] * b->R[3 + k] +
                             a->R[3 * i + 2] * b->R[6 + k];
        }
        r.p[i] =
            a->R[3 * i] * b->p[0] + a->R[3 * i + 1] * b->p[1] + a->R[3 * i + 2] * b->p[2] + a->p[i];
    }
    *out = r;
}

/* Fixed-axis roll-pitch-yaw (URDF): R = Rz(yaw) Ry(pitch) Rx(roll). */
void dyn_rpy_to_R(const double rpy[3], double R[9])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]);
    double cp = cos(rpy[1]), sp = sin(rpy[1]);
    double cy = cos(rpy[2]), sy = sin(rpy[2]);
    R[0] = cy * cp;
    R[1] = cy * sp * sr - sy * cr;
    R[2] = cy * sp * cr + sy * sr;
    R[3] = sy * cp;
    R[4] = sy * sp * sr + cy * cr;
    R[5] = sy * sp * cr - cy * sr;
    R[6] = -sp;
    R[7] = cp * sr;
    R[8] = cp * cr;
}

/* Body from mass, COM and inertia about the COM (all in one frame): h = m c and the parallel
 * axis theorem I_o = I_c + m (|c|^2 E - c c^T). */
void dyn_body_from_com(double mass, const double c[3], const double Ic[6], dyn_body *out)
{
    double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    out->m = mass;
    for (int k = 0; k < 3; k++) out->h[k] = mass * c[k];
    out->I[0] = Ic[0] + mass * (cc - c[0] * c[0]);
    out->I[1] = Ic[1] - mass * c[0] * c[1];
    out->I[2] = Ic[2] - mass * c[0] * c[2];
    out->I[3] = Ic[3] + mass * (cc - c[1] * c[1]);
    out->I[4] = Ic[4] - mass * c[1] * c[2];
    out->I[5] = Ic[5] + mass * (cc - c[2] * c[2]);
}

/* Re-expresses a body given in frame F (pose f of F in frame O) in frame O:
 * h_O = R h + m p, I_O = R I R^T - [p]x[Rh]x - [Rh]x[p]x - m [p]x[p]x. */
void dyn_body_transform(const dyn_frame *f, const dyn_body *b, dyn_body *out)
{
    const double *R = f->R, *p = f->p;
    double I[9] = {b->I[0], b->I[1], b->I[2], b->I[1], b->I[3], b->I[4], b->I[2], b->I[4], b->I[5]};
    double T[9], RI[9];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            T[3 * i + k] = R[3 * i] * I[k] + R[3 * i + 1] * I[3 + k] + R[3 * i + 2] * I[6 + k];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            RI[3 * i + k] =
                T[3 * i] * R[3 * k] + T[3 * i + 1] * R[3 * k + 1] + T[3 * i + 2] * R[3 * k + 2];
    double rh[3];
    dyn_rot(R, b->h, rh);
    double m = b->m;
    /* -[p]x[q]x = (p.q) E - q p^T ; the sum -[p]x[rh]x - [rh]x[p]x = 2(p.rh)E - rh p^T - p rh^T */
    double prh = p[0] * rh[0] + p[1] * rh[1] + p[2] * rh[2];
    double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
    double S[9];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            double e = (i == k) ? 1.0 : 0.0;
            S[3 * i + k] = RI[3 * i + k] + 2.0 * prh * e - rh[i] * p[k] - p[i] * rh[k] +
                           m * (pp * e - p[i] * p[k]);
        }
    out->m = m;
    for (int k = 0; k < 3; k++) out->h[k] = rh[k] + m * p[k];
    out->I[0] = S[0];
    out->I[1] = 0.5 * (S[1] + S[3]);
    out->I[2] = 0.5 * (S[2] + S[6]);
    out->I[3] = S[4];
    out->I[4] = 0.5 * (S[5] + S[7]);
    out->I[5] = S[8];
}

/* acc += b (both in the same frame). */
void dyn_body_add(dyn_body *acc, const dyn_body *b)
{
    acc->m += b->m;
    for (int k = 0; k < 3; k++) acc->h[k] += b->h[k];
    for (int k = 0; k < 6; k++) acc->I[k] += b->I[k];
}
