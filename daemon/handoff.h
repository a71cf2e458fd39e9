/*
 * handoff.h — lock-free hand-off between armd's main thread and its control thread (C11
 * atomics, no locks, no allocation after *_init):
 *
 *  - hf_mailbox: single-producer/single-consumer queue of fixed-size messages (commands in);
 *  - hf_seqlock: one value written by one thread, read consistently by another (status out);
 *  - hf_ring:    single-producer ring of numbered records that readers follow with their own
 *                cursor; a slow reader skips overwritten records and never delays the writer
 *                (samples and events out).
 *
 * Data words are copied with relaxed atomic loads/stores, ordered by fences, so a seqlock read
 * that races with a write is well defined (and detected by the sequence check).
 */
#ifndef ARMD_HANDOFF_H
#define ARMD_HANDOFF_H

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
} hf_mailbox;

int hf_mailbox_init(hf_mailbox *m, size_t elem_size, size_t cap);
void hf_mailbox_free(hf_mailbox *m);
/* Producer: copies msg in; false when full. */
bool hf_mailbox_push(hf_mailbox *m, const void *msg);
/* Consumer: copies the oldest message out; false when empty. */
bool hf_mailbox_pop(hf_mailbox *m, void *msg);

/* --------------------------------------------------------------------------- seqlock */
typedef struct {
    size_t size, n_words;
    _Atomic uint64_t seq; /* odd while a write is in progress */
    _Atomic uint64_t *words;
} hf_seqlock;

int hf_seqlock_init(hf_seqlock *s, size_t size);
void hf_seqlock_free(hf_seqlock *s);
/* Writer (one thread only). */
void hf_seqlock_write(hf_seqlock *s, const void *value);
/* Reader: a consistent copy of the last written value (retries while a write is under way).
 * Returns false if nothing was written yet (out untouched). */
bool hf_seqlock_read(hf_seqlock *s, void *out);

/* ------------------------------------------------------------------------------ ring */
typedef struct {
    size_t elem_size, n_words, cap; /* cap is a power of two */
    _Atomic uint64_t head;          /* number of records published (record seqs are 1..head) */
    _Atomic uint64_t *stamps;       /* per slot: seq of the record in it, 0 while being written */
    _Atomic uint64_t *words;        /* cap * n_words data words */
} hf_ring;

int hf_ring_init(hf_ring *r, size_t elem_size, size_t cap);
void hf_ring_free(hf_ring *r);
/* Writer (one thread only): publishes rec as record number head + 1; returns its seq. */
uint64_t hf_ring_push(hf_ring *r, const void *rec);
uint64_t hf_ring_head(hf_ring *r);
/* Reader: copies up to max records not yet seen through *cursor (an opaque position: the seq
 * of the next record to read), oldest first, into out (max * elem_size bytes) and advances
 * *cursor. *cursor = 0 means "from now on": it is set past the present head, so nothing older
 * is returned. Records overwritten before they could be read are skipped; *skipped (may be
 * NULL) receives how many. */
int hf_ring_read(hf_ring *r, uint64_t *cursor, void *out, int max, uint64_t *skipped);

#endif
