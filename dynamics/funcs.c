/* funcs.c — the general core as a function table, and the choice between it and generated
 * code (dynamics.h). */
#include "dynamics/dyn_internal.h"

/* The tool pose of dyn_fk, in the table's signature. */
static void tool_pose(const dyn_model *m, dyn_data *d, const double *q, double *T)
{
    dyn_fk(m, d, q, NULL, T);
}

const dyn_funcs dyn_general = {
    .rnea = dyn_rnea,
    .gravity = dyn_gravity,
    .coriolis = dyn_coriolis,
    .mass_matrix = dyn_mass_matrix,
    .forward = dyn_forward_aba,
    .jacobian = dyn_jacobian,
    .momentum = dyn_momentum,
    .friction = dyn_friction,
    .fk = tool_pose,
    .origin = "general core",
};

const dyn_funcs *dyn_funcs_for(const dyn_model *m, const dyn_gen_module *gen)
{
    if (!gen || gen->abi != DYN_GEN_ABI || gen->n != m->n || gen->hash != dyn_model_hash(m))
        return &dyn_general;
    return &gen->funcs;
}
