/*
 * framebuf.c — the byte buffer behind both stream parsers (see framebuf.h).
 */
#include "drivers/framebuf.h"

#include <string.h>

/* Forgets everything held. */
void framebuf_reset(size_t *len, size_t *consumed)
{
    *len = 0;
    *consumed = 0;
}

/* Drops the first n held bytes, moving the rest to the front. */
void framebuf_drop(uint8_t *buf, size_t *len, size_t n)
{
    if (n >= *len) {
        *len = 0;
    } else {
        memmove(buf, buf + n, *len - n);
        *len -= n;
    }
}

/* Drops the frame returned last (its `consumed` bytes at the front). */
void framebuf_release(uint8_t *buf, size_t *len, size_t *consumed)
{
    if (*consumed) {
        framebuf_drop(buf, len, *consumed);
        *consumed = 0;
    }
}

/* Releases the last frame, then appends as much of data[0..n) as the room left allows. */
size_t framebuf_push(uint8_t *buf, size_t cap, size_t *len, size_t *consumed, const uint8_t *data,
                     size_t n)
{
    framebuf_release(buf, len, consumed);
    size_t room = cap - *len;
    if (n > room) n = room;
    if (n) memcpy(buf + *len, data, n);
    *len += n;
    return n;
}
