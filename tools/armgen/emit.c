/* emit.c — straight-line C for one generated function, with its operation counts (emit.h). */
#include "tools/armgen/emit.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { LHS_MAX = 48, TEXT_MAX = 256 };

typedef struct {
    bool is_segment;
    char text[TEXT_MAX]; /* raw line, or the segment's condition ("" = always) */
    int first_out, nout;
} item;

typedef struct {
    int node;
    char op;
    char lhs[LHS_MAX];
} output;

typedef struct {
    int node;
    bool positive;
} guard;

struct emit_fn {
    const ex_graph *g;
    const dyn_form *f;
    char head[TEXT_MAX * 2];
    const char *in_name[IN_KINDS];
    item *items;
    int nitems;
    output *outs;
    int nouts;
    guard *guards;
    int nguards;
    /* while writing */
    FILE *out;
    int *var;                 /* node -> variable number, -1 = not written (in scope) */
    int nvar;                 /* next variable number */
    int trig_of[DYN_MAX_DOF]; /* joint -> index in s_/c_, -1 = unused */
};

int op_total(const op_count *c)
{
    return c->mul + c->add + c->div;
}

emit_fn *emit_begin(const ex_graph *g, const dyn_form *f, const char *ret, const char *name,
                    const char *params)
{
    emit_fn *e = ex_realloc(NULL, sizeof *e);
    memset(e, 0, sizeof *e);
    e->g = g;
    e->f = f;
    snprintf(e->head, sizeof e->head, "static %s %s(%s)", ret, name, params);
    static const char *const names[IN_KINDS] = {
        [IN_Q] = "q",     [IN_QD] = "qd",         [IN_QDD] = "qdd",
        [IN_TAU] = "tau", [IN_WRENCH] = "wrench", [IN_EXT] = "ext_"};
    memcpy(e->in_name, names, sizeof names);
    return e;
}

void emit_input_name(emit_fn *e, ex_input kind, const char *name)
{
    e->in_name[kind] = name;
}

static item *new_item(emit_fn *e, bool seg)
{
    e->items = ex_realloc(e->items, sizeof(item) * (size_t)(e->nitems + 1));
    item *it = &e->items[e->nitems++];
    memset(it, 0, sizeof *it);
    it->is_segment = seg;
    it->first_out = e->nouts;
    return it;
}

void emit_raw(emit_fn *e, const char *fmt, ...)
{
    item *it = new_item(e, false);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->text, sizeof it->text, fmt, ap);
    va_end(ap);
}

void emit_segment(emit_fn *e, const char *cond)
{
    item *it = new_item(e, true);
    snprintf(it->text, sizeof it->text, "%s", cond ? cond : "");
}

void emit_out(emit_fn *e, int node, char op, const char *lhs_fmt, ...)
{
    if (op != '=' && node == EX_ZERO) return; /* += 0, -= 0 */
    e->outs = ex_realloc(e->outs, sizeof(output) * (size_t)(e->nouts + 1));
    output *o = &e->outs[e->nouts++];
    o->node = node;
    o->op = op;
    va_list ap;
    va_start(ap, lhs_fmt);
    vsnprintf(o->lhs, sizeof o->lhs, lhs_fmt, ap);
    va_end(ap);
    e->items[e->nitems - 1].nout++;
}

void emit_guard(emit_fn *e, int node, bool positive)
{
    e->guards = ex_realloc(e->guards, sizeof(guard) * (size_t)(e->nguards + 1));
    e->guards[e->nguards++] = (guard){node, positive};
}

/* ---------------------------------------------------------------- reachability */

static int arity(ex_op op)
{
    switch (op) {
    case EX_CONST:
    case EX_IN:
        return 0;
    case EX_NEG:
    case EX_CLAMP1:
        return 1;
    case EX_SEL:
    case EX_SIGNSEL:
        return 3;
    default:
        return 2;
    }
}

/* Marks in reach every node the given roots depend on (ids are topological: one sweep down). */
static void mark_from(const ex_graph *g, const int *roots, int nroots, bool *reach)
{
    int top = -1;
    for (int i = 0; i < nroots; i++) {
        reach[roots[i]] = true;
        if (roots[i] > top) top = roots[i];
    }
    for (int x = top; x >= 0; x--) {
        if (!reach[x]) continue;
        const ex_node *nd = &g->node[x];
        const int k = arity(nd->op), ch[3] = {nd->a, nd->b, nd->c};
        for (int j = 0; j < k; j++) reach[ch[j]] = true;
    }
}

