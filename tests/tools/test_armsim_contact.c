/*
 * test_armsim_contact.c — armsim's external forces (tools/armsim/contact.h) judged on its truth
 * file, with no driver talking to it (motor torque 0 throughout):
 *  - --push on a one-joint pendulum without gravity: q'' = TORQUE / (m l^2) on exactly the steps
 *    that start in [T, T + DURATION), ext1 = TORQUE there and 0 elsewhere, q'' = 0 elsewhere;
 *  - two overlapping --push on seed 003's planar arm without gravity: ext per joint is their sum
 *    on the right joint, and every step's q'' matches M(q)^-1 (ext - V(q, qd)) of the seed's
 *    closed form (003_57c57ddcb031fcc5.txt), not the solver armsim uses;
 *  - --wall under the falling pendulum: no force while the tool is outside, the tool comes to
 *    rest in the wall with depth m g / k (force balance), and the logged wall_force and ext1
 *    are k x depth and J^T F of the truth's own q (tool y = l sin q);
 *  - usage errors of --push and --wall: exit status 2 and a message naming the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/tools/sim_harness.h"

#define H      1e-4 /* armsim's step at --rate 10000 [s] */
#define L_PEND 0.5  /* pendulum1.ini: link length [m] */
#define M_PEND 1.0  /* pendulum1.ini: point mass [kg] */
#define G_PEND 9.81 /* pendulum1.ini: gravity [m/s^2] */
#define RUN_S  1.0  /* wall time each simulator runs [s] */
#define WALL_Y -0.05
#define WALL_K 5000.0

/* The pendulum config (tests/tools/data/pendulum1.ini). */
static const char *pendulum_ini(void)
{
    const char *ini = getenv("ARMSIM_PENDULUM1_INI");
    assert_non_null(ini);
    return ini;
}

/* Runs armsim on ini with extra options for RUN_S seconds and loads its truth (n joints). */
static void run_sim(const char *ini, const char *const *extra, int n, truth_table *t)
{
    static sim_proc sim; /* static: sim_teardown reaches it after a failed assertion */
    assert_int_equal(sim_start(&sim, ini, extra), 0);
    sim_sleep(RUN_S);
    assert_int_equal(sim_stop(&sim), 0);
    assert_int_equal(truth_load(sim.truth, n, t), 0);
    sim_cleanup(&sim);
    assert_true(t->has_contact);
    assert_true(t->rows > 1000);
}

/* True when the step that ended at truth time t_end started in [from, from + len). */
static bool step_in(double t_end, double from, double len)
{
    double s = t_end - H;
    return s >= from - H / 2 && s < from + len - H / 2;
}

static void test_push_pendulum(void **state)
{
    (void)state;
    const double T = 0.2, TORQUE = 0.5, D = 0.3, I = M_PEND * L_PEND * L_PEND;
    const double a = TORQUE / I; /* 2 rad/s^2 */
    const char *extra[] = {"--rate", "10000", "--no-gravity", "--push", "0.2,1,0.5,0.3", NULL};
    truth_table t;
    run_sim(pendulum_ini(), extra, 1, &t);
    size_t n_in = 0, n_before = 0, n_after = 0;
    double max_err = 0;
    for (size_t i = 1; i < t.rows; i++) {
        const double *r = truth_row(&t, i), *p = truth_row(&t, i - 1);
        bool in = step_in(r[TRUTH_T], T, D);
        double ext = r[TRUTH_EXT(1)], dqd = r[TRUTH_QD(1)] - p[TRUTH_QD(1)];
        double dq = r[TRUTH_Q(1)] - p[TRUTH_Q(1)];
        if (ext != (in ? TORQUE : 0.0))
            fail_msg("t = %.4f s: ext1 = %.10g, expected %g", r[TRUTH_T], ext, in ? TORQUE : 0.0);
        assert_true(r[TRUTH_TAU(1)] == 0.0 && r[TRUTH_WALL_FORCE(1)] == 0.0);
        /* RK4 is exact for a constant acceleration: qd += a h, q += h qd + a h^2 / 2 */
        double acc = in ? a : 0.0;
        max_err = fmax(max_err, fabs(dqd - acc * H));
        max_err = fmax(max_err, fabs(dq - (H * p[TRUTH_QD(1)] + acc * H * H / 2)));
        if (in)
            n_in++;
        else if (r[TRUTH_T] - H < T)
            n_before++;
        else
            n_after++;
    }
    const double *last = truth_row(&t, t.rows - 1);
    print_message("push: %zu steps pushed, %zu before, %zu after; max |step error| %.3g; end "
                  "qd %.6f rad/s = a x %.4f s\n",
                  n_in, n_before, n_after, max_err, last[TRUTH_QD(1)], last[TRUTH_QD(1)] / a);
    assert_true(n_before > 100 && n_in > 100 && n_after > 100);
    assert_true(n_in <= (size_t)(D / H) + 1);
    assert_true(max_err < 1e-9);
    /* the velocity gained is a x the pushed steps' time, whatever the host skipped */
    assert_true(fabs(last[TRUTH_QD(1)] - a * H * (double)n_in) < 1e-8);
    truth_free(&t);
}

