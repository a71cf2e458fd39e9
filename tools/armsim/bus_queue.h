/*
 * bus_queue.h — bytes on their way over the in-process bus (simbus.c): a FIFO of chunks (one
 * request or reply packet each) with the time each one has wholly arrived [ns, the simulated
 * clock]. Arrival times must not decrease (one line carries one packet after the other).
 * Fixed capacity, embedded in its owner: nothing is allocated. One thread (simbus's caller).
 */
#ifndef ARMSIM_BUS_QUEUE_H
#define ARMSIM_BUS_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define BUS_QUEUE_BYTES  65536 /* bytes in flight or unread, at most */
#define BUS_QUEUE_CHUNKS 1024  /* packets in flight or unread, at most */
#define BUS_QUEUE_NEVER  UINT64_MAX

typedef struct {
    uint64_t t_ns; /* when its last byte has arrived */
    size_t len;    /* bytes */
} bus_chunk;

typedef struct {
    uint8_t data[BUS_QUEUE_BYTES];     /* a ring: the chunks' bytes in order */
    size_t first;                      /* index in data of the first unread byte */
    size_t bytes;                      /* unread bytes */
    bus_chunk chunk[BUS_QUEUE_CHUNKS]; /* a ring of the chunks */
    size_t head, n;                    /* index of the oldest chunk; chunks queued */
    size_t taken;                      /* bytes of the oldest chunk already read */
} bus_queue;

/* Empties q. */
void bus_queue_init(bus_queue *q);
/* Queues n bytes arriving at t_ns (not before the last chunk's time). 0, or -1 when they do
 * not fit (then nothing is queued). */
int bus_queue_push(bus_queue *q, uint64_t t_ns, const uint8_t *data, size_t n);
/* When the oldest chunk arrives [ns]; BUS_QUEUE_NEVER when q is empty. */
uint64_t bus_queue_next(const bus_queue *q);
/* Moves to buf (at most cap bytes) the bytes of the chunks arrived by now_ns, oldest first;
 * returns how many (0: none has arrived). A chunk cap cuts short stays, its rest first. */
size_t bus_queue_take(bus_queue *q, uint64_t now_ns, uint8_t *buf, size_t cap);
/* Discards the chunks arrived by now_ns; those still on the way stay. */
void bus_queue_drop(bus_queue *q, uint64_t now_ns);

#endif
