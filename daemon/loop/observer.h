/*
 * observer.h — daemon/loop/ private: collision detection while the arm is enabled (the
 * momentum observer of daemon/collision.h run every tick with a fresh state), the wrench at
 * the tool it implies, and the reactions to a detected collision (a joint over its threshold
 * or the tool force over [safety] max_tool_force; collision, collision_reaction): an event
 * only, or stop, damp, retract or float. The only writer of the observer, its latch and the
 * collision count; the only place a COLLISION event comes from. Control thread only.
 */
#ifndef ARMD_LOOP_OBSERVER_H
#define ARMD_LOOP_OBSERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/collision.h"
#include "daemon/loop/guard.h"
#include "daemon/loop/motion.h"
#include "daemon/loop/sense.h"
#include "daemon/loop/torque.h"

typedef struct {
    int n;
    coll_observer obs;
    bool latched;   /* a detection not yet over (one event per contact) */
    double suspect; /* after a read gap or a late tick the states are suspect this long [s] */
    uint64_t collisions;
    /* the wrench at the tool the external torque estimate implies (dyn_tool_wrench: force [N],
     * moment about the tool origin [N m], base frame); NaN while the observer does not run */
    double wrench[6];
} observer;

void observer_init(observer *ob, int n);
/* Stops the observer (not enabled, or new dynamics): started afresh at its next step. */
void observer_stop(observer *ob);
/* The momentum of the motor torque written last tick and taken by the servos [N m|N]. */
void observer_applied(observer *ob, const double *tau);
/* One step for an enabled arm with a fresh state taken sample_dt after the previous one, and
 * the reaction to a detection. Returns true when the arm faulted (nothing more to compute). */
bool observer_step(observer *ob, const law_params *p, const law_dyn *dy, double period,
                   const sense *s, guard *g, motion *m, torque *t, loop_out *o);

#endif