/* M(q) of seed 003's arm (point masses m1, m2 at the ends of links l1, l2) and V(q, qd). */
static void seed003_qdd(const double *q, const double *qd, const double *tau, double *qdd)
{
    const double m1 = 2.0, m2 = 1.5, l1 = 0.5, l2 = 0.4; /* config/examples/planar2.ini */
    double c2 = cos(q[1]), s2 = sin(q[1]);
    double M11 = m2 * l2 * l2 + 2 * m2 * l1 * l2 * c2 + (m1 + m2) * l1 * l1;
    double M12 = m2 * l2 * l2 + m2 * l1 * l2 * c2, M22 = m2 * l2 * l2;
    double V1 = -m2 * l1 * l2 * s2 * qd[1] * qd[1] - 2 * m2 * l1 * l2 * s2 * qd[0] * qd[1];
    double V2 = m2 * l1 * l2 * s2 * qd[0] * qd[0];
    double r1 = tau[0] - V1, r2 = tau[1] - V2, det = M11 * M22 - M12 * M12;
    qdd[0] = (M22 * r1 - M12 * r2) / det;
    qdd[1] = (M11 * r2 - M12 * r1) / det;
}

static void test_push_planar2_sum(void **state)
{
    (void)state;
    const char *ini = getenv("ARMSIM_PLANAR2_INI");
    assert_non_null(ini);
    /* joint 2 from 0.1 s for 0.2 s, joint 1 from 0.2 s for 0.2 s: both in [0.2, 0.3) */
    const char *extra[] = {"--rate", "10000",         "--no-gravity", "--q0",         "0.2,0.3",
                           "--push", "0.1,2,1.5,0.2", "--push",       "0.2,1,-3,0.2", NULL};
    truth_table t;
    run_sim(ini, extra, 2, &t);
    double max_rel = 0;
    size_t both = 0, compared = 0;
    for (size_t i = 1; i < t.rows; i++) {
        const double *r = truth_row(&t, i), *p = truth_row(&t, i - 1);
        double want[2] = {step_in(r[TRUTH_T], 0.2, 0.2) ? -3.0 : 0.0,
                          step_in(r[TRUTH_T], 0.1, 0.2) ? 1.5 : 0.0};
        const double *ext = r + TRUTH_EXT(2);
        if (ext[0] != want[0] || ext[1] != want[1])
            fail_msg("t = %.4f s: ext = %.10g %.10g, expected %g %g", r[TRUTH_T], ext[0], ext[1],
                     want[0], want[1]);
        both += want[0] != 0 && want[1] != 0;
        if (fabs(r[TRUTH_Q(2)]) > 2.7 || fabs(r[TRUTH_Q(2) + 1]) > 2.7) break; /* end stops */
        /* the step's mean acceleration against the closed form at the step's midpoint */
        double q[2], qd[2], qdd[2];
        for (int j = 0; j < 2; j++) {
            q[j] = (r[TRUTH_Q(2) + j] + p[TRUTH_Q(2) + j]) / 2;
            qd[j] = (r[TRUTH_QD(2) + j] + p[TRUTH_QD(2) + j]) / 2;
        }
        seed003_qdd(q, qd, ext, qdd);
        for (int j = 0; j < 2; j++) {
            double got = (r[TRUTH_QD(2) + j] - p[TRUTH_QD(2) + j]) / H;
            max_rel = fmax(max_rel, fabs(got - qdd[j]) / (fabs(qdd[j]) + 0.1));
        }
        compared++;
    }
    print_message("two pushes: %zu steps with both, %zu steps compared, max relative qdd error "
                  "%.3g\n",
                  both, compared, max_rel);
    assert_true(both > 100);
    assert_true(compared > 5000);
    assert_true(max_rel < 1e-3);
    truth_free(&t);
}

