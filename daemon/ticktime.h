/*
 * ticktime.h — per-tick timing statistics without allocation: a fixed log-linear histogram per
 * quantity (wake-up lateness, read, compute, write). The control thread adds samples with
 * relaxed atomic increments; any thread reads p50/p99/max from the counts.
 *
 * Bins: values below 64 ns have one bin per ns; above, 32 bins per power of two (relative
 * resolution about 3 %), up to 2^38 ns (about 275 s), larger values land in the last bin.
 */
#ifndef ARMD_TICKTIME_H
#define ARMD_TICKTIME_H

#include <stdatomic.h>
#include <stdint.h>

#define TT_BINS (64 + 32 * 33)

typedef struct {
    _Atomic uint64_t count[TT_BINS];
    _Atomic uint64_t total, max_ns;
} tt_hist;

void tt_reset(tt_hist *h);
/* Control thread: records one duration [ns] (negative counts as 0). */
void tt_add(tt_hist *h, int64_t ns);
/* Any thread: quantile p (0..1) of the recorded durations [us], 0 when empty. */
double tt_quantile_us(tt_hist *h, double p);
double tt_max_us(tt_hist *h);
uint64_t tt_count(tt_hist *h);

/* Bin index of a duration and the representative value of a bin [ns] (exposed for tests). */
int tt_bin(uint64_t ns);
double tt_bin_value_ns(int bin);

#endif
