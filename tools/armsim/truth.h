/*
 * truth.h — the ground-truth CSV: "t,q1..qn,qd1..qdn,tau1..taun", one line per physics step
 * (or every Nth), true time [s] since start, true joint state [rad|m, rad/s|m/s] and the motor
 * torque applied during the step [N m|N].
 *
 * The physics thread pushes records into a lock-free single-producer ring; a writer thread
 * drains it to the file, so file I/O never blocks the physics step.
 */
#ifndef ARMSIM_TRUTH_H
#define ARMSIM_TRUTH_H

#include <stddef.h>
#include <stdint.h>

typedef struct truth_log truth_log;

/* Creates PATH (truncating), writes the header and starts the writer thread. NULL with err on
 * failure. */
truth_log *truth_open(const char *path, int n, int decimate, char *err, size_t errlen);
/* Real-time side: queues one record (every decimate-th call). Never blocks; when the ring is
 * full the record is counted as lost. */
void truth_push(truth_log *t, double time, const double *q, const double *qd, const double *tau);
/* Drains the ring, flushes, closes the file and joins the writer. Returns records lost. */
uint64_t truth_close(truth_log *t);

#endif