/* Marks what the item's outputs depend on (one sweep for all of them). */
static void mark_item(const emit_fn *e, const item *it, bool *reach)
{
    int *roots = ex_realloc(NULL, sizeof(int) * (size_t)(it->nout + 1));
    for (int k = 0; k < it->nout; k++) roots[k] = e->outs[it->first_out + k].node;
    mark_from(e->g, roots, it->nout, reach);
    free(roots);
}

static void mark_guards(const emit_fn *e, bool *reach)
{
    int *roots = ex_realloc(NULL, sizeof(int) * (size_t)(e->nguards + 1));
    for (int k = 0; k < e->nguards; k++) roots[k] = e->guards[k].node;
    mark_from(e->g, roots, e->nguards, reach);
    free(roots);
}

/* ---------------------------------------------------------------- writing */

static void ref(const emit_fn *e, int x, char *buf, size_t len)
{
    const ex_node *nd = &e->g->node[x];
    if (nd->op == EX_CONST && !isfinite(nd->k)) { /* a division by a zero pivot */
        snprintf(buf, len, "%s", isnan(nd->k) ? "NAN" : nd->k > 0 ? "INFINITY" : "(-INFINITY)");
    } else if (nd->op == EX_CONST) {
        char num[40];
        snprintf(num, sizeof num, "%.17g", nd->k);
        if (!strpbrk(num, ".en")) strcat(num, ".0");
        snprintf(buf, len, nd->k < 0 ? "(%s)" : "%s", num);
    } else if (nd->op == EX_IN && (nd->a == IN_SIN || nd->a == IN_COS)) {
        snprintf(buf, len, "%s[%d]", nd->a == IN_SIN ? "s_" : "c_", e->trig_of[nd->b]);
    } else if (nd->op == EX_IN && nd->a == IN_FLAG) {
        snprintf(buf, len, "(flags & %uu)", 1u << nd->b);
    } else if (nd->op == EX_IN) {
        snprintf(buf, len, "%s[%d]", e->in_name[nd->a], nd->b);
    } else {
        snprintf(buf, len, "x%d", e->var[x]);
    }
}

static void count_op(ex_op op, op_count *c)
{
    switch (op) {
    case EX_ADD:
    case EX_SUB:
        c->add++;
        break;
    case EX_MUL:
        c->mul++;
        break;
    case EX_DIV:
        c->div++;
        break;
    case EX_NEG:
        c->neg++;
        break;
    case EX_SEL:
    case EX_SIGNSEL:
    case EX_CLAMP1:
        c->sel++;
        break;
    default:
        break;
    }
}

/* Writes node x as a variable (its operands are written already) and counts it. */
static void write_node(emit_fn *e, int x, const char *indent, op_count *c)
{
    const ex_node *nd = &e->g->node[x];
    if (nd->op == EX_CONST || nd->op == EX_IN) return;
    char a[64], b[64], cc[64];
    ref(e, nd->a, a, sizeof a);
    if (arity(nd->op) > 1) ref(e, nd->b, b, sizeof b);
    if (arity(nd->op) > 2) ref(e, nd->c, cc, sizeof cc);
    e->var[x] = e->nvar++;
    count_op(nd->op, c);
    if (!e->out) return;
    fprintf(e->out, "%sconst double x%d = ", indent, e->var[x]);
    switch (nd->op) {
    case EX_ADD:
        fprintf(e->out, "%s + %s;\n", a, b);
        break;
    case EX_SUB:
        fprintf(e->out, "%s - %s;\n", a, b);
        break;
    case EX_MUL:
        fprintf(e->out, "%s * %s;\n", a, b);
        break;
    case EX_DIV:
        fprintf(e->out, "%s / %s;\n", a, b);
        break;
    case EX_NEG:
        fprintf(e->out, "-%s;\n", a);
        break;
    case EX_SEL:
        fprintf(e->out, "%s ? %s : %s;\n", a, b, cc);
        break;
    case EX_SIGNSEL:
        fprintf(e->out, "%s > 0.0 ? %s : (%s < 0.0 ? %s : 0.0);\n", a, b, a, cc);
        break;
    default: /* EX_CLAMP1 */
        fprintf(e->out, "%s > 1.0 ? 1.0 : (%s < -1.0 ? -1.0 : %s);\n", a, a, a);
        break;
    }
}

/* Writes, in graph order, every node of want that is not written yet. */
static void write_nodes(emit_fn *e, const bool *want, const char *indent, op_count *c)
{
    for (int x = 0; x < e->g->len; x++)
        if (want[x] && e->var[x] < 0) write_node(e, x, indent, c);
}

static void write_outputs(emit_fn *e, const item *it, const char *indent, op_count *c)
{
    for (int k = 0; k < it->nout; k++) {
        const output *o = &e->outs[it->first_out + k];
        char r[64];
        ref(e, o->node, r, sizeof r);
        if (o->op != '=') c->add++;
        if (e->out)
            fprintf(e->out, "%s%s %s %s;\n", indent, o->lhs,
                    o->op == '='   ? "="
                    : o->op == '+' ? "+="
                                   : "-=",
                    r);
    }
}

