/*
 * expr.h — armgen's expression graph: what seed 001's CLEAR post-processor does to NEDYN's
 * output, done while the expressions are built.
 *
 * Every value the generated code computes is a node: a constant, an input (q[i], sin theta_i,
 * a flag, ...) or an operation on earlier nodes. Nodes are hash-consed: asking for an operation
 * that exists already returns the existing node, so a common subexpression is computed once
 * (CLEAR's "renaming of duplicate terms"). Each constructor folds what it can:
 *   constants:   c1 op c2 is computed now; c1 * (c2 * x) becomes (c1 c2) * x ("pre-computation
 *                of operations involving constants");
 *   zero, one:   x + 0, x * 1, x * 0 vanish, x * -1 becomes -x; so a twist of exactly +-pi/2
 *                (cos 0, sin +-1) turns a rotation into a swap with a sign change, and a zero
 *                mass, COM coordinate or inertia removes every term it multiplies;
 *   signs:       a constant factor is kept positive (-2 x is -(2 x)); negations move outward
 *                (-x * y = -(x y)) and into subtractions (a + -b = a - b, -(a - b) = b - a),
 *                so few survive as operations;
 *   order:       the operands of + and * are sorted, so a + b and b + a are one node.
 * Nodes are numbered in creation order, which is a valid evaluation order; dead-code removal
 * is the emitter's: it writes only the nodes an output depends on (emit.c).
 * Folding ignores IEEE special cases (x * 0 = 0 even for an infinite x): the model's numbers
 * are finite, and the inputs are joint states.
 */
#ifndef ARMD_ARMGEN_EXPR_H
#define ARMD_ARMGEN_EXPR_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    EX_CONST,
    EX_IN,      /* an input: a = ex_input kind, b = index */
    EX_ADD,     /* a + b */
    EX_SUB,     /* a - b */
    EX_MUL,     /* a * b */
    EX_DIV,     /* a / b */
    EX_NEG,     /* -a */
    EX_SEL,     /* flag a (an EX_IN of kind IN_FLAG) ? b : c */
    EX_SIGNSEL, /* a > 0 ? b : (a < 0 ? c : 0) */
    EX_CLAMP1   /* a clamped to [-1, 1] */
} ex_op;

typedef enum {
    IN_Q,      /* joint position q[i] */
    IN_QD,     /* velocity qd[i] */
    IN_QDD,    /* acceleration qdd[i] */
    IN_TAU,    /* joint torque tau[i] (forward dynamics) */
    IN_WRENCH, /* wrench[i], i < 6 */
    IN_SIN,    /* sin theta_i (revolute joint i) */
    IN_COS,    /* cos theta_i */
    IN_FLAG,   /* flags & (1 << i): DYN_GRAVITY, DYN_ARMATURE, DYN_FRICTION */
    IN_EXT,    /* an external joint torque J^T w computed by an earlier segment (emit.h) */
    IN_KINDS
} ex_input;

typedef struct {
    ex_op op;
    int a, b, c;
    double k; /* EX_CONST */
} ex_node;

typedef struct {
    ex_node *node;
    int len, cap;
    int *slot; /* open-addressing hash table of node ids, -1 = empty */
    int nslot;
} ex_graph;

/* realloc that ends armgen with a message when memory runs out (a generator has nothing to
 * fall back to). */
void *ex_realloc(void *p, size_t n);

/* A new graph holding the constants 0 (node EX_ZERO) and 1 (EX_ONE); exits on no memory. */
void ex_init(ex_graph *g);
void ex_free(ex_graph *g);
enum { EX_ZERO = 0, EX_ONE = 1 };

int ex_const(ex_graph *g, double k);
int ex_in(ex_graph *g, ex_input kind, int index);
int ex_add(ex_graph *g, int a, int b);
int ex_sub(ex_graph *g, int a, int b);
int ex_mul(ex_graph *g, int a, int b);
int ex_div(ex_graph *g, int a, int b);
int ex_neg(ex_graph *g, int a);
int ex_sel(ex_graph *g, int flag, int a, int b);
int ex_signsel(ex_graph *g, int x, int pos, int neg);
int ex_clamp1(ex_graph *g, int x);

/* Shorthands: x * k and x + k for a constant k; a b + c d (a sum of products). */
int ex_mulk(ex_graph *g, int x, double k);
int ex_addk(ex_graph *g, int x, double k);
int ex_fma2(ex_graph *g, int a, int b, int c, int d);

/* True if node x is a constant (its value in *k when k is not NULL). */
bool ex_is_const(const ex_graph *g, int x, double *k);

#endif
