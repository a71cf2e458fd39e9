/*
 * torque.h — daemon/loop/ private: the control law in use and what it carries from tick to
 * tick (the error integral, the last torque for the rate limit, a collision's float), and the
 * torques of a tick: the law's, the damping stop's, zero, each through the torque limits.
 * Control thread only.
 */
#ifndef ARMD_LOOP_TORQUE_H
#define ARMD_LOOP_TORQUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/controller.h"

typedef struct {
    int n;
    cfg_controller law;   /* the control law in use */
    law_state ls;         /* its integral [rad s|m s] and the last torque [N m|N] */
    bool floating;        /* collision_reaction float: gravity_comp damped by [joint] damping */
    uint64_t saturations; /* ticks x joints the torque limit clamped */
} torque;

void torque_init(torque *t, int n, cfg_controller law);
/* Switches the law (a new one starts with a zero integral); ends a float. */
void torque_switch(torque *t, cfg_controller law);
/* A collision's float: gravity_comp, damped by the [joint] damping gains, until the law is set
 * again. */
void torque_float(torque *t);
/* At enable: no integral, no previous torque, no float. */
void torque_restart(torque *t);
/* The law's torque [N m|N] at the measured (q, qd) for the desired state, over dt [s], through
 * the limits (counting saturations). False with why naming the joint and the law when a torque
 * is not finite (trajectory id for the message): a fault, never a silent zero. */
bool torque_law(torque *t, const law_params *p, const law_dyn *dy, const double *q,
                const double *qd, const double *q_des, const double *qd_des, const double *qdd_des,
                double dt, uint32_t trajectory, double *tau, char *why, size_t len);
/* The damping stop's torque -D qd + G(q) through the limits over dt [s]; false when the model
 * gives a non-finite torque (nothing usable in tau). */
bool torque_damp(torque *t, const law_params *p, const law_dyn *dy, const double *q,
                 const double *qd, double dt, double *tau);
/* Zero torque, and zero as the rate limit's previous torque. */
void torque_zero(torque *t, double *tau);

#endif
