/*
 * ident_cone.c — the pseudo-inertia cone of one link and its joint's friction bounds, and the
 * nearest consistent parameters (see ident_cone.h).
 */
#include <math.h>
#include <string.h>

#include "tools/armctl/ident_cone.h"

enum { P_M = 0, P_H = 1, P_I = 4, P_FRICTION = 10 };

/* z's off-diagonal entries of the symmetric 4 x 4 matrix: (row, column) of z[4..10) */
static const int OFF[6][2] = {{0, 1}, {0, 2}, {1, 2}, {0, 3}, {1, 3}, {2, 3}};

void ident_cone_init(ident_cone *c, const double *scale, double m_min)
{
    double s_i = (scale[P_I] + scale[P_I + 3] + scale[P_I + 5]) / 3;
    c->e = 1 / sqrt(scale[P_M]);
    c->d = 1 / sqrt(s_i);
    c->shift = c->e * c->e * m_min;
    for (int k = 0; k < 4; k++) c->fscale[k] = scale[P_FRICTION + k];
}

/* The 4 x 4 matrix (row-major) of z[0..10) and back. */
static void unpack(const double *z, double *J)
{
    for (int a = 0; a < 4; a++) J[a * 5] = z[a];
    for (int k = 0; k < 6; k++)
        J[OFF[k][0] * 4 + OFF[k][1]] = J[OFF[k][1] * 4 + OFF[k][0]] = z[4 + k] * M_SQRT1_2;
}

static void pack(const double *J, double *z)
{
    for (int a = 0; a < 4; a++) z[a] = J[a * 5];
    for (int k = 0; k < 6; k++) z[4 + k] = J[OFF[k][0] * 4 + OFF[k][1]] * M_SQRT2;
}

/* J = [[S, h], [h^T, m]], S = tr(I) / 2 - I, then D J D. */
void ident_cone_from_params(const ident_cone *c, const double *p, double *z)
{
    const double *I = p + P_I; /* ixx ixy ixz iyy iyz izz */
    double half = (I[0] + I[3] + I[5]) / 2, dd = c->d * c->d, de = c->d * c->e;
    double J[16] = {
        (half - I[0]) * dd, -I[1] * dd,         -I[2] * dd,         p[P_H] * de,
        -I[1] * dd,         (half - I[3]) * dd, -I[4] * dd,         p[P_H + 1] * de,
        -I[2] * dd,         -I[4] * dd,         (half - I[5]) * dd, p[P_H + 2] * de,
        p[P_H] * de,        p[P_H + 1] * de,    p[P_H + 2] * de,    p[P_M] * c->e * c->e};
    pack(J, z);
    for (int k = 0; k < 4; k++) z[P_FRICTION + k] = p[P_FRICTION + k] / c->fscale[k];
}

/* The inverse: S, h, m from D^-1 J' D^-1, then I = tr(S) - S (tr(S) = tr(I) / 2). */
void ident_cone_to_params(const ident_cone *c, const double *z, double *p)
{
    double J[16];
    unpack(z, J);
    double dd = c->d * c->d, de = c->d * c->e;
    double S[9];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) S[a * 3 + b] = J[a * 4 + b] / dd;
    double tr = S[0] + S[4] + S[8];
    p[P_M] = J[15] / (c->e * c->e);
    for (int a = 0; a < 3; a++) p[P_H + a] = J[a * 4 + 3] / de;
    p[P_I] = tr - S[0];
    p[P_I + 1] = -S[1];
    p[P_I + 2] = -S[2];
    p[P_I + 3] = tr - S[4];
    p[P_I + 4] = -S[5];
    p[P_I + 5] = tr - S[8];
    for (int k = 0; k < 4; k++) p[P_FRICTION + k] = z[P_FRICTION + k] * c->fscale[k];
}

/* The nearest positive semi-definite matrix to J' - shift e4 e4^T (its eigenvalues clipped at
 * 0), shifted back; the friction terms clamped to their signs. */
bool ident_cone_project(const ident_cone *c, double *z, double tol)
{
    double before[DYN_PARAMS], J[16], w[4], V[16];
    memcpy(before, z, sizeof before);
    unpack(z, J);
    J[15] -= c->shift;
    dyn_sym_eigen(4, J, w, V);
    bool clip = false;
    for (int k = 0; k < 4; k++) clip |= w[k] < 0;
    if (clip) {
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                double s = 0;
                for (int k = 0; k < 4; k++) s += V[a * 4 + k] * fmax(w[k], 0) * V[b * 4 + k];
                J[a * 4 + b] = s;
            }
        J[15] += c->shift;
        pack(J, z);
    }
    for (int k = 0; k < 3; k++) z[P_FRICTION + k] = fmax(z[P_FRICTION + k], 0);
    z[P_FRICTION + 3] = fmin(z[P_FRICTION + 3], 0);
    bool moved = false;
    for (int k = 0; k < DYN_PARAMS; k++) moved |= fabs(z[k] - before[k]) > tol;
    return moved;
}
