/* test_ik.c — inverse kinematics (dyn_ik), the pose error and dyn_rot_to_quat: the PUMA 560
 * with a tool frame solves 10,000 random reachable poses from a start 0.5 rad off to 1e-6 m and
 * 1e-6 rad, and from a fixed home pose never claims a false success; a 4-DOF OpenManipulator-X
 * solves position + pitch, and reports a roll it cannot make and a target out of reach as
 * UNREACHABLE and a stretched-out solution as SINGULAR; bad input leaves q = q0. Every solution
 * is checked against dyn_fk with an error measure independent of dyn_pose_error (|R_t - R|_F).
 * dyn_ik_rates gives back the joint rates of a motion from its task rates, and
 * dyn_ik_rates_null adds only the null-space part of a motion asked for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/puma560_desc.h"
#include "tests/dynamics/test_util.h"

#define TOL 1e-6 /* the bar: m and rad */

/* The PUMA 560's joint limits of config/examples/puma560.ini [rad]. */
static const double puma_lo[6] = {-2.792527, -0.785398, -3.926991, -1.919862, -1.745329, -4.642576};
static const double puma_hi[6] = {2.792527, 3.926991, 0.785398, 2.967060, 1.745329, 4.642576};

/* The OpenManipulator-X of config/examples/open_manipulator_x.ini (URDF form; the inertial
 * numbers only need to make a valid model) and its limits [rad]. */
static const double omx_lo[4] = {-3.141592653589793, -1.5, -1.5, -1.7};
static const double omx_hi[4] = {3.141592653589793, 1.5, 1.4, 1.97};

static void omx_desc(dyn_model_desc *d)
{
    static const double xyz[4][3] = {
        {0.012, 0, 0}, {0, 0, 0.0595}, {0.024, 0, 0.128}, {0.124, 0, 0}};
    static const double axis[4][3] = {{0, 0, 1}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}};
    memset(d, 0, sizeof *d);
    d->n = 4;
    for (int i = 0; i < 4; i++) {
        dyn_joint_desc *j = &d->joint[i];
        j->type = DYN_REVOLUTE;
        j->form = DYN_URDF;
        memcpy(j->origin_xyz, xyz[i], sizeof j->origin_xyz);
        memcpy(j->axis, axis[i], sizeof j->axis);
        j->mass = 0.1;
        j->inertia[0] = j->inertia[3] = j->inertia[5] = 1e-4;
    }
    d->tool_xyz[0] = 0.126;
    d->gravity[2] = -9.81;
}

/* Rotation matrix (3x3) of a 3x4 pose. */
static void pose_R(const double T[12], double R[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[3 * i + j] = T[4 * i + j];
}

/* Position error [m] and rotation error [rad] of pose against target, independent of
 * dyn_pose_error: |dp| and |R_t - R|_F / sqrt(2) (= 2 sin(angle/2), the angle to O(angle^3)). */
static void check_errors(const double target[12], const double pose[12], double *ep, double *er)
{
    double p = 0, r = 0;
    for (int i = 0; i < 3; i++) {
        p += pow(target[4 * i + 3] - pose[4 * i + 3], 2);
        for (int j = 0; j < 3; j++) r += pow(target[4 * i + j] - pose[4 * i + j], 2);
    }
    *ep = sqrt(p);
    *er = sqrt(r / 2);
}

/* Rodrigues: R = exp([v]x). */
static void rotvec_to_R(const double v[3], double R[9])
{
    const double th = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double k[3] = {th > 0 ? v[0] / th : 1, th > 0 ? v[1] / th : 0, th > 0 ? v[2] / th : 0};
    const double s = sin(th), c1 = 1 - cos(th);
    const double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double kk = 0;
            for (int l = 0; l < 3; l++) kk += K[3 * i + l] * K[3 * l + j];
            R[3 * i + j] = (i == j) + s * K[3 * i + j] + c1 * kk;
        }
}

