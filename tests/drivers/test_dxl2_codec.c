/*
 * test_dxl2_codec.c — Dynamixel Protocol 2.0 codec against the example packets published in
 * the ROBOTIS e-Manual ("Protocol 2.0", emanual.robotis.com/docs/en/dxl/protocol2/), CRC check
 * value, stuffing, status errors, the frame parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drivers.h"

/* Asserts that a builder produced exactly the expected bytes. */
static void assert_bytes(const uint8_t *got, int n, const uint8_t *want, size_t wn)
{
    assert_int_equal(n, (int)wn);
    assert_memory_equal(got, want, wn);
}

static void test_crc_check_value(void **state)
{
    (void)state;
    assert_int_equal(dxl2_crc16(0, (const uint8_t *)"123456789", 9), 0xFEE8);
    /* continuing a CRC equals computing it in one go */
    uint16_t c = dxl2_crc16(0, (const uint8_t *)"1234", 4);
    assert_int_equal(dxl2_crc16(c, (const uint8_t *)"56789", 5), 0xFEE8);
}

static void test_ping_vectors(void **state)
{
    (void)state;
    uint8_t b[64];
    static const uint8_t ping[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01, 0x19, 0x4E};
    assert_bytes(b, dxl2_build_ping(b, sizeof b, 1), ping, sizeof ping);

    static const uint8_t reply[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00,
                                    0x55, 0x00, 0x06, 0x04, 0x26, 0x65, 0x5D};
    uint8_t data[] = {0x06, 0x04, 0x26}; /* model 1030, firmware 38 */
    assert_bytes(b, dxl2_build_status(b, sizeof b, 1, 0, data, 3), reply, sizeof reply);

    dxl2_packet p;
    memcpy(b, reply, sizeof reply);
    assert_int_equal(dxl2_decode(b, sizeof reply, &p), DXL2_OK);
    assert_int_equal(p.id, 1);
    assert_int_equal(p.instruction, DXL2_INST_STATUS);
    assert_int_equal(p.error, 0);
    assert_int_equal(p.n_params, 3);
    assert_int_equal(dxl2_get_u16(p.params), 1030);
    assert_int_equal(p.params[2], 38);
    assert_string_equal(dxl2_model_name(1030), "XM430-W210");
}

static void test_read_vectors(void **state)
{
    (void)state;
    uint8_t b[64];
    static const uint8_t rd[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00,
                                 0x02, 0x84, 0x00, 0x04, 0x00, 0x1D, 0x15};
    assert_bytes(b, dxl2_build_read(b, sizeof b, 1, DXL2_ADDR_PRESENT_POSITION, 4), rd, sizeof rd);
    /* servo side: the same bytes decode to Read(132, 4) */
    dxl2_packet p;
    dxl2_rw_request rq;
    assert_int_equal(dxl2_decode(b, sizeof rd, &p), DXL2_OK);
    assert_int_equal(dxl2_parse_read(&p, &rq), DXL2_OK);
    assert_int_equal(rq.addr, 132);
    assert_int_equal(rq.len, 4);

    static const uint8_t reply[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x08, 0x00, 0x55,
                                    0x00, 0xA6, 0x00, 0x00, 0x00, 0x8C, 0xC0};
    uint8_t v[4];
    dxl2_put_u32(v, 166);
    assert_bytes(b, dxl2_build_status(b, sizeof b, 1, 0, v, 4), reply, sizeof reply);
    assert_int_equal(dxl2_decode(b, sizeof reply, &p), DXL2_OK);
    assert_int_equal(p.n_params, 4);
    assert_int_equal(dxl2_get_u32(p.params), 166);
}

