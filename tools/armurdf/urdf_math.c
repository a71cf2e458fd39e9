/* urdf_math.c — rigid transforms (3x3 rotation + origin), URDF roll-pitch-yaw, and rigid
 * bodies moved between frames and combined exactly (parallel-axis theorem). */
#include <math.h>
#include <string.h>

#include "tools/armurdf/urdf_internal.h"

/* out = A B, or A B^T when bt (3x3 row-major; out may not alias A or B). */
static void mul3(const double *A, const double *B, bool bt, double *out)
{
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            double s = 0;
            for (int j = 0; j < 3; j++) s += A[3 * i + j] * (bt ? B[3 * k + j] : B[3 * j + k]);
            out[3 * i + k] = s;
        }
}

/* The identity transform. */
void urdf_pose_identity(urdf_pose *t)
{
    memset(t, 0, sizeof *t);
    t->R[0] = t->R[4] = t->R[8] = 1;
}

/* URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll). */
void urdf_pose_from_origin(const urdf_origin *o, urdf_pose *t)
{
    double cr = cos(o->rpy[0]), sr = sin(o->rpy[0]);
    double cp = cos(o->rpy[1]), sp = sin(o->rpy[1]);
    double cy = cos(o->rpy[2]), sy = sin(o->rpy[2]);
    double R[9] = {cy * cp,
                   cy * sp * sr - sy * cr,
                   cy * sp * cr + sy * sr,
                   sy * cp,
                   sy * sp * sr + cy * cr,
                   sy * sp * cr - cy * sr,
                   -sp,
                   cp * sr,
                   cp * cr};
    memcpy(t->R, R, sizeof R);
    memcpy(t->p, o->xyz, sizeof t->p);
}

/* out = a b: R = Ra Rb, p = Ra pb + pa. */
void urdf_pose_compose(const urdf_pose *a, const urdf_pose *b, urdf_pose *out)
{
    urdf_pose r;
    mul3(a->R, b->R, false, r.R);
    for (int i = 0; i < 3; i++)
        r.p[i] =
            a->R[3 * i] * b->p[0] + a->R[3 * i + 1] * b->p[1] + a->R[3 * i + 2] * b->p[2] + a->p[i];
    *out = r;
}

/* Revolute: Rodrigues R = E + sin(q) K + (1 - cos(q)) K^2, K = [u]x; prismatic: p = q u. */
void urdf_pose_motion(const double u[3], bool prismatic, double value, urdf_pose *t)
{
    urdf_pose_identity(t);
    if (prismatic) {
        for (int k = 0; k < 3; k++) t->p[k] = value * u[k];
        return;
    }
    double s = sin(value), v = 1 - cos(value);
    double K[9] = {0, -u[2], u[1], u[2], 0, -u[0], -u[1], u[0], 0}, K2[9];
    mul3(K, K, false, K2);
    for (int i = 0; i < 9; i++) t->R[i] += s * K[i] + v * K2[i];
}

/* The inverse of Rz(y) Ry(p) Rx(r): p = atan2(-R20, hypot(R00, R10)), r = atan2(R21, R22),
 * y = atan2(R10, R00); at pitch +-pi/2 (R00 = R10 = 0) roll is 0 and yaw = atan2(-R01, R11). */
void urdf_pose_to_origin(const urdf_pose *t, urdf_origin *o)
{
    const double *R = t->R;
    memcpy(o->xyz, t->p, sizeof o->xyz);
    double c = hypot(R[0], R[3]);
    o->rpy[1] = atan2(-R[6], c);
    if (c > 1e-12) {
        o->rpy[0] = atan2(R[7], R[8]);
        o->rpy[2] = atan2(R[3], R[0]);
    } else {
        o->rpy[0] = 0;
        o->rpy[2] = atan2(-R[1], R[4]);
    }
}

int urdf_unit(const double a[3], double u[3])
{
    double s = fmax(fabs(a[0]), fmax(fabs(a[1]), fabs(a[2])));
    if (!(s > 0)) return -1;
    double b[3] = {a[0] / s, a[1] / s, a[2] / s};
    double n = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    for (int k = 0; k < 3; k++) u[k] = b[k] / n;
    return 0;
}

/* The COM frame in the outer frame is T = t C (C = the <inertial> origin); the COM is T's
 * origin and the inertia turns with T's rotation Q: I_out = Q I Q^T. */
void urdf_body_of_link(const urdf_link *l, const urdf_pose *t, urdf_body *out)
{
    urdf_pose C, T;
    urdf_pose_from_origin(&l->com, &C);
    urdf_pose_compose(t, &C, &T);
    const double *Q = T.R, *v = l->inertia;
    double I[9] = {v[0], v[1], v[2], v[1], v[3], v[4], v[2], v[4], v[5]}, QI[9], S[9];
    mul3(Q, I, false, QI);
    mul3(QI, Q, true, S);
    out->m = l->has_inertial ? l->mass : 0;
    memcpy(out->c, T.p, sizeof out->c);
    double sym[6] = {S[0], 0.5 * (S[1] + S[3]), 0.5 * (S[2] + S[6]),
                     S[4], 0.5 * (S[5] + S[7]), S[8]};
    for (int k = 0; k < 6; k++) out->I[k] = l->has_inertial ? sym[k] : 0;
}

void urdf_body_combine(const urdf_body *b, int n, urdf_body *out)
{
    /* one body with mass or inertia among massless ones stays exactly as it is */
    int only = -1, count = 0;
    for (int i = 0; i < n; i++)
        if (b[i].m != 0 || b[i].I[0] != 0 || b[i].I[1] != 0 || b[i].I[2] != 0 || b[i].I[3] != 0 ||
            b[i].I[4] != 0 || b[i].I[5] != 0)
            only = i, count++;
    if (count == 1) {
        *out = b[only];
        return;
    }
    urdf_body s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < n; i++) {
        s.m += b[i].m;
        for (int k = 0; k < 3; k++) s.c[k] += b[i].m * b[i].c[k];
    }
    for (int k = 0; k < 3; k++) s.c[k] = s.m > 0 ? s.c[k] / s.m : 0;
    for (int i = 0; i < n; i++) {
        double d[3] = {b[i].c[0] - s.c[0], b[i].c[1] - s.c[1], b[i].c[2] - s.c[2]};
        double m = b[i].m, dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        s.I[0] += b[i].I[0] + m * (dd - d[0] * d[0]);
        s.I[1] += b[i].I[1] - m * d[0] * d[1];
        s.I[2] += b[i].I[2] - m * d[0] * d[2];
        s.I[3] += b[i].I[3] + m * (dd - d[1] * d[1]);
        s.I[4] += b[i].I[4] - m * d[1] * d[2];
        s.I[5] += b[i].I[5] + m * (dd - d[2] * d[2]);
    }
    *out = s;
}
