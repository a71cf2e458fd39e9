/*
 * sense.h — daemon/loop/ private: the loop's view of the arm, taken from each tick's sample:
 * the measured position, the velocity estimate, the torque the servos reported, the read gaps
 * and the failed reads and writes counted against [safety] max_failed_reads and
 * max_read_gap_ms. The only writer of what it holds. Control thread only.
 */
#ifndef ARMD_LOOP_SENSE_H
#define ARMD_LOOP_SENSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/loop/tick.h"
#include "daemon/safety.h"

typedef struct {
    int n;
    bool fresh;                      /* this tick read a new state */
    double q[CFG_MAX_JOINTS];        /* the last state read [rad|m] ... */
    double qd[CFG_MAX_JOINTS];       /* ... its velocity estimate [rad/s|m/s] ... */
    double tau_meas[CFG_MAX_JOINTS]; /* ... and the torque the servos reported with it [N m|N] */
    double q_prev[CFG_MAX_JOINTS];   /* the state before it (the differentiated velocity) */
    int64_t t_state_ns;              /* driver clock of the last state [ns]; 0 = none yet */
    double sample_dt;                /* time between the last two states [s] */
    sf_reads reads, writes;          /* consecutive failures and the last success, apart */
    bool in_gap;                     /* ticks without a fresh state since the last one */
    uint64_t read_gaps;              /* gaps seen */
    int64_t longest_gap_ns;          /* the longest, good read to good read [ns] */
    uint64_t failed_reads, failed_writes;
} sense;

/* No state yet; the failure clocks start at now_ns. */
void sense_init(sense *s, int n, int64_t now_ns);
/* Takes the tick's read: a fresh state (velocity estimate, a gap closed), or a failure counted.
 * Returns true with why (len bytes) when the arm must fault: a device alert, or the failures
 * have used up the tolerance. */
bool sense_take_read(sense *s, const law_params *p, const loop_in *in, double period, char *why,
                     size_t len);
/* Takes the result of the previous tick's write: a success restarts the count; a failure of a
 * write to an enabled arm (counts) is counted apart from reads, and true with why when the arm
 * must fault (device alert, tolerance used up). A failure while disabled is not counted. */
bool sense_take_write(sense *s, const law_params *p, const loop_in *in, bool counts, char *why,
                      size_t len);
/* Forgets the failures that led to a fault (reset), as of now_ns. */
void sense_forgive(sense *s, int64_t now_ns);
/* True when the reads failing since the last state have used up the tolerance at now_ns. */
bool sense_exhausted(const sense *s, const law_params *p, int64_t now_ns);

#endif
