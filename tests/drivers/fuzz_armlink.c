/*
 * fuzz_armlink.c — arbitrary bytes through the armlink frame parser in uneven pushes (the
 * first byte picks the chunk size), and every frame found through the host-side and
 * board-side payload decoders.
 */
#include <stddef.h>
#include <stdint.h>

#include "drivers/drivers.h"

/* Runs every payload decoder on a frame. */
static void decode_all(const alk_frame *f)
{
    static alk_state st;
    alk_reply_head h;
    alk_identity id;
    uint8_t code, cmd;
    int32_t ua[ALK_MAX_CHANNELS];
    int n;
    uint16_t ms;
    (void)alk_parse_reply_head(f, &h);
    (void)alk_parse_identity(f, &h, &id);
    (void)alk_parse_state(f, &st);
    (void)alk_parse_nak(f, &h, &code, &cmd);
    (void)alk_parse_write_torque(f, ua, ALK_MAX_CHANNELS, &n);
    (void)alk_parse_set_watchdog(f, &ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static alk_framer fr;
    alk_framer_reset(&fr);
    if (size == 0) return 0;
    size_t chunk = (size_t)(data[0] % 17) + 1;
    data++;
    size--;
    for (size_t off = 0; off < size;) {
        size_t n = size - off < chunk ? size - off : chunk;
        off += alk_framer_push(&fr, data + off, n);
        alk_frame f;
        int r;
        while ((r = alk_framer_next(&fr, &f)) != ALK_NEED_MORE)
            if (r == ALK_OK) decode_all(&f);
    }
    alk_frame f;
    if (alk_decode(data, size, &f) == ALK_OK) decode_all(&f);
    return 0;
}
