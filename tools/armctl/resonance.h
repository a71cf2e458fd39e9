/*
 * resonance.h — the analysis core of `armctl resonance`: the dominant vibration mode (natural
 * frequency [Hz], damping ratio) in the sampled tracking error of one joint after a small step,
 * for the input shaper's [trajectory] shaper_freq and shaper_damping. Pure computation; units:
 * the samples' own (rad or m), Hz, s.
 */
#ifndef ARMCTL_RESONANCE_H
#define ARMCTL_RESONANCE_H

#include <stddef.h>

typedef struct {
    double freq;        /* natural frequency f_n = sqrt(sigma^2 + wd^2) / 2 pi [Hz] */
    double freq_damped; /* damped frequency f_d = wd / 2 pi [Hz] (the one seen) */
    double damping;     /* damping ratio zeta = sigma / (2 pi f_n) */
    double amplitude;   /* oscillation amplitude at the first sample (the samples' unit) */
    double fit_s;       /* length of the stretch the decay was fitted on [s] */
    double peak_hz;     /* the spectrum's peak, before refinement [Hz] */
} resonance_mode;

/* Estimates the dominant mode of x[0..n) sampled at fs [Hz], searched between fmin and fmax
 * [Hz] (0 < fmin < fmax <= fs / 2, at most fs / 4 for a usable estimate), in two steps:
 *  1. the peak of the zero-padded spectrum (mean removed, FFT, padded 8x), refined by the
 *     parabola through the peak bin and its neighbours;
 *  2. complex demodulation at that frequency (x e^{-i w t}, averaged over a period twice) gives
 *     the envelope A e^{-sigma t} and the phase (wd - w) t; weighted least-squares lines through
 *     log|z| and the unwrapped phase give sigma and wd, and the demodulation is repeated once
 *     at the refined wd.
 * A peak that gives no decaying mode (its envelope does not fall by 20 % over the fit, e.g. a
 * limit cycle of the loop dithering between two encoder counts, or fails the fit) is passed
 * over for the next largest peak outside +-25 % of its frequency, three peaks at most.
 * Returns 0, or -1 with why (a sentence, about the largest peak) when there is no usable
 * decaying oscillation. */
int resonance_estimate(const double *x, long n, double fs, double fmin, double fmax,
                       resonance_mode *m, char *why, size_t why_len);

#endif
