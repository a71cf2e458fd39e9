/*
 * handoff.h — everything armd's main thread (the host, daemon/host/) and the loop's thread (the
 * control thread, or lockstep's stepping) share; nothing else is shared between them:
 *
 *   commands   host -> loop   a mailbox of loop_cmd, each answered once
 *   replies    loop -> host   a mailbox of loop_reply (answers, objects handed back), with an
 *                             eventfd that wakes the main loop
 *   flags      host -> loop   estop (also from a signal handler), a stall verdict, stop
 *   status     loop -> host   the last status snapshot (seqlock)
 *   samples,   loop -> any    rings every reader follows with its own cursor; a slow reader
 *   events                    skips records, it never holds the loop up
 *   timing     loop -> host   histograms of tick lateness, read, compute and write times
 *   liveness   loop -> host   the tick counter, control time 0, "exited"
 *
 * Lock-free (daemon/lockfree.h), no allocation after handoff_create. Each function below is
 * for one side only, as its group says.
 */
#ifndef ARMD_HANDOFF_H
#define ARMD_HANDOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/ctl_types.h"
#include "daemon/loop/loop.h"

#define HANDOFF_SAMPLES 4096 /* telemetry samples kept (about 4 s at 1 kHz) */
#define HANDOFF_EVENTS  256  /* events kept */

typedef struct handoff handoff;

typedef enum { HANDOFF_LATE, HANDOFF_READ, HANDOFF_COMPUTE, HANDOFF_WRITE } handoff_timer;

/* Main thread, before the loop's thread exists: NULL when out of memory (or no eventfd). */
handoff *handoff_create(void);
/* Main thread, after the loop's thread is gone. */
void handoff_free(handoff *h);

/* ---------------------------------------------------------------- host side (main thread) */
/* Queues a command; false when the mailbox is full. */
bool handoff_send(handoff *h, const loop_cmd *c);
/* Takes up to max replies, oldest first; re-arms the wake-up descriptor. */
int handoff_replies(handoff *h, loop_reply *out, int max);
/* A descriptor (eventfd) readable when replies came: watch it in the main loop. */
int handoff_notify_fd(const handoff *h);
/* Raises the estop flag, seen at the start of the next tick. Async-signal-safe. */
void handoff_raise_estop(handoff *h);
/* Asks the loop to fault with reason at its next tick (once: until that tick took it). */
void handoff_raise_stall(handoff *h, const char *reason);
/* Asks the loop's thread to end (it stops the arm safely first). */
void handoff_raise_stop(handoff *h);
/* Lets a loop thread that waits for it start ticking. */
void handoff_go(handoff *h);
/* The last status published; false (out zeroed) before the first. */
bool handoff_status(handoff *h, ctl_pub *out);
/* Samples / events newer than *cursor, oldest first, up to max; *cursor 0 = from now on. */
int handoff_samples(handoff *h, uint64_t *cursor, ctl_sample *out, int max);
int handoff_events(handoff *h, uint64_t *cursor, ctl_event *out, int max);
/* p50, p99 and max [us] of one timing histogram. */
void handoff_timing(handoff *h, handoff_timer which, ctl_timing *out);
/* Ticks completed so far. */
uint64_t handoff_ticks(handoff *h);
/* Control time 0 on the loop's clock [ns] (0 until the loop's first tick). */
int64_t handoff_t0(handoff *h);
/* True once the loop's thread has finished its safe shutdown. */
bool handoff_exited(handoff *h);

/* -------------------------------------------------------------------------- the loop's side */
/* Waits (100 us naps) until handoff_go; false when a stop came first. */
bool handoff_wait_go(handoff *h);
bool handoff_stop_requested(handoff *h);
/* The host's part of a tick's input: the estop flag, a stall verdict and the commands queued
 * (up to LOOP_MAX_CMDS; the rest wait for the next tick). */
void handoff_take(handoff *h, loop_in *in);
/* Publishes a tick's output: replies (waking the host), status, sample, events, one more
 * tick. Replies that do not fit the mailbox wait for the next publish (counted, never lost). */
void handoff_publish(handoff *h, const loop_out *out);
/* The same without the sample and the tick count (the shutdown's last words). */
void handoff_publish_last(handoff *h, const loop_out *out);
/* Adds one duration [ns] to a timing histogram; resets all of them. */
void handoff_time(handoff *h, handoff_timer which, int64_t ns);
void handoff_reset_timing(handoff *h);
void handoff_set_t0(handoff *h, int64_t t0_ns);
void handoff_set_exited(handoff *h);

#endif