static void quat_to_R(const double q[4], double R[9])
{
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    const double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                         2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

static void random_rotvec(double v[3], double max_angle)
{
    double a[3], n;
    do {
        for (int i = 0; i < 3; i++) a[i] = rng_uniform(-1, 1);
        n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    } while (n > 1 || n < 1e-3);
    const double th = rng_uniform(0, max_angle);
    for (int i = 0; i < 3; i++) v[i] = a[i] / n * th;
}

/* dyn_rot_to_quat: w >= 0, unit norm, the quaternion's matrix is R; random rotations and the
 * rotations that take each of Shepperd's four branches (near 0, and near 180 deg about x, y,
 * z, where w is the smallest component). */
static void test_rot_to_quat(void **state)
{
    (void)state;
    rng_seed(11);
    static double v[40010][3];
    int nv = 0;
    for (; nv < 40000; nv++) random_rotvec(v[nv], M_PI);
    const double near = M_PI - 1e-7;
    const double special[10][3] = {
        {0, 0, 0},    {1e-9, 0, 0}, {M_PI, 0, 0},
        {0, M_PI, 0}, {0, 0, M_PI}, {near, 0, 0},
        {0, near, 0}, {0, 0, near}, {near / sqrt(3), near / sqrt(3), -near / sqrt(3)},
        {0, 2.0, 1.0}};
    for (int k = 0; k < 10; k++, nv++) memcpy(v[nv], special[k], sizeof v[nv]);
    double worst = 0;
    for (int s = 0; s < nv; s++) {
        double R[9], R2[9], qt[4];
        rotvec_to_R(v[s], R);
        dyn_rot_to_quat(R, qt);
        assert_true(qt[0] >= 0);
        assert_true(fabs(qt[0] * qt[0] + qt[1] * qt[1] + qt[2] * qt[2] + qt[3] * qt[3] - 1) <
                    1e-15);
        quat_to_R(qt, R2);
        for (int i = 0; i < 9; i++) worst = fmax(worst, fabs(R2[i] - R[i]));
    }
    printf("dyn_rot_to_quat: %d rotations, max |R(q) - R| %.2g\n", nv, worst);
    assert_true(worst < 2e-15);
    /* the branches: the largest component is w, x, y, z in turn */
    const double axes[4][3] = {{0, 0, 0}, {near, 0, 0}, {0, near, 0}, {0, 0, near}};
    for (int b = 0; b < 4; b++) {
        double R[9], qt[4];
        rotvec_to_R(axes[b], R);
        dyn_rot_to_quat(R, qt);
        for (int c = 0; c < 4; c++)
            if (c != b) assert_true(fabs(qt[b]) > fabs(qt[c]));
    }
}

/* dyn_pose_error: the rotation vector of R_t R^T (random, small, near and at pi) and the
 * position difference. */
static void test_pose_error(void **state)
{
    (void)state;
    rng_seed(12);
    double worst = 0;
    for (int s = 0; s < 20000; s++) {
        double v[3], w[3], Rv[9], Rw[9], target[12], pose[12], e[6];
        random_rotvec(w, M_PI);
        const double max = s % 4 == 0 ? 1e-6 : s % 4 == 1 ? M_PI - 1e-6 : M_PI;
        random_rotvec(v, max);
        if (s % 4 == 1) { /* angle within 1e-6 of pi */
            const double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            for (int i = 0; i < 3; i++) v[i] *= (M_PI - rng_uniform(0, 1e-6)) / n;
        }
        rotvec_to_R(w, Rw);
        rotvec_to_R(v, Rv);
        for (int i = 0; i < 3; i++) { /* pose R = Rw, target R = Rv Rw, so R_t R^T = Rv */
            for (int j = 0; j < 3; j++) {
                pose[4 * i + j] = Rw[3 * i + j];
                target[4 * i + j] =
                    Rv[3 * i] * Rw[j] + Rv[3 * i + 1] * Rw[3 + j] + Rv[3 * i + 2] * Rw[6 + j];
            }
            pose[4 * i + 3] = rng_uniform(-1, 1);
            target[4 * i + 3] = rng_uniform(-1, 1);
        }
        dyn_pose_error(target, pose, e);
        for (int i = 0; i < 3; i++)
            assert_true(fabs(e[i] - (target[4 * i + 3] - pose[4 * i + 3])) < 1e-15);
        double d = 0;
        for (int i = 0; i < 3; i++) d = fmax(d, fabs(e[3 + i] - v[i]));
        worst = fmax(worst, d);
    }
    printf("dyn_pose_error: max |log(R_t R^T) - v| %.2g over 20000 rotations\n", worst);
    assert_true(worst < 1e-8); /* near pi the axis is as good as the matrix: ~eps / (pi - angle) */
    /* exactly pi about x: angle pi, axis +-x */
    double Rx[12] = {1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0},
           I[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    double e[6];
    dyn_pose_error(Rx, I, e);
    assert_true(fabs(fabs(e[3]) - M_PI) < 1e-15 && e[4] == 0 && e[5] == 0);
    dyn_pose_error(I, I, e);
    for (int i = 0; i < 6; i++) assert_true(e[i] == 0);
}

typedef struct {
    long iters, worst_iters, count[5];
    double worst_pos, worst_rot;
} stats;

static void stats_add(stats *s, const dyn_ik_result *r)
{
    s->iters += r->iterations;
    if (r->iterations > s->worst_iters) s->worst_iters = r->iterations;
    s->count[r->status]++;
}

static void stats_print(const char *what, const stats *s, int total)
{
    printf("%s: %d solves: OK %ld, SINGULAR %ld, UNREACHABLE %ld, NO_CONVERGENCE %ld; "
           "iterations mean %.2f max %ld; worst solved error %.2g m %.2g rad\n",
           what, total, s->count[DYN_IK_OK], s->count[DYN_IK_SINGULAR],
           s->count[DYN_IK_UNREACHABLE], s->count[DYN_IK_NO_CONVERGENCE], (double)s->iters / total,
           s->worst_iters, s->worst_pos, s->worst_rot);
}

/* A solution claimed (OK or SINGULAR) must hold against dyn_fk, within the limits. */
static void check_solution(const dyn_model *m, dyn_data *d, const double target[12],
                           const double *q, const double *lo, const double *hi,
                           const dyn_ik_result *r, stats *s)
{
    const int n = dyn_model_dof(m);
    double pose[12], ep, er;
    dyn_fk(m, d, q, NULL, pose);
    check_errors(target, pose, &ep, &er);
    if (!(ep <= TOL && er <= TOL)) {
        print_error("status %d claims a solution, but FK is %.3g m, %.3g rad off\n", r->status, ep,
                    er);
        fail();
    }
    for (int i = 0; i < n; i++) assert_true(q[i] >= lo[i] && q[i] <= hi[i]);
    s->worst_pos = fmax(s->worst_pos, ep);
    s->worst_rot = fmax(s->worst_rot, er);
}

static dyn_model *puma_with_tool(void)
{
    dyn_model_desc desc;
    puma560_desc(&desc);
    desc.tool_xyz[2] = 0.05;
    desc.tool_xyz[0] = 0.01;
    desc.tool_rpy[0] = 0.1;
    desc.tool_rpy[1] = -0.2;
    desc.tool_rpy[2] = 0.3;
    return dyn_model_create(&desc, NULL, NULL);
}

static const double no_lo[6] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
static const double no_hi[6] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};

/* 10,000 random reachable poses (q in the limits -> dyn_fk), each from q_true + U(-0.5, 0.5)
 * per joint, without joint limits: every one solved to 1e-6 m and 1e-6 rad (the bar). */
static void test_puma_near_start(void **state)
{
    (void)state;
    dyn_model *m = puma_with_tool();
    dyn_data *d = dyn_data_create(m);
    dyn_ik_opts opt = {0};
    stats s = {0};
    rng_seed(21);
    const int N = 10000;
    for (int k = 0; k < N; k++) {
        double qt[6], q0[6], q[6], target[12];
        for (int i = 0; i < 6; i++) {
            qt[i] = rng_uniform(puma_lo[i], puma_hi[i]);
            q0[i] = qt[i] + rng_uniform(-0.5, 0.5);
        }
        dyn_fk(m, d, qt, NULL, target);
        dyn_ik_result r;
        int st = dyn_ik(m, d, target, q0, &opt, q, &r);
        assert_int_equal(st, r.status);
        stats_add(&s, &r);
        if (st != DYN_IK_OK && st != DYN_IK_SINGULAR) {
            print_error("sample %d: status %d after %d iterations (%.3g m, %.3g rad)\n", k, st,
                        r.iterations, r.err_pos, r.err_rot);
            fail();
        }
        check_solution(m, d, target, q, no_lo, no_hi, &r, &s);
    }
    stats_print("PUMA 560, start 0.5 rad off", &s, N);
    dyn_data_free(d);
    dyn_model_free(m);
}

/* 10,000 random poses (5,000 without joint limits, 5,000 with), all from one home pose: most
 * are reached; none is a false success, none leaves the limits. */
static void test_puma_from_home(void **state)
{
    (void)state;
    dyn_model *m = puma_with_tool();
    dyn_data *d = dyn_data_create(m);
    const double home[6] = {0, 0.6, -2.4, 0.3, 0.8, 0};
    rng_seed(22);
    const int N = 5000;
    for (int limits = 0; limits < 2; limits++) {
        dyn_ik_opts opt = {0};
        if (limits) opt.lower = puma_lo, opt.upper = puma_hi;
        stats s = {0};
        for (int k = 0; k < N; k++) {
            double qt[6], q[6], target[12];
            for (int i = 0; i < 6; i++) qt[i] = rng_uniform(puma_lo[i], puma_hi[i]);
            dyn_fk(m, d, qt, NULL, target);
            dyn_ik_result r;
            int st = dyn_ik(m, d, target, home, &opt, q, &r);
            stats_add(&s, &r);
            if (st == DYN_IK_OK || st == DYN_IK_SINGULAR) {
                check_solution(m, d, target, q, limits ? puma_lo : no_lo, limits ? puma_hi : no_hi,
                               &r, &s);
            } else {
                assert_true(st == DYN_IK_UNREACHABLE || st == DYN_IK_NO_CONVERGENCE);
                assert_true(r.err_pos > 1e-9 || r.err_rot > 1e-9);
            }
        }
        stats_print(limits ? "PUMA 560, from home, joint limits" : "PUMA 560, from home, no limits",
                    &s, N);
        assert_true(s.count[DYN_IK_OK] + s.count[DYN_IK_SINGULAR] >= (limits ? 0.6 : 0.9) * N);
    }
    dyn_data_free(d);
    dyn_model_free(m);
}

/* Position only (and the same through DYN_IK_WEIGHTED): the orientation is left free. */
static void test_puma_position(void **state)
{
    (void)state;
    dyn_model *m = puma_with_tool();
    dyn_data *d = dyn_data_create(m);
    dyn_ik_opts pos = {.task = DYN_IK_POSITION, .lower = puma_lo, .upper = puma_hi};
    dyn_ik_opts wpos = {
        .task = DYN_IK_WEIGHTED, .weight = {1, 1, 1}, .lower = puma_lo, .upper = puma_hi};
    rng_seed(23);
    for (int k = 0; k < 1000; k++) {
        double qt[6], q0[6], q[6], target[12], pose[12], e[6];
        for (int i = 0; i < 6; i++) {
            qt[i] = rng_uniform(puma_lo[i], puma_hi[i]);
            q0[i] = qt[i] + rng_uniform(-0.5, 0.5);
        }
        dyn_fk(m, d, qt, NULL, target);
        const dyn_ik_opts *o = k % 2 ? &pos : &wpos;
        dyn_ik_result r;
        int st = dyn_ik(m, d, target, q0, o, q, &r);
        assert_true(st == DYN_IK_OK || st == DYN_IK_SINGULAR);
        assert_true(r.err_rot == 0);
        dyn_fk(m, d, q, NULL, pose);
        dyn_pose_error(target, pose, e);
        assert_true(sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]) <= TOL);
    }
    dyn_data_free(d);
    dyn_model_free(m);
}

