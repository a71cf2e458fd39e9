/*
 * test_lockfree.c — the lock-free mailbox, seqlock and ring of daemon/lockfree.h: order, fullness,
 * consistency under a concurrent writer, and a reader that falls behind.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/lockfree.h"

typedef struct {
    uint64_t a;
    double b[5];
    uint64_t c;
} msg;

/* FIFO order, full at capacity, empty afterwards. */
static void mailbox_order_and_capacity(void **state)
{
    (void)state;
    lf_mailbox m;
    assert_int_equal(lf_mailbox_init(&m, sizeof(msg), 5), 0);
    assert_int_equal(m.cap, 8);
    msg x = {0}, y;
    assert_false(lf_mailbox_pop(&m, &y));
    for (int i = 0; i < 8; i++) {
        x.a = (uint64_t)i;
        assert_true(lf_mailbox_push(&m, &x));
    }
    x.a = 99;
    assert_false(lf_mailbox_push(&m, &x));
    for (int i = 0; i < 8; i++) {
        assert_true(lf_mailbox_pop(&m, &y));
        assert_int_equal(y.a, (uint64_t)i);
    }
    assert_false(lf_mailbox_pop(&m, &y));
    lf_mailbox_free(&m);
}

/* Producer thread pushes 1..N, consumer must see exactly that sequence. */
static lf_mailbox shared_mb;
static void *mb_producer(void *arg)
{
    int n = *(int *)arg;
    for (int i = 1; i <= n; i++) {
        msg x = {.a = (uint64_t)i, .c = (uint64_t)i * 3};
        while (!lf_mailbox_push(&shared_mb, &x)) sched_yield();
    }
    return NULL;
}

static void mailbox_threads(void **state)
{
    (void)state;
    int n = 100000;
    assert_int_equal(lf_mailbox_init(&shared_mb, sizeof(msg), 16), 0);
    pthread_t t;
    pthread_create(&t, NULL, mb_producer, &n);
    uint64_t expect = 1;
    while (expect <= (uint64_t)n) {
        msg y;
        if (lf_mailbox_pop(&shared_mb, &y)) {
            assert_int_equal(y.a, expect);
            assert_int_equal(y.c, expect * 3);
            expect++;
        }
    }
    pthread_join(t, NULL);
    lf_mailbox_free(&shared_mb);
}

/* A seqlock reader never sees a torn value while a writer hammers it. */
static lf_seqlock shared_sl;
static _Atomic int sl_stop;
static void *sl_writer(void *arg)
{
    (void)arg;
    msg x;
    for (uint64_t i = 1; !atomic_load(&sl_stop); i++) {
        x.a = i;
        for (int k = 0; k < 5; k++) x.b[k] = (double)i;
        x.c = ~i;
        lf_seqlock_write(&shared_sl, &x);
    }
    return NULL;
}

static void seqlock_consistent(void **state)
{
    (void)state;
    assert_int_equal(lf_seqlock_init(&shared_sl, sizeof(msg)), 0);
    msg y;
    assert_false(lf_seqlock_read(&shared_sl, &y)); /* nothing written yet */
    atomic_store(&sl_stop, 0);
    pthread_t t;
    pthread_create(&t, NULL, sl_writer, NULL);
    uint64_t last = 0, first = 0;
    long reads = 0, attempts = 0;
    /* read until enough consistent copies were checked while the writer moved on (the writer
     * thread may start late on a loaded machine); the attempt cap only guards against a hang */
    while ((reads < 100000 || last <= first) && attempts++ < 500000000L) {
        if (!lf_seqlock_read(&shared_sl, &y)) continue; /* nothing yet, or a write in progress */
        reads++;
        assert_int_equal(y.c, ~y.a);
        for (int k = 0; k < 5; k++) assert_true(y.b[k] == (double)y.a);
        assert_true(y.a >= last); /* never goes back in time */
        if (!first) first = y.a;
        last = y.a;
    }
    /* the checks above ran on enough consistent copies, and the writer moved meanwhile */
    printf("seqlock: %ld consistent reads in %ld attempts, writer seen from %llu to %llu\n", reads,
           attempts, (unsigned long long)first, (unsigned long long)last);
    assert_true(reads >= 100000);
    assert_true(last > first);
    atomic_store(&sl_stop, 1);
    pthread_join(t, NULL);
    lf_seqlock_free(&shared_sl);
}

