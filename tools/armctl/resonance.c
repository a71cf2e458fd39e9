/*
 * resonance.c — the dominant mode of a decaying oscillation (see resonance.h).
 * Spectral peak with parabolic interpolation: J. O. Smith, "Spectral Audio Signal Processing"
 * (2011), "Quadratic Interpolation of Spectral Peaks". Complex demodulation and log-envelope
 * decay fit: P. Bloomfield, "Fourier Analysis of Time Series" (2000) ch. 7; the logarithmic
 * decrement of a free damped vibration, sigma = zeta w_n (any vibration text, e.g. Inman,
 * "Engineering Vibration" §1.6).
 */
#include "tools/armctl/resonance.h"

#include <complex.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD         8   /* zero padding of the spectrum */
#define MIN_PERIODS 2.0 /* the fit needs this many periods of oscillation */
#define MIN_SAMPLES 8   /* per period, for the demodulation */
/* the fit ends where the envelope falls below this share of its peak */
#define ENVELOPE_STOP 0.05
/* A peak that gives no decaying mode (e.g. a limit cycle: the loop dithering between two
 * encoder counts) is not the mode sought: the next largest peak outside +-SKIP_BAND of it (a
 * share of its frequency, wide enough for its side lobes) is tried, at most MAX_PEAKS peaks in
 * all. */
#define SKIP_BAND 0.25
#define MAX_PEAKS 3
/* ... and one whose envelope falls by less than this share over the fitted stretch */
#define MIN_DECAY 0.2

