/* test_util.h — shared assertions for the dynamics tests (include after cmocka.h). */
#ifndef ARMD_TESTS_DYN_TEST_UTIL_H
#define ARMD_TESTS_DYN_TEST_UTIL_H

#include <math.h>
#include <stdio.h>

/* max |a - b| / max(|b|_inf, floor): the relative error of vector a against reference b. */
static inline double rel_err(const double *a, const double *b, int n, double floor)
{
    double e = 0, s = floor;
    for (int i = 0; i < n; i++) {
        e = fmax(e, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return isfinite(e) ? e / s : INFINITY;
}

#define assert_rel(a, b, n, tol, what)                                                             \
    do {                                                                                           \
        double e_ = rel_err((a), (b), (n), 1e-12);                                                 \
        if (!(e_ < (tol))) {                                                                       \
            print_error("%s: relative error %.3g exceeds %.3g\n", (what), e_, (double)(tol));      \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#endif
