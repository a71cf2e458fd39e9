/*
 * shaper.c — impulse amplitudes and times of the ZV, ZVD and EI input shapers (see shaper.h).
 * Sources:
 *  - ZV, ZVD: N. C. Singer, W. P. Seering, "Preshaping command inputs to reduce system
 *    vibration", ASME J. Dyn. Sys., Meas., Control 112 (1990) 76-82: with
 *    K = exp(-zeta pi / sqrt(1 - zeta^2)) and the damped half period Td/2 = 1 / (2 f sqrt(1 -
 *    zeta^2)), ZV = [1, K] / (1 + K) at [0, Td/2], ZVD = [1, 2K, K^2] / (1 + K)^2 at
 *    [0, Td/2, Td].
 *  - EI: W. Singhose, W. Seering, N. Singer, "Residual vibration reduction using vector
 *    diagrams to generate shaped inputs", ASME J. Mech. Design 116 (1994) 654-659: undamped,
 *    [(1 + V)/4, (1 - V)/2, (1 + V)/4] at [0, T/2, T] for the tolerance V; for small damping
 *    the common approximation (also Klipper's input shaper) weights the impulses by 1, K, K^2
 *    like ZVD, normalised, at the damped period's [0, Td/2, Td].
 */
#include "daemon/shaper.h"

#include <math.h>

/* One unit impulse at t = 0 (no shaping). */
static void set_none(shaper *s)
{
    s->n = 1;
    s->a[0] = 1;
    s->t[0] = 0;
    s->a[1] = s->a[2] = s->t[1] = s->t[2] = 0;
}

/* Sets n impulses with raw amplitudes w[] (normalised to sum 1) at times t[] [s]. */
static void set_train(shaper *s, int n, const double *w, const double *t)
{
    double sum = 0;
    for (int i = 0; i < n; i++) sum += w[i];
    s->n = n;
    for (int i = 0; i < SHAPER_MAX_IMPULSES; i++) {
        s->a[i] = i < n ? w[i] / sum : 0;
        s->t[i] = i < n ? t[i] : 0;
    }
}

int shaper_design(shaper *s, shaper_kind kind, double f, double zeta)
{
    set_none(s);
    if (kind == SHAPER_NONE) return 0;
    if (!(f > 0 && isfinite(f) && zeta >= 0 && zeta < 1)) return -1;
    double df = sqrt(1 - zeta * zeta);
    double K = exp(-zeta * M_PI / df); /* Singer & Seering 1990: decay over half a period */
    double td = 1 / (f * df);          /* damped period [s] */
    double t[3] = {0, 0.5 * td, td}, v = SHAPER_EI_TOLERANCE;
    switch (kind) {
    case SHAPER_ZV:
        set_train(s, 2, (const double[]){1, K}, t);
        return 0;
    case SHAPER_ZVD:
        set_train(s, 3, (const double[]){1, 2 * K, K * K}, t);
        return 0;
    case SHAPER_EI:
        set_train(s, 3, (const double[]){(1 + v) / 4, (1 - v) / 2 * K, (1 + v) / 4 * K * K}, t);
        return 0;
    default:
        return -1;
    }
}

double shaper_duration(const shaper *s)
{
    return s->t[s->n - 1];
}

/* Singer & Seering 1990 eq. 3 (the amplitude of a damped mode's response to the impulse
 * train after its last impulse, over that of a single unit impulse). */
double shaper_residual(const shaper *s, double f, double zeta)
{
    double w = 2 * M_PI * f, wd = w * sqrt(1 - zeta * zeta), c = 0, sn = 0;
    for (int i = 0; i < s->n; i++) {
        double e = s->a[i] * exp(zeta * w * s->t[i]);
        c += e * cos(wd * s->t[i]);
        sn += e * sin(wd * s->t[i]);
    }
    return exp(-zeta * w * shaper_duration(s)) * hypot(c, sn);
}
