/*
 * contact.h — external forces on the simulated arm besides its motors, so that tests can hit
 * something (issue 14, collision detection):
 *
 *  - pushes (--push): a constant joint torque [N m|N] on one joint while the step's start time
 *    lies in [T, T + DURATION) (simulated time since start; a stretch of time the physics had to
 *    skip is skipped by the push too);
 *  - tool forces (--tool-force): a constant force [N], base frame, on the tool point over such
 *    a window, felt as J^T F;
 *  - a wall (--wall): a one-sided spring-damper on the tool point (the tool frame origin of
 *    dyn_fk) along one axis of the BASE frame. Depth d = side (p[axis] - position) > 0 inside
 *    the wall; force magnitude f = k d + c d' (never pulling into the wall, so f >= 0), directed
 *    out of the wall (-side along the axis); joint torques tau = J^T F with the linear rows of
 *    dyn_jacobian. c = 2 WALL_ZETA sqrt(k m_eff), m_eff the arm's inertia felt along the axis at
 *    the current q, 1 / (u^T J H^-1 J^T u): a lightly damped contact, so that an arm resting on
 *    the wall comes to rest instead of bouncing for ever (the spring alone conserves energy).
 *
 * Sign convention: torques and forces are those the ENVIRONMENT applies to the arm; they add to
 * the motor torque. All joint-side SI. The wall is evaluated at every RK4 stage (consistent with
 * the stage's q, qd); the pushes are held over a step, like the motor torque.
 *
 * Threads: contact_init on the main thread; the rest on the physics thread only.
 */
#ifndef ARMSIM_CONTACT_H
#define ARMSIM_CONTACT_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "dynamics/dynamics.h"
#include "tools/armsim/options.h"

#define WALL_ZETA 0.3 /* damping ratio of the wall contact (see above) */

typedef struct {
    int n;                               /* joints */
    int n_push;                          /* entries in push */
    armsim_push push[ARMSIM_MAX_PUSHES]; /* as given, joint checked against n */
    uint64_t push_from_ns[ARMSIM_MAX_PUSHES], push_to_ns[ARMSIM_MAX_PUSHES]; /* [from, to) */
    int n_tool_force;
    armsim_tool_force tool_force[ARMSIM_MAX_PUSHES];
    uint64_t tf_from_ns[ARMSIM_MAX_PUSHES], tf_to_ns[ARMSIM_MAX_PUSHES]; /* [from, to) */
    armsim_wall wall;             /* wall.on false: no wall */
    double J[6 * CFG_MAX_JOINTS]; /* tool Jacobian scratch, 6 x n (physics thread) */
} armsim_contact;

/* Copies the --push and --wall options for an arm of n joints and checks each push's joint
 * against n. 0, or -1 with err naming the option ("--push 2: joint 3, but the arm has 2"). */
int contact_init(armsim_contact *c, const armsim_options *o, int n, char *err, size_t errlen);

/* Sum of the pushes acting on each joint during the step that starts at t_ns [ns of simulated
 * time since start]: tau[j] = sum of TORQUE over the pushes on j with t_ns in [T, T+DURATION).
 * Joint-side [N m|N]; tau has n entries and is overwritten. */
void contact_push_torque(const armsim_contact *c, uint64_t t_ns, double *tau);

/* Adds to tau (n entries) the joint torques J^T F of the tool forces acting during the step that
 * starts at t_ns (their sum F, base frame, at the tool point; J the linear rows of dyn_jacobian
 * at q), held over the step like the pushes. */
void contact_tool_force_torque(armsim_contact *c, const dyn_model *m, dyn_data *d, const double *q,
                               uint64_t t_ns, double *tau);

/* The wall at joint state (q [rad|m], qd [rad/s|m/s]): writes the joint torques J^T F it
 * applies to tau (n entries, overwritten; all 0 outside the wall or without one) and returns
 * the force magnitude |F| [N] (0 outside). Uses m and d (dyn_fk, dyn_jacobian, and
 * dyn_forward_chol for m_eff while inside). */
double contact_wall_torque(armsim_contact *c, const dyn_model *m, dyn_data *d, const double *q,
                           const double *qd, double *tau);

#endif
