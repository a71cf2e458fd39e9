/* generated.c — each example arm's generated code (tools/armgen, built into armd) against the
 * general core on the same model, in the same run (bench.h). */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "tools/armbench/bench.h"
#include "tools/armgen/builtin.h"

/* The rows of this table, and how they are labelled (forward: the general core's O(n)
 * recursion against the generated code's choice). */
static const int rows[] = {F_RNEA, F_GRAV, F_MASS, F_ABA, F_JAC, F_OBS, F_FK};
static const char *const label[] = {"inverse dynamics", "gravity only", "mass matrix",
                                    "forward dynamics", "Jacobian",     "collision observer",
                                    "tool pose (FK)"};
enum { NROWS = sizeof rows / sizeof rows[0], MAX_ARMS = 8 };

/* Loads dir/ARM.ini and builds its model; the built-in module if it fits. */
static const dyn_gen_module *load(const char *dir, const dyn_gen_module *g, dyn_model **m,
                                  dyn_data **d)
{
    static armd_config cfg;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ini", dir, g->arm);
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, &cfg, &rep);
    cfg_report_free(&rep);
    *m = errors ? NULL : dyn_model_create(&cfg.model, NULL, NULL);
    *d = *m ? dyn_data_create(*m) : NULL;
    if (!*d) {
        fprintf(stderr, "armbench: %s cannot be loaded\n", path);
        return NULL;
    }
    if (dyn_funcs_for(*m, g) != &g->funcs) {
        fprintf(stderr, "armbench: %s is not the model armd's %s code was generated from\n", path,
                g->arm);
        return NULL;
    }
    return g;
}

const dyn_gen_module *bench_puma_module(const char *dir, dyn_model **m, dyn_data **d)
{
    for (int i = 0; armgen_builtin[i]; i++)
        if (strcmp(armgen_builtin[i]->arm, "puma560") == 0)
            return load(dir, armgen_builtin[i], m, d);
    return NULL;
}

int bench_generated(const char *dir, int reps)
{
    double gen[MAX_ARMS][NROWS], ref[MAX_ARMS][NROWS];
    const char *arm[MAX_ARMS];
    int na = 0;
    for (int i = 0; armgen_builtin[i] && na < MAX_ARMS; i++) {
        dyn_model *m;
        dyn_data *d;
        const dyn_gen_module *g = load(dir, armgen_builtin[i], &m, &d);
        if (g) {
            arm[na] = g->arm;
            for (int r = 0; r < NROWS; r++) {
                ref[na][r] = bench_ns(rows[r], &dyn_general, m, d, reps);
                gen[na][r] = bench_ns(rows[r], &g->funcs, m, d, reps);
            }
            na++;
        }
        dyn_data_free(d);
        dyn_model_free(m);
    }
    if (na == 0) return -1;
    printf("generated code (tools/armgen, built into armd) against the general core, same "
           "run:\nns per call on the example configurations, general / generated (speed-up), "
           "all effects\n\n%-20s",
           "function");
    for (int a = 0; a < na; a++) printf(" %22s", arm[a]);
    printf("\n");
    for (int r = 0; r < NROWS; r++) {
        printf("%-20s", label[r]);
        for (int a = 0; a < na; a++)
            printf("   %6.0f / %5.0f (%4.1fx)", ref[a][r], gen[a][r], ref[a][r] / gen[a][r]);
        printf("\n");
    }
    printf("\n(forward dynamics: the general core's O(n) recursion; the generated code's method "
           "is in its header)\n");
    return 0;
}
