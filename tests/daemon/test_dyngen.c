/* test_dyngen.c — how armd finds its arm's generated dynamics (daemon/dyngen.c), with the real
 * armgen making a real shared object:
 *   test_daemon_dyngen ARMGEN PUMA560.ini
 * The example PUMA 560 uses its built-in module. A copy with another link mass has none: the
 * general core, "does not exist"; after `armgen --shared -c` the shared object beside it is
 * loaded and computes what the general core does; group-writable, it is refused; for a
 * changed configuration it is refused as generated for a different model (with the command to
 * regenerate); a file that is no shared object is refused; without the shared object again,
 * the general core. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"
#include "daemon/dyngen.h"
#include "dynamics/dynamics.h"

extern char **environ;

static const char *armgen, *puma_ini;
static char dir[64], ini[128], so[128];

static dyn_model *model_of(const char *path)
{
    static armd_config cfg;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, &cfg, &rep);
    cfg_report_free(&rep);
    assert_int_equal(errors, 0);
    dyn_model *m = dyn_model_create(&cfg.model, NULL, NULL);
    assert_non_null(m);
    return m;
}

/* The example with "mass = 17.4" (link 2) replaced by mass_line. */
static void write_variant(const char *mass_line)
{
    FILE *in = fopen(puma_ini, "r"), *out = fopen(ini, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[512];
    while (fgets(line, sizeof line, in))
        fputs(strncmp(line, "mass = 17.4", 11) == 0 ? mass_line : line, out);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static void run_armgen(void)
{
    char *argv[] = {(char *)armgen, "--shared", "--quiet", "-c", ini, NULL};
    pid_t pid;
    int st;
    assert_int_equal(posix_spawn(&pid, armgen, NULL, NULL, argv, environ), 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void expect(const dyngen *g, bool found, bool refused, const char *says)
{
    if ((g->module != NULL) != found || (g->refused != 0) != refused || !strstr(g->what, says)) {
        print_error("expected %s%s saying \"%s\", got: %s\n", found ? "a module" : "none",
                    refused ? " (refused)" : "", says, g->what);
        fail();
    }
}

/* The loaded module's inverse dynamics and mass matrix against the general core's. */
static void same_as_general(const dyn_gen_module *gen, const dyn_model *m)
{
    dyn_data *d = dyn_data_create(m);
    double q[6] = {0.1, -0.7, 1.1, 0.3, -0.4, 2.0}, qd[6] = {0.5, -1, 0.2, 1.5, -0.3, 0.8};
    double qdd[6] = {1, 2, -3, 0.5, -1, 4}, a[36], b[36];
    gen->funcs.rnea(m, d, q, qd, qdd, NULL, DYN_ALL, a);
    dyn_rnea(m, d, q, qd, qdd, NULL, DYN_ALL, b);
    for (int i = 0; i < 6; i++) assert_true(fabs(a[i] - b[i]) <= 1e-12 * fmax(1, fabs(b[i])));
    gen->funcs.mass_matrix(m, d, q, DYN_ALL, a);
    dyn_mass_matrix(m, d, q, DYN_ALL, b);
    for (int i = 0; i < 36; i++) assert_true(fabs(a[i] - b[i]) <= 1e-12 * fmax(1, fabs(b[i])));
    dyn_data_free(d);
}

static void test_builtin(void **state)
{
    (void)state;
    dyn_model *m = model_of(puma_ini);
    dyngen g;
    dyngen_find(puma_ini, m, &g);
    expect(&g, true, false, "generated code of arm puma560, built in");
    assert_null(g.handle);
    dyngen_release(&g);
    dyn_model_free(m);
}

static void test_shared_object(void **state)
{
    (void)state;
    write_variant("mass = 17.45\n");
    dyn_model *m = model_of(ini);
    dyngen g;
    dyngen_find(ini, m, &g);
    expect(&g, false, false, "does not exist");

    run_armgen();
    dyngen_find(ini, m, &g);
    expect(&g, true, false, so);
    assert_non_null(g.handle);
    assert_ptr_equal(dyn_funcs_for(m, g.module), &g.module->funcs);
    same_as_general(g.module, m);
    dyngen_release(&g);

    assert_int_equal(chmod(so, 0664), 0);
    dyngen_find(ini, m, &g);
    expect(&g, false, true, "writable by its group");
    assert_int_equal(chmod(so, 0644), 0);

    write_variant("mass = 17.5\n");
    dyn_model *m2 = model_of(ini);
    dyngen_find(ini, m2, &g);
    expect(&g, false, true, "generated for a different model");
    expect(&g, false, true, "armgen --shared -c");
    dyn_model_free(m2);

    FILE *f = fopen(so, "w");
    assert_non_null(f);
    fputs("not a shared object\n", f);
    fclose(f);
    dyngen_find(ini, m, &g);
    expect(&g, false, true, "cannot be loaded");
    assert_int_equal(unlink(so), 0);
    dyngen_find(ini, m, &g);
    expect(&g, false, false, "general core");
    dyn_model_free(m);
}

static int cleanup(void **state)
{
    (void)state;
    char path[160];
    const char *files[] = {"arm.ini", "arm.dyn.so", "arm.dyn.c"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    armgen = argv[1];
    puma_ini = argv[2];
    snprintf(dir, sizeof dir, "/tmp/armd-dyngen.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(ini, sizeof ini, "%s/arm.ini", dir);
    snprintf(so, sizeof so, "%s/arm.dyn.so", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin),
        cmocka_unit_test(test_shared_object),
    };
    return cmocka_run_group_tests(tests, NULL, cleanup);
}