/* The OMX's pitch of a pose: atan2(-u_x, u_z), u = R^T e_z (dynamics.h). */
static double pitch(const double T[12])
{
    return atan2(-T[8], T[10]);
}

/* The OMX: position + pitch targets from random q solve to 1e-6 (and the whole orientation
 * then agrees too: the arm has no other); a roll it cannot make (full task) and a target 1 m
 * away are UNREACHABLE; a target reached only stretched out is SINGULAR. */
static void test_omx(void **state)
{
    (void)state;
    dyn_model_desc desc;
    omx_desc(&desc);
    dyn_model *m = dyn_model_create(&desc, NULL, NULL);
    assert_non_null(m);
    dyn_data *d = dyn_data_create(m);
    static const double omx_no[2][4] = {{-INFINITY, -INFINITY, -INFINITY, -INFINITY},
                                        {INFINITY, INFINITY, INFINITY, INFINITY}};
    rng_seed(31);
    const int N = 5000;
    for (int limits = 0; limits < 2; limits++) {
        dyn_ik_opts o = {.task = DYN_IK_POSITION_PITCH};
        if (limits) o.lower = omx_lo, o.upper = omx_hi;
        stats s = {0};
        for (int k = 0; k < N; k++) {
            double qt[4], q0[4], q[4], target[12], pose[12];
            for (int i = 0; i < 4; i++) {
                qt[i] = rng_uniform(omx_lo[i], omx_hi[i]);
                q0[i] = qt[i] + rng_uniform(-0.3, 0.3);
            }
            dyn_fk(m, d, qt, NULL, target);
            dyn_ik_result r;
            int st = dyn_ik(m, d, target, q0, &o, q, &r);
            stats_add(&s, &r);
            if (st != DYN_IK_OK && st != DYN_IK_SINGULAR) {
                if (!limits) { /* without limits every one is solved */
                    print_error("OMX sample %d: status %d (%.3g m, %.3g rad)\n", k, st, r.err_pos,
                                r.err_rot);
                    fail();
                }
                assert_true(st == DYN_IK_UNREACHABLE || st == DYN_IK_NO_CONVERGENCE);
                continue;
            }
            dyn_fk(m, d, q, NULL, pose);
            double ep, er;
            check_errors(target, pose, &ep, &er);
            assert_true(ep <= TOL);
            assert_true(fabs(remainder(pitch(target) - pitch(pose), 2 * M_PI)) <= TOL);
            for (int i = 0; i < 4; i++)
                assert_true(q[i] >= (limits ? omx_lo : omx_no[0])[i] &&
                            q[i] <= (limits ? omx_hi : omx_no[1])[i]);
            s.worst_pos = fmax(s.worst_pos, ep);
            s.worst_rot = fmax(s.worst_rot, fabs(remainder(pitch(target) - pitch(pose), 2 * M_PI)));
        }
        stats_print(limits ? "OMX, position + pitch, 0.3 rad off, joint limits"
                           : "OMX, position + pitch, 0.3 rad off, no limits",
                    &s, N);
        assert_true(s.count[DYN_IK_OK] + s.count[DYN_IK_SINGULAR] >= (limits ? 0.9 : 1.0) * N);
    }
    dyn_ik_opts pp = {.task = DYN_IK_POSITION_PITCH, .lower = omx_lo, .upper = omx_hi};
    dyn_ik_opts full = {.task = DYN_IK_FULL, .lower = omx_lo, .upper = omx_hi};

    /* a roll about the tool x axis: the full task ends at its least-squares pose */
    const double qa[4] = {0.3, 0.2, 0.4, -0.5};
    double target[12], q[4], Rr[9], R[9];
    dyn_fk(m, d, qa, NULL, target);
    pose_R(target, R);
    rotvec_to_R((const double[3]){0.3, 0, 0}, Rr);
    for (int i = 0; i < 3; i++) /* R_t = R Rx(0.3) */
        for (int j = 0; j < 3; j++)
            target[4 * i + j] =
                R[3 * i] * Rr[j] + R[3 * i + 1] * Rr[3 + j] + R[3 * i + 2] * Rr[6 + j];
    dyn_ik_result r;
    assert_int_equal(dyn_ik(m, d, target, qa, &full, q, &r), DYN_IK_UNREACHABLE);
    printf("OMX, roll 0.3 rad (full task): UNREACHABLE after %d iterations, residual %.3g m "
           "%.3g rad\n",
           r.iterations, r.err_pos, r.err_rot);
    assert_true(r.err_rot > 0.1);

    /* 1 m away, in both tasks */
    double far[12] = {cos(0.3), 0, sin(0.3), 1.0, 0, 1, 0, 0.0, -sin(0.3), 0, cos(0.3), 0.2};
    assert_int_equal(dyn_ik(m, d, far, qa, &pp, q, &r), DYN_IK_UNREACHABLE);
    printf("OMX, 1 m away: UNREACHABLE after %d iterations, residual %.3g m\n", r.iterations,
           r.err_pos);
    assert_true(r.err_pos > 0.5);
    assert_int_equal(dyn_ik(m, d, far, qa, &full, q, &r), DYN_IK_UNREACHABLE);

    /* stretched out: joint 3 turns link 3 in line with joint 2 -> joint 3 (0.024, 0, 0.128),
     * joint 4 straight: the tool at the largest distance from joint 2, where the Jacobian loses
     * the radial direction. Reached only that way: SINGULAR (a solution, flagged); a pose a bit
     * inside: OK. */
    const double qs[4] = {0.4, 0.2, -atan2(0.128, 0.024), 0};
    dyn_fk(m, d, qs, NULL, target);
    const double qstart[4] = {0.5, 0.0, -1.0, 0.3};
    int st = dyn_ik(m, d, target, qstart, &pp, q, &r);
    printf("OMX, stretched out: status %d after %d iterations, %.3g m, sigma_min %.3g\n", st,
           r.iterations, r.err_pos, r.sigma_min);
    assert_int_equal(st, DYN_IK_SINGULAR);
    assert_true(r.err_pos <= 1e-9 && r.sigma_min < 1e-4);
    const double qin[4] = {0.4, 0.2, -atan2(0.128, 0.024) + 0.3, -0.2};
    dyn_fk(m, d, qin, NULL, target);
    assert_int_equal(dyn_ik(m, d, target, qstart, &pp, q, &r), DYN_IK_OK);
    assert_true(r.sigma_min > 1e-3);
    dyn_data_free(d);
    dyn_model_free(m);
}

