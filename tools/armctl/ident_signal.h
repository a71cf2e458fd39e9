/*
 * ident_signal.h — the recorded motion of armctl identify made ready for the fit: zero-phase
 * low-pass filtering and differentiation, per stretch of consecutive ticks.
 */
#ifndef ARMCTL_IDENT_SIGNAL_H
#define ARMCTL_IDENT_SIGNAL_H

/* Filters x[0..len) (stride: the distance between samples) in place with a second-order
 * Butterworth low-pass of cutoff fc [Hz] at sample rate fs [Hz], run forwards then backwards
 * (zero phase, fourth order in effect; Gustafsson-style start at the first sample's steady
 * state). */
void ident_lowpass(double *x, long len, long stride, double fc, double fs);
/* dx/dt of x[0..len) (stride as above) at rate fs into out: central differences, one-sided at
 * the ends. */
void ident_derivative(const double *x, long len, long stride, double fs, double *out);

#endif
