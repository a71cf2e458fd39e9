/*
 * fuzz_dxl2.c — arbitrary bytes through the Dynamixel 2.0 frame parser in uneven pushes (the
 * first byte picks the chunk size), and every packet found through the host-side and
 * servo-side decoders.
 */
#include <stddef.h>
#include <stdint.h>

#include "drivers/drivers.h"

/* Runs every decoder that could see this packet. */
static void decode_all(const dxl2_packet *p)
{
    dxl2_fast_entry e[DXL2_MAX_ID + 1];
    dxl2_rw_request rw;
    dxl2_sync_request sr;
    for (uint16_t len = 1; len <= 12; len++) (void)dxl2_parse_fast_sync_status(p, len, e, 254);
    (void)dxl2_parse_read(p, &rw);
    if (dxl2_parse_write(p, &rw) == DXL2_OK && rw.len) (void)rw.data[rw.len - 1];
    if (dxl2_parse_sync_read(p, &sr) == DXL2_OK) (void)dxl2_sync_read_index(&sr, 7);
    if (dxl2_parse_sync_write(p, &sr) == DXL2_OK) (void)dxl2_sync_write_data(&sr, 7);
    dxl2_bulk_block b;
    for (int id = 0; id <= DXL2_MAX_ID; id += 7) /* each block read to its end */
        if (dxl2_parse_bulk_write(p, (uint8_t)id, &b) == DXL2_OK) (void)b.data[b.len - 1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static dxl2_framer f;
    dxl2_framer_reset(&f);
    if (size == 0) return 0;
    size_t chunk = (size_t)(data[0] % 17) + 1;
    data++;
    size--;
    for (size_t off = 0; off < size;) {
        size_t n = size - off < chunk ? size - off : chunk;
        off += dxl2_framer_push(&f, data + off, n);
        dxl2_packet p;
        int r;
        while ((r = dxl2_framer_next(&f, &p)) != DXL2_NEED_MORE)
            if (r == DXL2_OK) decode_all(&p);
    }
    /* the whole input as one packet, too */
    static uint8_t copy[DXL2_MAX_PACKET];
    if (size <= sizeof copy) {
        for (size_t i = 0; i < size; i++) copy[i] = data[i];
        dxl2_packet p;
        if (dxl2_decode(copy, size, &p) == DXL2_OK) decode_all(&p);
        (void)dxl2_unstuff(copy, size);
    }
    return 0;
}
