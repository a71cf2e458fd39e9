/* gen.c — which recursion makes which generated function, and the C file around them (gen.h).
 * Each function is built on a fresh expression graph and written by emit.c. */
#include "tools/armgen/gen.h"

#include <stdlib.h>
#include <string.h>

#include "tools/armgen/sym.h"

const char *const ag_func_name[AG_NFUNC] = {"rnea",        "gravity",  "coriolis",
                                            "mass_matrix", "forward",  "jacobian",
                                            "momentum",    "friction", "fk"};

/* Each function's parameters: the dyn_funcs signature. */
static const char *const params[AG_NFUNC] = {
    "const dyn_model *m, dyn_data *d, const double *q, const double *qd, const double *qdd, "
    "const double *wrench, unsigned flags, double *tau",
    "const dyn_model *m, dyn_data *d, const double *q, double *tau",
    "const dyn_model *m, dyn_data *d, const double *q, const double *qd, double *tau",
    "const dyn_model *m, dyn_data *d, const double *q, unsigned flags, double *H",
    "const dyn_model *m, dyn_data *d, const double *q, const double *qd, const double *tau, "
    "const double *wrench, unsigned flags, double *qdd",
    "const dyn_model *m, dyn_data *d, const double *q, double *J",
    "const dyn_model *m, dyn_data *d, const double *q, const double *qd, unsigned flags, "
    "double *p, double *ctqd",
    "const dyn_model *m, const double *qd, double *tau",
    "const dyn_model *m, dyn_data *d, const double *q, double *T",
};

static const char *const unused[AG_NFUNC] = {
    "(void)m, (void)d, (void)q, (void)qd, (void)qdd, (void)wrench, (void)flags;",
    "(void)m, (void)d, (void)q;",
    "(void)m, (void)d, (void)q, (void)qd;",
    "(void)m, (void)d, (void)q, (void)flags;",
    "(void)m, (void)d, (void)q, (void)qd, (void)tau, (void)wrench, (void)flags;",
    "(void)m, (void)d, (void)q;",
    "(void)m, (void)d, (void)q, (void)qd, (void)flags;",
    "(void)m, (void)qd;",
    "(void)m, (void)d, (void)q;",
};

/* How a build treats the run-time flags: as inputs, or fixed for a count. */
typedef enum { FLAGS_RUNTIME, FLAGS_RIGID } flag_mode;

typedef struct {
    ex_graph g;
    sym_arm a;
    flag_mode mode;
    int q[DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF], tau[DYN_MAX_DOF], ext[DYN_MAX_DOF];
    int wrench[6];
    int flag[3]; /* gravity, armature, friction: inputs or constants */
} build;

/* A build of arm f on a fresh graph (build_free when done). */
static build *build_new(const dyn_form *f, flag_mode mode)
{
    build *b = ex_realloc(NULL, sizeof *b);
    memset(b, 0, sizeof *b);
    ex_init(&b->g);
    sym_arm_init(&b->a, &b->g, f);
    b->mode = mode;
    for (int i = 0; i < f->n; i++) {
        b->q[i] = ex_in(&b->g, IN_Q, i);
        b->qd[i] = ex_in(&b->g, IN_QD, i);
        b->qdd[i] = ex_in(&b->g, IN_QDD, i);
        b->tau[i] = ex_in(&b->g, IN_TAU, i);
        b->ext[i] = mode == FLAGS_RUNTIME ? ex_in(&b->g, IN_EXT, i) : EX_ZERO;
    }
    for (int k = 0; k < 6; k++) b->wrench[k] = ex_in(&b->g, IN_WRENCH, k);
    for (int k = 0; k < 3; k++)
        b->flag[k] = mode == FLAGS_RUNTIME ? ex_in(&b->g, IN_FLAG, k) : (k == 0 ? EX_ONE : EX_ZERO);
    return b;
}

static void build_free(build *b)
{
    ex_free(&b->g);
    free(b);
}

/* The base accelerates at -g when the gravity flag is set. */
static sv3 base_acc(build *b)
{
    sv3 r;
    for (int k = 0; k < 3; k++)
        r.v[k] = ex_sel(&b->g, b->flag[0], ex_const(&b->g, -b->a.f->gravity_b[k]), EX_ZERO);
    return r;
}

/* The tool wrench's effect alone: the recursion with only the wrench gives -J^T w. */
static void wrench_only(build *b, int *minus_jtw)
{
    const sym_ne_in in = {NULL, NULL, sv_zero(), b->wrench};
    sym_rnea(&b->a, &in, minus_jtw);
}

