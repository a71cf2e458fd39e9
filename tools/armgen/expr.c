/* expr.c — the hash-consed, self-folding expression graph (see expr.h). */
#include "tools/armgen/expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *ex_realloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "armgen: out of memory\n");
        exit(1);
    }
    return q;
}

static unsigned long long node_key(const ex_node *n)
{
    unsigned long long bits;
    memcpy(&bits, &n->k, sizeof bits);
    unsigned long long h = (unsigned long long)n->op * 0x9e3779b97f4a7c15ull;
    h ^= (unsigned long long)(unsigned)n->a * 0xbf58476d1ce4e5b9ull;
    h ^= (unsigned long long)(unsigned)n->b * 0x94d049bb133111ebull;
    h ^= (unsigned long long)(unsigned)n->c * 0x2545f4914f6cdd1dull;
    h ^= bits * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

static bool node_equal(const ex_node *x, const ex_node *y)
{
    return x->op == y->op && x->a == y->a && x->b == y->b && x->c == y->c &&
           memcmp(&x->k, &y->k, sizeof x->k) == 0;
}

static void rehash(ex_graph *g)
{
    g->nslot = g->nslot ? 2 * g->nslot : 1024;
    g->slot = ex_realloc(g->slot, sizeof(int) * (size_t)g->nslot);
    memset(g->slot, 0xff, sizeof(int) * (size_t)g->nslot);
    for (int i = 0; i < g->len; i++) {
        size_t s = node_key(&g->node[i]) & (size_t)(g->nslot - 1);
        while (g->slot[s] >= 0) s = (s + 1) & (size_t)(g->nslot - 1);
        g->slot[s] = i;
    }
}

/* The node equal to *n, created if it does not exist yet (hash-consing). */
static int intern(ex_graph *g, ex_node n)
{
    if (2 * (g->len + 1) > g->nslot) rehash(g);
    size_t s = node_key(&n) & (size_t)(g->nslot - 1);
    for (; g->slot[s] >= 0; s = (s + 1) & (size_t)(g->nslot - 1))
        if (node_equal(&g->node[g->slot[s]], &n)) return g->slot[s];
    if (g->len == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 4096;
        g->node = ex_realloc(g->node, sizeof(ex_node) * (size_t)g->cap);
    }
    g->node[g->len] = n;
    g->slot[s] = g->len;
    return g->len++;
}

static int make(ex_graph *g, ex_op op, int a, int b, int c)
{
    ex_node n = {op, a, b, c, 0.0};
    return intern(g, n);
}

/* A commutative operation with its operands in id order (a + b and b + a are one node). */
static int make_sorted(ex_graph *g, ex_op op, int a, int b)
{
    return a < b ? make(g, op, a, b, 0) : make(g, op, b, a, 0);
}

void ex_init(ex_graph *g)
{
    memset(g, 0, sizeof *g);
    ex_const(g, 0.0); /* EX_ZERO */
    ex_const(g, 1.0); /* EX_ONE */
}

void ex_free(ex_graph *g)
{
    free(g->node);
    free(g->slot);
    memset(g, 0, sizeof *g);
}

int ex_const(ex_graph *g, double k)
{
    ex_node n = {EX_CONST, 0, 0, 0, k == 0.0 ? 0.0 : k}; /* -0 is 0 */
    return intern(g, n);
}

int ex_in(ex_graph *g, ex_input kind, int index)
{
    return make(g, EX_IN, (int)kind, index, 0);
}

bool ex_is_const(const ex_graph *g, int x, double *k)
{
    if (g->node[x].op != EX_CONST) return false;
    if (k) *k = g->node[x].k;
    return true;
}

static bool is_op(const ex_graph *g, int x, ex_op op)
{
    return g->node[x].op == op;
}

int ex_neg(ex_graph *g, int a)
{
    double k;
    const ex_node *n = &g->node[a];
    if (ex_is_const(g, a, &k)) return ex_const(g, -k);
    if (n->op == EX_NEG) return n->a;
    if (n->op == EX_SUB) return ex_sub(g, n->b, n->a);
    return make(g, EX_NEG, a, 0, 0);
}

int ex_add(ex_graph *g, int a, int b)
{
    double ka, kb;
    bool ca = ex_is_const(g, a, &ka), cb = ex_is_const(g, b, &kb);
    if (ca && cb) return ex_const(g, ka + kb);
    if (ca && ka == 0.0) return b;
    if (cb && kb == 0.0) return a;
    if (is_op(g, b, EX_NEG)) return ex_sub(g, a, g->node[b].a);
    if (is_op(g, a, EX_NEG)) return ex_sub(g, b, g->node[a].a);
    return make_sorted(g, EX_ADD, a, b);
}

int ex_sub(ex_graph *g, int a, int b)
{
    double ka, kb;
    bool ca = ex_is_const(g, a, &ka), cb = ex_is_const(g, b, &kb);
    if (ca && cb) return ex_const(g, ka - kb);
    if (cb && kb == 0.0) return a;
    if (ca && ka == 0.0) return ex_neg(g, b);
    if (a == b) return EX_ZERO;
    if (is_op(g, b, EX_NEG)) return ex_add(g, a, g->node[b].a);
    if (is_op(g, a, EX_NEG)) return ex_neg(g, ex_add(g, g->node[a].a, b));
    return make(g, EX_SUB, a, b, 0);
}

int ex_mul(ex_graph *g, int a, int b)
{
    double ka, kb;
    bool ca = ex_is_const(g, a, &ka), cb = ex_is_const(g, b, &kb);
    if (ca && cb) return ex_const(g, ka * kb);
    if (cb) { /* the constant first */
        int t = a;
        a = b, b = t;
        ka = kb, ca = true;
    }
    if (ca) {
        if (ka == 0.0) return EX_ZERO;
        if (ka == 1.0) return b;
        if (ka == -1.0) return ex_neg(g, b);
        const ex_node *nb = &g->node[b];
        double k2;
        if (nb->op == EX_MUL && ex_is_const(g, nb->a, &k2)) return ex_mulk(g, nb->b, ka * k2);
        if (nb->op == EX_NEG) return ex_mulk(g, nb->a, -ka);
        if (ka < 0.0) return ex_neg(g, make(g, EX_MUL, ex_const(g, -ka), b, 0));
        return make(g, EX_MUL, a, b, 0);
    }
    if (is_op(g, a, EX_NEG)) return ex_neg(g, ex_mul(g, g->node[a].a, b));
    if (is_op(g, b, EX_NEG)) return ex_neg(g, ex_mul(g, a, g->node[b].a));
    return make_sorted(g, EX_MUL, a, b);
}

int ex_div(ex_graph *g, int a, int b)
{
    double ka, kb;
    bool ca = ex_is_const(g, a, &ka), cb = ex_is_const(g, b, &kb);
    if (ca && ka == 0.0) return EX_ZERO;
    if (cb) return ex_mulk(g, a, 1.0 / kb);
    (void)ca;
    if (is_op(g, a, EX_NEG)) return ex_neg(g, ex_div(g, g->node[a].a, b));
    return make(g, EX_DIV, a, b, 0);
}

int ex_sel(ex_graph *g, int flag, int a, int b)
{
    double k;
    if (ex_is_const(g, flag, &k)) return k != 0.0 ? a : b;
    if (a == b) return a;
    return make(g, EX_SEL, flag, a, b);
}

int ex_signsel(ex_graph *g, int x, int pos, int neg)
{
    double k;
    if (ex_is_const(g, x, &k)) return k > 0.0 ? pos : (k < 0.0 ? neg : EX_ZERO);
    if (pos == EX_ZERO && neg == EX_ZERO) return EX_ZERO;
    return make(g, EX_SIGNSEL, x, pos, neg);
}

int ex_clamp1(ex_graph *g, int x)
{
    double k;
    if (ex_is_const(g, x, &k)) return ex_const(g, k > 1.0 ? 1.0 : (k < -1.0 ? -1.0 : k));
    return make(g, EX_CLAMP1, x, 0, 0);
}

int ex_mulk(ex_graph *g, int x, double k)
{
    return ex_mul(g, ex_const(g, k), x);
}

int ex_addk(ex_graph *g, int x, double k)
{
    return ex_add(g, x, ex_const(g, k));
}

int ex_fma2(ex_graph *g, int a, int b, int c, int d)
{
    return ex_add(g, ex_mul(g, a, b), ex_mul(g, c, d));
}