static void test_wall_pendulum(void **state)
{
    (void)state;
    const char *extra[] = {"--rate", "10000", "--wall", "-y,-0.05,5000", NULL};
    truth_table t;
    run_sim(pendulum_ini(), extra, 1, &t);
    double max_force = 0, y_min = 1;
    size_t outside = 0;
    for (size_t i = 1; i < t.rows; i++) {
        const double *r = truth_row(&t, i), *p = truth_row(&t, i - 1);
        double y = L_PEND * sin(r[TRUTH_Q(1)]), y_prev = L_PEND * sin(p[TRUTH_Q(1)]);
        double f = r[TRUTH_WALL_FORCE(1)];
        assert_true(f >= 0.0);
        if (y > WALL_Y + 1e-4 && y_prev > WALL_Y + 1e-4) { /* clear of the wall all step */
            if (f != 0.0 || r[TRUTH_EXT(1)] != 0.0)
                fail_msg("t = %.4f s: tool y = %.5f m outside the wall, yet wall_force %g, "
                         "ext1 %g",
                         r[TRUTH_T], y, f, r[TRUTH_EXT(1)]);
            outside++;
        }
        max_force = fmax(max_force, f);
        y_min = fmin(y_min, y);
    }
    /* at rest: the last 0.2 s of truth */
    const double *last = truth_row(&t, t.rows - 1);
    assert_true(last[TRUTH_T] > 0.6);
    double want_depth = M_PEND * G_PEND / WALL_K, max_qd = 0, max_ferr = 0, max_derr = 0;
    double max_exterr = 0;
    size_t rest = 0;
    for (size_t i = t.rows - 1; i > 0 && truth_row(&t, i)[TRUTH_T] > last[TRUTH_T] - 0.2; i--) {
        const double *r = truth_row(&t, i);
        double q = r[TRUTH_Q(1)], depth = WALL_Y - L_PEND * sin(q), f = r[TRUTH_WALL_FORCE(1)];
        max_qd = fmax(max_qd, fabs(r[TRUTH_QD(1)]));
        max_ferr = fmax(max_ferr, fabs(f - WALL_K * depth) / (WALL_K * depth));
        max_derr = fmax(max_derr, fabs(depth - want_depth) / want_depth);
        /* F = +f y0 at the tool; J_y = l cos q: ext1 = f l cos q */
        max_exterr = fmax(max_exterr, fabs(r[TRUTH_EXT(1)] - f * L_PEND * cos(q)) / f);
        rest++;
    }
    print_message("wall: %zu rows clear of the wall, deepest tool y %.5f m, peak force %.2f N; at "
                  "rest (%zu rows): depth %.6f m (m g / k = %.6f), max |qd| %.2g rad/s, "
                  "force vs k depth %.2g, depth vs m g / k %.2g, ext1 vs J^T F %.2g (relative)\n",
                  outside, y_min, max_force, rest, WALL_Y - L_PEND * sin(last[TRUTH_Q(1)]),
                  want_depth, max_qd, max_ferr, max_derr, max_exterr);
    assert_true(outside > 500);               /* it fell freely first */
    assert_true(max_force > M_PEND * G_PEND); /* and hit the wall */
    assert_true(rest > 100);
    assert_true(max_qd < 1e-3);
    assert_true(max_ferr < 2e-3);
    assert_true(max_derr < 2e-3);
    assert_true(max_exterr < 1e-6);
    truth_free(&t);
}

/* Runs armsim with the pendulum config and args (no truth, a link that is never made); returns
 * its exit status with its stderr in out. */
