/*
 * test_api_task.c — unit test of the socket API's task-space methods (daemon/api_linear.c,
 * api_impedance.c) against the fake control thread (fake_ctl.c), on a real UNIX socket and libev
 * loop (api_harness.c): the params reach the control side as given, every malformed one is
 * refused naming the member before it does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "tests/daemon/api_harness.h"
#include "tests/daemon/fake_ctl.h"

/* move_linear's params reach the control side as given (an offset in the tool frame, appended;
 * a position with an orientation); every malformed one is refused naming the member. */
static void test_move_linear_params(void **state)
{
    (void)state;
    int fd = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"move_linear\", \"params\": {\"offset\": "
                            "[0, 0, -0.05], \"frame\": \"tool\", \"speed\": 0.2, \"mode\": "
                            "\"append\"}}");
    json_t *res = json_object_get(r, "result");
    assert_int_equal(json_integer_value(json_object_get(res, "id")), 9);
    const ctl_linear *l = &fake.last_linear;
    assert_true(l->relative && l->frame == CTL_FRAME_TOOL && l->append && !l->has_orientation);
    assert_float_equal(l->xyz[2], -0.05, 1e-15);
    assert_float_equal(l->speed, 0.2, 1e-15);
    assert_float_equal(l->acceleration, 0, 0);
    json_decref(r);
    r = request(fd, "{\"id\": 2, \"method\": \"move_linear\", \"params\": {\"position\": "
                    "[0.4, 0, 0.3], \"orientation\": [0, 1, 0, 0], \"acceleration\": 1}}");
    assert_non_null(json_object_get(r, "result"));
    assert_true(!l->relative && l->has_orientation && l->frame == CTL_FRAME_BASE && !l->append);
    assert_float_equal(l->quat[1], 1, 0);
    assert_float_equal(l->acceleration, 1, 0);
    json_decref(r);
    expect_invalid(fd, "move_linear", "{}", "offset");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"position\": [0, 0, 1]}", "one of");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0]}", "params.offset");
    expect_invalid(fd, "move_linear", "{\"position\": [0, 0, 1], \"frame\": \"tool\"}",
                   "params.frame");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"frame\": \"world\"}",
                   "params.frame");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"orientation\": [1, 0, 0, 0]}",
                   "params.orientation");
    expect_invalid(fd, "move_linear", "{\"position\": [0, 0, 1], \"orientation\": [1, 0, 0]}",
                   "params.orientation");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"speed\": -1}", "params.speed");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"speed\": 0}", "params.speed");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"acceleration\": \"x\"}",
                   "params.acceleration");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"mode\": \"later\"}",
                   "params.mode");
    expect_invalid(fd, "move_linear", "{\"offset\": [0, 0, 1], \"fly\": 1}", "fly");
    close(fd);
}

/* impedance.set: one number for the axes or one per axis, what is not given stays; bad numbers
 * are refused before the control side sees them; impedance.get reads the block back. */
static void test_impedance_params(void **state)
{
    (void)state;
    int fd = connect_client();
    json_t *r = request(fd, "{\"id\": 1, \"method\": \"impedance.set\", \"params\": "
                            "{\"translational_stiffness\": [100, 200, 300], \"damping_ratio\": "
                            "0.5}}");
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    const cfg_impedance *m = &fake.impedance;
    assert_float_equal(m->stiffness[1], 200, 0);
    assert_float_equal(m->damping_ratio[5], 0.5, 0);
    r = request(fd, "{\"id\": 2, \"method\": \"impedance.set\", \"params\": "
                    "{\"rotational_stiffness\": 7, \"guide_damping\": [10, 1]}}");
    json_decref(r);
    assert_float_equal(m->stiffness[2], 300, 0); /* kept */
    assert_float_equal(m->stiffness[4], 7, 0);
    assert_float_equal(m->guide_damping[1], 1, 0);
    r = request(fd, "{\"id\": 3, \"method\": \"impedance.get\"}");
    json_t *res = json_object_get(r, "result");
    assert_float_equal(
        json_number_value(json_array_get(json_object_get(res, "translational_stiffness"), 0)), 100,
        0);
    assert_int_equal(json_array_size(json_object_get(res, "damping_ratio")), 6);
    json_decref(r);
    expect_invalid(fd, "impedance.set", "{}", "at least one");
    expect_invalid(fd, "impedance.set", "{\"translational_stiffness\": -1}",
                   "params.translational_stiffness");
    expect_invalid(fd, "impedance.set", "{\"rotational_stiffness\": 1e300}",
                   "params.rotational_stiffness");
    expect_invalid(fd, "impedance.set", "{\"damping_ratio\": [1, 2]}", "params.damping_ratio");
    expect_invalid(fd, "impedance.set", "{\"damping_ratio\": \"NaN\"}", "params.damping_ratio");
    expect_invalid(fd, "impedance.set", "{\"guide_damping\": 5}", "params.guide_damping");
    expect_invalid(fd, "impedance.set", "{\"stiffness\": 5}", "stiffness");
    assert_float_equal(m->stiffness[0], 100, 0); /* none of them reached the control side */
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_move_linear_params, setup, teardown),
        cmocka_unit_test_setup_teardown(test_impedance_params, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
