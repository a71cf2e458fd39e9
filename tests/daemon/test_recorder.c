/*
 * test_recorder.c — the recording behind record.start / record.fetch (daemon/recorder.h), fed
 * crafted samples: its bounds (duration and storage refused with the figures), the fields it
 * keeps, its end (full, past its duration, stopped), and lost samples (a tick missing between
 * two added) counted at the sample after them and in the total, without counting a late tick's
 * skipped periods or a tick seen twice.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/recorder.h"

/* k samples of consecutive ticks from tick0 at 1 kHz, q[j] = tick + j / 10. */
static void make(ctl_sample *s, int k, uint64_t tick0)
{
    memset(s, 0, sizeof *s * (size_t)k);
    for (int i = 0; i < k; i++) {
        s[i].tick = tick0 + (uint64_t)i;
        s[i].time = (double)s[i].tick * 1e-3;
        s[i].state = CTL_MOVING;
        for (int j = 0; j < 6; j++) {
            s[i].q[j] = (double)s[i].tick + j / 10.0;
            s[i].tau_meas[j] = -(double)s[i].tick;
        }
    }
}

static void test_bounds(void **state)
{
    (void)state;
    char why[256] = "";
    assert_null(recorder_create(6, 1000, RECORDER_MAX_S + 1, 1u << REC_Q, why, sizeof why));
    assert_non_null(strstr(why, "601 s is outside (0, 600]"));
    assert_null(recorder_create(6, 1000, 0, 1u << REC_Q, why, sizeof why));
    assert_null(recorder_create(6, 1000, -1, 1u << REC_Q, why, sizeof why));
    assert_null(recorder_create(6, 1000, 0.0 / 0.0, 1u << REC_Q, why, sizeof why));
    /* 64 joints, all fields, 100 kHz, 600 s: far over the storage bound, said with figures */
    assert_null(recorder_create(64, 100000, 600, (1u << REC_N_FIELDS) - 1, why, sizeof why));
    assert_non_null(strstr(why, "at most 64 MiB"));
    recorder *r =
        recorder_create(6, 1000, 60, (1u << REC_Q) | (1u << REC_TAU_MEAS), why, sizeof why);
    assert_non_null(r);
    assert_int_equal(recorder_capacity(r), 60001);
    assert_int_equal(recorder_fields(r), (1u << REC_Q) | (1u << REC_TAU_MEAS));
    recorder_free(r);
    assert_int_equal(recorder_field_of("tau_meas"), REC_TAU_MEAS);
    assert_int_equal(recorder_field_of("tau_mes"), -1);
}

static void test_fields_and_duration(void **state)
{
    (void)state;
    char why[256];
    recorder *r =
        recorder_create(6, 1000, 0.05, (1u << REC_Q) | (1u << REC_TAU_MEAS), why, sizeof why);
    assert_non_null(r);
    static ctl_sample s[100];
    make(s, 100, 1000);
    assert_int_equal(recorder_add(r, s, 30), 30);
    assert_null(recorder_end(r));
    assert_int_equal(recorder_add(r, s + 30, 70), 21); /* ticks 1000 .. 1050: 0.05 s */
    assert_string_equal(recorder_end(r), "full");
    assert_int_equal(recorder_count(r), 51);
    assert_float_equal(recorder_value(r, 50, REC_Q)[3], 1050.3, 1e-12);
    assert_float_equal(recorder_value(r, 7, REC_TAU_MEAS)[5], -1007, 0);
    assert_null(recorder_value(r, 7, REC_QD));
    assert_int_equal(recorder_head(r, 50)->tick, 1050);
    assert_int_equal(recorder_head(r, 50)->state, CTL_MOVING);
    assert_int_equal(recorder_add(r, s, 10), 0); /* done: nothing more */
    recorder_free(r);
    /* late ticks, 2 periods each: fewer samples than the room, ended by the duration */
    r = recorder_create(6, 1000, 0.05, 1u << REC_Q, why, sizeof why);
    for (int i = 0; i < 100; i++) s[i].time = 1.0 + 0.002 * i;
    assert_int_equal(recorder_add(r, s, 100), 26); /* 1.000 .. 1.050 s */
    assert_string_equal(recorder_end(r), "duration");
    recorder_free(r);
}

static void test_full_and_stop(void **state)
{
    (void)state;
    char why[256];
    recorder *r = recorder_create(2, 100, 0.1, 1u << REC_Q, why, sizeof why); /* room for 11 */
    static ctl_sample s[20];
    make(s, 20, 1);
    /* 100 Hz, but the samples are 1 ms apart: the room ends it before the duration */
    assert_int_equal(recorder_add(r, s, 20), 11);
    assert_string_equal(recorder_end(r), "full");
    recorder_free(r);
    r = recorder_create(2, 1000, 1, 1u << REC_Q, why, sizeof why);
    assert_int_equal(recorder_add(r, s, 5), 5);
    recorder_stop(r);
    assert_string_equal(recorder_end(r), "stopped");
    assert_int_equal(recorder_add(r, s + 5, 5), 0);
    assert_int_equal(recorder_count(r), 5);
    recorder_free(r);
}

static void test_lost_samples(void **state)
{
    (void)state;
    char why[256];
    recorder *r = recorder_create(6, 1000, 10, 1u << REC_Q, why, sizeof why);
    static ctl_sample s[200];
    make(s, 200, 50);
    assert_int_equal(recorder_add(r, s, 10), 10);      /* ticks 50 .. 59 */
    assert_int_equal(recorder_add(r, s + 5, 10), 5);   /* 55 .. 64: 55 .. 59 seen already */
    assert_int_equal(recorder_add(r, s + 40, 10), 10); /* 90 .. 99: 65 .. 89 lost */
    assert_int_equal(recorder_lost(r), 25);
    assert_int_equal(recorder_head(r, 15)->tick, 90);
    assert_int_equal(recorder_head(r, 15)->lost_before, 25);
    assert_int_equal(recorder_head(r, 16)->lost_before, 0);
    assert_int_equal(recorder_head(r, 14)->lost_before, 0);
    /* a late tick: the next number, 3 periods later in time, is no loss */
    ctl_sample late;
    make(&late, 1, 100);
    late.time += 0.003;
    assert_int_equal(recorder_add(r, &late, 1), 1);
    assert_int_equal(recorder_lost(r), 25);
    /* two holes in one batch: each counted where it ends */
    make(s, 10, 101);
    ctl_sample batch[3] = {s[1], s[4], s[9]}; /* 102, 105, 110: 1, 2 and 4 lost */
    assert_int_equal(recorder_add(r, batch, 3), 3);
    assert_int_equal(recorder_lost(r), 32);
    long n = recorder_count(r);
    assert_int_equal(recorder_head(r, n - 3)->lost_before, 1);
    assert_int_equal(recorder_head(r, n - 2)->lost_before, 2);
    assert_int_equal(recorder_head(r, n - 1)->lost_before, 4);
    recorder_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_fields_and_duration),
        cmocka_unit_test(test_full_and_stop),
        cmocka_unit_test(test_lost_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