static void test_write_vector(void **state)
{
    (void)state;
    uint8_t b[64];
    static const uint8_t wr[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x09, 0x00, 0x03,
                                 0x74, 0x00, 0x00, 0x02, 0x00, 0x00, 0xCA, 0x89};
    uint8_t v[4];
    dxl2_put_u32(v, 512);
    assert_bytes(b, dxl2_build_write(b, sizeof b, 1, DXL2_ADDR_GOAL_POSITION, v, 4), wr, sizeof wr);
    dxl2_packet p;
    dxl2_rw_request rq;
    assert_int_equal(dxl2_decode(b, sizeof wr, &p), DXL2_OK);
    assert_int_equal(dxl2_parse_write(&p, &rq), DXL2_OK);
    assert_int_equal(rq.addr, 116);
    assert_int_equal(rq.len, 4);
    assert_int_equal(dxl2_get_u32(rq.data), 512);
}

static void test_sync_read_vectors(void **state)
{
    (void)state;
    uint8_t b[64];
    static const uint8_t sr[] = {0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x09, 0x00, 0x82,
                                 0x84, 0x00, 0x04, 0x00, 0x01, 0x02, 0xCE, 0xFA};
    const uint8_t ids[] = {1, 2};
    assert_bytes(b, dxl2_build_sync_read(b, sizeof b, 132, 4, ids, 2), sr, sizeof sr);
    dxl2_packet p;
    dxl2_sync_request rq;
    assert_int_equal(dxl2_decode(b, sizeof sr, &p), DXL2_OK);
    assert_int_equal(p.id, DXL2_BROADCAST_ID);
    assert_int_equal(dxl2_parse_sync_read(&p, &rq), DXL2_OK);
    assert_int_equal(rq.addr, 132);
    assert_int_equal(rq.len, 4);
    assert_int_equal(rq.n_ids, 2);
    assert_int_equal(dxl2_sync_read_index(&rq, 2), 1);
    assert_int_equal(dxl2_sync_read_index(&rq, 3), -1);

    static const uint8_t reply[] = {0xFF, 0xFF, 0xFD, 0x00, 0x02, 0x08, 0x00, 0x55,
                                    0x00, 0x1F, 0x08, 0x00, 0x00, 0xBA, 0xBE};
    uint8_t v[4];
    dxl2_put_u32(v, 2079);
    assert_bytes(b, dxl2_build_status(b, sizeof b, 2, 0, v, 4), reply, sizeof reply);
}

static void test_sync_write_vector(void **state)
{
    (void)state;
    uint8_t b[64];
    static const uint8_t sw[] = {0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x11, 0x00, 0x83,
                                 0x74, 0x00, 0x04, 0x00, 0x01, 0x96, 0x00, 0x00,
                                 0x00, 0x02, 0xAA, 0x00, 0x00, 0x00, 0x82, 0x87};
    const uint8_t ids[] = {1, 2};
    uint8_t data[8];
    dxl2_put_u32(data, 150);
    dxl2_put_u32(data + 4, 170);
    assert_bytes(b, dxl2_build_sync_write(b, sizeof b, 116, 4, ids, data, 2), sw, sizeof sw);
    dxl2_packet p;
    dxl2_sync_request rq;
    assert_int_equal(dxl2_decode(b, sizeof sw, &p), DXL2_OK);
    assert_int_equal(dxl2_parse_sync_write(&p, &rq), DXL2_OK);
    assert_int_equal(rq.n_ids, 2);
    const uint8_t *d2 = dxl2_sync_write_data(&rq, 2);
    assert_non_null(d2);
    assert_int_equal(dxl2_get_u32(d2), 170);
    assert_null(dxl2_sync_write_data(&rq, 3));
}

/* Bulk Write (0x93): blocks of ID, address, length (little-endian) and data, to broadcast; the
 * servo side finds its own block; a duplicate ID or an empty block is refused, and a packet whose
 * blocks do not tile its parameters exactly is EFORMAT. */
