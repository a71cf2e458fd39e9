/*
 * lockfree.h — the lock-free primitives daemon/handoff.c builds the threads' hand-off from
 * (C11 atomics, no locks, no allocation after *_init):
 *
 *  - lf_mailbox: single-producer/single-consumer queue of fixed-size messages;
 *  - lf_seqlock: one value written by one thread, read consistently by another;
 *  - lf_ring:    single-producer ring of numbered records that readers follow with their own
 *                cursor; a slow reader skips overwritten records and never delays the writer.
 *
 * Data words are copied with relaxed atomic loads/stores, ordered by fences, so a seqlock read
 * that races with a write is well defined (and detected by the sequence check).
 */
#ifndef ARMD_LOCKFREE_H
#define ARMD_LOCKFREE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --------------------------------------------------------------------------- mailbox */
typedef struct {
    size_t elem_size, cap; /* cap is a power of two */
    unsigned char *buf;
    _Atomic uint64_t head; /* next slot the producer writes */
    _Atomic uint64_t tail; /* next slot the consumer reads */
} lf_mailbox;

int lf_mailbox_init(lf_mailbox *m, size_t elem_size, size_t cap);
void lf_mailbox_free(lf_mailbox *m);
/* Producer: copies msg in; false when full. */
bool lf_mailbox_push(lf_mailbox *m, const void *msg);
/* Consumer: copies the oldest message out; false when empty. */
bool lf_mailbox_pop(lf_mailbox *m, void *msg);

/* --------------------------------------------------------------------------- seqlock */
typedef struct {
    size_t size, n_words;
    _Atomic uint64_t seq; /* odd while a write is in progress */
    _Atomic uint64_t *words;
} lf_seqlock;

int lf_seqlock_init(lf_seqlock *s, size_t size);
void lf_seqlock_free(lf_seqlock *s);
/* Writer (one thread only). */
void lf_seqlock_write(lf_seqlock *s, const void *value);
/* Reader: a consistent copy of the last written value (retries while a write is under way).
 * Returns false if nothing was written yet (out untouched). */
bool lf_seqlock_read(lf_seqlock *s, void *out);

/* ------------------------------------------------------------------------------ ring */
typedef struct {
    size_t elem_size, n_words, cap; /* cap is a power of two */
    _Atomic uint64_t head;          /* number of records published (record seqs are 1..head) */
    _Atomic uint64_t *stamps;       /* per slot: seq of the record in it, 0 while being written */
    _Atomic uint64_t *words;        /* cap * n_words data words */
} lf_ring;

int lf_ring_init(lf_ring *r, size_t elem_size, size_t cap);
void lf_ring_free(lf_ring *r);
/* Writer (one thread only): publishes rec as record number head + 1; returns its seq. */
uint64_t lf_ring_push(lf_ring *r, const void *rec);
uint64_t lf_ring_head(lf_ring *r);
/* Reader: copies up to max records not yet seen through *cursor (an opaque position: the seq
 * of the next record to read), oldest first, into out (max * elem_size bytes) and advances
 * *cursor. *cursor = 0 means "from now on": it is set past the present head, so nothing older
 * is returned. Records overwritten before they could be read are skipped; *skipped (may be
 * NULL) receives how many. */
int lf_ring_read(lf_ring *r, uint64_t *cursor, void *out, int max, uint64_t *skipped);

#endif
