/* mat4.c — 4x4 homogeneous transform helpers for the tests. */
#include <math.h>
#include <string.h>

#include "tests/dynamics/mat4.h"

mat4 m4_identity(void)
{
    mat4 r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 4; i++) r.m[i][i] = 1.0;
    return r;
}

mat4 m4_mul(mat4 a, mat4 b)
{
    mat4 r;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++) {
            double s = 0;
            for (int j = 0; j < 4; j++) s += a.m[i][j] * b.m[j][k];
            r.m[i][k] = s;
        }
    return r;
}

mat4 m4_rx(double a)
{
    mat4 r = m4_identity();
    r.m[1][1] = cos(a), r.m[1][2] = -sin(a);
    r.m[2][1] = sin(a), r.m[2][2] = cos(a);
    return r;
}

mat4 m4_rz(double a)
{
    mat4 r = m4_identity();
    r.m[0][0] = cos(a), r.m[0][1] = -sin(a);
    r.m[1][0] = sin(a), r.m[1][1] = cos(a);
    return r;
}

mat4 m4_trans(double x, double y, double z)
{
    mat4 r = m4_identity();
    r.m[0][3] = x, r.m[1][3] = y, r.m[2][3] = z;
    return r;
}

static mat4 m4_ry(double a)
{
    mat4 r = m4_identity();
    r.m[0][0] = cos(a), r.m[0][2] = sin(a);
    r.m[2][0] = -sin(a), r.m[2][2] = cos(a);
    return r;
}

mat4 m4_rpy(const double xyz[3], const double rpy[3])
{
    mat4 r = m4_mul(m4_rz(rpy[2]), m4_mul(m4_ry(rpy[1]), m4_rx(rpy[0])));
    r.m[0][3] = xyz[0], r.m[1][3] = xyz[1], r.m[2][3] = xyz[2];
    return r;
}

void m4_to_rpy(mat4 t, double xyz[3], double rpy[3])
{
    for (int i = 0; i < 3; i++) xyz[i] = t.m[i][3];
    rpy[1] = atan2(-t.m[2][0], hypot(t.m[0][0], t.m[1][0]));
    rpy[0] = atan2(t.m[2][1], t.m[2][2]);
    rpy[2] = atan2(t.m[1][0], t.m[0][0]);
}

mat4 m4_rot_transpose(mat4 t)
{
    mat4 r = m4_identity();
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) r.m[i][k] = t.m[k][i];
    return r;
}

mat4 m4_joint(const double u[3], int prismatic, double q, int derivative)
{
    mat4 r;
    memset(&r, 0, sizeof r);
    if (prismatic) {
        if (derivative == 0) r = m4_identity();
        if (derivative <= 1)
            for (int i = 0; i < 3; i++) r.m[i][3] = (derivative == 0 ? q : 1.0) * u[i];
        return r;
    }
    double K[3][3] = {{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}};
    double K2[3][3];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            K2[i][k] = K[i][0] * K[0][k] + K[i][1] * K[1][k] + K[i][2] * K[2][k];
    double s = sin(q), c = cos(q), e, a, b;
    if (derivative == 0)
        e = 1, a = s, b = 1 - c;
    else if (derivative == 1)
        e = 0, a = c, b = s;
    else
        e = 0, a = -s, b = c;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) r.m[i][k] = (i == k ? e : 0.0) + a * K[i][k] + b * K2[i][k];
    r.m[3][3] = e;
    return r;
}

void m4_inertia_to(mat4 t, const double com[3], const double I[6], double com_out[3],
                   double I_out[6])
{
    double F[3][3] = {{I[0], I[1], I[2]}, {I[1], I[3], I[4]}, {I[2], I[4], I[5]}};
    double T[3][3], O[3][3];
    for (int i = 0; i < 3; i++) {
        com_out[i] = t.m[i][3];
        for (int k = 0; k < 3; k++) {
            com_out[i] += t.m[i][k] * com[k];
            T[i][k] = 0;
            for (int j = 0; j < 3; j++) T[i][k] += t.m[i][j] * F[j][k];
        }
    }
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            O[i][k] = 0;
            for (int j = 0; j < 3; j++) O[i][k] += T[i][j] * t.m[k][j];
        }
    I_out[0] = O[0][0], I_out[1] = O[0][1], I_out[2] = O[0][2];
    I_out[3] = O[1][1], I_out[4] = O[1][2], I_out[5] = O[2][2];
}
