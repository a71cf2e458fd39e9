/* test_flex.c — dynamics of flexible links (dynamics/flex.h) against El-Rayyes 1990 §4.2:
 * Table 4.8's link in bending (Tables 4.9, 4.10) and torsion (Tables 4.11, 4.12) with the
 * deflection and frequencies measured from simulated responses (RK4), the double compound
 * pendulum of case 3 converging to the rigid model as EI grows and conserving energy, and
 * the flexible code with every mode off reproducing the rigid core. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "dynamics/flex.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/flex_pendulum.h"
#include "tests/dynamics/test_util.h"

#define MAXX 16

/* Table 4.8: the link of cases 1-3. */
#define T48_LENGTH 1.00
#define T48_MASS   0.5
#define T48_E      2e11
#define T48_G      8.3e10
#define T48_AREA   1.1309734e-4
#define T48_IYY    1.017876e-9 /* = I_zz */
#define T48_IXX    2.035752e-9

/* Relative deviation of computed from the seed's value. */
static double dev(double computed, double seed)
{
    return fabs(computed - seed) / fabs(seed);
}

#define assert_seed(computed, seed, tol, what)                                                     \
    do {                                                                                           \
        double c_ = (computed), s_ = (seed);                                                       \
        print_message("  %-34s seed %-10.6g armd %-12.7g (%+.3f %%)\n", (what), s_, c_,            \
                      100.0 * (c_ - s_) / s_);                                                     \
        if (!(dev(c_, s_) <= (tol))) {                                                             \
            print_error("%s: %.7g deviates from the seed's %.7g by more than %.2g\n", (what), c_,  \
                        s_, (double)(tol));                                                        \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

/* One revolute joint about z at the base, the beam along x to the tool at (L, 0, 0); no rigid
 * link mass, no gravity: Table 4.8's link, clamped when the joint is held (qdd = 0). */
static dyn_flex_model *table48_link(int modes_y, int modes_x, double zeta)
{
    dyn_model_desc d;
    memset(&d, 0, sizeof d);
    d.n = 1;
    d.joint[0].type = DYN_REVOLUTE;
    d.joint[0].form = DYN_URDF;
    d.joint[0].axis[2] = 1.0;
    d.tool_xyz[0] = T48_LENGTH;
    dyn_flex_desc f;
    memset(&f, 0, sizeof f);
    dyn_flex_link *l = &f.link[0];
    l->modes_y = modes_y;
    l->modes_x = modes_x;
    l->length = T48_LENGTH;
    l->mass = T48_MASS;
    l->EI_z = l->EI_y = T48_E * T48_IYY;
    l->GJ = T48_G * T48_IXX;
    l->polar = T48_MASS / (T48_AREA * T48_LENGTH) * T48_IXX; /* rho I_xx */
    l->damping = zeta;
    dyn_flex_model *m = dyn_flex_create(&d, &f, NULL, NULL);
    assert_non_null(m);
    return m;
}

/* The clamped beam under a constant tool wrench: state (delta, delta_dot) of the nd modes,
 * delta_dd from dyn_flex_inverse with the joint held (q = qd = qdd = 0). */
typedef struct {
    dyn_flex_model *m;
    dyn_flex_data *d;
    double wrench[6];
    int nd;
} clamped;

static void clamped_deriv(clamped *c, const double *y, double *dy)
{
    double x[MAXX] = {0}, xd[MAXX] = {0}, qdd[1] = {0}, tau[1];
    memcpy(x + 1, y, sizeof(double) * c->nd);
    memcpy(xd + 1, y + c->nd, sizeof(double) * c->nd);
    memcpy(dy, y + c->nd, sizeof(double) * c->nd);
    assert_int_equal(dyn_flex_inverse(c->m, c->d, x, xd, qdd, c->wrench, 0, tau, dy + c->nd), 0);
}

static void clamped_rk4(clamped *c, double *y, double h)
{
    const int s = 2 * c->nd;
    double k1[2 * MAXX], k2[2 * MAXX], k3[2 * MAXX], k4[2 * MAXX], t[2 * MAXX];
    clamped_deriv(c, y, k1);
    for (int i = 0; i < s; i++) t[i] = y[i] + 0.5 * h * k1[i];
    clamped_deriv(c, t, k2);
    for (int i = 0; i < s; i++) t[i] = y[i] + 0.5 * h * k2[i];
    clamped_deriv(c, t, k3);
    for (int i = 0; i < s; i++) t[i] = y[i] + h * k3[i];
    clamped_deriv(c, t, k4);
    for (int i = 0; i < s; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

/* Step response from rest over `dur` s: with damping, the settled modal coordinates (the seed's
 * "if damping was introduced ... the static response"); without, each mode's frequency [Hz]
 * from the zero crossings (linearly interpolated) of delta_k - settled_k, the mean it vibrates
 * about. */
static void step_response(clamped *c, double h, double dur, const double *settled, double *out)
{
    const int nd = c->nd;
    double y[2 * MAXX] = {0}, prev[MAXX], first[MAXX], last[MAXX];
    int crossings[MAXX] = {0};
    for (int k = 0; k < nd; k++) prev[k] = settled ? -settled[k] : 0.0;
    const int steps = (int)(dur / h + 0.5);
    for (int s = 1; s <= steps; s++) {
        clamped_rk4(c, y, h);
        if (!settled) continue;
        for (int k = 0; k < nd; k++) {
            const double e = y[k] - settled[k];
            if ((e > 0) != (prev[k] > 0)) {
                const double tc = h * (s - 1 + prev[k] / (prev[k] - e));
                if (!crossings[k]++) first[k] = tc;
                last[k] = tc;
            }
            prev[k] = e;
        }
    }
    for (int k = 0; k < nd; k++) {
        if (settled) {
            assert_true(crossings[k] >= 5);
            out[k] = (crossings[k] - 1) / (2.0 * (last[k] - first[k]));
        } else {
            out[k] = y[k];
        }
    }
}

/* Case 1: Table 4.8's link, 4 bending modes, 10 N step at the tip (Tables 4.9 and 4.10). */
static void test_case1_bending(void **state)
{
    (void)state;
    static const double seed_ratio[4] = {0.97069, 0.02472, 0.00315, 0.00082};
    static const double seed_hz[4] = {11.29, 70.76, 198.1, 388.3};
    const double F = 10.0, EI = T48_E * T48_IYY, L = T48_LENGTH;
    const double static_sm = F * L * L * L / (3.0 * EI); /* strength of materials */
    print_message("case 1 (bending, El-Rayyes 1990 Tables 4.9, 4.10):\n");
    assert_seed(static_sm, 0.01637, 5e-3, "static tip deflection F L^3/3EI");

    /* damped (zeta = 0.5) step response settles at the static deflection */
    clamped c = {table48_link(4, 0, 0.5), NULL, {0, F, 0, 0, 0, 0}, 4};
    c.d = dyn_flex_data_create(c.m);
    double settled[4], tip = 0.0;
    step_response(&c, 5e-5, 0.4, NULL, settled);
    for (int k = 0; k < 4; k++) tip += settled[k] * dyn_flex_tip_shape(c.m, 0, 0, k);
    assert_seed(tip, 0.01637, 5e-3, "simulated static tip deflection");
    for (int k = 0; k < 4; k++) {
        char what[64];
        snprintf(what, sizeof what, "mode %d contribution / static", k + 1);
        assert_seed(settled[k] * dyn_flex_tip_shape(c.m, 0, 0, k) / static_sm, seed_ratio[k], 5e-3,
                    what);
    }
    dyn_flex_data_free(c.d);
    dyn_flex_free(c.m);

    /* undamped: frequencies from the simulated vibration about the settled values */
    c.m = table48_link(4, 0, 0.0);
    c.d = dyn_flex_data_create(c.m);
    double hz[4];
    step_response(&c, 5e-5, 1.0, settled, hz);
    for (int k = 0; k < 4; k++) {
        char what[64];
        snprintf(what, sizeof what, "mode %d frequency simulated [Hz]", k + 1);
        assert_seed(hz[k], seed_hz[k], 5e-3, what);
        snprintf(what, sizeof what, "mode %d frequency of the model [Hz]", k + 1);
        assert_seed(dyn_flex_mode_omega(c.m, 0, 0, k, NULL) / (2 * M_PI), seed_hz[k], 5e-3, what);
    }
    dyn_flex_data_free(c.d);
    dyn_flex_free(c.m);
}

/* Case 2: Table 4.8's link, 4 torsion modes, 12 N m step at the tip (Tables 4.11, 4.12). */
static void test_case2_torsion(void **state)
{
    (void)state;
    static const double seed_ratio[4] = {0.8106, 0.0901, 0.0324, 0.0165};
    static const double seed_hz[4] = {1083, 3250, 5416, 7582};
    const double T = 12.0, GJ = T48_G * T48_IXX, L = T48_LENGTH;
    const double static_sm = T * L / GJ;
    print_message("case 2 (torsion, El-Rayyes 1990 Tables 4.11, 4.12):\n");
    assert_seed(static_sm, 0.0710196, 5e-3, "static tip twist T L / GJ [rad]");
    clamped c = {table48_link(0, 4, 0.5), NULL, {0, 0, 0, T, 0, 0}, 4};
    c.d = dyn_flex_data_create(c.m);
    double settled[4], tip = 0.0;
    step_response(&c, 2e-6, 0.004, NULL, settled);
    for (int k = 0; k < 4; k++) tip += settled[k] * dyn_flex_tip_shape(c.m, 0, 2, k);
    /* four torsion modes hold only the sum of Table 4.11's ratios (0.9496) of T L / GJ: the
     * seed compares each mode's share, never the truncated sum with 0.0710196 rad */
    double seed_sum = 0.0;
    for (int k = 0; k < 4; k++) seed_sum += seed_ratio[k];
    assert_seed(tip / static_sm, seed_sum, 5e-3, "simulated tip twist / (T L / GJ)");
    for (int k = 0; k < 4; k++) {
        char what[64];
        snprintf(what, sizeof what, "mode %d contribution / static", k + 1);
        assert_seed(settled[k] * dyn_flex_tip_shape(c.m, 0, 2, k) / static_sm, seed_ratio[k], 5e-3,
                    what);
    }
    dyn_flex_data_free(c.d);
    dyn_flex_free(c.m);

    c.m = table48_link(0, 4, 0.0);
    c.d = dyn_flex_data_create(c.m);
    double hz[4];
    step_response(&c, 2e-6, 0.01, settled, hz);
    for (int k = 0; k < 4; k++) {
        char what[64];
        snprintf(what, sizeof what, "mode %d frequency simulated [Hz]", k + 1);
        assert_seed(hz[k], seed_hz[k], 5e-3, what);
        snprintf(what, sizeof what, "mode %d frequency of the model [Hz]", k + 1);
        assert_seed(dyn_flex_mode_omega(c.m, 0, 2, k, NULL) / (2 * M_PI), seed_hz[k], 5e-3, what);
    }
    dyn_flex_data_free(c.d);
    dyn_flex_free(c.m);
}

/* ---------------------------------------------------------------- case 3 */

#define C3_STEPS 10000 /* 2 s */
#define C3_H     2e-4

/* Case 3: as EI grows (10.178, 101.78 as the seed, and 1017.8) the joint motion converges to
 * the rigid model's: the largest joint-angle difference over 2 s shrinks monotonically. */
static void test_case3_converges_to_rigid(void **state)
{
    (void)state;
    static const double EI[3] = {10.178, 101.78, 1017.8};
    double *qr = malloc(sizeof(double) * 2 * C3_STEPS), *qf = malloc(sizeof(double) * 2 * C3_STEPS);
    assert_non_null(qr);
    assert_non_null(qf);
    assert_int_equal(flex_pendulum_run(0.0, C3_STEPS, C3_H, qr, NULL), 0);
    double err[3];
    print_message("case 3 (double compound pendulum, tip mass %.2g kg, %d modes per link):\n",
                  FP_TIP_MASS, FP_MODES);
    for (int e = 0; e < 3; e++) {
        assert_int_equal(flex_pendulum_run(EI[e], C3_STEPS, C3_H, qf, NULL), 0);
        err[e] = 0.0;
        for (int k = 0; k < 2 * C3_STEPS; k++) err[e] = fmax(err[e], fabs(qf[k] - qr[k]));
        print_message("  EI %8.3f N m^2: max |q_flex - q_rigid| over 2 s = %.4g rad\n", EI[e],
                      err[e]);
        assert_true(isfinite(err[e]));
    }
    assert_true(err[0] > 0.0);
    assert_true(err[1] < err[0]);
    assert_true(err[2] < err[1]);
    assert_true(err[2] < 0.05); /* and it does get close */
    free(qr);
    free(qf);
}

/* Case 3 without damping conserves kinetic + gravitational + elastic energy to 1e-6 of the
 * initial potential energy over 2 s (RK4, 0.1 ms). */
static void test_case3_energy(void **state)
{
    (void)state;
    double worst, pg0, max_el;
    assert_int_equal(flex_pendulum_energy(10.178, 20000, 1e-4, 10, &worst, &pg0, &max_el), 0);
    print_message("case 3 energy: drift %.3g J over 2 s, initial potential %.4g J, largest "
                  "elastic energy %.3g J\n",
                  worst, pg0, max_el);
    assert_true(max_el > 1e-6); /* the links did bend */
    if (!(worst <= 1e-6 * fabs(pg0))) {
        print_error("energy drift %g J exceeds 1e-6 of %g J\n", worst, fabs(pg0));
        fail();
    }
}

/* ---------------------------------------------------------------- rigid limit */

/* With no beams at all, on random arms in every form (revolute + prismatic, armature,
 * friction, tool, payload), the flexible functions reproduce the rigid core to 1e-12:
 * mass matrix, bias vs dyn_rnea at qdd = 0, forward dynamics with a wrench vs dyn_forward_chol,
 * joint inverse dynamics vs dyn_rnea, energy vs dyn_energy. */
static void test_rigid_limit(void **state)
{
    (void)state;
    rng_seed(1301);
    static dyn_model_desc d;
    static dyn_flex_desc f;
    memset(&f, 0, sizeof f);
    for (int trial = 0; trial < 40; trial++) {
        const int n = 1 + trial % 7;
        arm_random(&d, n, trial % 4 == 3 ? -1 : trial % 3, 0.3, 1);
        dyn_model *rm = dyn_model_create(&d, NULL, NULL);
        dyn_flex_model *fm = dyn_flex_create(&d, &f, NULL, NULL);
        assert_non_null(rm);
        assert_non_null(fm);
        assert_int_equal(dyn_flex_nx(fm), n);
        dyn_data *rd = dyn_data_create(rm);
        dyn_flex_data *fd = dyn_flex_data_create(fm);
        double q[8], qd[8], qdd[8], tau[8], w[6], H[64], Hf[64], a[8], b[8], dd[1];
        for (int i = 0; i < n; i++)
            q[i] = rng_uniform(-2, 2), qd[i] = rng_uniform(-1, 1), qdd[i] = rng_uniform(-1, 1),
            tau[i] = rng_uniform(-10, 10);
        for (int k = 0; k < 6; k++) w[k] = rng_uniform(-5, 5);
        dyn_mass_matrix(rm, rd, q, DYN_ARMATURE, H);
        dyn_flex_mass_matrix(fm, fd, q, DYN_ARMATURE, Hf);
        assert_rel(Hf, H, n * n, 1e-12, "mass matrix");
        const double zero[8] = {0};
        dyn_rnea(rm, rd, q, qd, zero, NULL, DYN_GRAVITY, a);
        dyn_flex_bias(fm, fd, q, qd, DYN_GRAVITY, b);
        assert_rel(b, a, n, 1e-12, "bias");
        dyn_forward_chol(rm, rd, q, qd, tau, w, DYN_ALL, a);
        assert_int_equal(dyn_flex_forward(fm, fd, q, qd, tau, w, DYN_ALL, b), 0);
        assert_rel(b, a, n, 1e-12, "forward dynamics");
        dyn_rnea(rm, rd, q, qd, qdd, w, DYN_ALL, a);
        assert_int_equal(dyn_flex_inverse(fm, fd, q, qd, qdd, w, DYN_ALL, b, dd), 0);
        assert_rel(b, a, n, 1e-12, "inverse dynamics");
        double ke, pe, kf, pf, ef;
        dyn_energy(rm, rd, q, qd, &ke, &pe);
        dyn_flex_energy(fm, fd, q, qd, DYN_ARMATURE, &kf, &pf, &ef);
        const double e1[2] = {kf, pf}, e0[2] = {ke, pe};
        assert_rel(e1, e0, 2, 1e-12, "energy");
        assert_true(ef == 0.0);
        dyn_flex_data_free(fd);
        dyn_flex_free(fm);
        dyn_data_free(rd);
        dyn_model_free(rm);
    }
}

/* Adds a uniform rod from the link frame origin to e (mass mb, polar moment per length J) to a
 * link's rigid body given by mass, COM and inertia about the COM (all in the link frame). */
static void add_rod(dyn_joint_desc *j, const double e[3], double mb, double J)
{
    const double L = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    const double u[3] = {e[0] / L, e[1] / L, e[2] / L}, cr[3] = {e[0] / 2, e[1] / 2, e[2] / 2};
    const double M = j->mass + mb;
    double c[3];
    for (int k = 0; k < 3; k++) c[k] = (j->mass * j->com[k] + mb * cr[k]) / M;
    static const int ri[6] = {0, 0, 0, 1, 1, 2}, ci[6] = {0, 1, 2, 1, 2, 2};
    double I[6];
    const double *parts_c[2] = {j->com, cr};
    const double parts_m[2] = {j->mass, mb};
    for (int k = 0; k < 6; k++) {
        const int r = ri[k], s = ci[k], eq = r == s;
        const double rod = mb * L * L / 12.0 * (eq - u[r] * u[s]) + J * L * u[r] * u[s];
        I[k] = j->inertia[k] + rod;
        for (int p = 0; p < 2; p++) { /* parallel axis to the common COM */
            double dv[3];
            for (int t = 0; t < 3; t++) dv[t] = parts_c[p][t] - c[t];
            const double dd = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
            I[k] += parts_m[p] * (dd * eq - dv[r] * dv[s]);
        }
    }
    j->mass = M;
    memcpy(j->com, c, sizeof c);
    memcpy(j->inertia, I, sizeof I);
}

/* Beams with mass but every mode off are rigid rods: on random modified-DH arms (where the next
 * joint's origin in link frame i is (a, -d sin alpha, d cos alpha) of joint i+1), the flexible
 * model with rods as beams equals the rigid model with the rods' inertia added, to 1e-12 (the
 * Gauss points integrate the rod exactly). */
static void test_rods_without_modes(void **state)
{
    (void)state;
    rng_seed(1302);
    static dyn_model_desc d, dr;
    static dyn_flex_desc f;
    for (int trial = 0; trial < 20; trial++) {
        const int n = 1 + trial % 6;
        arm_random(&d, n, DYN_DH_MODIFIED, 0.3, 1);
        dr = d;
        memset(&f, 0, sizeof f);
        f.quad_points = 2 + trial % 5;
        for (int i = 0; i < n; i++) {
            double e[3];
            if (i + 1 < n) {
                const dyn_joint_desc *c = &d.joint[i + 1];
                e[0] = c->a, e[1] = -c->d * sin(c->alpha), e[2] = c->d * cos(c->alpha);
            } else {
                memcpy(e, d.tool_xyz, sizeof e);
            }
            const double L = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
            if (L < 1e-3) continue;
            f.link[i].length = L;
            f.link[i].mass = rng_uniform(0.1, 2);
            f.link[i].polar = rng_uniform(0, 0.01);
            add_rod(&dr.joint[i], e, f.link[i].mass, f.link[i].polar);
        }
        dyn_model *rm = dyn_model_create(&dr, NULL, NULL);
        dyn_flex_model *fm = dyn_flex_create(&d, &f, NULL, NULL);
        assert_non_null(rm);
        assert_non_null(fm);
        dyn_data *rd = dyn_data_create(rm);
        dyn_flex_data *fd = dyn_flex_data_create(fm);
        double q[8], qd[8], tau[8], H[64], Hf[64], a[8], b[8];
        for (int i = 0; i < n; i++)
            q[i] = rng_uniform(-2, 2), qd[i] = rng_uniform(-1, 1), tau[i] = rng_uniform(-10, 10);
        dyn_mass_matrix(rm, rd, q, 0, H);
        dyn_flex_mass_matrix(fm, fd, q, 0, Hf);
        assert_rel(Hf, H, n * n, 1e-12, "mass matrix with rods");
        const double zero[8] = {0};
        dyn_rnea(rm, rd, q, qd, zero, NULL, DYN_GRAVITY, a);
        dyn_flex_bias(fm, fd, q, qd, DYN_GRAVITY, b);
        assert_rel(b, a, n, 1e-12, "bias with rods");
        dyn_forward_chol(rm, rd, q, qd, tau, NULL, DYN_ALL, a);
        assert_int_equal(dyn_flex_forward(fm, fd, q, qd, tau, NULL, DYN_ALL, b), 0);
        assert_rel(b, a, n, 1e-12, "forward dynamics with rods");
        dyn_flex_data_free(fd);
        dyn_flex_free(fm);
        dyn_data_free(rd);
        dyn_model_free(rm);
    }
}

/* ---------------------------------------------------------------- consistency, errors */

/* On random 2-4 joint arms (revolute, some prismatic) with bending and torsion on every link
 * and a payload on the bending tip: M is symmetric, and the equations are those of a
 * Lagrangian system: without damping and friction dE/dt (central differences along the
 * forward dynamics) equals the joint torques' power tau . qd, which fails for any bias or
 * gravity term inconsistent with M and the energy. */
static void test_power_balance(void **state)
{
    (void)state;
    rng_seed(1303);
    static dyn_model_desc d;
    static dyn_flex_desc f;
    for (int trial = 0; trial < 6; trial++) {
        const int n = 2 + trial % 3;
        arm_random(&d, n, trial % 3, trial % 2 ? 0.3 : 0.0, 0);
        memset(&f, 0, sizeof f);
        dyn_model *tm = dyn_model_create(&d, NULL, NULL);
        assert_non_null(tm);
        dyn_form fo; /* next joint's origin at q = 0 in M_i: the beam's end */
        dyn_model_form(tm, &fo);
        dyn_model_free(tm);
        for (int i = 0; i < n; i++) {
            double e[3];
            if (i + 1 < n) {
                const dyn_form_joint *c = &fo.joint[i + 1];
                e[0] = c->p0[0], e[1] = c->p0[1] - c->doff * c->sa;
                e[2] = c->p0[2] + c->doff * c->ca;
            } else {
                memcpy(e, fo.tool_p, sizeof e);
            }
            const double L = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
            if (L < 1e-3) continue;
            dyn_flex_link *l = &f.link[i];
            l->length = L;
            l->mass = rng_uniform(0.2, 2);
            l->modes_y = 1 + (trial + i) % 2;
            l->modes_z = (trial + i) % 2;
            l->modes_x = 1;
            /* stiffness from a first clamped frequency of 30-100 rad/s, so that the finite
             * differences below resolve every mode whatever the beam's length */
            const double mu = l->mass / L, L2 = L * L;
            l->polar = rng_uniform(1e-3, 1e-2);
            l->EI_y = pow(rng_uniform(30, 100) / 3.516, 2) * mu * L2 * L2;
            l->EI_z = pow(rng_uniform(30, 100) / 3.516, 2) * mu * L2 * L2;
            l->GJ = pow(rng_uniform(30, 100) / (M_PI / 2), 2) * l->polar * L2;
        }
        d.payload.mass = 0.3;
        d.payload.com[0] = 0.05;
        d.payload.inertia[0] = d.payload.inertia[3] = d.payload.inertia[5] = 1e-3;
        dyn_flex_model *m = dyn_flex_create(&d, &f, NULL, NULL);
        assert_non_null(m);
        dyn_flex_data *w = dyn_flex_data_create(m);
        const int nx = dyn_flex_nx(m);
        assert_true(nx <= MAXX);
        double x[MAXX], xd[MAXX], xdd[MAXX], tau[8], M[MAXX * MAXX];
        for (int k = 0; k < nx; k++)
            x[k] = k < n ? rng_uniform(-2, 2) : rng_uniform(-0.02, 0.02),
            xd[k] = k < n ? rng_uniform(-1, 1) : rng_uniform(-0.3, 0.3);
        for (int i = 0; i < n; i++) tau[i] = rng_uniform(-5, 5);
        dyn_flex_mass_matrix(m, w, x, 0, M);
        for (int j = 0; j < nx; j++)
            for (int k = 0; k < j; k++)
                assert_true(fabs(M[j * nx + k] - M[k * nx + j]) <=
                            1e-12 * (fabs(M[j * nx + j]) + fabs(M[k * nx + k])));
        /* dE/dt by central differences of E(x + t xd + t^2/2 xdd) at t = +-h, Richardson-
         * extrapolated over h = 2e-5, 1e-5 (the stiff short beams make the h^2 term large) */
        assert_int_equal(dyn_flex_forward(m, w, x, xd, tau, NULL, DYN_GRAVITY, xdd), 0);
        double diff[2];
        for (int r = 0; r < 2; r++) {
            const double h = r ? 1e-5 : 2e-5;
            double xa[MAXX], va[MAXX], xb[MAXX], vb[MAXX];
            for (int k = 0; k < nx; k++) {
                xa[k] = x[k] + h * xd[k] + 0.5 * h * h * xdd[k], va[k] = xd[k] + h * xdd[k];
                xb[k] = x[k] - h * xd[k] + 0.5 * h * h * xdd[k], vb[k] = xd[k] - h * xdd[k];
            }
            const double Ea = dyn_flex_energy(m, w, xa, va, 0, NULL, NULL, NULL);
            const double Eb = dyn_flex_energy(m, w, xb, vb, 0, NULL, NULL, NULL);
            diff[r] = (Ea - Eb) / (2 * h);
        }
        double ke, pg, pe, power = 0.0;
        dyn_flex_energy(m, w, x, xd, 0, &ke, &pg, &pe);
        for (int i = 0; i < n; i++) power += tau[i] * xd[i];
        const double dEdt = (4.0 * diff[1] - diff[0]) / 3.0;
        print_message("  trial %d: nx %d, dE/dt %.9g, tau.qd %.9g (kinetic %.3g J)\n", trial, nx,
                      dEdt, power, ke);
        if (!(fabs(dEdt - power) < 1e-6 * (fabs(power) + ke + fabs(pg) + pe))) {
            print_error("trial %d: dE/dt %.9g != tau.qd %.9g\n", trial, dEdt, power);
            fail();
        }
        dyn_flex_data_free(w);
        dyn_flex_free(m);
    }
}

static char last_msg[256];
static int n_errors;
static void on_issue(void *ctx, int joint, const char *field, int is_error, const char *message)
{
    (void)ctx, (void)joint, (void)field;
    if (!is_error) return;
    n_errors++;
    snprintf(last_msg, sizeof last_msg, "%s", message);
}

/* Refusals name the joint and the number: a length that is not the joint distance, too many
 * modes, bending without stiffness. */
static void test_refusals(void **state)
{
    (void)state;
    dyn_model_desc d;
    dyn_flex_desc f;
    flex_pendulum_desc(&d, &f, 0, 10.0);
    f.link[1].length = 0.8;
    n_errors = 0;
    assert_null(dyn_flex_create(&d, &f, on_issue, NULL));
    assert_int_equal(n_errors, 1);
    assert_non_null(strstr(last_msg, "joint 1"));
    assert_non_null(strstr(last_msg, "0.8"));
    flex_pendulum_desc(&d, &f, 0, 10.0);
    f.link[0].modes_y = 5;
    n_errors = 0;
    assert_null(dyn_flex_create(&d, &f, on_issue, NULL));
    assert_non_null(strstr(last_msg, "5 modes"));
    flex_pendulum_desc(&d, &f, 0, 10.0);
    f.link[0].EI_z = 0.0;
    n_errors = 0;
    assert_null(dyn_flex_create(&d, &f, on_issue, NULL));
    assert_non_null(strstr(last_msg, "EI_z"));
    flex_pendulum_desc(&d, &f, 0, 10.0);
    f.quad_points = 40;
    assert_null(dyn_flex_create(&d, &f, on_issue, NULL));
    assert_non_null(strstr(last_msg, "40 quadrature points"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case1_bending),
        cmocka_unit_test(test_case2_torsion),
        cmocka_unit_test(test_case3_converges_to_rigid),
        cmocka_unit_test(test_case3_energy),
        cmocka_unit_test(test_rigid_limit),
        cmocka_unit_test(test_rods_without_modes),
        cmocka_unit_test(test_power_balance),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