/* Writes the sentence fmt into why (when given); returns -1. */
static int fail(char *why, size_t len, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* In-place iterative radix-2 FFT of a[0..n), n a power of two (Cooley-Tukey). */
static void fft(double complex *a, long n)
{
    for (long i = 1, j = 0; i < n; i++) {
        long bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double complex t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }
    for (long len = 2; len <= n; len <<= 1) {
        double complex wl = cexp(-2 * M_PI * I / (double)len);
        for (long i = 0; i < n; i += len) {
            double complex w = 1;
            for (long k = 0; k < len / 2; k++, w *= wl) {
                double complex u = a[i + k], v = a[i + k + len / 2] * w;
                a[i + k] = u + v;
                a[i + k + len / 2] = u - v;
            }
        }
    }
}

/* The frequency [Hz] of the largest |X| between fmin and fmax of x (mean removed) padded to
 * PAD x its length, leaving out the bands skip[i] (1 +- SKIP_BAND) [Hz] (i < nskip), refined by
 * the parabola through the peak bin and its two neighbours (offset p = (a - c) / (2 (a - 2b +
 * c)) bins, Smith 2011). -1 if the largest is not a peak inside the band (at an edge, or not
 * twice both edges: a tail of a peak outside) or memory runs out. */
static double spectral_peak(const double *x, long n, double fs, double fmin, double fmax,
                            const double *skip, int nskip)
{
    long N = 1;
    while (N < PAD * n) N <<= 1;
    double complex *a = calloc((size_t)N, sizeof *a);
    double *mag = malloc((size_t)N / 2 * sizeof *mag);
    if (!a || !mag) {
        free(a), free(mag);
        return -1;
    }
    for (long i = 0; i < n; i++) a[i] = x[i];
    fft(a, N);
    for (long k = 0; k < N / 2; k++) mag[k] = cabs(a[k]);
    double df = fs / (double)N;
    long lo = (long)ceil(fmin / df), hi = (long)floor(fmax / df), best = -1;
    if (lo < 1) lo = 1;
    if (hi > N / 2 - 2) hi = N / 2 - 2;
    for (long k = lo + 1; k < hi; k++) {
        bool skipped = false;
        for (int i = 0; i < nskip; i++)
            skipped |= fabs((double)k * df - skip[i]) <= SKIP_BAND * skip[i];
        /* a peak: the largest within +-SKIP_BAND of its frequency (at least its main lobe,
         * +-PAD bins), in or out of the band; the tail of a peak outside the band, its side
         * lobes, and the servo's slow settling are not */
        long reach = (long)(SKIP_BAND * (double)k) > PAD ? (long)(SKIP_BAND * (double)k) : PAD;
        for (long i = k - reach; !skipped && i <= k + reach; i++)
            skipped |= i >= 1 && i < N / 2 && mag[i] > mag[k];
        if (!skipped && (best < 0 || mag[k] > mag[best])) best = k;
    }
    double f = -1;
    if (best > lo && best < hi) {
        double ya = mag[best - 1], yb = mag[best], yc = mag[best + 1];
        double den = ya - 2 * yb + yc, p = den != 0 ? 0.5 * (ya - yc) / den : 0;
        f = (best + p) * df;
    }
    free(a), free(mag);
    return f;
}

/* Weighted least-squares line y = c0 + c1 t (weights w); returns c1, *c0. */
static double wls_line(const double *t, const double *y, const double *w, long n, double *c0)
{
    double sw = 0, st = 0, sy = 0, stt = 0, sty = 0;
    for (long i = 0; i < n; i++) {
        sw += w[i];
        st += w[i] * t[i];
        sy += w[i] * y[i];
        stt += w[i] * t[i] * t[i];
        sty += w[i] * t[i] * y[i];
    }
    double den = sw * stt - st * st, c1 = den != 0 ? (sw * sty - st * sy) / den : 0;
    *c0 = (sy - c1 * st) / sw;
    return c1;
}

/* Demodulates x (mean xm removed) at f [Hz]: z_k = mean over two passes of a one-period moving
 * average of (x - xm) e^{-i 2 pi f k / fs}. Fits log|z| and the unwrapped arg z against time
 * (weights |z|^2: both have noise variance ~ 1 / |z|^2) from the envelope's peak until it
 * falls below ENVELOPE_STOP of it. Out: sigma [1/s], wd [rad/s], amplitude at t = 0, fitted
 * length [s]. Scratch: 4 n doubles in s. Returns 0 or -1 with why. */
static int demodulate(const double *x, long n, double xm, double fs, double f, double *s,
                      double *sigma, double *wd, double *amp, double *span, char *why,
                      size_t why_len)
{
    long P = lround(fs / f);
    if (P < MIN_SAMPLES)
        return fail(why, why_len, "%.3g Hz is too fast for %.4g samples/s (fewer than %d a period)",
                    f, fs, MIN_SAMPLES);
    long m = n - 2 * (P - 1);
    if (m < (long)(MIN_PERIODS * P))
        return fail(why, why_len, "the record (%.3g s) holds fewer than %.0f periods of %.3g Hz",
                    n / fs, MIN_PERIODS + 2, f);
    double *re = s, *im = s + n, *t = s + 2 * n, *w = s + 3 * n;
    for (long k = 0; k < n; k++) {
        double ph = -2 * M_PI * f * (double)k / fs;
        re[k] = (x[k] - xm) * cos(ph);
        im[k] = (x[k] - xm) * sin(ph);
    }
    for (int pass = 0; pass < 2; pass++) { /* moving sums of P, in place, shortening by P - 1 */
        long len = n - pass * (P - 1), out = len - (P - 1);
        double sr = 0, si = 0;
        for (long k = 0; k < P; k++) sr += re[k], si += im[k];
        for (long k = 0; k < out; k++) {
            double r0 = re[k], i0 = im[k];
            re[k] = sr / (double)P;
            im[k] = si / (double)P;
            if (k + P < len) sr += re[k + P] - r0, si += im[k + P] - i0;
        }
    }
    /* z[k] is centred at sample k + (P - 1) */
    long peak = 0;
    for (long k = 0; k < m; k++)
        if (hypot(re[k], im[k]) > hypot(re[peak], im[peak])) peak = k;
    if (peak > m / 2)
        return fail(why, why_len,
                    "the oscillation at %.3g Hz does not decay (its envelope peaks at %.2g s of "
                    "%.2g s)",
                    f, (double)(peak + P - 1) / fs, n / fs);
    double apeak = hypot(re[peak], im[peak]);
    long end = peak;
    while (end < m && hypot(re[end], im[end]) >= ENVELOPE_STOP * apeak) end++;
    long cnt = end - peak;
    if (cnt < (long)(MIN_PERIODS * P))
        return fail(why, why_len,
                    "the oscillation at %.3g Hz dies out within %.2g s: fewer than %.0f periods "
                    "to fit",
                    f, cnt / fs, MIN_PERIODS);
    /* log-amplitude into t/w (reusing the arrays: y kept in re, phase in im) */
    double prev = atan2(im[peak], re[peak]), unwrap = 0;
    for (long i = 0; i < cnt; i++) {
        long k = peak + i;
        double a = hypot(re[k], im[k]), ph = atan2(im[k], re[k]);
        double d = ph - prev;
        if (d > M_PI) unwrap -= 2 * M_PI;
        if (d < -M_PI) unwrap += 2 * M_PI;
        prev = ph;
        t[i] = (double)(k + P - 1) / fs;
        w[i] = a * a;
        re[i] = log(a);
        im[i] = ph + unwrap;
    }
    double c0, c1 = wls_line(t, re, w, cnt, &c0), p0, dphi = wls_line(t, im, w, cnt, &p0);
    *sigma = -c1;
    *wd = 2 * M_PI * f + dphi;
    /* the two passes of the moving average scale a decaying envelope by
     * (sum_{j<P} e^{sigma j / fs} / P)^2 (taken about the centre), ~1 for sigma P << fs */
    *amp = 2 * exp(c0);
    *span = cnt / fs;
    return 0;
}

int resonance_estimate(const double *x, long n, double fs, double fmin, double fmax,
                       resonance_mode *m, char *why, size_t why_len)
{
    if (!(fs > 0 && isfinite(fs)))
        return fail(why, why_len, "the sample rate %.4g Hz is not a positive number", fs);
    if (!(fmin > 0 && fmin < fmax && fmax <= fs / 2))
        return fail(why, why_len, "the band [%.4g, %.4g] Hz is not inside (0, %.4g] Hz", fmin, fmax,
                    fs / 2);
    if (n < 4 * MIN_SAMPLES) return fail(why, why_len, "%ld samples are too few", n);
    double xm = 0;
    for (long i = 0; i < n; i++) {
        if (!isfinite(x[i])) return fail(why, why_len, "sample %ld is not a finite number", i);
        xm += x[i];
    }
    xm /= (double)n;
    double *xs = malloc((size_t)n * sizeof *xs), *s = malloc(4 * (size_t)n * sizeof *s);
    if (!xs || !s) {
        free(xs), free(s);
        return fail(why, why_len, "out of memory");
    }
    for (long i = 0; i < n; i++) xs[i] = x[i] - xm;
    /* the largest peak; if its oscillation does not decay, the next one (MAX_PEAKS in all) */
    double skip[MAX_PEAKS], f0 = -1, sigma = 0, wd = 0, amp = 0, span = 0;
    char first[300] = "", w[300] = "";
    int rc = -1, tried = 0;
    bool ok = false;
    while (!ok && tried < MAX_PEAKS) {
        f0 = spectral_peak(xs, n, fs, fmin, fmax, skip, tried);
        if (f0 <= 0) {
            if (tried == 0)
                snprintf(first, sizeof first,
                         "no spectral peak inside [%.4g, %.4g] Hz (the largest is at or near an "
                         "edge)",
                         fmin, fmax);
            break;
        }
        ok = true;
        wd = 2 * M_PI * f0;
        for (int it = 0; it < 2 && ok; it++) /* demodulate at the peak, then at the refined wd */
            ok = demodulate(x, n, xm, fs, wd / (2 * M_PI), s, &sigma, &wd, &amp, &span, w,
                            sizeof w) == 0;
        if (ok && !(sigma > 0 && wd > 0)) {
            snprintf(w, sizeof w, "the oscillation at %.3g Hz does not decay (sigma = %.3g 1/s)",
                     wd / (2 * M_PI), sigma);
            ok = false;
        } else if (ok && exp(-sigma * span) > 1 - MIN_DECAY) {
            snprintf(w, sizeof w,
                     "the oscillation at %.3g Hz does not decay (its envelope falls by %.2g %% "
                     "in %.2g s)",
                     wd / (2 * M_PI), 100 * (1 - exp(-sigma * span)), span);
            ok = false;
        }
        if (!ok && tried == 0) snprintf(first, sizeof first, "%s", w);
        skip[tried++] = f0;
    }
    if (!ok) {
        if (tried > 1)
            fail(why, why_len, "%s; nor did the next %d peaks give a decaying mode", first,
                 tried - 1);
        else
            fail(why, why_len, "%s", first);
        goto out;
    }
    double wn = hypot(sigma, wd);
    m->freq = wn / (2 * M_PI);
    m->freq_damped = wd / (2 * M_PI);
    m->damping = sigma / wn;
    m->amplitude = amp;
    m->fit_s = span;
    m->peak_hz = f0;
    rc = 0;
out:
    free(xs), free(s);
    return rc;
}