/* NaN / inf in the target or q0, a target R that is no rotation, bad options: BAD_INPUT without
 * iterating, q = q0. */
static void test_bad_input(void **state)
{
    (void)state;
    dyn_model *m = puma_with_tool();
    dyn_data *d = dyn_data_create(m);
    const double qg[6] = {0.1, 0.5, -2.0, 0.2, 0.7, 0.1};
    double good[12], q[6];
    dyn_fk(m, d, qg, NULL, good);
    const double lo_bad[6] = {0, 0, 0, 0, 0, 1}, hi_bad[6] = {0, 0, 0, 0, 0, 0};
    for (int c = 0; c < 10; c++) {
        double target[12], q0[6];
        memcpy(target, good, sizeof target);
        memcpy(q0, qg, sizeof q0);
        dyn_ik_opts opt = {0};
        switch (c) {
        case 0:
            target[3] = NAN;
            break;
        case 1:
            target[5] = INFINITY;
            break;
        case 2:
            q0[2] = NAN;
            break;
        case 3:
            q0[5] = -INFINITY;
            break;
        case 4:
            target[0] *= 1.01;
            break; /* R not orthonormal */
        case 5:
            for (int i = 0; i < 3; i++) target[4 * i] = -target[4 * i];
            break; /* det -1 */
        case 6:
            opt.tol_pos = -1;
            break;
        case 7:
            opt.lower = lo_bad, opt.upper = hi_bad;
            break;
        case 8:
            opt.task = DYN_IK_WEIGHTED;
            break; /* all weights 0 */
        default:
            opt.max_step = NAN;
            break;
        }
        memset(q, 0x55, sizeof q);
        dyn_ik_result r = {.iterations = -1};
        assert_int_equal(dyn_ik(m, d, target, q0, &opt, q, &r), DYN_IK_BAD_INPUT);
        assert_int_equal(r.status, DYN_IK_BAD_INPUT);
        assert_int_equal(r.iterations, 0);
        assert_memory_equal(q, q0, sizeof q); /* bit for bit, NaN included */
    }
    /* q may be q0; res may be NULL */
    double qq[6];
    memcpy(qq, qg, sizeof qq);
    qq[0] += 0.1;
    assert_int_equal(dyn_ik(m, d, good, qq, NULL, qq, NULL), DYN_IK_OK);
    dyn_data_free(d);
    dyn_model_free(m);
}

