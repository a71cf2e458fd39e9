/*
 * dxl2_framer.c — finds Dynamixel 2.0 packets in a byte stream (either direction): header
 * search, LEN sanity, CRC check, resynchronisation after garbage or corrupt packets.
 */
#include "drivers/dxl2_codec.h"
#include "drivers/framebuf.h"

static const uint8_t header[4] = {0xFF, 0xFF, 0xFD, 0x00};

void dxl2_framer_reset(dxl2_framer *f)
{
    framebuf_reset(&f->len, &f->consumed);
}

/* Drops the first n held bytes. */
static void drop(dxl2_framer *f, size_t n)
{
    framebuf_drop(f->buf, &f->len, n);
}

size_t dxl2_framer_push(dxl2_framer *f, const uint8_t *data, size_t n)
{
    return framebuf_push(f->buf, sizeof f->buf, &f->len, &f->consumed, data, n);
}

/* Length of the longest prefix of the header found at buf[i..len), i.e. whether a header can
 * start at i with the bytes held (returns 4 for a full header). */
static size_t header_match(const dxl2_framer *f, size_t i)
{
    size_t k = 0;
    while (k < 4 && i + k < f->len && f->buf[i + k] == header[k]) k++;
    return k;
}

int dxl2_framer_next(dxl2_framer *f, dxl2_packet *out)
{
    framebuf_release(f->buf, &f->len, &f->consumed);
    {
        /* skip to the first position where a header (or the start of one) sits */
        size_t i = 0;
        while (i < f->len) {
            size_t k = header_match(f, i);
            if (k == 4 || i + k == f->len) break;
            i++;
        }
        f->dropped += i;
        drop(f, i);
        if (f->len < DXL2_HEADER_LEN) return DXL2_NEED_MORE;

        size_t plen = dxl2_get_u16(f->buf + 5);
        size_t total = DXL2_HEADER_LEN + plen;
        if (plen < 3 || total > sizeof f->buf) {
            f->bad_len++;
            f->dropped++;
            drop(f, 1);
            return DXL2_ELENGTH;
        }
        if (f->len < total) return DXL2_NEED_MORE;
        int r = dxl2_decode(f->buf, total, out);
        if (r == DXL2_OK) {
            f->consumed = total;
            return DXL2_OK;
        }
        if (r == DXL2_ECRC) {
            /* corrupt: resynchronise one byte past this header */
            f->bad_crc++;
            f->dropped++;
            drop(f, 1);
            return DXL2_ECRC;
        }
        /* intact (CRC good) but malformed inside: skip the whole packet */
        f->bad_len++;
        f->dropped += total;
        drop(f, total);
        return DXL2_ELENGTH;
    }
}
