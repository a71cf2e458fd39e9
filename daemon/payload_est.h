/*
 * payload_est.h — the payload estimate (payload.estimate's procedure): the arm, holding at rest,
 * moves through a few poses and back, and payload_fit's accumulator turns the samples of those
 * moves into the payload's mass, centre and inertia, applied on request (ctl_payload_set).
 *
 * Main thread only (the libev loop): a 5 ms timer follows the moves. It uses nothing but
 * the control side's interface (control.h): moves through ctl_move_to (so the trajectory checks,
 * limits and safety apply as for any move), the arm's state from ctl_status_get, the samples from
 * its own telemetry cursor (ctl_samples_read, read every step; the control thread's ring holds
 * 4096, about 4 s at 1 kHz). Samples the ring overwrote before they were read (the main loop
 * stalled) end the estimate with an error: nothing is fitted across a hole.
 *
 * A fifth of the samples (every fifth block of 0.1 s) is held out of the fit and checks it: an
 * estimate whose held-out torque error is missing (too few equations), not a number, or worse
 * than the payload in use is not validated, and never applied (apply: an error answer). A
 * validated estimate is fitted again on every sample, and that one must pass the same check.
 *
 * One estimate at a time per instance. Its caller gets exactly one answer, through a reply_to of
 * the control side's kind (control.h), never from inside payload_est_start: rc 0 (the figures:
 * payload_est_last_result) or -1 with the error. A fault, an estop, a disable, another
 * trajectory, a hole in the samples or the caller going away end it with an error and no
 * further move; the arm holds where the last move took it.
 */
#ifndef ARMD_PAYLOAD_EST_H
#define ARMD_PAYLOAD_EST_H

#include <ev.h>
#include <stdbool.h>

#include "daemon/control.h"
#include "daemon/payload_fit.h"

typedef struct payload_est payload_est;

#define PAYLOAD_EST_MIN_ROWS 200 /* held-out equations a validation needs at least */

/* What to do: the poses to move through (n_poses 0 = payload_default_poses around the present
 * one), each move's duration (0 = the shortest the limits allow) and whether to apply the
 * result. */
typedef struct {
    int n_poses;
    double poses[PAYLOAD_FIT_MAX_POSES][CFG_MAX_JOINTS];
    double move_time; /* [s] */
    bool apply;
} payload_est_request;

/* Who asked: where the answer goes, whether they still wait, and their name for the log and
 * the "busy" error ("client 3"). */
typedef struct {
    ctl_reply_to reply;      /* called exactly once when the estimate ends (result: zeros) */
    bool (*gone)(void *ctx); /* asked every step (NULL: never): true ends it ("aborted") */
    void *gone_ctx;
    char name[48];
} payload_est_caller;

/* The figures of the last estimate that got as far as the fit. */
typedef struct {
    payload_fit_result fit;
    /* the check on the held-out samples (every PE_HOLDOUT-th block, not fitted): the torque
     * the estimate leaves unexplained there, and the payload in use at the start [N m|N RMS];
     * validated when there were at least PAYLOAD_EST_MIN_ROWS equations and the estimate's
     * figure is a number no worse than the one in use (else why says so, with the figures) */
    double val_rms, val_rms_in_use;
    long val_rows;
    bool validated;
    char val_why[200];
    long samples;    /* samples that added equations */
    int poses;       /* poses moved through (the default ones counted) */
    double duration; /* control time from the start to the end of the move back [s] */
    bool applied;    /* ctl_payload_set accepted it */
} payload_est_result;

/* An idle estimator for the arm of c on loop. NULL when memory is short. */
payload_est *payload_est_create(struct ev_loop *loop, ctl *c);
/* Stops a running estimate without answering and frees pe (NULL: nothing). */
void payload_est_free(payload_est *pe);
/* Starts an estimate: 0 (the answer comes later), or -1 with *err when refused at once (busy,
 * the arm not holding at rest, no model for the fit, memory); the caller is then never called.
 */
int payload_est_start(payload_est *pe, const payload_est_request *rq,
                      const payload_est_caller *caller, ctl_error *err);
bool payload_est_running(const payload_est *pe);
/* Ends a running estimate (NULL or idle: nothing) with an "aborted" answer saying why. */
void payload_est_abort(payload_est *pe, const char *why);
/* The figures of the last estimate (valid in its answer and until the next start). */
const payload_est_result *payload_est_last_result(const payload_est *pe);

#endif
