/*
 * recorder.h — a recording of the control thread's samples at the loop rate, kept in armd for a
 * client to fetch at its own pace (the socket methods record.start, record.fetch, record.stop:
 * api_record.c). Recording does not depend on any client keeping up with a socket: the main
 * thread copies every sample it drains from the control thread's telemetry ring into a buffer
 * allocated once at the start.
 *
 * Pure storage: no clock, no socket, no control-side call; main thread only (it allocates at
 * recorder_create, never in recorder_add). Bounded: a recording is refused above
 * RECORDER_MAX_S seconds or RECORDER_MAX_BYTES bytes of samples.
 *
 * Samples are numbered 0, 1, ... in the order recorded. The control thread numbers its ticks
 * one by one and publishes a sample each; a tick missing between two samples added is a sample
 * lost (the ring overwrote it before the main thread read it): the next sample recorded carries
 * the count (lost_before), and the recording's total is recorder_lost. A late tick's skipped
 * periods are no loss (the next tick has the next number, a later time).
 */
#ifndef ARMD_RECORDER_H
#define ARMD_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/ctl_types.h"

#define RECORDER_MAX_S     600.0               /* longest recording [s of control time] */
#define RECORDER_MAX_BYTES (64u * 1024 * 1024) /* most sample storage of one recording */

/* The per-joint vectors a recording can keep (ctl_sample's, same names in JSON). */
typedef enum {
    REC_Q,
    REC_QD,
    REC_TAU,
    REC_TAU_MEAS,
    REC_Q_DES,
    REC_QD_DES,
    REC_EXT,
    REC_N_FIELDS
} rec_field;

/* One recorded sample's header. */
typedef struct {
    uint64_t tick;        /* the control thread's tick number */
    double time;          /* control time of the tick [s] */
    ctl_state state;      /* the arm's state at the tick */
    uint32_t lost_before; /* samples lost right before this one (ring overflow) */
} rec_head;

typedef struct recorder recorder;

/* The field's JSON name ("q", "tau_meas", ...). */
const char *recorder_field_name(rec_field f);
/* The field named name, or -1. */
int recorder_field_of(const char *name);
/* A recording of n joints' fields (bit 1 << rec_field each) for duration [s] of control time
 * at rate_hz [Hz]: room for duration x rate_hz + 1 samples. NULL with why (the bound and the
 * figures) when the duration or the storage is over its bound, or memory is short. */
recorder *recorder_create(int n, double rate_hz, double duration, unsigned fields, char *why,
                          size_t why_len);
void recorder_free(recorder *r);
/* Adds k samples as ctl_samples_read gives them (oldest first): each new tick is stored until
 * the recording is done (full, past its duration from its first sample, or stopped); ticks
 * already seen are skipped. Returns the samples stored. */
int recorder_add(recorder *r, const ctl_sample *s, int k);
/* Ends the recording (the samples stay). */
void recorder_stop(recorder *r);
/* Why the recording ended: NULL (still recording), "full", "duration" or "stopped". */
const char *recorder_end(const recorder *r);
long recorder_count(const recorder *r);
long recorder_capacity(const recorder *r);
unsigned recorder_fields(const recorder *r);
int recorder_joints(const recorder *r);
double recorder_duration(const recorder *r);
/* Samples lost in the whole recording (the sum of lost_before). */
uint64_t recorder_lost(const recorder *r);
/* Sample i's header (0 <= i < recorder_count). */
const rec_head *recorder_head(const recorder *r, long i);
/* Sample i's field f: n values, or NULL when the recording does not keep f. */
const double *recorder_value(const recorder *r, long i, rec_field f);

#endif