static emit_fn *begin(build *b, ag_func fn, const char *ret)
{
    emit_fn *e = emit_begin(&b->g, b->a.f, ret, ag_func_name[fn], params[fn]);
    emit_raw(e, "%s", unused[fn]);
    return e;
}

/* Inverse dynamics: the recursion with gravity by flag, + armature qdd, + friction (by flags),
 * and - J^T w in a block of its own when a wrench is given. */
static void gen_rnea(build *b, FILE *out, op_count *c, op_count *cw)
{
    const int n = b->a.n;
    int tau[DYN_MAX_DOF], kt[DYN_MAX_DOF];
    const sym_ne_in in = {b->qd, b->qdd, base_acc(b), NULL};
    sym_rnea(&b->a, &in, tau);
    emit_fn *e = begin(b, AG_RNEA, "void");
    emit_segment(e, NULL);
    for (int i = 0; i < n; i++) {
        const dyn_form_joint *j = &b->a.f->joint[i];
        const int arm = ex_sel(&b->g, b->flag[1], ex_mulk(&b->g, b->qdd[i], j->armature), EX_ZERO);
        const int fr = ex_sel(&b->g, b->flag[2], sym_friction(&b->a, i, b->qd[i]), EX_ZERO);
        emit_out(e, ex_add(&b->g, ex_add(&b->g, tau[i], arm), fr), '=', "tau[%d]", i);
    }
    if (b->mode == FLAGS_RUNTIME) {
        wrench_only(b, kt);
        emit_segment(e, "wrench");
        for (int i = 0; i < n; i++) emit_out(e, kt[i], '+', "tau[%d]", i);
    }
    emit_end(e, out, c, cw);
}

/* The recursion's separate terms (seed 001 §2.4: GTERM, CTERM, HTERM, KTERM). */
typedef enum { TERM_GRAVITY, TERM_CORIOLIS, TERM_INERTIA, TERM_WRENCH } term;

/* One term: written as function fn (gravity, coriolis), or only counted (fn = AG_NFUNC: the
 * inertia term H qdd and J^T w, which armd takes from rnea). */
static void gen_term(build *b, term t, ag_func fn, FILE *out, op_count *c)
{
    ex_graph *g = &b->g;
    const int n = b->a.n;
    int tau[DYN_MAX_DOF];
    sym_ne_in in = {NULL, NULL, sv_zero(), NULL};
    if (t == TERM_GRAVITY) in.base_acc = sv_sub(g, sv_zero(), sv_const(g, b->a.f->gravity_b));
    if (t == TERM_CORIOLIS) in.qd = b->qd;
    if (t == TERM_INERTIA) in.qdd = b->qdd;
    if (t == TERM_WRENCH) in.wrench = b->wrench;
    sym_rnea(&b->a, &in, tau);
    emit_fn *e = fn < AG_NFUNC ? begin(b, fn, "void")
                               : emit_begin(g, b->a.f, "void", "term", params[AG_RNEA]);
    emit_segment(e, NULL);
    for (int i = 0; i < n; i++)
        emit_out(e, t == TERM_WRENCH ? ex_neg(g, tau[i]) : tau[i], '=', "tau[%d]", i);
    emit_end(e, out, c, NULL);
}

static void gen_mass_matrix(build *b, FILE *out, op_count *c)
{
    const int n = b->a.n;
    int H[DYN_MAX_DOF * DYN_MAX_DOF];
    sym_mass_matrix(&b->a, b->flag[1], H);
    emit_fn *e = begin(b, AG_MASS_MATRIX, "void");
    emit_segment(e, NULL);
    for (int i = 0; i < n * n; i++) emit_out(e, H[i], '=', "H[%d]", i);
    emit_end(e, out, c, NULL);
}

/* Forward dynamics with the flags and wrench of dyn_forward_aba: J^T w (when a wrench is given)
 * into ext_ first, then qdd from tau + ext_ either by H (composite bodies) + bias + LDL^T
 * (use_aba 0, Walker-Orin method 3) or by the articulated-body recursion (use_aba 1). */
