/*
 * gen.h — armgen's generator: one arm's model (its internal form) in, one C file out, with the
 * functions of a dyn_funcs table as straight-line code and a dyn_gen_module naming them.
 *
 * Files, one job each (tools/armgen/):
 *   expr.c   the expression graph: hash-consing (CSE) and constant folding (CLEAR)
 *   sym*.c   the dynamics recursions on expression nodes (NEDYN), see sym.h
 *   emit.c   one function as C, dead code removed, operations counted
 *   gen.c    which recursions make which function; the file around them
 *   main.c   the armgen program: INI in (config loader), C or shared object out
 */
#ifndef ARMD_ARMGEN_GEN_H
#define ARMD_ARMGEN_GEN_H

#include <stdio.h>

#include "dynamics/dynamics.h"
#include "tools/armgen/emit.h"

/* The generated functions, in dyn_funcs order. */
typedef enum {
    AG_RNEA,
    AG_GRAVITY,
    AG_CORIOLIS,
    AG_MASS_MATRIX,
    AG_FORWARD,
    AG_JACOBIAN,
    AG_MOMENTUM,
    AG_FRICTION,
    AG_FK,
    AG_NFUNC
} ag_func;

extern const char *const ag_func_name[AG_NFUNC];

typedef struct {
    op_count always[AG_NFUNC]; /* the code every call runs */
    op_count wrench[AG_NFUNC]; /* what a tool wrench adds (rnea, forward) */
    /* seed 001's cases (Tables 4.2-4.5: gravity, no armature, friction or wrench), counted
     * but not written */
    op_count rigid_rnea;       /* tau from q, qd, qdd (NEDYN) */
    op_count inertia_term;     /* H(q) qdd (HTERM) */
    op_count wrench_term;      /* J^T w (KTERM) */
    op_count rigid_mass;       /* H (HMAT) */
    op_count rigid_forward[2]; /* H + bias + LDL^T (method 3, HBMAT); the O(n) recursion */
    int forward_uses_aba;      /* the written forward(): the O(n) recursion (1) or method 3 (0),
                                  whichever has fewer operations with the run-time flags */
} ag_counts;

typedef struct {
    const char *symbol; /* C name of the dyn_gen_module */
    const char *arm;    /* [arm] name */
    const char *source; /* the INI it came from (for the comment) */
} ag_info;

/* Generates every function for the model in form f (hash: its dyn_model_hash) and writes the
 * C file to out (NULL: counts only). */
void ag_generate(const dyn_form *f, unsigned long long hash, const ag_info *info, FILE *out,
                 ag_counts *counts);

#endif