/* ------------------------------------------------------------------------- dyn_ik_rates */

/* The task rates of the motion q(t) = q + qd t + qdd t^2 / 2 at t, measured without dyn_ik:
 * position rows the base-frame velocity J_v qdot; rotation rows R^T J_w qdot; the pitch row
 * the central difference of pitch(t) (h = 1e-5 s). */
static void task_rates_at(const dyn_model *m, dyn_data *d, dyn_ik_task task, const double *q,
                          const double *qd, const double *qdd, double t, double *x)
{
    const int n = dyn_model_dof(m);
    double qt[6], vt[6], J[36], T[12];
    for (int i = 0; i < n; i++) {
        qt[i] = q[i] + qd[i] * t + 0.5 * qdd[i] * t * t;
        vt[i] = qd[i] + qdd[i] * t;
    }
    dyn_jacobian(m, d, qt, J);
    dyn_fk(m, d, qt, NULL, T);
    double v[6] = {0};
    for (int r = 0; r < 6; r++)
        for (int i = 0; i < n; i++) v[r] += J[r * n + i] * vt[i];
    for (int k = 0; k < 3; k++) x[k] = v[k];
    if (task == DYN_IK_FULL) {
        for (int k = 0; k < 3; k++) /* R^T w: column k of R dotted with w */
            x[3 + k] = T[k] * v[3] + T[4 + k] * v[4] + T[8 + k] * v[5];
    } else if (task == DYN_IK_POSITION_PITCH) {
        const double h = 1e-5;
        double Tp[12], Tm[12], qp[6], qm[6];
        for (int i = 0; i < n; i++) {
            qp[i] = q[i] + qd[i] * (t + h) + 0.5 * qdd[i] * (t + h) * (t + h);
            qm[i] = q[i] + qd[i] * (t - h) + 0.5 * qdd[i] * (t - h) * (t - h);
        }
        dyn_fk(m, d, qp, NULL, Tp);
        dyn_fk(m, d, qm, NULL, Tm);
        x[3] = remainder(pitch(Tp) - pitch(Tm), 2 * M_PI) / (2 * h);
    }
}