static void gen_forward(build *b, int use_aba, FILE *out, op_count *c, op_count *cw)
{
    ex_graph *g = &b->g;
    const int n = b->a.n;
    int kt[DYN_MAX_DOF], x[DYN_MAX_DOF], dpiv[DYN_MAX_DOF], fric[DYN_MAX_DOF], r[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        fric[i] = ex_sel(g, b->flag[2], sym_friction(&b->a, i, b->qd[i]), EX_ZERO);
        r[i] = ex_add(g, b->tau[i], b->ext[i]);
    }
    if (use_aba) {
        sym_aba(&b->a, b->qd, r, base_acc(b), b->flag[1], fric, x, dpiv);
    } else {
        int bias[DYN_MAX_DOF], H[DYN_MAX_DOF * DYN_MAX_DOF];
        const sym_ne_in in = {b->qd, NULL, base_acc(b), NULL};
        sym_rnea(&b->a, &in, bias);
        sym_mass_matrix(&b->a, b->flag[1], H);
        for (int i = 0; i < n; i++) r[i] = ex_sub(g, r[i], ex_add(g, bias[i], fric[i]));
        sym_ldlt_solve(g, n, H, r, x, dpiv);
    }
    emit_fn *e = begin(b, AG_FORWARD, "int");
    if (b->mode == FLAGS_RUNTIME) {
        wrench_only(b, kt);
        emit_raw(e, "double ext_[%d] = {0};", n);
        emit_segment(e, "wrench");
        for (int i = 0; i < n; i++) emit_out(e, ex_neg(g, kt[i]), '=', "ext_[%d]", i);
    }
    emit_segment(e, NULL);
    for (int i = 0; i < n; i++) emit_out(e, x[i], '=', "qdd[%d]", i);
    for (int i = 0; i < n; i++) emit_guard(e, dpiv[i], true);
    for (int i = 0; i < n; i++) emit_guard(e, x[i], false);
    emit_end(e, out, c, cw);
}

static void gen_jacobian(build *b, FILE *out, op_count *c)
{
    const int n = b->a.n;
    int J[6 * DYN_MAX_DOF];
    sym_jacobian(&b->a, J);
    emit_fn *e = begin(b, AG_JACOBIAN, "void");
    emit_segment(e, NULL);
    for (int i = 0; i < 6 * n; i++) emit_out(e, J[i], '=', "J[%d]", i);
    emit_end(e, out, c, NULL);
}

static void gen_momentum(build *b, FILE *out, op_count *c)
{
    const int n = b->a.n;
    int p[DYN_MAX_DOF], ct[DYN_MAX_DOF];
    sym_momentum(&b->a, b->qd, b->flag[1], p, ct);
    emit_fn *e = begin(b, AG_MOMENTUM, "void");
    emit_segment(e, NULL);
    for (int i = 0; i < n; i++) emit_out(e, p[i], '=', "p[%d]", i);
    for (int i = 0; i < n; i++) emit_out(e, ct[i], '=', "ctqd[%d]", i);
    emit_end(e, out, c, NULL);
}

static void gen_friction(build *b, FILE *out, op_count *c)
{
    emit_fn *e = begin(b, AG_FRICTION, "void");
    emit_segment(e, NULL);
    for (int i = 0; i < b->a.n; i++)
        emit_out(e, sym_friction(&b->a, i, b->qd[i]), '=', "tau[%d]", i);
    emit_end(e, out, c, NULL);
}

static void gen_fk(build *b, FILE *out, op_count *c)
{
    int T[12];
    sym_tool_pose(&b->a, T);
    emit_fn *e = begin(b, AG_FK, "void");
    emit_segment(e, NULL);
    for (int i = 0; i < 12; i++) emit_out(e, T[i], '=', "T[%d]", i);
    emit_end(e, out, c, NULL);
}

/* Builds function fn on a fresh graph (out NULL: counts only); use_aba picks the forward
 * dynamics method. */
static void generate(const dyn_form *f, ag_func fn, flag_mode mode, int use_aba, FILE *out,
                     op_count *c, op_count *cw)
{
    build *b = build_new(f, mode);
    switch (fn) {
    case AG_RNEA:
        gen_rnea(b, out, c, cw);
        break;
    case AG_GRAVITY:
        gen_term(b, TERM_GRAVITY, fn, out, c);
        break;
    case AG_CORIOLIS:
        gen_term(b, TERM_CORIOLIS, fn, out, c);
        break;
    case AG_MASS_MATRIX:
        gen_mass_matrix(b, out, c);
        break;
    case AG_FORWARD:
        gen_forward(b, use_aba, out, c, cw);
        break;
    case AG_JACOBIAN:
        gen_jacobian(b, out, c);
        break;
    case AG_MOMENTUM:
        gen_momentum(b, out, c);
        break;
    case AG_FK:
        gen_fk(b, out, c);
        break;
    default:
        gen_friction(b, out, c);
        break;
    }
    build_free(b);
}

/* Counts of the terms that are not functions of their own (inertia term, J^T w). */
static void count_terms(const dyn_form *f, ag_counts *k)
{
    build *b = build_new(f, FLAGS_RUNTIME);
    gen_term(b, TERM_INERTIA, AG_NFUNC, NULL, &k->inertia_term);
    build_free(b);
    b = build_new(f, FLAGS_RUNTIME);
    gen_term(b, TERM_WRENCH, AG_NFUNC, NULL, &k->wrench_term);
    build_free(b);
}

