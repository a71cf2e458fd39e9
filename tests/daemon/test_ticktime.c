/*
 * test_ticktime.c — the fixed timing histograms of daemon/ticktime.h: bin layout and
 * p50/p99/max against an exactly known sample set.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "daemon/ticktime.h"

/* Every value falls in a bin whose representative is within 3.2 % (or 1 ns) of it. */
static void bins_are_accurate(void **state)
{
    (void)state;
    int prev = -1;
    for (uint64_t v = 0; v < 5000000; v += 1 + v / 50) {
        int b = tt_bin(v);
        assert_true(b >= prev); /* monotonic */
        prev = b;
        double r = tt_bin_value_ns(b);
        assert_true(fabs(r - (double)v) <= fmax(1.0, 0.032 * (double)v));
    }
    assert_int_equal(tt_bin(UINT64_MAX), TT_BINS - 1);
}

/* 1..1000 us, each once: p50 ~ 500 us, p99 ~ 990 us, max exactly 1000 us. */
static void quantiles(void **state)
{
    (void)state;
    tt_hist *h = calloc(1, sizeof *h);
    tt_reset(h);
    assert_true(tt_quantile_us(h, 0.5) == 0);
    for (int i = 1000; i >= 1; i--) tt_add(h, (int64_t)i * 1000);
    tt_add(h, -5); /* counts as 0 */
    assert_int_equal(tt_count(h), 1001);
    assert_true(fabs(tt_quantile_us(h, 0.5) - 500) < 500 * 0.032);
    assert_true(fabs(tt_quantile_us(h, 0.99) - 990) < 990 * 0.032);
    assert_true(tt_max_us(h) == 1000.0);
    assert_true(tt_quantile_us(h, 1.0) <= 1000.0);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(bins_are_accurate),
                                       cmocka_unit_test(quantiles)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