/* Task rates and their rates for (q, qd, qdd): the second by the central difference of the
 * first along the motion (h = 1e-4 s). */
static int task_motion(const dyn_model *m, dyn_data *d, dyn_ik_task task, const double *q,
                       const double *qd, const double *qdd, double *xd, double *xdd)
{
    const double h = 1e-4;
    const int rows = task == DYN_IK_FULL ? 6 : task == DYN_IK_POSITION_PITCH ? 4 : 3;
    double xp[6], xm[6];
    task_rates_at(m, d, task, q, qd, qdd, 0, xd);
    task_rates_at(m, d, task, q, qd, qdd, h, xp);
    task_rates_at(m, d, task, q, qd, qdd, -h, xm);
    for (int r = 0; r < rows; r++) xdd[r] = (xp[r] - xm[r]) / (2 * h);
    return rows;
}

/* dyn_ik_rates inverts the motion: for random (q, qd, qdd) of the PUMA (full task, 6 rows) and
 * of the OMX (position + pitch, 4 rows) the task rates measured along the motion give back qd
 * and qdd (relative 1e-6 and 1e-4: the reference's own differences); for the PUMA's position
 * task (3 rows, 6 joints) the rates found reproduce the task rates and have at most the norm
 * of the motion's (the minimum-norm solution); at the wrist singularity (q5 = 0) and for
 * non-finite rates it refuses. */
