/*
 * framebuf.h — drivers/-private byte buffer shared by the stream parsers (dxl2_framer,
 * alk_framer): the framer owns the storage buf[cap] and the counts; these functions keep the
 * held bytes at the front of buf, len of them, the first `consumed` being the frame returned
 * last (dropped on the next call, so that frame stays valid until then).
 */
#ifndef ARMD_DRIVERS_FRAMEBUF_H
#define ARMD_DRIVERS_FRAMEBUF_H

#include <stddef.h>
#include <stdint.h>

/* Forgets everything held (counters of the framer are not touched). */
void framebuf_reset(size_t *len, size_t *consumed);
/* Drops the first n held bytes (all of them if n >= *len). */
void framebuf_drop(uint8_t *buf, size_t *len, size_t n);
/* Drops the frame returned last, if any. */
void framebuf_release(uint8_t *buf, size_t *len, size_t *consumed);
/* Releases the last frame, then appends as much of data[0..n) as fits in cap: bytes taken. */
size_t framebuf_push(uint8_t *buf, size_t cap, size_t *len, size_t *consumed, const uint8_t *data,
                     size_t n);

#endif
