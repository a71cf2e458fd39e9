/*
 * lockfree.c — SPSC mailbox, seqlock and overwrite ring on C11 atomics (see lockfree.h).
 * The seqlock follows Boehm, "Can seqlocks get along with programming language memory
 * models?" (2012): relaxed data accesses bracketed by a release fence on the writer side and an
 * acquire fence on the reader side.
 */
#include "daemon/lockfree.h"

#include <stdlib.h>
#include <string.h>

/* Rounds n up to a power of two (n >= 1). */
static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

/* Copies size bytes of src into relaxed atomic words. */
static void words_store(_Atomic uint64_t *w, const void *src, size_t size)
{
    const unsigned char *s = src;
    size_t n = size / 8;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, s + 8 * i, 8);
        atomic_store_explicit(&w[i], v, memory_order_relaxed);
    }
    if (size % 8) {
        uint64_t v = 0;
        memcpy(&v, s + 8 * n, size % 8);
        atomic_store_explicit(&w[n], v, memory_order_relaxed);
    }
}

/* Copies relaxed atomic words out into size bytes of dst. */
static void words_load(_Atomic uint64_t *w, void *dst, size_t size)
{
    unsigned char *d = dst;
    size_t n = size / 8;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = atomic_load_explicit(&w[i], memory_order_relaxed);
        memcpy(d + 8 * i, &v, 8);
    }
    if (size % 8) {
        uint64_t v = atomic_load_explicit(&w[n], memory_order_relaxed);
        memcpy(d + 8 * n, &v, size % 8);
    }
}

/* ------------------------------------------------------------------------ mailbox */

/* Allocates room for cap (rounded up to a power of two) messages of elem_size bytes. */
int lf_mailbox_init(lf_mailbox *m, size_t elem_size, size_t cap)
{
    m->elem_size = elem_size;
    m->cap = pow2_at_least(cap ? cap : 1);
    m->buf = calloc(m->cap, elem_size);
    atomic_init(&m->head, 0);
    atomic_init(&m->tail, 0);
    return m->buf ? 0 : -1;
}

void lf_mailbox_free(lf_mailbox *m)
{
    free(m->buf);
    m->buf = NULL;
}

/* Producer side: the slot is written before head is published (release). */
bool lf_mailbox_push(lf_mailbox *m, const void *msg)
{
    uint64_t h = atomic_load_explicit(&m->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&m->tail, memory_order_acquire);
    if (h - t >= m->cap) return false;
    memcpy(m->buf + (h & (m->cap - 1)) * m->elem_size, msg, m->elem_size);
    atomic_store_explicit(&m->head, h + 1, memory_order_release);
    return true;
}

/* Consumer side: the slot is read before tail is released back to the producer. */
bool lf_mailbox_pop(lf_mailbox *m, void *msg)
{
    uint64_t t = atomic_load_explicit(&m->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&m->head, memory_order_acquire);
    if (t == h) return false;
    memcpy(msg, m->buf + (t & (m->cap - 1)) * m->elem_size, m->elem_size);
    atomic_store_explicit(&m->tail, t + 1, memory_order_release);
    return true;
}

/* ------------------------------------------------------------------------ seqlock */

int lf_seqlock_init(lf_seqlock *s, size_t size)
{
    s->size = size;
    s->n_words = (size + 7) / 8;
    s->words = calloc(s->n_words ? s->n_words : 1, sizeof *s->words);
    atomic_init(&s->seq, 0);
    return s->words ? 0 : -1;
}

void lf_seqlock_free(lf_seqlock *s)
{
    free(s->words);
    s->words = NULL;
}

/* Writer: seq odd, release fence, data, seq even (release). */
void lf_seqlock_write(lf_seqlock *s, const void *value)
{
    uint64_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    words_store(s->words, value, s->size);
    atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

/* Reader: retry until the same even seq was seen before and after the copy. */
bool lf_seqlock_read(lf_seqlock *s, void *out)
{
    for (;;) {
        uint64_t q1 = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (q1 == 0) return false;
        if (q1 & 1) continue;
        words_load(s->words, out, s->size);
        atomic_thread_fence(memory_order_acquire);
        uint64_t q2 = atomic_load_explicit(&s->seq, memory_order_relaxed);
        if (q1 == q2) return true;
    }
}

/* --------------------------------------------------------------------------- ring */

int lf_ring_init(lf_ring *r, size_t elem_size, size_t cap)
{
    r->elem_size = elem_size;
    r->n_words = (elem_size + 7) / 8;
    r->cap = pow2_at_least(cap ? cap : 1);
    atomic_init(&r->head, 0);
    r->stamps = calloc(r->cap, sizeof *r->stamps);
    r->words = calloc(r->cap * r->n_words, sizeof *r->words);
    return r->stamps && r->words ? 0 : -1;
}

void lf_ring_free(lf_ring *r)
{
    free(r->stamps);
    free(r->words);
    r->stamps = NULL;
    r->words = NULL;
}

uint64_t lf_ring_head(lf_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire);
}

/* Writer: the slot's stamp is cleared (a per-slot seqlock), the data written, then the stamp
 * and head carry the new seq with release order. */
uint64_t lf_ring_push(lf_ring *r, const void *rec)
{
    uint64_t seq = atomic_load_explicit(&r->head, memory_order_relaxed) + 1;
    size_t slot = (size_t)(seq & (r->cap - 1));
    atomic_store_explicit(&r->stamps[slot], 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    words_store(r->words + slot * r->n_words, rec, r->elem_size);
    atomic_store_explicit(&r->stamps[slot], seq, memory_order_release);
    atomic_store_explicit(&r->head, seq, memory_order_release);
    return seq;
}

/* Reader: walks seqs cursor..head; a slot whose stamp is not the expected seq before and after
 * the copy was overwritten (the reader fell behind) and is skipped. */
int lf_ring_read(lf_ring *r, uint64_t *cursor, void *out, int max, uint64_t *skipped)
{
    uint64_t head = lf_ring_head(r);
    uint64_t lost = 0;
    int n = 0;
    if (*cursor == 0) *cursor = head + 1;
    uint64_t next = *cursor;
    if (head + 1 > next && head + 1 - next > r->cap) { /* fell behind by more than the ring */
        lost += head + 1 - r->cap - next;
        next = head + 1 - r->cap;
    }
    unsigned char *o = out;
    while (next <= head && n < max) {
        size_t slot = (size_t)(next & (r->cap - 1));
        uint64_t s1 = atomic_load_explicit(&r->stamps[slot], memory_order_acquire);
        if (s1 == next) {
            words_load(r->words + slot * r->n_words, o + (size_t)n * r->elem_size, r->elem_size);
            atomic_thread_fence(memory_order_acquire);
            uint64_t s2 = atomic_load_explicit(&r->stamps[slot], memory_order_relaxed);
            if (s2 == next) {
                n++;
                next++;
                continue;
            }
        }
        lost++; /* overwritten while we were behind */
        next++;
    }
    *cursor = next;
    if (skipped) *skipped = lost;
    return n;
}
