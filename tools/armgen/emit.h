/*
 * emit.h — writes one generated function as straight-line C and counts its operations.
 *
 * A function is a list of items, in order: raw lines, and segments. A segment assigns output
 * expressions (graph nodes) to C lvalues; it runs always, or only under a C condition (the
 * tool wrench: `if (wrench)`). Only the nodes some output depends on are written (dead-code
 * removal); each once, as `const double xK = ...;`, in graph order (a valid evaluation order).
 * Nodes a conditional segment shares with a later unconditional one are written before its
 * block. Constants and inputs appear inline; the sines and cosines of the revolute joints used
 * come first, from one dyn_sincos_n call on theta = q + toff. Guards are nodes that must be
 * positive and finite, else the function returns -1 (forward dynamics' pivots).
 */
#ifndef ARMD_ARMGEN_EMIT_H
#define ARMD_ARMGEN_EMIT_H

#include <stdbool.h>
#include <stdio.h>

#include "dynamics/dynamics.h"
#include "tools/armgen/expr.h"

/* Operations of the written code (constants folded, dead code removed). */
typedef struct {
    int mul, add, div; /* multiplications, additions and subtractions, divisions */
    int neg;           /* sign changes left as operations (not in the total) */
    int sel;           /* comparisons and selections (flags, Coulomb sign, clamp) */
    int trig;          /* sin/cos pairs (one dyn_sincos_n call holds all) */
} op_count;

int op_total(const op_count *c); /* mul + add + div */

typedef struct emit_fn emit_fn;

/* Starts a function `ret name(params)` on graph g for the arm f (its angle offsets). */
emit_fn *emit_begin(const ex_graph *g, const dyn_form *f, const char *ret, const char *name,
                    const char *params);
/* Names an input kind in the written code (default q, qd, qdd, tau, wrench, ext). */
void emit_input_name(emit_fn *e, ex_input kind, const char *name);
/* Appends a raw line. */
void emit_raw(emit_fn *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Starts a segment; cond NULL = always. */
void emit_segment(emit_fn *e, const char *cond);
/* lhs op= node in the current segment; op is '=', '+' or '-'. */
void emit_out(emit_fn *e, int node, char op, const char *lhs_fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* At the end: if node is not finite (or, with positive, not > 0) the function returns -1. */
void emit_guard(emit_fn *e, int node, bool positive);
/* Writes the function to out (NULL: count only), frees e. always / cond receive the counts of
 * the unconditional and the conditional code (either may be NULL). */
void emit_end(emit_fn *e, FILE *out, op_count *always, op_count *cond);

#endif
