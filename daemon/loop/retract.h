/*
 * retract.h — daemon/loop/ private, motion's part: the collision reaction retract. The executed
 * path is recorded while a plan is followed (measured positions, a point every
 * collision_retract / RETRACT_SPACING of path); after a collision the arm goes back along it by
 * collision_retract on a trapezoidal speed profile along the path's length, then holds.
 * Lengths are in joint space: sqrt(sum_j dq_j^2) [rad|m]. Control thread only.
 */
#ifndef ARMD_LOOP_RETRACT_H
#define ARMD_LOOP_RETRACT_H

#include <stdbool.h>

#include "daemon/controller.h"

#define RETRACT_POINTS  64 /* path points kept ... */
#define RETRACT_SPACING 32 /* ... collision_retract / RETRACT_SPACING apart: twice the distance */

typedef struct {
    int n;
    double path[RETRACT_POINTS][CFG_MAX_JOINTS]; /* ring of measured positions, oldest first */
    int head, count;                             /* next slot written; points held */
    /* the way back, from where the collision was detected: points and the length up to each */
    double back[RETRACT_POINTS + 1][CFG_MAX_JOINTS];
    double s[RETRACT_POINTS + 1];
    int n_back;
    int seg;       /* the segment [seg, seg + 1] of `back` last sampled */
    double t;      /* time since the way back started [s] */
    double length; /* s[n_back - 1] [rad|m] */
    double v, a;   /* the trapezoid's speed [rad/s] and acceleration [rad/s^2] along it */
} retract;

/* Forgets the recorded path (at enable: the path before it is not one to go back along). */
void retract_clear(retract *b, int n);
/* Records the measured position q when it is at least distance / RETRACT_SPACING [rad|m] from
 * the last point recorded. */
void retract_record(retract *b, const double *q, double distance);
/* Plans the way back from q along the recorded path by up to collision_retract [rad|m], at a
 * quarter of the lowest joint velocity and acceleration limits; false (nothing planned) when
 * less than RETRACT_MIN of path was recorded. */
bool retract_plan(retract *b, const law_params *p, const double *q);
/* The desired state dt [s] further along the way back (position, velocity, acceleration); false
 * once past its end (then retract_end is where to hold). */
bool retract_sample(retract *b, double dt, double *q, double *qd, double *qdd);
/* The end of the way back [rad|m per joint]. */
const double *retract_end(const retract *b);

#endif
