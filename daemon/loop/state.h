/*
 * state.h — daemon/loop/ private: struct loop, the modules' states it is made of (each written
 * only by its own module, see loop.h's map) and the tick's own counters. Control thread only.
 */
#ifndef ARMD_LOOP_STATE_H
#define ARMD_LOOP_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/loop/guard.h"
#include "daemon/loop/tick.h"
#include "daemon/loop/motion.h"
#include "daemon/loop/observer.h"
#include "daemon/loop/sense.h"
#include "daemon/loop/tool.h"
#include "daemon/loop/torque.h"

struct loop {
    int n;
    double period;            /* [s] */
    const loop_settings *set; /* the settings in use (the host's, read-only) */
    loop_dyn *dyn;            /* the dynamics in use (the model read-only, the workspace ours) */
    sense sense;
    motion motion;
    guard guard;
    observer observer;
    torque torque;
    tool tool;
    /* the tick's own (loop.c) */
    uint64_t tick, overruns, late_ticks;
    double time;                        /* control time of the last tick [s] */
    int64_t t0_ns;                      /* control time 0 on the driver's clock [ns] */
    ctl_state published;                /* the state the last publish showed */
    bool wrote_enabled;                 /* the last torque written went to an enabled arm */
    double tau_written[CFG_MAX_JOINTS]; /* the last torque written [N m|N] */
};

/* commands.c: applies the tick's commands, each answered in o. */
void loop_commands(loop *L, const loop_in *in, loop_out *o);

#endif
