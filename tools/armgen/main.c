/* main.c — the armgen program: reads an armd INI through the config loader (drop-ins applied,
 * every description form the loader knows), builds the model, and writes the arm's generated
 * dynamics as C (gen.h), or compiles it into the shared object armd loads at start. */
#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "dynamics/dynamics.h"
#include "tools/armgen/gen.h"

#ifndef ARMGEN_INCLUDE_DIRS
#define ARMGEN_INCLUDE_DIRS "" /* where dynamics/dynamics.h is, ':'-separated */
#endif
#ifndef ARMGEN_CC
#define ARMGEN_CC "cc"
#endif

extern char **environ;

static const char usage_text[] =
    "NAME\n"
    "    armgen - generate an arm's dynamics as straight-line C (armd's per-arm code)\n"
    "\n"
    "SYNOPSIS\n"
    "    armgen -c CONFIG [-o FILE.c] [--symbol NAME]\n"
    "    armgen -c CONFIG --shared [-o FILE.so]\n"
    "    armgen -c CONFIG --counts\n"
    "\n"
    "DESCRIPTION\n"
    "    Reads the arm of CONFIG (an armd INI, its drop-ins applied) and writes C functions for\n"
    "    exactly that arm: inverse dynamics, gravity, Coriolis/centrifugal torque, mass matrix,\n"
    "    forward dynamics, tool Jacobian, momentum, friction, tool pose, with every constant\n"
    "    folded in, common subexpressions computed once and dead terms removed. armd uses them\n"
    "    instead of its general dynamics core while the model (including the payload) is the\n"
    "    one they were generated from.\n"
    "\n"
    "OPTIONS\n"
    "    -c, --config CONFIG  the arm's configuration\n"
    "    -o, --output FILE    where to write (C: default standard output; --shared: default\n"
    "                         CONFIG without .ini plus .dyn.so, where armd looks for it)\n"
    "    -s, --symbol NAME    C name of the module (default armgen_module, what armd loads)\n"
    "    -q, --quiet          do not print the configuration's warnings\n"
    "        --shared         compile with $CC (default " ARMGEN_CC ") into a shared object;\n"
    "                         the C source is kept beside it (.c instead of .so)\n"
    "        --counts         print the operation counts of every function and exit\n"
    "    -h, --help           print this help and exit\n"
    "\n"
    "EXIT STATUS\n"
    "    0 written; 1 the output could not be written or compiled; 2 usage or configuration\n"
    "    error\n";

typedef struct {
    const char *config, *output, *symbol;
    int shared, counts, quiet;
} options;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Parses the options; returns -1 to exit with *status. */
static int parse_args(int argc, char **argv, options *o, int *status)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'}, {"output", required_argument, NULL, 'o'},
        {"symbol", required_argument, NULL, 's'}, {"shared", no_argument, NULL, 'S'},
        {"counts", no_argument, NULL, 'C'},       {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    int c;
    o->symbol = "armgen_module";
    while ((c = getopt_long(argc, argv, "c:o:s:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            o->config = optarg;
            break;
        case 'o':
            o->output = optarg;
            break;
        case 's':
            o->symbol = optarg;
            break;
        case 'S':
            o->shared = 1;
            break;
        case 'C':
            o->counts = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            *status = 0;
            return -1;
        default:
            *status = 2;
            return -1;
        }
    }
    const char *bad = optind < argc ? "unexpected argument" : NULL;
    if (!bad && !o->config) bad = "no configuration given (-c CONFIG)";
    if (!bad && o->shared && o->counts) bad = "--shared and --counts exclude each other";
    for (const char *p = o->symbol; !bad && *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (p > o->symbol && *p >= '0' && *p <= '9')))
            bad = "--symbol must be a C identifier";
    if (bad) {
        fprintf(stderr, "armgen: %s; armgen --help for usage\n", bad);
        *status = 2;
        return -1;
    }
    return 0;
}

/* Loads the configuration and the model's internal form; 0 or the exit status. */
static int load_form(const char *path, int quiet, armd_config *cfg, dyn_form *form,
                     unsigned long long *hash)
{
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, cfg, &rep);
    if (errors || (rep.n_warnings && !quiet)) cfg_report_print(&rep, stderr);
    cfg_report_free(&rep);
    if (errors) {
        fprintf(stderr, "armgen: %s: not valid, nothing generated\n", path);
        return 2;
    }
    dyn_model *m = dyn_model_create(&cfg->model, NULL, NULL);
    if (!m) {
        fprintf(stderr, "armgen: %s: the dynamics model cannot be built\n", path);
        return 2;
    }
    dyn_model_form(m, form);
    *hash = dyn_model_hash(m);
    dyn_model_free(m);
    return 0;
}