static void test_bulk_write(void **state)
{
    (void)state;
    uint8_t b[128], cur[2], goal[DXL2_TOOL_GOAL_LEN] = {0};
    dxl2_put_u16(cur, (uint16_t)-300);
    dxl2_put_u32(goal + 14, 2100);
    const dxl2_bulk_block blk[] = {{11, DXL2_ADDR_GOAL_CURRENT, 2, cur},
                                   {15, DXL2_TOOL_GOAL_ADDR, DXL2_TOOL_GOAL_LEN, goal}};
    int len = dxl2_build_bulk_write(b, sizeof b, blk, 2);
    assert_int_equal(len, 10 + (5 + 2) + (5 + DXL2_TOOL_GOAL_LEN) + 2 - 2);
    static const uint8_t head[] = {0xFF, 0xFF, 0xFD, 0x00, 0xFE, 0x21, 0x00, 0x93, 11, 102,
                                   0,    2,    0,    0xD4, 0xFE, 15,   102,  0,    18, 0};
    assert_memory_equal(b, head, sizeof head);
    dxl2_packet p;
    assert_int_equal(dxl2_decode(b, (size_t)len, &p), DXL2_OK);
    dxl2_bulk_block got;
    assert_int_equal(dxl2_parse_bulk_write(&p, 15, &got), DXL2_OK);
    assert_int_equal(got.addr, DXL2_TOOL_GOAL_ADDR);
    assert_int_equal(got.len, DXL2_TOOL_GOAL_LEN);
    assert_int_equal(dxl2_get_u32(got.data + 14), 2100);
    assert_int_equal(dxl2_parse_bulk_write(&p, 11, &got), DXL2_OK);
    assert_int_equal((int16_t)dxl2_get_u16(got.data), -300);
    assert_int_equal(dxl2_parse_bulk_write(&p, 12, &got), DXL2_NEED_MORE);
    /* the last block one byte short: the blocks no longer tile the parameters */
    p.n_params--;
    assert_int_equal(dxl2_parse_bulk_write(&p, 11, &got), DXL2_EFORMAT);
    const dxl2_bulk_block dup[] = {{11, 102, 2, cur}, {11, 102, 2, cur}};
    assert_int_equal(dxl2_build_bulk_write(b, sizeof b, dup, 2), DXL2_EARG);
    const dxl2_bulk_block empty[] = {{11, 102, 0, cur}};
    assert_int_equal(dxl2_build_bulk_write(b, sizeof b, empty, 1), DXL2_EARG);
}

/* Parameters containing FF FF FD are stuffed on the wire and come back unchanged. */
static void test_stuffing_round_trip(void **state)
{
    (void)state;
    const uint8_t in[] = {0xFF, 0xFF, 0xFD, 0x01, 0xFF, 0xFF, 0xFD, 0xFD, 0xFF};
    uint8_t st[32];
    int n = dxl2_stuff(in, sizeof in, st, sizeof st);
    const uint8_t want[] = {0xFF, 0xFF, 0xFD, 0xFD, 0x01, 0xFF, 0xFF, 0xFD, 0xFD, 0xFD, 0xFF};
    assert_bytes(st, n, want, sizeof want);
    assert_int_equal(dxl2_unstuff(st, (size_t)n), (int)sizeof in);
    assert_memory_equal(st, in, sizeof in);
    /* too small an output buffer is an error, not an overflow */
    assert_int_equal(dxl2_stuff(in, sizeof in, st, 5), DXL2_ENOSPACE);
    /* an unstuffed FF FF FD inside a packet is malformed */
    uint8_t bad[] = {0xFF, 0xFF, 0xFD, 0x00};
    assert_int_equal(dxl2_unstuff(bad, sizeof bad), DXL2_EFORMAT);

    /* a whole Write packet whose data is FF FF FD: LEN counts the stuffed byte */
    uint8_t b[64];
    const uint8_t data[] = {0xFF, 0xFF, 0xFD, 0x07};
    int len = dxl2_build_write(b, sizeof b, 3, 116, data, sizeof data);
    assert_int_equal(len, 17);                 /* 16 + one stuffing byte */
    assert_int_equal(dxl2_get_u16(b + 5), 10); /* 1 + 2 + 5 + 2 */
    dxl2_packet p;
    dxl2_rw_request rq;
    assert_int_equal(dxl2_decode(b, (size_t)len, &p), DXL2_OK);
    assert_int_equal(dxl2_parse_write(&p, &rq), DXL2_OK);
    assert_int_equal(rq.len, 4);
    assert_memory_equal(rq.data, data, 4);
}