static void write_count(FILE *out, const char *what, const op_count *c)
{
    fprintf(out, " *   %-34s %5d %5d %4d %6d %5d %4d %4d\n", what, c->mul, c->add, c->div,
            op_total(c), c->trig, c->neg, c->sel);
}

static void write_header(FILE *out, const dyn_form *f, unsigned long long hash, const ag_info *info,
                         const ag_counts *k)
{
    fprintf(out,
            "/* Generated by armgen from %s: arm %s, %d joints, model hash 0x%016llx.\n"
            " * Do not edit: regenerate (armgen -c CONFIG). Straight-line code for this arm\n"
            " * only, every constant folded in; armd uses it while the model hash matches.\n"
            " *\n"
            " * Operations (mul, add = additions and subtractions, div; trig = sin/cos pairs, all\n"
            " * from one dyn_sincos_n call; neg = sign changes and sel = comparisons/selections,\n"
            " * not in the total):\n"
            " *   %-34s %5s %5s %4s %6s %5s %4s %4s\n",
            info->source, info->arm, f->n, hash, "function", "mul", "add", "div", "total", "trig",
            "neg", "sel");
    for (int fn = 0; fn < AG_NFUNC; fn++) {
        char what[64];
        snprintf(what, sizeof what, "%s%s", ag_func_name[fn],
                 fn == AG_FORWARD
                     ? (k->forward_uses_aba ? " (O(n) recursion)" : " (method 3 + LDL^T)")
                     : "");
        write_count(out, what, &k->always[fn]);
        if (fn == AG_RNEA || fn == AG_FORWARD)
            write_count(out, "  + with a tool wrench", &k->wrench[fn]);
    }
    fprintf(out, " * Without armature, friction and wrench (seed 001's NEDYN cases):\n");
    write_count(out, "rnea (NEDYN)", &k->rigid_rnea);
    write_count(out, "inertia term H qdd (HTERM)", &k->inertia_term);
    write_count(out, "external force J^T w (KTERM)", &k->wrench_term);
    write_count(out, "mass matrix (HMAT)", &k->rigid_mass);
    write_count(out, "forward, method 3 + LDL^T (HBMAT)", &k->rigid_forward[0]);
    write_count(out, "forward, O(n) recursion", &k->rigid_forward[1]);
    fprintf(out, " */\n#include <math.h>\n\n#include \"dynamics/dynamics.h\"\n\n");
}

void ag_generate(const dyn_form *f, unsigned long long hash, const ag_info *info, FILE *out,
                 ag_counts *counts)
{
    ag_counts k;
    memset(&k, 0, sizeof k);
    for (int fn = 0; fn < AG_NFUNC; fn++)
        if (fn != AG_FORWARD)
            generate(f, (ag_func)fn, FLAGS_RUNTIME, 0, NULL, &k.always[fn], &k.wrench[fn]);
    op_count fw[2];
    for (int m = 0; m < 2; m++) {
        generate(f, AG_FORWARD, FLAGS_RUNTIME, m, NULL, &fw[m], &k.wrench[AG_FORWARD]);
        generate(f, AG_FORWARD, FLAGS_RIGID, m, NULL, &k.rigid_forward[m], NULL);
    }
    k.forward_uses_aba = op_total(&fw[1]) < op_total(&fw[0]);
    k.always[AG_FORWARD] = fw[k.forward_uses_aba];
    generate(f, AG_RNEA, FLAGS_RIGID, 0, NULL, &k.rigid_rnea, NULL);
    generate(f, AG_MASS_MATRIX, FLAGS_RIGID, 0, NULL, &k.rigid_mass, NULL);
    count_terms(f, &k);
    if (out) {
        write_header(out, f, hash, info, &k);
        for (int fn = 0; fn < AG_NFUNC; fn++)
            generate(f, (ag_func)fn, FLAGS_RUNTIME, fn == AG_FORWARD && k.forward_uses_aba, out,
                     NULL, NULL);
        fprintf(out, "const dyn_gen_module %s = {\n    DYN_GEN_ABI,\n    0x%016llxull,\n    %d,\n",
                info->symbol, hash, f->n);
        fprintf(out,
                "    \"%s\",\n    {rnea, gravity, coriolis, mass_matrix, forward, jacobian, "
                "momentum, friction, fk,\n     \"generated code for %s\"},\n};\n",
                info->arm, info->arm);
    }
    if (counts) *counts = k;
}