/* theta = q + toff of every revolute joint whose sin or cos is used, then one dyn_sincos_n. */
static void write_trig(emit_fn *e, const bool *used, op_count *c)
{
    int k = 0;
    for (int i = 0; i < e->f->n; i++) e->trig_of[i] = -1;
    for (int x = 0; x < e->g->len; x++) {
        const ex_node *nd = &e->g->node[x];
        if (used[x] && nd->op == EX_IN && (nd->a == IN_SIN || nd->a == IN_COS))
            e->trig_of[nd->b] = 0;
    }
    for (int i = 0; i < e->f->n; i++)
        if (e->trig_of[i] == 0) e->trig_of[i] = k++ + 1;
    if (k == 0) return;
    for (int i = 0; i < e->f->n; i++)
        if (e->trig_of[i] > 0) e->trig_of[i]--;
    c->trig = k;
    if (e->out) fprintf(e->out, "    double th_[%d], s_[%d], c_[%d];\n", k, k, k);
    for (int i = 0; i < e->f->n; i++) {
        if (e->trig_of[i] < 0) continue;
        const double toff = e->f->joint[i].toff;
        if (toff != 0.0) c->add++;
        if (!e->out) continue;
        if (toff != 0.0)
            fprintf(e->out, "    th_[%d] = %s[%d] + %.17g;\n", e->trig_of[i], e->in_name[IN_Q], i,
                    toff);
        else
            fprintf(e->out, "    th_[%d] = %s[%d];\n", e->trig_of[i], e->in_name[IN_Q], i);
    }
    if (e->out) fprintf(e->out, "    dyn_sincos_n(th_, s_, c_, %d);\n", k);
}

static void emit_free(emit_fn *e)
{
    free(e->items);
    free(e->outs);
    free(e->guards);
    free(e->var);
    free(e);
}

void emit_end(emit_fn *e, FILE *out, op_count *always, op_count *cond)
{
    const size_t n = (size_t)e->g->len;
    op_count ca = {0}, cc = {0};
    bool *all = ex_realloc(NULL, 4 * n), *uncond = all + n, *seg = all + 2 * n,
         *hoist = all + 3 * n;
    memset(all, 0, 4 * n);
    e->var = ex_realloc(NULL, sizeof(int) * n);
    for (size_t x = 0; x < n; x++) e->var[x] = -1;
    e->out = out;
    for (int i = 0; i < e->nitems; i++) {
        if (!e->items[i].is_segment) continue;
        mark_item(e, &e->items[i], all);
        if (!e->items[i].text[0]) mark_item(e, &e->items[i], uncond);
    }
    mark_guards(e, all);
    mark_guards(e, uncond);
    if (out) fprintf(out, "%s\n{\n", e->head);
    write_trig(e, all, &ca);
    for (int i = 0; i < e->nitems; i++) {
        const item *it = &e->items[i];
        if (!it->is_segment) {
            if (out) fprintf(out, "    %s\n", it->text);
            continue;
        }
        memset(seg, 0, n);
        mark_item(e, it, seg);
        if (!it->text[0]) {
            write_nodes(e, seg, "    ", &ca);
            write_outputs(e, it, "    ", &ca);
            continue;
        }
        for (size_t x = 0; x < n; x++) hoist[x] = seg[x] && uncond[x];
        write_nodes(e, hoist, "    ", &ca);
        if (out) fprintf(out, "    if (%s) {\n", it->text);
        int before = e->nvar;
        write_nodes(e, seg, "        ", &cc);
        write_outputs(e, it, "        ", &cc);
        if (out) fprintf(out, "    }\n");
        for (size_t x = 0; x < n; x++) /* the block's variables go out of scope */
            if (e->var[x] >= before) e->var[x] = -1;
    }
    memset(seg, 0, n);
    mark_guards(e, seg);
    write_nodes(e, seg, "    ", &ca);
    for (int k = 0; k < e->nguards && out; k++) {
        char r[64];
        ref(e, e->guards[k].node, r, sizeof r);
        if (e->guards[k].positive)
            fprintf(out, "    if (!(%s > 0.0) || !isfinite(%s)) return -1;\n", r, r);
        else
            fprintf(out, "    if (!isfinite(%s)) return -1;\n", r);
    }
    if (out && e->nguards) fprintf(out, "    return 0;\n");
    if (out) fprintf(out, "}\n\n");
    if (always) *always = ca;
    if (cond) *cond = cc;
    free(all);
    emit_free(e);
}
