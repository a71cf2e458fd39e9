/*
 * ident_signal.h — the recorded motion of armctl identify made ready for the fit: zero-phase
 * low-pass filtering and differentiation, per stretch of evenly spaced samples.
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
/* The end of the stretch of evenly spaced samples that starts at index s of the stamps t[0..len)
 * [s]: the first e > s whose t[e] is not one period (1 / fs, within a quarter of it) after
 * t[e - 1], or len. A gap ends a stretch: telemetry dropped, or a late tick (armd's tick counts
 * the ticks it ran; a late one skips the periods it missed, and its stamp is 2, 3 ... periods
 * after the one before). */
long ident_stretch_end(const double *t, long len, double fs, long s);

#endif
