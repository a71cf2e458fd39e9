/*
 * sincos.h — sine and cosine of many angles at once, for the dynamics core and the generated
 * per-arm code (tools/armgen). Part of the dynamics module's public interface (dynamics.h
 * includes it); header-only so generated code, built in or loaded as a shared object, needs
 * no symbol from armd.
 *
 * dyn_sincos_n(x, s, c, n): s[i] = sin(x[i]), c[i] = cos(x[i]) [rad], i < n, x, s, c not
 * overlapping. For |x| < DYN_SINCOS_FAST_MAX: Cody-Waite reduction by pi/2 with a three-part
 * constant (each part's product with the quadrant number k is exact for |k| < 2^20) and fdlibm's
 * kernel polynomials on [-pi/4, pi/4]; the quadrant is applied by bit operations, so there is no
 * data-dependent branch and two (four with AVX) angles go through one set of SIMD
 * instructions. Error at most 2 ulp against glibc's sin and cos (tests/dynamics/test_sincos.c:
 * 2 ulp worst over 4e5 random arguments); sin(-0) = -0. Any other x (large, +-inf, NaN) is handed
 * to libm's sin and cos afterwards (NaN in, NaN out).
 *
 * IEEE arithmetic is required: the rounding-to-integer step (x * 2/pi + 1.5 * 2^52) - 1.5 * 2^52
 * would be folded away under -ffast-math, so such a build is refused.
 */
#ifndef ARMD_DYN_SINCOS_H
#define ARMD_DYN_SINCOS_H

#include <math.h>
#include <string.h>

#if defined(__FAST_MATH__)
#error "dynamics/sincos.h needs IEEE arithmetic: do not compile it with -ffast-math"
#endif

#define DYN_SINCOS_FAST_MAX 1e5 /* |x| below this takes the polynomial path [rad] */

#if defined(__AVX__)
#define DYN_SINCOS_W 4
#else
#define DYN_SINCOS_W 2
#endif
typedef double dyn_sincos_vd __attribute__((vector_size(8 * DYN_SINCOS_W)));
typedef unsigned long long dyn_sincos_vi __attribute__((vector_size(8 * DYN_SINCOS_W)));

/* One vector of angles, loaded from x: sin and cos lane by lane into s, c (see the top). Lanes
 * with |x| >= DYN_SINCOS_FAST_MAX (or NaN) compute sin, cos of 0 and are marked in *bad. */
static inline __attribute__((always_inline)) void dyn_sincos_lanes(const double *x, double *s,
                                                                   double *c, dyn_sincos_vi *bad)
{
    const double shifter = 6755399441055744.0; /* 1.5 * 2^52: adding it rounds to an integer */
    const unsigned long long sgn = 1ull << 63;
    dyn_sincos_vd v, kf;
    memcpy(&v, x, sizeof v);
    const dyn_sincos_vd av = (dyn_sincos_vd)((dyn_sincos_vi)v & ~sgn);
    const dyn_sincos_vi ok = (dyn_sincos_vi)(av < DYN_SINCOS_FAST_MAX);
    *bad |= ~ok;
    v = (dyn_sincos_vd)((dyn_sincos_vi)v & ok);
    kf = v * 6.36619772367581382433e-01 + shifter; /* low mantissa bits: k = round(2x/pi) */
    const dyn_sincos_vi kbits = (dyn_sincos_vi)kf;
    kf -= shifter;
    /* pi/2 = pio2_1 + pio2_2 + pio2_2t (fdlibm): 33 + 33 + 53 bits */
    const dyn_sincos_vd r =
        ((v - kf * 1.57079632673412561417e+00) - kf * 6.07710050630396597660e-11) -
        kf * 2.02226624879595063154e-21;
    const dyn_sincos_vd z = r * r, z2 = z * z;
    /* the kernels' polynomials in z, evaluated in two halves (shorter dependency chains) */
    const dyn_sincos_vd sp = (-1.66666666666666324348e-01 + z * 8.33333333332248946124e-03 +
                              z2 * -1.98412698298579493134e-04) +
                             z2 * z *
                                 (2.75573137070700676789e-06 + z * -2.50507602534068634195e-08 +
                                  z2 * 1.58969099521155010221e-10);
    const dyn_sincos_vd cp = (4.16666666666666019037e-02 + z * -1.38888888888741095749e-03 +
                              z2 * 2.48015872894767294178e-05) +
                             z2 * z *
                                 (-2.75573143513906633035e-07 + z * 2.08757232129817482790e-09 +
                                  z2 * -1.13596475577881948265e-11);
    const dyn_sincos_vd s0 = r + r * z * sp;
    const dyn_sincos_vd c0 = (1.0 - 0.5 * z) + z2 * cp;
    /* quadrant k mod 4 from the low bits: odd k swaps (s, c) -> (c, -s), k & 2 negates both;
     * |r z sp| < |r|, so the sign of sin before that is r's (copied: sin(-0) = -0) */
    const dyn_sincos_vi odd = kbits & 1, swap = -odd;
    const dyn_sincos_vi neg = (kbits & 2) << 62;
    const dyn_sincos_vi sb = ((dyn_sincos_vi)s0 & ~sgn) | ((dyn_sincos_vi)r & sgn);
    const dyn_sincos_vi cb = (dyn_sincos_vi)c0;
    const dyn_sincos_vi so = ((sb & ~swap) | (cb & swap)) ^ neg;
    const dyn_sincos_vi co = ((cb & ~swap) | (sb & swap)) ^ neg ^ (odd << 63);
    memcpy(s, &so, sizeof so);
    memcpy(c, &co, sizeof co);
}

/* s[i], c[i] = sin, cos of x[i] for i < n (see the top of this file). Whole vectors straight
 * from x; a last partial one overlaps the previous (or, for n below the width, goes through a
 * padded copy). */
static inline __attribute__((always_inline)) void
dyn_sincos_n(const double *__restrict__ x, double *__restrict__ s, double *__restrict__ c, int n)
{
    dyn_sincos_vi bad = {0};
    int i = 0;
    for (; i + DYN_SINCOS_W <= n; i += DYN_SINCOS_W) dyn_sincos_lanes(x + i, s + i, c + i, &bad);
    if (i < n && n >= DYN_SINCOS_W) {
        i = n - DYN_SINCOS_W;
        dyn_sincos_lanes(x + i, s + i, c + i, &bad);
    } else if (i < n) {
        double xs[DYN_SINCOS_W] = {0}, st[DYN_SINCOS_W], ct[DYN_SINCOS_W];
        for (int k = 0; k < n; k++) xs[k] = x[k];
        dyn_sincos_lanes(xs, st, ct, &bad);
        for (int k = 0; k < n; k++) s[k] = st[k], c[k] = ct[k];
    }
    unsigned long long any = 0;
    for (int k = 0; k < DYN_SINCOS_W; k++) any |= bad[k];
    if (any)
        for (int k = 0; k < n; k++)
            if (!(fabs(x[k]) < DYN_SINCOS_FAST_MAX)) s[k] = sin(x[k]), c[k] = cos(x[k]);
}

#endif
