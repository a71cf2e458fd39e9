/*
 * flexsim.h — armsim's flexible arm: the model of dynamics/flex.h built from the config's
 * flex_* keys (the links' rigid parts by cfg_flex_rigid_parts plus their beams), the RK4
 * substeps its highest mode needs, and its truth columns (modal coordinates, tool deflection).
 * physics.c integrates it; this file only builds and describes it. All SI.
 */
#ifndef ARMSIM_FLEXSIM_H
#define ARMSIM_FLEXSIM_H

#include <stddef.h>

#include "config/config.h"
#include "dynamics/flex.h"

/* Largest state: every joint with 4 modes in each of the 3 directions. */
#define FLEXSIM_MAX_X (CFG_MAX_JOINTS * (1 + 3 * DYN_FLEX_MAX_MODES))
/* RK4 is stable for omega h < 2.8; the clamped frequencies below underestimate the arm's (a free
 * joint stiffens a mode, up to (3.927 / 1.875)^2 = 4.4 x for a lone first mode), so each substep
 * keeps omega_max h <= FLEXSIM_OMEGA_H. */
#define FLEXSIM_OMEGA_H      0.5
#define FLEXSIM_MAX_SUBSTEPS 64

typedef struct {
    dyn_flex_model *m; /* NULL: a rigid arm */
    dyn_flex_data *d;
    int n, nx;                          /* joints; joints + modal coordinates */
    int substeps;                       /* RK4 steps per physics step */
    double omega_max;                   /* highest clamped mode [rad/s] */
    int omega_link, omega_dir, omega_k; /* ... which one (0-based) */
    int n_extra;                        /* truth columns: nx - n modes, then 3 deflections */
    int modes[CFG_MAX_JOINTS][3];       /* per link: modes along y, along z, torsion */
} flexsim;

/* Builds the flexible model of desc (the simulated arm after --model, --mass-scale, --payload,
 * --no-gravity, whole links as armd sees them) with the beams flex (cfg: joint names), and the
 * substeps for step dt [s]. 0, or -1 with err (a beam that does not fit, a mode too
 * fast for FLEXSIM_MAX_SUBSTEPS at this step: the message names its frequency and the step). */
int flexsim_create(flexsim *f, const armd_config *cfg, const dyn_model_desc *desc,
                   const dyn_flex_desc *flex, double dt, char *err, size_t errlen);
void flexsim_free(flexsim *f);
/* The truth header's extra columns ",JOINT_y1,...,defl_x,defl_y,defl_z" into buf. */
void flexsim_header(const flexsim *f, const armd_config *cfg, char *buf, size_t len);
/* The extra truth values at state x: modal coordinates [m|rad], tool deflection [m]. */
void flexsim_truth(const flexsim *f, const double *x, double *extra);

#endif
