/* lagrange.c — Lagrange-formulation inverse dynamics from 4x4 transforms (seed 000 §2). */
#include <math.h>
#include <string.h>

#include "tests/dynamics/lagrange.h"
#include "tests/dynamics/mat4.h"

/* One joint as A(q) = P * Joint(u, q + off) * S, read straight from its description. */
typedef struct {
    mat4 P, S;
    double u[3], off;
    int prismatic;
} ljoint;

static void describe(const dyn_joint_desc *j, ljoint *o)
{
    o->prismatic = j->type == DYN_PRISMATIC;
    o->u[0] = 0, o->u[1] = 0, o->u[2] = 1;
    o->S = m4_identity();
    if (j->form == DYN_DH_STANDARD) { /* Rz(theta) Tz(d) Tx(a) Rx(alpha) */
        if (o->prismatic) {
            o->P = m4_rz(j->theta);
            o->off = j->d;
        } else {
            o->P = m4_identity();
            o->off = j->theta;
            o->S = m4_trans(0, 0, j->d);
        }
        o->S = m4_mul(o->S, m4_mul(m4_trans(j->a, 0, 0), m4_rx(j->alpha)));
    } else if (j->form == DYN_DH_MODIFIED) { /* Rx(alpha) Tx(a) Rz(theta) Tz(d) */
        o->P = m4_mul(m4_rx(j->alpha), m4_trans(j->a, 0, 0));
        if (o->prismatic) {
            o->P = m4_mul(o->P, m4_rz(j->theta));
            o->off = j->d;
        } else {
            o->off = j->theta;
            o->S = m4_trans(0, 0, j->d);
        }
    } else { /* URDF origin, then motion about/along the axis */
        o->P = m4_rpy(j->origin_xyz, j->origin_rpy);
        double nn =
            sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
        for (int k = 0; k < 3; k++) o->u[k] = j->axis[k] / nn;
        o->off = 0;
    }
}

static mat4 joint_mat(const ljoint *j, double q, int order)
{
    return m4_mul(j->P, m4_mul(m4_joint(j->u, j->prismatic, q + j->off, order), j->S));
}

/* Product A_0 .. A_last with derivative orders ord[] (0, 1 or 2) per joint. */
static mat4 chain(const ljoint *jt, const double *q, int last, const int *ord)
{
    mat4 t = m4_identity();
    for (int i = 0; i <= last; i++) t = m4_mul(t, joint_mat(&jt[i], q[i], ord[i]));
    return t;
}

mat4 lagrange_pseudo_inertia(double m, const double c[3], const double I[6])
{
    double F[3][3] = {{I[0], I[1], I[2]}, {I[1], I[3], I[4]}, {I[2], I[4], I[5]}};
    double tr = 0.5 * (I[0] + I[3] + I[5]);
    mat4 J;
    memset(&J, 0, sizeof J);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) J.m[i][k] = (i == k ? tr : 0.0) - F[i][k] + m * c[i] * c[k];
        J.m[i][3] = J.m[3][i] = m * c[i];
    }
    J.m[3][3] = m;
    return J;
}

/* Tr(A J B^T) */
static double trace3(mat4 A, mat4 J, mat4 B)
{
    double s = 0;
    for (int r = 0; r < 4; r++)
        for (int a = 0; a < 4; a++) {
            if (A.m[r][a] == 0.0) continue;
            for (int b = 0; b < 4; b++) s += A.m[r][a] * J.m[a][b] * B.m[r][b];
        }
    return s;
}

void lagrange_tool_pose(const dyn_model_desc *desc, const double *q, double T[16])
{
    ljoint jt[DYN_MAX_DOF];
    int ord[DYN_MAX_DOF] = {0};
    for (int i = 0; i < desc->n; i++) describe(&desc->joint[i], &jt[i]);
    mat4 t = m4_mul(chain(jt, q, desc->n - 1, ord), m4_rpy(desc->tool_xyz, desc->tool_rpy));
    memcpy(T, t.m, 16 * sizeof(double));
}