static int run_usage(const char *const *args, char *out, size_t len)
{
    const char *argv[32];
    int a = 0;
    argv[a++] = sim_armsim_path();
    argv[a++] = "-c";
    argv[a++] = pendulum_ini();
    argv[a++] = "--link";
    argv[a++] = "/nonexistent-armsim-test/tty";
    for (int i = 0; args[i] && a < 31; i++) argv[a++] = args[i];
    argv[a] = NULL;
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(pfd[1], STDERR_FILENO);
        close(pfd[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < len && (r = read(pfd[0], out + got, len - 1 - got)) > 0) got += (size_t)r;
    out[got] = '\0';
    close(pfd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_option_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args[20];
        const char *message; /* expected in stderr */
    } cases[] = {
        {{"--push", "nan,1,1,1"}, "--push: T 'nan' is not a finite number"},
        {{"--push", "-1,1,1,1"}, "--push: T -1 is outside"},
        {{"--push", "0,1,inf,1"}, "--push: TORQUE 'inf' is not a finite number"},
        {{"--push", "0,1,-inf,1"}, "--push: TORQUE '-inf' is not a finite number"},
        {{"--push", "0,1,2e6,1"}, "--push: TORQUE 2e+06 is outside"},
        {{"--push", "0,1,1,-0.5"}, "--push: DURATION -0.5 is outside"},
        {{"--push", "0,1,1,0"}, "--push: DURATION 0 must be more than 0 s"},
        {{"--push", "0,1,1,nan"}, "--push: DURATION 'nan' is not a finite number"},
        {{"--push", "0,0,1,1"}, "--push: JOINT 0 is outside"},
        {{"--push", "0,1.5,1,1"}, "--push: JOINT 1.5 is not a whole joint number"},
        {{"--push", "0,x,1,1"}, "--push: JOINT 'x' is not a finite number"},
        {{"--push", "0,1,1"}, "--push: '0,1,1' is not T,JOINT,TORQUE,DURATION"},
        {{"--push", "0,1,1,1,1"}, "--push: '0,1,1,1,1' is not T,JOINT,TORQUE,DURATION"},
        {{"--push", "0,1,,1"}, "--push: TORQUE '' is not a finite number"},
        {{"--push", "0,1,1,1", "--push", "0,2,1,1"}, "--push 2: joint 2, but the arm has 1 joint"},
        {{"--push", "0,1,1,1", "--push", "0,1,1,1", "--push", "0,1,1,1", "--push", "0,1,1,1",
          "--push", "0,1,1,1", "--push", "0,1,1,1", "--push", "0,1,1,1", "--push", "0,1,1,1",
          "--push", "0,1,1,1"},
         "--push: more than 8 pushes"},
        {{"--push"}, "--push needs a value"},
        {{"--wall", "w,0,1"}, "--wall: AXIS 'w' is none of x, y, z, -x, -y, -z"},
        {{"--wall", "z,nan,1"}, "--wall: POSITION 'nan' is not a finite number"},
        {{"--wall", "z,inf,1"}, "--wall: POSITION 'inf' is not a finite number"},
        {{"--wall", "z,0,0"}, "--wall: STIFFNESS 0 must be more than 0 N/m"},
        {{"--wall", "z,0,-5"}, "--wall: STIFFNESS -5 is outside"},
        {{"--wall", "z,0,1e8"}, "--wall: STIFFNESS 1e+08 is outside"},
        {{"--wall", "z,0,inf"}, "--wall: STIFFNESS 'inf' is not a finite number"},
        {{"--wall", "z,0"}, "--wall: 'z,0' is not AXIS,POSITION,STIFFNESS"},
        {{"--wall", "z,0,1", "--wall", "x,0,1"}, "--wall: given twice"},
    };
    char out[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int status = run_usage(cases[i].args, out, sizeof out);
        if (status != 2 || !strstr(out, cases[i].message))
            fail_msg("case %zu (%s %s): exit %d, stderr '%s'; expected exit 2 and '%s'", i,
                     cases[i].args[0], cases[i].args[1] ? cases[i].args[1] : "", status, out,
                     cases[i].message);
    }
    print_message("%zu usage errors rejected with their message\n", sizeof cases / sizeof cases[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_push_pendulum, sim_teardown),
        cmocka_unit_test_teardown(test_push_planar2_sum, sim_teardown),
        cmocka_unit_test_teardown(test_wall_pendulum, sim_teardown),
        cmocka_unit_test(test_option_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
