/*
 * demo_move.h — tools/demo's trajectory in C, for the lockstep test and armbench --lockstep: from
 * q0, every joint through three waypoints and back to q0 in 7 s (offsets of up to 0.8 rad, turned
 * around where they would leave the middle 80 % of a joint's range).
 */
#ifndef ARMD_TESTS_DEMO_MOVE_H
#define ARMD_TESTS_DEMO_MOVE_H

#include "daemon/control.h"

#define DEMO_POINTS 4

/* Fills w[0..DEMO_POINTS) for cfg's joints from q0; returns DEMO_POINTS. */
int demo_move(const armd_config *cfg, const double *q0, ctl_waypoint *w);

#endif
