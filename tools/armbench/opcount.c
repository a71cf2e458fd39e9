/* opcount.c — the generated code's operation counts (tools/armgen) for the PUMA 560 of the
 * example configuration and for its first three joints (the "3-DOF PUMA 560 positioning
 * system"), beside what seed 001 (El-Rayyes 1990, NEDYN and its variants; Neuman and Murray's
 * ARM; Tables 4.1-4.7) reports. Both count multiplications and additions, with sines and
 * cosines separately; the cases are the seed's: gravity on, no armature, friction or tool
 * wrench (the wrench term alone is KTERM). The seed's PUMA parameters are not given there, so
 * the arms are alike, not identical. */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "tools/armbench/bench.h"
#include "tools/armgen/gen.h"

/* One row: what, our count, the seed's multiplications and additions (total as printed
 * there) and where. */
static void row(const char *what, const op_count *c, int mul, int add, int total,
                const char *source)
{
    char ours[40], seed[40];
    snprintf(ours, sizeof ours, "%d + %d = %d", c->mul + c->div, c->add, op_total(c));
    if (total > 0)
        snprintf(seed, sizeof seed, "%d + %d = %d", mul, add, total);
    else
        snprintf(seed, sizeof seed, "-");
    printf("  %-32s %-18s %-18s %s\n", what, ours, seed, source);
}

static int counts_for(const armd_config *cfg, int n, ag_counts *k)
{
    dyn_model_desc desc = cfg->model;
    desc.n = n;
    dyn_model *m = dyn_model_create(&desc, NULL, NULL);
    if (!m) return -1;
    static dyn_form form;
    dyn_model_form(m, &form);
    const ag_info info = {"armbench", cfg->name, "armbench"};
    ag_generate(&form, dyn_model_hash(m), &info, NULL, k);
    dyn_model_free(m);
    return 0;
}

int bench_opcounts(const char *dir)
{
    static armd_config cfg;
    char path[1024];
    snprintf(path, sizeof path, "%s/puma560.ini", dir);
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, &cfg, &rep);
    cfg_report_free(&rep);
    ag_counts k6, k3;
    if (errors || counts_for(&cfg, 6, &k6) || counts_for(&cfg, 3, &k3)) {
        fprintf(stderr, "armbench: %s: no operation counts\n", path);
        return -1;
    }
    printf("operation counts, multiplications + additions (a division counts as a multiplication; "
           "sin/cos apart),\ngenerated code against seed 001 (El-Rayyes 1990), cases as there "
           "(gravity, no armature, friction, wrench):\n\n");
    printf("  %-32s %-18s %-18s %s\n", "PUMA 560, 6 DOF", "armgen", "seed 001", "");
    row("inverse dynamics, recursive", &k6.rigid_rnea, 204, 154, 358, "NEDYN, Table 4.2");
    row("gravity term G", &k6.always[AG_GRAVITY], 69, 43, 112, "GTERM, Table 4.2");
    row("inertia term H qdd", &k6.inertia_term, 133, 90, 223, "HTERM, Table 4.2");
    row("Coriolis/centrifugal C qd", &k6.always[AG_CORIOLIS], 193, 134, 327, "CTERM, Table 4.2");
    row("external force J^T k", &k6.wrench_term, 44, 27, 71, "KTERM, Table 4.2");
    row("mass matrix H", &k6.rigid_mass, 258, 183, 441, "HMAT method 2, Table 4.5");
    row("direct dynamics, method 3", &k6.rigid_forward[0], 396, 284, 680,
        "HBMAT method 3, Table 4.5");
    row("direct dynamics, O(n) recursion", &k6.rigid_forward[1], 0, 0, 0, "");
    row("Jacobian", &k6.always[AG_JACOBIAN], 92, 49, 141, "JACOB, Table 4.7");
    printf("  also in seed 001: inverse dynamics by the ARM generator 224 + 174 = 398 (Table 4.1);"
           "\n  direct dynamics by HBMAT method 2 449 + 319 = 768 (Table 4.5); the Jacobian by hand"
           "\n  (Leahy et al.) 66 + 30, \"99\" (Table 4.7). sin/cos pairs: armgen's inverse "
           "dynamics %d,\n  gravity %d, Jacobian %d; Table 4.7: JACOB 10, Leahy et al. 12.\n\n",
           k6.rigid_rnea.trig, k6.always[AG_GRAVITY].trig, k6.always[AG_JACOBIAN].trig);
    printf("  %-32s %-18s %-18s %s\n", "PUMA 560 positioning, joints 1-3", "armgen", "seed 001",
           "");
    row("inverse dynamics, recursive", &k3.rigid_rnea, 99, 75, 174, "ARM, Table 4.1 (*)");
    row("gravity term G", &k3.always[AG_GRAVITY], 16, 8, 24, "GTERM, Table 4.3");
    row("inertia term H qdd", &k3.inertia_term, 46, 28, 74, "HTERM, Table 4.3");
    row("Coriolis/centrifugal C qd", &k3.always[AG_CORIOLIS], 66, 39, 105, "CTERM, Table 4.3");
    row("external force J^T k", &k3.wrench_term, 14, 9, 23, "KTERM, Table 4.3");
    row("mass matrix H", &k3.rigid_mass, 41, 27, 68, "HMAT method 2, Table 4.4");
    row("direct dynamics, method 3", &k3.rigid_forward[0], 132, 92, 224,
        "HBMAT method 3, Table 4.4");
    row("direct dynamics, O(n) recursion", &k3.rigid_forward[1], 0, 0, 0, "");
    printf("  also in seed 001: direct dynamics by HBMAT method 2 107 + 68 = 175 (Table 4.4).\n"
           "  (*) Table 4.3 repeats the 6-DOF NEDYN row for the 3-DOF PUMA; ARM's recursive "
           "count stands in.\n");
    return 0;
}