/* Cursor semantics: 0 = from now on, then every record once, oldest first. */
static void ring_cursor(void **state)
{
    (void)state;
    lf_ring r;
    assert_int_equal(lf_ring_init(&r, sizeof(msg), 8), 0);
    msg x = {0}, out[16];
    uint64_t cur = 0, skipped = 0;
    x.a = 1;
    lf_ring_push(&r, &x); /* before the reader starts: not returned */
    assert_int_equal(lf_ring_read(&r, &cur, out, 16, &skipped), 0);
    for (uint64_t i = 2; i <= 6; i++) {
        x.a = i;
        assert_int_equal(lf_ring_push(&r, &x), i);
    }
    assert_int_equal(lf_ring_read(&r, &cur, out, 3, &skipped), 3);
    assert_int_equal(out[0].a, 2);
    assert_int_equal(out[2].a, 4);
    assert_int_equal(lf_ring_read(&r, &cur, out, 16, &skipped), 2);
    assert_int_equal(out[0].a, 5);
    assert_int_equal(out[1].a, 6);
    assert_int_equal(skipped, 0);
    assert_int_equal(lf_ring_read(&r, &cur, out, 16, &skipped), 0);
    lf_ring_free(&r);
}

/* A reader started before anything was published still gets the first record. */
static void ring_cursor_before_first(void **state)
{
    (void)state;
    lf_ring r;
    assert_int_equal(lf_ring_init(&r, sizeof(msg), 4), 0);
    msg x = {.a = 42}, out[4];
    uint64_t cur = 0;
    assert_int_equal(lf_ring_read(&r, &cur, out, 4, NULL), 0);
    lf_ring_push(&r, &x);
    assert_int_equal(lf_ring_read(&r, &cur, out, 4, NULL), 1);
    assert_int_equal(out[0].a, 42);
    lf_ring_free(&r);
}

/* A reader that falls behind by more than the ring skips the overwritten records and then
 * continues with the oldest still held. */
static void ring_reader_falls_behind(void **state)
{
    (void)state;
    lf_ring r;
    assert_int_equal(lf_ring_init(&r, sizeof(msg), 8), 0);
    msg x = {0}, out[32];
    uint64_t cur = 0, skipped = 0;
    lf_ring_read(&r, &cur, out, 32, NULL);
    for (uint64_t i = 1; i <= 30; i++) {
        x.a = i;
        lf_ring_push(&r, &x);
    }
    int n = lf_ring_read(&r, &cur, out, 32, &skipped);
    assert_int_equal(n, 8);
    assert_int_equal(skipped, 22);
    for (int i = 0; i < 8; i++) assert_int_equal(out[i].a, (uint64_t)(23 + i));
    lf_ring_free(&r);
}

/* Concurrent writer: whatever the reader gets is intact and strictly increasing. */
static lf_ring shared_ring;
static void *ring_writer(void *arg)
{
    int n = *(int *)arg;
    msg x;
    for (int i = 1; i <= n; i++) {
        x.a = (uint64_t)i;
        for (int k = 0; k < 5; k++) x.b[k] = i;
        x.c = ~x.a;
        lf_ring_push(&shared_ring, &x);
    }
    return NULL;
}

static void ring_concurrent(void **state)
{
    (void)state;
    int n = 200000;
    assert_int_equal(lf_ring_init(&shared_ring, sizeof(msg), 64), 0);
    uint64_t cur = 0, skipped, got = 0, lost = 0, last = 0;
    msg out[16];
    lf_ring_read(&shared_ring, &cur, out, 16, NULL); /* from now (= 0) on */
    pthread_t t;
    pthread_create(&t, NULL, ring_writer, &n);
    while (last < (uint64_t)n) {
        int k = lf_ring_read(&shared_ring, &cur, out, 16, &skipped);
        lost += skipped;
        for (int i = 0; i < k; i++) {
            assert_true(out[i].a > last);
            assert_int_equal(out[i].c, ~out[i].a);
            for (int m = 0; m < 5; m++) assert_true(out[i].b[m] == (double)out[i].a);
            last = out[i].a;
            got++;
        }
    }
    pthread_join(t, NULL);
    assert_int_equal(got + lost, (uint64_t)n);
    lf_ring_free(&shared_ring);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mailbox_order_and_capacity),
        cmocka_unit_test(mailbox_threads),
        cmocka_unit_test(seqlock_consistent),
        cmocka_unit_test(ring_cursor),
        cmocka_unit_test(ring_cursor_before_first),
        cmocka_unit_test(ring_reader_falls_behind),
        cmocka_unit_test(ring_concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