/* Runs argv (no shell) and waits; 0 if it exited 0. */
static int run(char *const *argv)
{
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ), st = 0;
    if (rc != 0) {
        fprintf(stderr, "armgen: cannot run %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    if (waitpid(pid, &st, 0) < 0) return -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    fprintf(stderr, "armgen: %s failed (%s %d)\n", argv[0],
            WIFEXITED(st) ? "exit status" : "signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return -1;
}

/* cc -shared of src into so (through so.tmp, renamed when done: armd never sees half a file),
 * with the include directory that holds dynamics/dynamics.h. */
static int compile_shared(const char *src, const char *so)
{
    static char dirs[] = ARMGEN_INCLUDE_DIRS;
    char inc[1024] = "", tmp[4096];
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char probe[1200];
        struct stat st;
        snprintf(probe, sizeof probe, "%s/dynamics/dynamics.h", d);
        if (stat(probe, &st) == 0) {
            snprintf(inc, sizeof inc, "-I%s", d);
            break;
        }
    }
    if (!inc[0]) {
        fprintf(stderr, "armgen: dynamics/dynamics.h not found in %s: install armd's headers\n",
                ARMGEN_INCLUDE_DIRS);
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", so);
    const char *cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : ARMGEN_CC;
    char *argv[] = {(char *)cc, "-std=c11", "-O3",       "-fPIC", "-shared", inc,
                    "-o",       tmp,        (char *)src, "-lm",   NULL};
    if (run(argv) != 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, so) != 0) {
        fprintf(stderr, "armgen: cannot rename %s to %s: %s\n", tmp, so, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void print_counts(const ag_counts *k)
{
    printf("%-30s %5s %5s %4s %6s %5s\n", "function", "mul", "add", "div", "total", "trig");
    for (int fn = 0; fn < AG_NFUNC; fn++) {
        const op_count *c = &k->always[fn];
        printf("%-30s %5d %5d %4d %6d %5d\n", ag_func_name[fn], c->mul, c->add, c->div, op_total(c),
               c->trig);
    }
    const op_count *r = &k->rigid_rnea;
    printf("%-30s %5d %5d %4d %6d %5d\n", "rnea (gravity only)", r->mul, r->add, r->div,
           op_total(r), r->trig);
}

static int generate(const options *o, const armd_config *cfg, const dyn_form *form,
                    unsigned long long hash)
{
    const ag_info info = {o->symbol, cfg->name, o->config};
    if (o->counts) {
        ag_counts k;
        ag_generate(form, hash, &info, NULL, &k);
        print_counts(&k);
        return 0;
    }
    char so[4096], src[4096];
    if (o->shared) {
        if (o->output)
            snprintf(so, sizeof so, "%s", o->output);
        else if (cfg_sibling_path(o->config, CFG_DYNAMICS_SUFFIX, so, sizeof so) != 0) {
            fprintf(stderr, "armgen: %s: path too long\n", o->config);
            return 1;
        }
        size_t n = strlen(so);
        snprintf(src, sizeof src, "%.*s.c",
                 (int)(n > 3 && strcmp(so + n - 3, ".so") == 0 ? n - 3 : n), so);
    }
    const char *cpath = o->shared ? src : o->output;
    FILE *out = cpath ? fopen(cpath, "w") : stdout;
    if (!out) {
        fprintf(stderr, "armgen: cannot write %s: %s\n", cpath, strerror(errno));
        return 1;
    }
    double t0 = now_s();
    ag_generate(form, hash, &info, out, NULL);
    int bad = ferror(out);
    if (cpath && fclose(out) != 0) bad = 1;
    if (bad) {
        fprintf(stderr, "armgen: writing %s failed\n", cpath ? cpath : "standard output");
        return 1;
    }
    if (!o->shared) return 0;
    double t1 = now_s();
    if (compile_shared(src, so) != 0) return 1;
    fprintf(stderr,
            "armgen: %s: arm %s, %d joints, model hash 0x%016llx (generated in %.2f s, compiled "
            "in %.2f s; source %s)\n",
            so, cfg->name, form->n, hash, t1 - t0, now_s() - t1, src);
    return 0;
}

int main(int argc, char **argv)
{
    options o = {0};
    int status = 0;
    if (parse_args(argc, argv, &o, &status) != 0) return status;
    armd_config *cfg = calloc(1, sizeof *cfg);
    dyn_form *form = calloc(1, sizeof *form);
    unsigned long long hash = 0;
    if (!cfg || !form)
        status = 1;
    else
        status = load_form(o.config, o.quiet, cfg, form, &hash);
    if (status == 0) status = generate(&o, cfg, form, hash);
    free(cfg);
    free(form);
    return status;
}
