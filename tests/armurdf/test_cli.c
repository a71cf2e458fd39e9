/*
 * test_cli.c — the armurdf process (env ARMURDF) on the OpenManipulator-X URDF: writes the file
 * given with -o (the same text as on standard output), the INI completed by hand (the [arm] and
 * [driver] sections in the main file, the keys a URDF does not give in a drop-in) passes
 * `armd --check-config` (env ARMD); exit status and message for a URDF it refuses, a bad command
 * line and a missing file. argv[1] is the source root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/armurdf/armurdf_support.h"

static const char *root = ".";
static char dir[] = "/tmp/armurdf-cli.XXXXXX";
static char urdf[512];

/* Runs argv with standard output and error into dir/out and dir/err; returns the exit status
 * (-1 if it did not exit). *out, *err receive the texts (free them). */
static int run(char *const argv[], char **out, char **err)
{
    char po[600], pe[600];
    snprintf(po, sizeof po, "%s/out", dir);
    snprintf(pe, sizeof pe, "%s/err", dir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(po, "w", stdout) || !freopen(pe, "w", stderr)) _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    *out = read_text(po, NULL);
    *err = read_text(pe, NULL);
    assert_non_null(*out);
    assert_non_null(*err);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Writes text to path (the test fails if it cannot). */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_write_and_check_config(void **state)
{
    (void)state;
    char ini[600], joints[600], dropdir[600], drop[700];
    snprintf(joints, sizeof joints, "%s/joints.ini", dir);
    char *argv[] = {getenv("ARMURDF"),
                    urdf,
                    "--tip",
                    "end_effector_link",
                    "--at",
                    "gripper_left_joint=0.01",
                    "-o",
                    joints,
                    NULL};
    char *out, *err;
    assert_int_equal(run(argv, &out, &err), 0);
    /* ROBOTIS's effort="1000": one warning per chain joint, naming it, then the count */
    char expect[2000];
    int k = 0;
    static const int limit_line[] = {45, 75, 105, 135};
    for (int i = 1; i <= 4; i++)
        k += snprintf(expect + k, sizeof expect - (size_t)k,
                      "%s:%d: warning: joint 'joint%d': <limit effort=\"1000\"> is a placeholder, "
                      "not the actuator's limit; set torque in [joint joint%d] to the servo's "
                      "stall torque from its data sheet [N m] (or less)\n",
                      urdf, limit_line[i - 1], i, i);
    snprintf(expect + k, sizeof expect - (size_t)k, "armurdf: %s: 4 joints written\n", joints);
    assert_string_equal(err, expect);
    assert_string_equal(out, "");
    free(out);
    free(err);
    char *written = read_text(joints, NULL);
    assert_non_null(written);
    /* without -o: the same text on standard output */
    char *argv2[] = {getenv("ARMURDF"),         urdf, "--tip", "end_effector_link", "--at",
                     "gripper_left_joint=0.01", NULL};
    assert_int_equal(run(argv2, &out, &err), 0);
    assert_string_equal(out, written);
    free(out);
    free(err);

    /* the user's part: [arm] and [driver] above, the device keys and gains in a drop-in */
    snprintf(ini, sizeof ini, "%s/omx.ini", dir);
    size_t n = strlen(written) + 256;
    char *text = malloc(n);
    snprintf(text, n,
             "[arm]\nname = omx\nrate_hz = 250\ntool_xyz = 0.126 0 0\n\n[driver]\ntype = dxl2\n"
             "port = /dev/ttyUSB0\nbaud = 1000000\n\n%s",
             written);
    write_file(ini, text);
    free(text);
    snprintf(dropdir, sizeof dropdir, "%s/omx.d", dir);
    assert_int_equal(mkdir(dropdir, 0700), 0);
    snprintf(drop, sizeof drop, "%s/10-device.ini", dropdir);
    FILE *f = fopen(drop, "w");
    assert_non_null(f);
    for (int i = 1; i <= 4; i++)
        fprintf(f,
                "[joint joint%d]\nacceleration = 10\nkp = 100\nkd = 20\nid = %d\n"
                "torque_per_amp = 1.78\ntorque = 3\n",
                i, 10 + i);
    assert_int_equal(fclose(f), 0);
    char *argv3[] = {getenv("ARMD"), "--check-config", ini, NULL};
    int st = run(argv3, &out, &err);
    if (st != 0) fprintf(stderr, "%s%s", out, err);
    assert_int_equal(st, 0);
    snprintf(expect, sizeof expect, "%s: valid\n", ini);
    assert_non_null(strstr(out, expect));
    assert_non_null(strstr(out, "arm omx: 4 joints"));
    free(out);
    free(err);
    free(written);
    unlink(drop);
    rmdir(dropdir);
    unlink(ini);
    unlink(joints);
}

/* The exit status says what went wrong: 1 the URDF, 2 the command line or a file. */
static void test_exit_status(void **state)
{
    (void)state;
    char *out, *err, expect[800];
    char *refused[] = {getenv("ARMURDF"), urdf, NULL};
    assert_int_equal(run(refused, &out, &err), 1);
    assert_non_null(strstr(err, "3 leaf links below 'world'"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    char *usage[] = {getenv("ARMURDF"), NULL};
    assert_int_equal(run(usage, &out, &err), 2);
    assert_non_null(strstr(err, "usage: armurdf ROBOT.urdf"));
    free(out);
    free(err);
    char *missing[] = {getenv("ARMURDF"), "/nonexistent/r.urdf", NULL};
    assert_int_equal(run(missing, &out, &err), 2);
    assert_string_equal(err, "armurdf: /nonexistent/r.urdf: No such file or directory\n");
    free(out);
    free(err);
    char *bad_at[] = {getenv("ARMURDF"), urdf, "--at", "gripper_left_joint", NULL};
    assert_int_equal(run(bad_at, &out, &err), 2);
    assert_string_equal(err, "armurdf: --at gripper_left_joint: expected JOINT=VALUE (rad or m)\n");
    free(out);
    free(err);
    char *bad_out[] = {getenv("ARMURDF"), urdf, "--tip", "link5", "-o", "/nonexistent/x.ini", NULL};
    assert_int_equal(run(bad_out, &out, &err), 2);
    snprintf(expect, sizeof expect, "armurdf: /nonexistent/x.ini: No such file or directory\n");
    assert_string_equal(err, expect);
    free(out);
    free(err);
}

int main(int argc, char **argv)
{
    if (argc > 1) root = argv[1];
    if (!getenv("ARMURDF") || !getenv("ARMD")) {
        fprintf(stderr, "test_cli: ARMURDF and ARMD must name the programs (meson sets them)\n");
        return 1;
    }
    if (!mkdtemp(dir)) return 1;
    snprintf(urdf, sizeof urdf, "%s/tests/armurdf/data/open_manipulator_x.urdf", root);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_check_config),
        cmocka_unit_test(test_exit_status),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char p[600];
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/err", dir);
    unlink(p);
    rmdir(dir);
    return rc;
}
