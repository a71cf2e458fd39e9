/* armbench — nanoseconds per call of the dynamics core on the PUMA 560 and on random chains of
 * n = 2..64 joints (median of several repetitions), plus the growth ratio time(64)/time(8);
 * then the arms' generated code against the general core (same run) and its operation counts
 * beside seed 001's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dynamics/dynamics.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/puma560_desc.h"
#include "tools/armbench/bench.h"

#ifndef ARMBENCH_EXAMPLES
#define ARMBENCH_EXAMPLES "" /* where the example configurations are, ':'-separated */
#endif

static const char usage[] =
    "usage: armbench [--quick] [--examples DIR]\n"
    "       armbench --lockstep [--examples DIR]\n"
    "       armbench --calls F N [--generated] [--examples DIR]\n"
    "  --quick         31 repetitions per figure instead of 201\n"
    "  --lockstep      how fast lockstep simulation (armd --lockstep) runs tools/demo's move on\n"
    "                  the PUMA 560: simulated seconds per wall second\n"
    "  --examples DIR  the example configurations (default: the source tree's, else the\n"
    "                  installed ones)\n"
    "  --calls F N     N calls of row F (0 inverse dynamics .. 11 task inertia) on the\n"
    "                  PUMA 560 without timing, for valgrind --tool=callgrind; --generated:\n"
    "                  of its generated code (the example configuration's model)\n";

/* The first directory of ARMBENCH_EXAMPLES that holds puma560.ini. */
static const char *default_examples(void)
{
    static char dirs[] = ARMBENCH_EXAMPLES;
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char probe[1024];
        struct stat st;
        snprintf(probe, sizeof probe, "%s/puma560.ini", d);
        if (stat(probe, &st) == 0) return d;
    }
    return NULL;
}

/* "--calls F N": the general core on puma560_desc, or the generated code on the example. */
static int run_calls(int f, int calls, int generated, const char *examples)
{
    dyn_model *m = NULL;
    dyn_data *d = NULL;
    const dyn_funcs *fs = &dyn_general;
    if (generated) {
        const dyn_gen_module *g = examples ? bench_puma_module(examples, &m, &d) : NULL;
        if (!g) {
            fprintf(stderr, "armbench: no generated PUMA 560 (examples in %s)\n",
                    examples ? examples : "?");
            return 1;
        }
        fs = &g->funcs;
    } else {
        dyn_model_desc desc;
        puma560_desc(&desc);
        m = dyn_model_create(&desc, NULL, NULL);
        d = m ? dyn_data_create(m) : NULL;
    }
    if (!d) {
        fprintf(stderr, "armbench: could not build the PUMA 560\n");
        return 1;
    }
    rng_seed(2024);
    bench_calls(f, fs, m, d, calls);
    dyn_data_free(d);
    dyn_model_free(m);
    return 0;
}

/* The general core's table: PUMA 560 and random standard-DH chains. */
static int general_table(int reps)
{
    static const int sizes[] = {2, 4, 8, 16, 32, 64};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    double res[NS + 1][NF], ik_iters[NS + 1];
    int ik_failed[NS + 1];
    static dyn_model_desc desc[NS + 1];
    rng_seed(2024);
    /* Two passes over the same models: the rows up to F_OBS first, in the order (and so with
     * the random inputs and chains) they had before the kinematics rows were added, then those. */
    for (int pass = 0; pass < 2; pass++) {
        for (int s = 0; s <= NS; s++) {
            if (pass == 0 && s == 0)
                puma560_desc(&desc[0]);
            else if (pass == 0)
                arm_random(&desc[s], sizes[s - 1], DYN_DH_STANDARD, 0.25, 1);
            dyn_model *m = dyn_model_create(&desc[s], NULL, NULL);
            dyn_data *d = m ? dyn_data_create(m) : NULL;
            if (!d) {
                fprintf(stderr, "armbench: could not build model %d\n", s);
                return 1;
            }
            for (int f = pass ? F_FK : 0; f < (pass ? NF : F_FK); f++)
                res[s][f] = bench_ns(f, &dyn_general, m, d, reps);
            if (pass) ik_iters[s] = bench_ik_iterations(m, d, &ik_failed[s]);
            dyn_data_free(d);
            dyn_model_free(m);
        }
    }
    printf("armbench: ns per call, median of %d repetitions (all effects: gravity, armature, "
           "friction)\n\n",
           reps);
    printf("%-24s %9s", "function", "PUMA560");
    for (int s = 0; s < NS; s++) printf("   n=%-5d", sizes[s]);
    printf(" %10s\n", "t64/t8");
    for (int f = 0; f < NF; f++) {
        printf("%-24s %9.0f", bench_name[f], res[0][f]);
        for (int s = 1; s <= NS; s++) printf(" %9.0f", res[s][f]);
        printf(" %10.1f\n", res[NS][f] / res[3][f]);
    }
    printf("\n(t64/t8 = 8 for linear cost, 64 for quadratic, 512 for cubic)\n");
    printf("(inverse kin.: dyn_ik of the full tool pose of a random q, default options, from "
           "q + U(-0.05, 0.05) per joint;\n iterations per solve, mean of its 8 targets:");
    for (int s = 0; s <= NS; s++) {
        if (s == 0)
            printf(" PUMA560 %.1f", ik_iters[0]);
        else
            printf(", n=%d %.1f", sizes[s - 1], ik_iters[s]);
        if (ik_failed[s]) printf(" (%d of 8 not DYN_IK_OK)", ik_failed[s]);
    }
    printf(")\n");
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 201, calls_f = -1, calls_n = 0, generated = 0, lockstep = 0;
    const char *examples = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            reps = 31;
        } else if (strcmp(argv[i], "--lockstep") == 0) {
            lockstep = 1;
        } else if (strcmp(argv[i], "--generated") == 0) {
            generated = 1;
        } else if (strcmp(argv[i], "--examples") == 0 && i + 1 < argc) {
            examples = argv[++i];
        } else if (strcmp(argv[i], "--calls") == 0 && i + 2 < argc) {
            calls_f = atoi(argv[i + 1]);
            calls_n = atoi(argv[i + 2]);
            i += 2;
            if (calls_f < 0 || calls_f >= NF || calls_n < 1) {
                fprintf(stderr, "armbench: --calls F N needs F in 0..%d and N >= 1\n", NF - 1);
                return 2;
            }
        } else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!examples) examples = default_examples();
    if (calls_f >= 0) return run_calls(calls_f, calls_n, generated, examples);
    if (lockstep) {
        if (!examples) {
            fprintf(stderr, "armbench: --lockstep needs the example configurations (--examples)\n");
            return 2;
        }
        return bench_lockstep(examples) != 0;
    }
    if (general_table(reps) != 0) return 1;
    if (!examples) {
        printf("\nno example configurations found (--examples DIR): no generated-code table\n");
        return 0;
    }
    printf("\n");
    int rc = bench_generated(examples, reps);
    printf("\n");
    return bench_opcounts(examples) != 0 || rc != 0;
}
