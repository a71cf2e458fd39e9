/* test_validate.c — bad descriptions are errors naming the joint and field; the triangle
 * inequality is a warning; friction follows the header's semantics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/test_util.h"

typedef struct {
    int errors, warnings, joint;
    char field[64];
} findings;

static void collect(void *ctx, int joint, const char *field, int is_error, const char *msg)
{
    findings *f = ctx;
    assert_non_null(msg);
    assert_true(strlen(msg) > 10);
    if (is_error) {
        if (f->errors++ == 0) {
            f->joint = joint;
            snprintf(f->field, sizeof f->field, "%s", field);
        }
    } else {
        f->warnings++;
    }
}

static dyn_model_desc base(void)
{
    dyn_model_desc d;
    rng_seed(41);
    arm_random(&d, 4, -1, 0.3, 1);
    return d;
}

static void expect_error(dyn_model_desc *d, int joint, const char *field)
{
    findings f = {0, 0, -2, ""};
    assert_true(dyn_desc_validate(d, collect, &f) >= 1);
    assert_int_equal(f.joint, joint);
    assert_string_equal(f.field, field);
    findings g = {0, 0, -2, ""};
    assert_null(dyn_model_create(d, collect, &g));
}

static void test_valid_has_no_findings(void **s)
{
    (void)s;
    dyn_model_desc d = base();
    findings f = {0, 0, -2, ""};
    assert_int_equal(dyn_desc_validate(&d, collect, &f), 0);
    assert_int_equal(f.warnings, 0);
}

static void test_negative_mass(void **s)
{
    (void)s;
    dyn_model_desc d = base();
    d.joint[2].mass = -1;
    expect_error(&d, 2, "mass");
}

static void test_non_finite(void **s)
{
    (void)s;
    dyn_model_desc d = base();
    d.joint[1].com[1] = NAN;
    expect_error(&d, 1, "com");
    d = base();
    d.joint[3].inertia[4] = INFINITY;
    expect_error(&d, 3, "inertia");
    d = base();
    d.gravity[0] = NAN;
    expect_error(&d, -1, "gravity");
}

static void test_negative_eigenvalue(void **s)
{
    (void)s;
    dyn_model_desc d = base();
    double I[6] = {1, 1.5, 0, 1, 0, 1}; /* positive diagonal, eigenvalues 2.5, 1, -0.5 */
    memcpy(d.joint[0].inertia, I, sizeof I);
    expect_error(&d, 0, "inertia");
}

static void test_triangle_is_warning(void **s)
{
    (void)s;
    dyn_model_desc d = base();
    double I[6] = {0, 0, 0, 0.35, 0, 0}; /* PUMA link 1: about the joint axis */
    memcpy(d.joint[1].inertia, I, sizeof I);
    findings f = {0, 0, -2, ""};
    assert_int_equal(dyn_desc_validate(&d, collect, &f), 0);
    assert_int_equal(f.warnings, 1);
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    assert_non_null(m);
    dyn_model_free(m);
}

static void test_bad_sizes_and_axis(void **s)
{
    (void)s;
    dyn_model_desc d = base();
    d.n = 0;
    expect_error(&d, -1, "n");
    d.n = DYN_MAX_DOF + 1;
    expect_error(&d, -1, "n");
    d = base();
    d.joint[2].form = DYN_URDF;
    d.joint[2].axis[0] = d.joint[2].axis[1] = d.joint[2].axis[2] = 0;
    expect_error(&d, 2, "axis");
    d = base();
    d.joint[0].viscous = -0.1;
    expect_error(&d, 0, "viscous");
    d = base();
    d.payload.mass = -2;
    expect_error(&d, -1, "payload.mass");
}

/* viscous*qd + Coulomb by direction; hard step at eps = 0; continuous blend with eps > 0 */
static void test_friction(void **s)
{
    (void)s;
    dyn_model_desc d = base();
    d.n = 1;
    d.joint[0].viscous = 0.5, d.joint[0].coulomb_pos = 2.0, d.joint[0].coulomb_neg = -3.0;
    dyn_model *m = dyn_model_create(&d, NULL, NULL);
    double qd, t;
    qd = 0.2, dyn_friction(m, &qd, &t), assert_true(fabs(t - (0.1 + 2.0)) < 1e-15);
    qd = -0.2, dyn_friction(m, &qd, &t), assert_true(fabs(t - (-0.1 - 3.0)) < 1e-15);
    qd = 0.0, dyn_friction(m, &qd, &t), assert_true(t == 0.0);
    qd = 1e-12, dyn_friction(m, &qd, &t), assert_true(fabs(t - 2.0) < 1e-9);
    dyn_model_free(m);
    d.friction_smoothing = 0.1;
    m = dyn_model_create(&d, NULL, NULL);
    qd = 0.2, dyn_friction(m, &qd, &t), assert_true(fabs(t - 2.1) < 1e-15);
    qd = -0.1, dyn_friction(m, &qd, &t), assert_true(fabs(t - (-0.05 - 3.0)) < 1e-15);
    qd = 0.0, dyn_friction(m, &qd, &t), assert_true(t == 0.0);
    double prev = -1e9, maxjump = 0;
    for (int k = -2000; k <= 2000; k++) { /* monotone and continuous through 0 */
        qd = k * 1e-4;
        dyn_friction(m, &qd, &t);
        if (k > -2000) maxjump = fmax(maxjump, fabs(t - prev));
        assert_true(t >= prev);
        prev = t;
    }
    assert_true(maxjump < 0.01);
    dyn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_has_no_findings),
        cmocka_unit_test(test_negative_mass),
        cmocka_unit_test(test_non_finite),
        cmocka_unit_test(test_negative_eigenvalue),
        cmocka_unit_test(test_triangle_is_warning),
        cmocka_unit_test(test_bad_sizes_and_axis),
        cmocka_unit_test(test_friction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
