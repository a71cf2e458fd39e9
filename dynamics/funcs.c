/* funcs.c — the general core as a function table, and the choice between it and generated
 * code (dynamics.h). */
#include "dynamics/dyn_internal.h"

const dyn_funcs dyn_general = {
    .rnea = dyn_rnea,
    .gravity = dyn_gravity,
    .coriolis = dyn_coriolis,
    .mass_matrix = dyn_mass_matrix,
    .forward = dyn_forward_aba,
    .jacobian = dyn_jacobian,
    .momentum = dyn_momentum,
    .friction = dyn_friction,
    .origin = "general core",
};

const dyn_funcs *dyn_funcs_for(const dyn_model *m, const dyn_gen_module *gen)
{
    if (!gen || gen->abi != DYN_GEN_ABI || gen->n != m->n || gen->hash != dyn_model_hash(m))
        return &dyn_general;
    return &gen->funcs;
}