static void test_rates(void **state)
{
    (void)state;
    dyn_model *pm = puma_with_tool();
    dyn_model_desc od;
    omx_desc(&od);
    dyn_model *om = dyn_model_create(&od, NULL, NULL);
    assert_non_null(pm);
    assert_non_null(om);
    dyn_data *pd = dyn_data_create(pm), *odd = dyn_data_create(om);
    rng_seed(77);
    int solved[3] = {0};
    for (int k = 0; k < 600; k++) {
        const int which = k % 3; /* 0 PUMA full, 1 OMX pitch, 2 PUMA position */
        const dyn_model *m = which == 1 ? om : pm;
        dyn_data *d = which == 1 ? odd : pd;
        const dyn_ik_task task = which == 0   ? DYN_IK_FULL
                                 : which == 1 ? DYN_IK_POSITION_PITCH
                                              : DYN_IK_POSITION;
        const int n = which == 1 ? 4 : 6;
        const double *lo = which == 1 ? omx_lo : puma_lo, *hi = which == 1 ? omx_hi : puma_hi;
        double q[6], qd[6], qdd[6], xd[6], xdd[6], rqd[6], rqdd[6];
        for (int i = 0; i < n; i++) {
            q[i] = rng_uniform(0.8 * lo[i], 0.8 * hi[i]);
            qd[i] = rng_uniform(-1, 1);
            qdd[i] = rng_uniform(-3, 3);
        }
        const int rows = task_motion(m, d, task, q, qd, qdd, xd, xdd);
        dyn_ik_opts o = {.task = task};
        const int got = dyn_ik_rates(m, d, q, &o, xd, xdd, rqd, rqdd);
        if (got < 0) continue; /* near a singularity: below sing_tol */
        assert_int_equal(got, rows);
        solved[which]++;
        if (which < 2) {
            assert_rel(rqd, qd, n, 1e-6, "qd");
            assert_rel(rqdd, qdd, n, 1e-4, "qdd");
            continue;
        }
        double yd[6], ydd[6], n2 = 0, r2 = 0;
        task_motion(m, d, task, q, rqd, rqdd, yd, ydd);
        assert_rel(yd, xd, 3, 1e-9, "position task: velocity");
        assert_rel(ydd, xdd, 3, 1e-4, "position task: acceleration");
        for (int i = 0; i < n; i++) n2 += qd[i] * qd[i], r2 += rqd[i] * rqd[i];
        assert_true(r2 <= n2 * (1 + 1e-9));
    }
    print_message("dyn_ik_rates: solved %d / 200 (PUMA full), %d / 200 (OMX pitch), %d / 200 "
                  "(PUMA position)\n",
                  solved[0], solved[1], solved[2]);
    for (int w = 0; w < 3; w++) assert_true(solved[w] >= 180);
    /* the PUMA's wrist singularity: q5 = 0 */
    double q[6] = {0.3, 0.5, -1.0, 0.2, 0.0, 0.1}, x[6] = {0.1, 0, 0, 0, 0, 0}, qd[6], qdd[6];
    dyn_ik_opts full = {.task = DYN_IK_FULL};
    assert_int_equal(dyn_ik_rates(pm, pd, q, &full, x, x, qd, qdd), -1);
    q[4] = 0.5;
    assert_int_equal(dyn_ik_rates(pm, pd, q, &full, x, NULL, qd, NULL), 6);
    x[2] = NAN;
    assert_int_equal(dyn_ik_rates(pm, pd, q, &full, x, NULL, qd, NULL), -1);
    dyn_data_free(pd);
    dyn_data_free(odd);
    dyn_model_free(pm);
    dyn_model_free(om);
}

