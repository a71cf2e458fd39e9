/*
 * shaper.h — zero-vibration input shapers (ZV, ZVD, EI) for one vibration mode: a short train
 * of positive impulses A_i at times t_i (sum A_i = 1, t_0 = 0). A reference convolved with it
 * excites a mode of frequency f [Hz] and damping ratio zeta (almost) not at all: the residual
 * vibration of a unit impulse train,
 *   V(f, zeta) = exp(-zeta w t_n) sqrt((sum A_i e^{zeta w t_i} cos(wd t_i))^2
 *                                      + (sum A_i e^{zeta w t_i} sin(wd t_i))^2),
 * w = 2 pi f, wd = w sqrt(1 - zeta^2), is 0 for ZV and ZVD at the design mode, and at most the
 * tolerance (5 %) for EI over +-20 % of it (Singer & Seering 1990 eq. 3; Singhose, Seering &
 * Singer 1994). Pure functions, no allocation; units: Hz, s.
 */
#ifndef ARMD_SHAPER_H
#define ARMD_SHAPER_H

#define SHAPER_MAX_IMPULSES 3
#define SHAPER_EI_TOLERANCE 0.05 /* EI's vibration tolerance V_tol */

typedef enum { SHAPER_NONE, SHAPER_ZV, SHAPER_ZVD, SHAPER_EI } shaper_kind;

/* An impulse train; n = 1 (A = 1 at t = 0) is no shaping. */
typedef struct {
    int n;
    double a[SHAPER_MAX_IMPULSES]; /* amplitudes, sum 1 */
    double t[SHAPER_MAX_IMPULSES]; /* times [s], t[0] = 0, ascending */
} shaper;

/* Fills s for kind at the mode f [Hz] > 0, 0 <= zeta < 1 (SHAPER_NONE: one unit impulse).
 * Returns 0, or -1 for an unknown kind or a mode out of range (s is then no shaping). */
int shaper_design(shaper *s, shaper_kind kind, double f, double zeta);

/* The shaper's length t_n [s]: how much longer a shaped trajectory is. */
double shaper_duration(const shaper *s);

/* V(f, zeta) above: residual vibration amplitude of a mode (f [Hz], zeta) after the impulse
 * train, relative to one unit impulse (1 = unshaped). */
double shaper_residual(const shaper *s, double f, double zeta);

#endif
