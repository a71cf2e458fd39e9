/*
 * test_cone.c — the consistent parameters of armctl identify (tools/armctl/ident_cone.h) on
 * random links: parameters -> cone coordinates -> parameters is exact; a real body stays where it
 * is; the projection of any parameters is a real body (mass >= m_min, inertia about the COM
 * positive semi-definite with the triangle inequality, friction of the right signs) and the
 * nearest one (no consistent point is nearer, and the projection's defining inequality holds).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/armctl/ident_cone.h"

enum { P_M = 0, P_H = 1, P_I = 4, P_ARM = 10, P_VISC = 11, P_CPOS = 12, P_CNEG = 13 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) /* [0, 1) */
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return ((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double between(double a, double b)
{
    return a + (b - a) * uniform();
}

/* A real body (mass m, COM within 0.3 m, principal moments of a box, turned) and friction of
 * the right signs, as parameters p[DYN_PARAMS]. */
static void random_body(double *p)
{
    double m = between(0.05, 20), c[3], s[3], R[9];
    for (int k = 0; k < 3; k++) {
        c[k] = between(-0.3, 0.3);
        s[k] = between(0.01, 0.5); /* box sides */
    }
    double w[3] = {m * (s[1] * s[1] + s[2] * s[2]) / 12, m * (s[0] * s[0] + s[2] * s[2]) / 12,
                   m * (s[0] * s[0] + s[1] * s[1]) / 12};
    /* a rotation from a random unit quaternion */
    double q[4], qn = 0;
    for (int k = 0; k < 4; k++) {
        q[k] = between(-1, 1);
        qn += q[k] * q[k];
    }
    for (int k = 0; k < 4; k++) q[k] /= sqrt(qn);
    double a = q[0], b = q[1], cc = q[2], d = q[3];
    double Rm[9] = {a * a + b * b - cc * cc - d * d,
                    2 * (b * cc - a * d),
                    2 * (b * d + a * cc),
                    2 * (b * cc + a * d),
                    a * a - b * b + cc * cc - d * d,
                    2 * (cc * d - a * b),
                    2 * (b * d - a * cc),
                    2 * (cc * d + a * b),
                    a * a - b * b - cc * cc + d * d};
    memcpy(R, Rm, sizeof R);
    double Ic[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double t = 0;
            for (int k = 0; k < 3; k++) t += R[i * 3 + k] * w[k] * R[j * 3 + k];
            Ic[i * 3 + j] = t;
        }
    /* about the origin: I_o = I_c + m (|c|^2 E - c c^T) */
    double cc2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    double Io[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Io[i * 3 + j] = Ic[i * 3 + j] + m * ((i == j) * cc2 - c[i] * c[j]);
    p[P_M] = m;
    for (int k = 0; k < 3; k++) p[P_H + k] = m * c[k];
    p[P_I] = Io[0];
    p[P_I + 1] = Io[1];
    p[P_I + 2] = Io[2];
    p[P_I + 3] = Io[4];
    p[P_I + 4] = Io[5];
    p[P_I + 5] = Io[8];
    p[P_ARM] = between(0, 1);
    p[P_VISC] = between(0, 5);
    p[P_CPOS] = between(0, 5);
    p[P_CNEG] = -between(0, 5);
}

static const double scale[DYN_PARAMS] = {5,   0.5,  0.5, 0.5, 0.2, 0.05, 0.05,
                                         0.2, 0.05, 0.2, 0.3, 2,   2,    2};
#define M_MIN 1e-6 /* as identify's, for a link of about 1 kg */

/* The parameters of z are a real body: mass >= M_MIN, the inertia about the COM positive
 * semi-definite with the triangle inequality, friction of the right signs. */
static void assert_real(const ident_cone *c, const double *z)
{
    double p[DYN_PARAMS];
    ident_cone_to_params(c, z, p);
    double m = p[P_M], cm[3];
    assert_true(m >= M_MIN * (1 - 1e-9));
    for (int k = 0; k < 3; k++) cm[k] = p[P_H + k] / m;
    double cc = cm[0] * cm[0] + cm[1] * cm[1] + cm[2] * cm[2];
    double Ic[6] = {p[P_I] - m * (cc - cm[0] * cm[0]), p[P_I + 1] + m * cm[0] * cm[1],
                    p[P_I + 2] + m * cm[0] * cm[2],    p[P_I + 3] - m * (cc - cm[1] * cm[1]),
                    p[P_I + 4] + m * cm[1] * cm[2],    p[P_I + 5] - m * (cc - cm[2] * cm[2])};
    double w[3], R[9];
    dyn_inertia_principal(Ic, w, R);
    double tol = 1e-9 * (fabs(w[0]) + fabs(w[1]) + fabs(w[2])) + 1e-12;
    assert_true(w[0] >= -tol);
    assert_true(w[2] <= w[0] + w[1] + tol);
    assert_true(p[P_ARM] >= 0 && p[P_VISC] >= 0 && p[P_CPOS] >= 0 && p[P_CNEG] <= 0);
}

static double dist2(const double *a, const double *b)
{
    double s = 0;
    for (int k = 0; k < DYN_PARAMS; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    return s;
}

/* Parameters -> z -> parameters to rounding, and a real body is not moved. */
static void test_round_trip(void **state)
{
    (void)state;
    ident_cone c;
    ident_cone_init(&c, scale, M_MIN);
    for (int t = 0; t < 1000; t++) {
        double p[DYN_PARAMS], z[DYN_PARAMS], back[DYN_PARAMS];
        random_body(p);
        ident_cone_from_params(&c, p, z);
        ident_cone_to_params(&c, z, back);
        for (int k = 0; k < DYN_PARAMS; k++)
            assert_true(fabs(back[k] - p[k]) <= 1e-12 * (1 + fabs(p[k])));
        assert_false(ident_cone_project(&c, z, 1e-9));
    }
}

/* Random parameters (bodies disturbed by up to their own size, half of them not bodies any
 * more): the projection is a real body, projecting it again moves nothing, and for real bodies
 * y, <x - P(x), y - P(x)> <= 0 (P(x) the nearest point of a convex set) and |x - y| >= |x -
 * P(x)|. */
static void test_projection(void **state)
{
    (void)state;
    ident_cone c;
    ident_cone_init(&c, scale, M_MIN);
    int moved = 0, outside = 0;
    for (int t = 0; t < 500; t++) {
        double p[DYN_PARAMS], x[DYN_PARAMS], z[DYN_PARAMS];
        random_body(p);
        for (int k = 0; k < DYN_PARAMS; k++) p[k] += between(-1, 1) * scale[k];
        ident_cone_from_params(&c, p, x);
        memcpy(z, x, sizeof z);
        moved += ident_cone_project(&c, z, 1e-12);
        assert_real(&c, z);
        double again[DYN_PARAMS];
        memcpy(again, z, sizeof again);
        assert_false(ident_cone_project(&c, again, 1e-9));
        double d = dist2(x, z);
        for (int u = 0; u < 50; u++) {
            double q[DYN_PARAMS], y[DYN_PARAMS];
            random_body(q);
            ident_cone_from_params(&c, q, y);
            double y2[DYN_PARAMS];
            memcpy(y2, y, sizeof y2);
            if (ident_cone_project(&c, y2, 1e-12)) { /* a body too small for M_MIN's shift */
                outside++;
                continue;
            }
            double inner = 0, norm = 0;
            for (int k = 0; k < DYN_PARAMS; k++) {
                inner += (x[k] - z[k]) * (y[k] - z[k]);
                norm += y[k] * y[k] + z[k] * z[k];
            }
            assert_true(inner <= 1e-9 * norm);
            assert_true(dist2(x, y) >= d * (1 - 1e-12));
        }
    }
    print_message("%d of 500 disturbed parameter sets were not a body and were moved; %d of "
                  "25000 random bodies compared were outside the shifted cone\n",
                  moved, outside);
    assert_true(moved > 100);   /* the test reaches the cone's boundary */
    assert_true(outside < 250); /* and compares with bodies, nearly all */
}

/* The triangle inequality is the cone's, not only the semi-definite inertia: principal moments
 * 1, 1, 3 about the COM (no body has them) come back as a body's. */
static void test_triangle(void **state)
{
    (void)state;
    ident_cone c;
    ident_cone_init(&c, scale, M_MIN);
    double p[DYN_PARAMS] = {2, 0, 0, 0, 1, 0, 0, 1, 0, 3, 0.1, 0.1, 0.1, -0.1}, z[DYN_PARAMS];
    ident_cone_from_params(&c, p, z);
    assert_true(ident_cone_project(&c, z, 1e-9));
    assert_real(&c, z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_triangle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
