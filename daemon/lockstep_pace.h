/*
 * lockstep_pace.h — when armd --lockstep's simulated time runs, in the main loop (libev):
 *   free    as fast as the host computes (the default), or at `speed` x real time;
 *   paused  only when asked: sim.run, and the ticks a command needs before it is answered (an
 *           enable, say, takes two) — the same requests then give the same telemetry.
 * Ticks run in batches between the loop's other work; after each batch the API delivers the
 * loop's answers and the telemetry (the hooks), and while a subscriber has not taken its
 * output, simulated time waits for it: a lockstep subscriber loses no sample. Main thread only.
 */
#ifndef ARMD_LOCKSTEP_PACE_H
#define ARMD_LOCKSTEP_PACE_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#include "daemon/control.h"
#include "daemon/lockstep.h"

typedef struct {
    void (*after)(void *ctx);     /* after a batch of ticks: answers and telemetry out */
    size_t (*backlog)(void *ctx); /* output a subscriber has not taken yet [bytes] */
    void *ctx;
} lockstep_hooks;

typedef struct lockstep_pace lockstep_pace;

/* Starts stepping ls (started on c) from loop: free at speed (0: as fast as it computes) or
 * paused. NULL when out of memory. */
lockstep_pace *lockstep_pace_start(struct ev_loop *loop, lockstep *ls, ctl *c, double speed,
                                   bool paused);
void lockstep_pace_hooks(lockstep_pace *p, const lockstep_hooks *h);
/* sim.run (api_sim_run_fn, ctx the pace): the answer once simulated time has advanced by
 * seconds [s]. -1 with err ("busy") beyond LOCKSTEP_RUNS waiting at once. */
#define LOCKSTEP_RUNS 16
int lockstep_pace_run(void *ctx, double seconds, const ctl_reply_to *to, ctl_error *err);
/* Stops stepping (each sim.run still waiting is answered with a "stopping" error) and frees
 * it. */
void lockstep_pace_stop(lockstep_pace *p);

#endif
