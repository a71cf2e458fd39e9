/*
 * ident_signal.c — zero-phase low-pass and differentiation of recorded joint signals (see
 * ident_signal.h).
 */
#include <math.h>

#include "tools/armctl/ident_signal.h"

/* One direct-form-II-transposed pass of the biquad (b, a) over x (len samples, stride), from
 * the steady state of x's first sample in pass order (forward or backward). */
static void biquad_pass(double *x, long len, long stride, const double *b, const double *a,
                        int backward)
{
    if (len <= 0) return;
    long first = backward ? (len - 1) * stride : 0, step = backward ? -stride : stride;
    double x0 = x[first];
    /* steady state for a constant input x0 (DC gain 1): z1, z2 of DF-II-T */
    double z2 = (b[2] - a[2]) * x0, z1 = (b[1] - a[1]) * x0 + z2;
    for (long i = 0, k = first; i < len; i++, k += step) {
        double in = x[k], out = b[0] * in + z1;
        z1 = b[1] * in - a[1] * out + z2;
        z2 = b[2] * in - a[2] * out;
        x[k] = out;
    }
}

void ident_lowpass(double *x, long len, long stride, double fc, double fs)
{
    /* bilinear transform of the analogue Butterworth, prewarped (RBJ cookbook, Q = 1/sqrt 2) */
    double w0 = 2 * M_PI * fc / fs, alpha = sin(w0) / (2 * M_SQRT1_2), c = cos(w0);
    double a0 = 1 + alpha;
    double b[3] = {(1 - c) / 2 / a0, (1 - c) / a0, (1 - c) / 2 / a0};
    double a[3] = {1, -2 * c / a0, (1 - alpha) / a0};
    biquad_pass(x, len, stride, b, a, 0);
    biquad_pass(x, len, stride, b, a, 1);
}

void ident_derivative(const double *x, long len, long stride, double fs, double *out)
{
    if (len < 2) {
        if (len == 1) out[0] = 0;
        return;
    }
    out[0] = (x[stride] - x[0]) * fs;
    out[(len - 1) * stride] = (x[(len - 1) * stride] - x[(len - 2) * stride]) * fs;
    for (long i = 1; i + 1 < len; i++)
        out[i * stride] = (x[(i + 1) * stride] - x[(i - 1) * stride]) * fs / 2;
}

long ident_stretch_end(const double *t, long len, double fs, long s)
{
    long e = s + 1;
    while (e < len && fabs((t[e] - t[e - 1]) * fs - 1) < 0.25) e++;
    return e;
}
