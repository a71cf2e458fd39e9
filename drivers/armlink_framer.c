/*
 * armlink_framer.c — finds armlink frames in a byte stream (either direction): sync search,
 * length sanity, CRC check, resynchronisation one byte past a rejected sync byte.
 */
#include "drivers/armlink_codec.h"

#include <string.h>

void alk_framer_reset(alk_framer *f)
{
    f->len = 0;
    f->consumed = 0;
}

/* Drops the first n held bytes. */
static void drop(alk_framer *f, size_t n)
{
    if (n >= f->len) {
        f->len = 0;
    } else {
        memmove(f->buf, f->buf + n, f->len - n);
        f->len -= n;
    }
}

/* Forgets the frame returned last. */
static void release(alk_framer *f)
{
    if (f->consumed) {
        drop(f, f->consumed);
        f->consumed = 0;
    }
}

size_t alk_framer_push(alk_framer *f, const uint8_t *data, size_t n)
{
    release(f);
    size_t room = sizeof f->buf - f->len;
    if (n > room) n = room;
    memcpy(f->buf + f->len, data, n);
    f->len += n;
    return n;
}

int alk_framer_next(alk_framer *f, alk_frame *out)
{
    release(f);
    size_t i = 0;
    while (i < f->len && f->buf[i] != ALK_SYNC) i++;
    f->dropped += i;
    drop(f, i);
    if (f->len < 3) return ALK_NEED_MORE;
    size_t plen = (size_t)(f->buf[1] | (f->buf[2] << 8));
    if (plen > ALK_MAX_PAYLOAD) {
        f->bad_len++;
        f->dropped++;
        drop(f, 1);
        return ALK_ELENGTH;
    }
    size_t total = ALK_HEADER_LEN + plen + ALK_CRC_LEN;
    if (f->len < total) return ALK_NEED_MORE;
    if (alk_decode(f->buf, total, out) != ALK_OK) {
        f->bad_crc++;
        f->dropped++;
        drop(f, 1);
        return ALK_ECRC;
    }
    f->consumed = total;
    return ALK_OK;
}