void lagrange_id(const dyn_model_desc *desc, const double *q, const double *qd, const double *qdd,
                 const double *wrench, unsigned flags, double *tau, double *Mout)
{
    const int n = desc->n;
    ljoint jt[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) describe(&desc->joint[i], &jt[i]);
    mat4 tool = m4_rpy(desc->tool_xyz, desc->tool_rpy);
    static double M[DYN_MAX_DOF][DYN_MAX_DOF];
    double h[DYN_MAX_DOF] = {0}, g[DYN_MAX_DOF] = {0};
    memset(M, 0, sizeof M);
    /* bodies: links 0..n-1, then the payload on the tool frame of link n-1 */
    for (int b = 0; b <= n; b++) {
        int link = b < n ? b : n - 1;
        mat4 post = b < n ? m4_identity() : tool;
        mat4 J;
        double mass;
        const double *com;
        if (b < n) {
            const dyn_joint_desc *jd = &desc->joint[b];
            J = lagrange_pseudo_inertia(jd->mass, jd->com, jd->inertia);
            mass = jd->mass;
            com = jd->com;
        } else {
            J = lagrange_pseudo_inertia(desc->payload.mass, desc->payload.com,
                                        desc->payload.inertia);
            mass = desc->payload.mass;
            com = desc->payload.com;
        }
        int ord[DYN_MAX_DOF] = {0};
        mat4 dT[DYN_MAX_DOF];
        for (int j = 0; j <= link; j++) {
            ord[j] = 1;
            dT[j] = m4_mul(chain(jt, q, link, ord), post);
            ord[j] = 0;
        }
        for (int i = 0; i <= link; i++) {
            for (int j = 0; j <= link; j++) M[i][j] += trace3(dT[j], J, dT[i]);
            /* potential: P = -m g^T T c  =>  dP/dq_i = -m g^T (dT_i c) */
            double v = 0;
            for (int r = 0; r < 3; r++) {
                double x = dT[i].m[r][3];
                for (int k = 0; k < 3; k++) x += dT[i].m[r][k] * com[k];
                v += desc->gravity[r] * x;
            }
            g[i] -= mass * v;
        }
        for (int j = 0; j <= link; j++) {
            for (int k = 0; k <= link; k++) {
                if (qd[j] == 0.0 || qd[k] == 0.0) continue;
                ord[j] += 1;
                ord[k] += 1;
                mat4 d2 = m4_mul(chain(jt, q, link, ord), post);
                ord[j] = ord[k] = 0;
                for (int i = 0; i <= link; i++) h[i] += trace3(d2, J, dT[i]) * qd[j] * qd[k];
            }
        }
    }
    double jtw[DYN_MAX_DOF] = {0};
    if (wrench) { /* J^T w from the tool pose's partial derivatives: v_j = dp/dq_j, [w_j]x = dR/dq_j
                     R^T */
        int ord[DYN_MAX_DOF] = {0};
        mat4 T = m4_mul(chain(jt, q, n - 1, ord), tool);
        double fb[3] = {0}, mb[3] = {0};
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) {
                fb[r] += T.m[r][k] * wrench[k];
                mb[r] += T.m[r][k] * wrench[3 + k];
            }
        for (int j = 0; j < n; j++) {
            ord[j] = 1;
            mat4 dT = m4_mul(chain(jt, q, n - 1, ord), tool);
            ord[j] = 0;
            double W[3][3];
            for (int r = 0; r < 3; r++)
                for (int k = 0; k < 3; k++) {
                    W[r][k] = 0;
                    for (int s = 0; s < 3; s++) W[r][k] += dT.m[r][s] * T.m[k][s];
                }
            double w[3] = {W[2][1], W[0][2], W[1][0]};
            for (int r = 0; r < 3; r++) jtw[j] += dT.m[r][3] * fb[r] + w[r] * mb[r];
        }
    }
    for (int i = 0; i < n; i++) {
        double t = h[i];
        for (int j = 0; j < n; j++) t += M[i][j] * qdd[j];
        if (flags & DYN_GRAVITY) t += g[i];
        const dyn_joint_desc *jd = &desc->joint[i];
        if (flags & DYN_ARMATURE) t += jd->armature * qdd[i];
        if (flags & DYN_FRICTION)
            t += jd->viscous * qd[i] +
                 (qd[i] > 0 ? jd->coulomb_pos : (qd[i] < 0 ? jd->coulomb_neg : 0.0));
        tau[i] = t - jtw[i];
        if (Mout)
            for (int j = 0; j < n; j++) Mout[i * n + j] = M[i][j];
    }
}
