/*
 * ticktime.c — fixed log-linear histograms of tick timings (see ticktime.h).
 */
#include "daemon/ticktime.h"

#include <math.h>

void tt_reset(tt_hist *h)
{
    for (int i = 0; i < TT_BINS; i++) atomic_store_explicit(&h->count[i], 0, memory_order_relaxed);
    atomic_store_explicit(&h->total, 0, memory_order_relaxed);
    atomic_store_explicit(&h->max_ns, 0, memory_order_relaxed);
}

/* Bin of ns: linear below 64 ns, then 32 sub-bins per octave (mantissa of the top 6 bits). */
int tt_bin(uint64_t ns)
{
    if (ns < 64) return (int)ns;
    int e = 63 - __builtin_clzll(ns); /* >= 6 */
    uint64_t m = ns >> (e - 5);       /* 32..63 */
    int b = 64 + (e - 6) * 32 + (int)(m - 32);
    return b < TT_BINS ? b : TT_BINS - 1;
}

/* Middle of a bin's range [ns]. */
double tt_bin_value_ns(int bin)
{
    if (bin < 64) return bin;
    int e = (bin - 64) / 32 + 6;
    int m = (bin - 64) % 32 + 32;
    double lo = ldexp(m, e - 5), width = ldexp(1, e - 5);
    return lo + 0.5 * width;
}

void tt_add(tt_hist *h, int64_t ns)
{
    uint64_t v = ns > 0 ? (uint64_t)ns : 0;
    atomic_fetch_add_explicit(&h->count[tt_bin(v)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->total, 1, memory_order_relaxed);
    if (v > atomic_load_explicit(&h->max_ns, memory_order_relaxed))
        atomic_store_explicit(&h->max_ns, v, memory_order_relaxed); /* single writer */
}

uint64_t tt_count(tt_hist *h)
{
    return atomic_load_explicit(&h->total, memory_order_relaxed);
}

double tt_max_us(tt_hist *h)
{
    return (double)atomic_load_explicit(&h->max_ns, memory_order_relaxed) / 1000.0;
}

/* Walks the cumulative counts to the first bin holding the ceil(p * total)-th value; the
 * answer never exceeds the recorded maximum. */
double tt_quantile_us(tt_hist *h, double p)
{
    uint64_t total = 0;
    for (int i = 0; i < TT_BINS; i++)
        total += atomic_load_explicit(&h->count[i], memory_order_relaxed);
    if (total == 0) return 0.0;
    if (p < 0) p = 0;
    if (p > 1) p = 1;
    uint64_t rank = (uint64_t)ceil(p * (double)total);
    if (rank < 1) rank = 1;
    uint64_t cum = 0;
    double v = 0;
    for (int i = 0; i < TT_BINS; i++) {
        cum += atomic_load_explicit(&h->count[i], memory_order_relaxed);
        if (cum >= rank) {
            v = tt_bin_value_ns(i);
            break;
        }
    }
    double mx = (double)atomic_load_explicit(&h->max_ns, memory_order_relaxed);
    if (v > mx) v = mx;
    return v / 1000.0;
}