static void test_status_error_and_alert(void **state)
{
    (void)state;
    uint8_t b[64], v[2] = {1, 2};
    dxl2_packet p;
    int n = dxl2_build_status(b, sizeof b, 7, DXL2_ERR_ALERT | DXL2_ERR_DATA_RANGE, v, 2);
    assert_int_equal(dxl2_decode(b, (size_t)n, &p), DXL2_OK);
    assert_int_equal(p.id, 7);
    assert_int_equal(p.error & DXL2_ERR_ALERT, DXL2_ERR_ALERT);
    assert_int_equal(p.error & DXL2_ERR_MASK, DXL2_ERR_DATA_RANGE);
    assert_int_equal(p.n_params, 2);
    /* corrupting any byte is caught */
    for (int i = 0; i < n; i++) {
        n = dxl2_build_status(b, sizeof b, 7, 0, v, 2);
        b[i] ^= 0x10;
        assert_int_not_equal(dxl2_decode(b, (size_t)n, &p), DXL2_OK);
    }
}

/* The combined Fast Sync Read reply round-trips and the final CRC covers it all. */
static void test_fast_sync_read(void **state)
{
    (void)state;
    uint8_t b[128];
    const uint8_t ids[] = {1, 2, 3};
    int n = dxl2_build_fast_sync_read(b, sizeof b, 126, 10, ids, 3);
    assert_true(n > 0);
    assert_int_equal(b[7], DXL2_INST_FAST_SYNC_READ);
    dxl2_packet p;
    dxl2_sync_request rq;
    assert_int_equal(dxl2_decode(b, (size_t)n, &p), DXL2_OK);
    assert_int_equal(dxl2_parse_sync_read(&p, &rq), DXL2_OK);
    assert_int_equal(rq.n_ids, 3);

    uint8_t d[3][10];
    dxl2_fast_entry e[3];
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 10; i++) d[k][i] = (uint8_t)(k * 16 + i);
        d[k][0] = 0xFF; /* FF FF FD inside the data forces stuffing */
        d[k][1] = 0xFF;
        d[k][2] = 0xFD;
        e[k] = (dxl2_fast_entry){.id = ids[k], .error = k == 1 ? DXL2_ERR_ALERT : 0, .data = d[k]};
    }
    n = dxl2_build_fast_sync_status(b, sizeof b, e, 3, 10);
    assert_true(n > 0);
    assert_int_equal(dxl2_decode(b, (size_t)n, &p), DXL2_OK);
    dxl2_fast_entry out[4];
    assert_int_equal(dxl2_parse_fast_sync_status(&p, 10, out, 4), 3);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(out[k].id, ids[k]);
        assert_int_equal(out[k].error, e[k].error);
        assert_memory_equal(out[k].data, d[k], 10);
    }
    /* wrong record size is a length error */
    assert_int_equal(dxl2_parse_fast_sync_status(&p, 9, out, 4), DXL2_ELENGTH);
}

/* Pushes bytes one at a time, collecting valid packet IDs. */
static int feed(dxl2_framer *f, const uint8_t *b, size_t n, int *ids, int max, int *bad)
{
    int got = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(dxl2_framer_push(f, b + i, 1), 1);
        dxl2_packet p;
        int r;
        while ((r = dxl2_framer_next(f, &p)) != DXL2_NEED_MORE) {
            if (r == DXL2_OK && got < max)
                ids[got++] = p.id;
            else if (r != DXL2_OK)
                (*bad)++;
        }
    }
    return got;
}

/* Garbage, a corrupt packet, a header split across reads, then good packets: the framer
 * resynchronises and finds each good packet exactly once. */
