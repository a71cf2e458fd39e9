/*
 * bus_queue.c — the timed byte FIFO of the in-process bus (see bus_queue.h): two rings, one of
 * bytes and one of (arrival time, length) records. Caller's thread; no allocation.
 */
#include "tools/armsim/bus_queue.h"

#include <string.h>

/* Empties q (the buffers are left as they are). */
void bus_queue_init(bus_queue *q)
{
    q->first = q->bytes = 0;
    q->head = q->n = 0;
    q->taken = 0;
}

/* Appends the chunk's record and copies its bytes into the byte ring (in two pieces where the
 * ring wraps). */
int bus_queue_push(bus_queue *q, uint64_t t_ns, const uint8_t *data, size_t n)
{
    if (n == 0) return 0;
    if (q->n == BUS_QUEUE_CHUNKS || n > BUS_QUEUE_BYTES - q->bytes) return -1;
    size_t at = (q->first + q->bytes) % BUS_QUEUE_BYTES;
    size_t first_part = n < BUS_QUEUE_BYTES - at ? n : BUS_QUEUE_BYTES - at;
    memcpy(q->data + at, data, first_part);
    memcpy(q->data, data + first_part, n - first_part);
    q->bytes += n;
    q->chunk[(q->head + q->n) % BUS_QUEUE_CHUNKS] = (bus_chunk){t_ns, n};
    q->n++;
    return 0;
}

/* The oldest chunk's arrival time. */
uint64_t bus_queue_next(const bus_queue *q)
{
    return q->n ? q->chunk[q->head].t_ns : BUS_QUEUE_NEVER;
}

/* Removes k bytes from the front of the byte ring into buf (NULL: discards them). */
static void take_bytes(bus_queue *q, uint8_t *buf, size_t k)
{
    if (buf) {
        size_t first_part = k < BUS_QUEUE_BYTES - q->first ? k : BUS_QUEUE_BYTES - q->first;
        memcpy(buf, q->data + q->first, first_part);
        memcpy(buf + first_part, q->data, k - first_part);
    }
    q->first = (q->first + k) % BUS_QUEUE_BYTES;
    q->bytes -= k;
}

/* Takes whole arrived chunks (the last one perhaps in part) until cap is reached. */
size_t bus_queue_take(bus_queue *q, uint64_t now_ns, uint8_t *buf, size_t cap)
{
    size_t got = 0;
    while (q->n && q->chunk[q->head].t_ns <= now_ns && got < cap) {
        bus_chunk *c = &q->chunk[q->head];
        size_t left = c->len - q->taken;
        size_t k = left < cap - got ? left : cap - got;
        take_bytes(q, buf + got, k);
        got += k;
        q->taken += k;
        if (q->taken == c->len) {
            q->head = (q->head + 1) % BUS_QUEUE_CHUNKS;
            q->n--;
            q->taken = 0;
        }
    }
    return got;
}

/* Discards whole arrived chunks (the rest of a partly read one included). */
void bus_queue_drop(bus_queue *q, uint64_t now_ns)
{
    while (q->n && q->chunk[q->head].t_ns <= now_ns) {
        take_bytes(q, NULL, q->chunk[q->head].len - q->taken);
        q->head = (q->head + 1) % BUS_QUEUE_CHUNKS;
        q->n--;
        q->taken = 0;
    }
}
