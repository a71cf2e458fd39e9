/*
 * armlink_framer.c — finds armlink frames in a byte stream (either direction): sync search,
 * length sanity, CRC check, resynchronisation one byte past a rejected sync byte.
 */
#include "drivers/armlink_codec.h"
#include "drivers/framebuf.h"

void alk_framer_reset(alk_framer *f)
{
    framebuf_reset(&f->len, &f->consumed);
}

/* Drops the first n held bytes. */
static void drop(alk_framer *f, size_t n)
{
    framebuf_drop(f->buf, &f->len, n);
}

size_t alk_framer_push(alk_framer *f, const uint8_t *data, size_t n)
{
    return framebuf_push(f->buf, sizeof f->buf, &f->len, &f->consumed, data, n);
}

int alk_framer_next(alk_framer *f, alk_frame *out)
{
    framebuf_release(f->buf, &f->len, &f->consumed);
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