static void test_framer_resync(void **state)
{
    (void)state;
    static dxl2_framer f;
    memset(&f, 0, sizeof f);
    dxl2_framer_reset(&f);
    uint8_t stream[256];
    size_t n = 0;
    const uint8_t garbage[] = {0x00, 0xFF, 0xFF, 0xFF, 0xFD, 0x01, 0xFF, 0xFF};
    memcpy(stream + n, garbage, sizeof garbage);
    n += sizeof garbage;
    int len = dxl2_build_ping(stream + n, sizeof stream - n, 5);
    stream[n + len - 1] ^= 0xFF; /* bad CRC */
    n += (size_t)len;
    const uint8_t v[4] = {0xFF, 0xFF, 0xFD, 0x00}; /* a header inside the data */
    n += (size_t)dxl2_build_status(stream + n, sizeof stream - n, 6, 0, v, 4);
    n += (size_t)dxl2_build_ping(stream + n, sizeof stream - n, 7);
    int ids[8], bad = 0;
    int got = feed(&f, stream, n, ids, 8, &bad);
    assert_int_equal(got, 2);
    assert_int_equal(ids[0], 6);
    assert_int_equal(ids[1], 7);
    assert_true(bad >= 1);
    assert_true(f.bad_crc >= 1);

    /* the same stream in two big pushes gives the same packets */
    dxl2_framer_reset(&f);
    int got2 = 0;
    size_t cut = n / 2;
    const uint8_t *parts[2] = {stream, stream + cut};
    size_t lens[2] = {cut, n - cut};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(dxl2_framer_push(&f, parts[k], lens[k]), lens[k]);
        dxl2_packet p;
        int r;
        while ((r = dxl2_framer_next(&f, &p)) != DXL2_NEED_MORE)
            if (r == DXL2_OK) ids[got2++] = p.id;
    }
    assert_int_equal(got2, 2);
    assert_int_equal(ids[1], 7);
}

/* An impossible LEN does not stall the parser. */
static void test_framer_bad_length(void **state)
{
    (void)state;
    static dxl2_framer f;
    memset(&f, 0, sizeof f);
    const uint8_t junk[] = {0xFF, 0xFF, 0xFD, 0x00, 0x01, 0xFF, 0xFF}; /* LEN 65535 */
    uint8_t stream[64];
    memcpy(stream, junk, sizeof junk);
    int n = dxl2_build_ping(stream + sizeof junk, sizeof stream - sizeof junk, 9);
    int ids[4], bad = 0;
    assert_int_equal(feed(&f, stream, sizeof junk + (size_t)n, ids, 4, &bad), 1);
    assert_int_equal(ids[0], 9);
    assert_true(f.bad_len >= 1);
}

static void test_builder_limits(void **state)
{
    (void)state;
    uint8_t b[8];
    assert_int_equal(dxl2_build_ping(b, sizeof b, 1), DXL2_ENOSPACE);
    uint8_t big[32];
    assert_int_equal(dxl2_build_ping(big, sizeof big, 0xFF), DXL2_EARG);
    const uint8_t bad_ids[] = {1, 253};
    assert_int_equal(dxl2_build_sync_read(big, sizeof big, 126, 10, bad_ids, 2), DXL2_EARG);
    assert_null(dxl2_model_name(1060)); /* XL430: no current control */
    assert_non_null(dxl2_model_name(DXL2_MODEL_XM430_W350));
    assert_non_null(dxl2_model_name(DXL2_MODEL_XM540_W270));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_check_value),     cmocka_unit_test(test_ping_vectors),
        cmocka_unit_test(test_read_vectors),        cmocka_unit_test(test_write_vector),
        cmocka_unit_test(test_sync_read_vectors),   cmocka_unit_test(test_sync_write_vector),
        cmocka_unit_test(test_stuffing_round_trip), cmocka_unit_test(test_status_error_and_alert),
        cmocka_unit_test(test_fast_sync_read),      cmocka_unit_test(test_framer_resync),
        cmocka_unit_test(test_framer_bad_length),   cmocka_unit_test(test_builder_limits),
        cmocka_unit_test(test_bulk_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
