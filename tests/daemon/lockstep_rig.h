/*
 * lockstep_rig.h — the real loop, host and driver against armsim's arm in process on simulated
 * time (daemon/lockstep.h), for tests that drive the arm through the control interface: load the
 * INI (the test may change the configuration), start with armsim's options, enable, tick.
 * cmocka assertions on failure.
 */
#ifndef ARMD_TESTS_LOCKSTEP_RIG_H
#define ARMD_TESTS_LOCKSTEP_RIG_H

#include "daemon/control.h"
#include "daemon/lockstep.h"

typedef struct {
    armd_config cfg;
    lockstep *ls;
    ctl *c;
} lockstep_rig;

/* A rig with ini loaded into r->cfg, nothing running yet. */
lockstep_rig *lockstep_rig_load(const char *ini);
/* armsim (argv: its options) and the host on r->cfg, started and enabled (holding). */
void lockstep_rig_start(lockstep_rig *r, const char *ini, int argc, char **argv);
void lockstep_rig_free(lockstep_rig *r);
ctl_status lockstep_rig_status(lockstep_rig *r);
/* Ticks (and polls the host) until simulated time t [s]. */
void lockstep_rig_run_until(lockstep_rig *r, double t);

#endif
