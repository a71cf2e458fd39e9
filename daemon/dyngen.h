/*
 * dyngen.h — which dynamics armd computes with: the arm's generated code (tools/armgen) when
 * one matches the model, else the general core. Looked up once at start (main thread), in
 * order:
 *   1. the modules built into armd (one per example configuration, config/examples);
 *   2. the shared object CONFIG minus ".ini" plus ".dyn.so" (what `armgen --shared -c CONFIG`
 *      writes), if it exists; refused unless it is a regular file owned by root or by armd's
 *      user and writable by no one else (it becomes code of a process that moves a machine).
 * A module is used only if its ABI, joint count and model hash (dyn_model_hash: every number
 * of the model, payload and gravity included) equal the model's; otherwise the reason is
 * given in one sentence and the general core is used.
 */
#ifndef ARMD_DYNGEN_H
#define ARMD_DYNGEN_H

#include <stddef.h>

#include "dynamics/dynamics.h"

typedef struct {
    const dyn_gen_module *module; /* the matching module, or NULL: the general core */
    void *handle;                 /* dlopen handle when it came from the shared object */
    char what[1500];              /* which dynamics, and why (for the log, --check-config) */
    int refused;                  /* a shared object exists but is not used (a warning) */
} dyngen;

/* Finds the generated code for model m of the configuration at config_path. */
void dyngen_find(const char *config_path, const dyn_model *m, dyngen *out);
/* Unloads a shared object (after every user of its functions is gone). */
void dyngen_release(dyngen *g);

#endif
