/*
 * traj_shape.h — input shaping of a built plan (main thread: it allocates scratch).
 */
#ifndef ARMD_TRAJ_SHAPE_H
#define ARMD_TRAJ_SHAPE_H

#include "daemon/shaper.h"
#include "daemon/traj_plan.h"

/* Replaces p (built from start, not yet validated) by its convolution with the impulse train
 * sh: q_s(t) = sum_i A_i q(t - t_i), where q before t = 0 is the start position held (at
 * rest), or (moving) a quintic joining the plan C2 that makes the shaped path start exactly at
 * the start state, and after the end the held end position. The plan
 * is then longer by shaper_duration(sh) and ends at rest at the same goal; segment 0 is
 * re-anchored at start (traj_reanchor). sh->n <= 1 leaves p untouched. Main thread (it
 * allocates scratch). Returns 0, or -1 with *err when the shaped plan needs more than p->cap
 * segments or memory runs out. */
int traj_shape(traj_plan *p, const shaper *sh, const traj_state *start, traj_error *err);

#endif