/* dyn_ik_rates_null on the PUMA's position task (3 rows, 6 joints: a 3-dimensional null
 * space), random q, task rates, v0 and a0: the rates found still give the task's velocity and
 * acceleration (1e-9, 1e-4); their change from dyn_ik_rates' is v0's null-space part: 0 for a
 * v0 in the row space (the least-norm qd itself), itself again when given as v0 (a projection);
 * a non-finite v0 is refused. */
static void test_rates_null(void **state)
{
    (void)state;
    dyn_model *m = puma_with_tool();
    assert_non_null(m);
    dyn_data *d = dyn_data_create(m);
    const dyn_ik_opts o = {.task = DYN_IK_POSITION};
    rng_seed(78);
    int solved = 0;
    for (int k = 0; k < 200; k++) {
        double q[6], qd[6], qdd[6], xd[6], xdd[6], v0[6], a0[6];
        for (int i = 0; i < 6; i++) {
            q[i] = rng_uniform(0.8 * puma_lo[i], 0.8 * puma_hi[i]);
            qd[i] = rng_uniform(-1, 1);
            qdd[i] = rng_uniform(-3, 3);
            v0[i] = rng_uniform(-1, 1);
            a0[i] = rng_uniform(-3, 3);
        }
        task_motion(m, d, DYN_IK_POSITION, q, qd, qdd, xd, xdd);
        double mqd[6], mqdd[6], nqd[6], nqdd[6], yd[6], ydd[6], u[6], again[6];
        if (dyn_ik_rates(m, d, q, &o, xd, xdd, mqd, mqdd) < 0) continue;
        assert_int_equal(dyn_ik_rates_null(m, d, q, &o, xd, xdd, v0, a0, nqd, nqdd), 3);
        solved++;
        task_motion(m, d, DYN_IK_POSITION, q, nqd, nqdd, yd, ydd);
        assert_rel(yd, xd, 3, 1e-9, "velocity");
        assert_rel(ydd, xdd, 3, 1e-4, "acceleration");
        double size = 0;
        for (int i = 0; i < 6; i++) u[i] = nqd[i] - mqd[i], size = fmax(size, fabs(u[i]));
        assert_true(size > 1e-3); /* a random v0 has a null-space part */
        assert_int_equal(dyn_ik_rates_null(m, d, q, &o, xd, NULL, mqd, NULL, again, NULL), 3);
        assert_rel(again, mqd, 6, 1e-9, "a row-space v0");
        assert_int_equal(dyn_ik_rates_null(m, d, q, &o, xd, NULL, u, NULL, again, NULL), 3);
        assert_rel(again, nqd, 6, 1e-9, "the null-space part again");
    }
    print_message("dyn_ik_rates_null: solved %d / 200 (PUMA position)\n", solved);
    assert_true(solved >= 180);
    double q[6] = {0.3, 0.5, -1.0, 0.2, 0.5, 0.1}, x[6] = {0.1, 0, 0}, v0[6] = {0, NAN}, qd[6];
    assert_int_equal(dyn_ik_rates_null(m, d, q, &o, x, NULL, v0, NULL, qd, NULL), -1);
    dyn_data_free(d);
    dyn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rot_to_quat),     cmocka_unit_test(test_pose_error),
        cmocka_unit_test(test_puma_near_start), cmocka_unit_test(test_puma_from_home),
        cmocka_unit_test(test_puma_position),   cmocka_unit_test(test_omx),
        cmocka_unit_test(test_bad_input),       cmocka_unit_test(test_rates),
        cmocka_unit_test(test_rates_null)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
