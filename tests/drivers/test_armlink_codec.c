/*
 * test_armlink_codec.c — armlink frames and payloads (drivers/README.md): CRC check value,
 * the README's example frames, round trips of every command and reply, frame parser resync.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drivers.h"

static void test_crc_check_value(void **state)
{
    (void)state;
    assert_int_equal(alk_crc16(ALK_CRC_INIT, (const uint8_t *)"123456789", 9), 0x29B1);
}

/* The example frames printed in drivers/README.md. */
static void test_readme_examples(void **state)
{
    (void)state;
    uint8_t b[64];
    static const uint8_t rd[] = {0xA5, 0x00, 0x00, 0x07, 0x04, 0x2C, 0xC1};
    int n = alk_build_read_state(b, sizeof b, 7);
    assert_int_equal(n, (int)sizeof rd);
    assert_memory_equal(b, rd, sizeof rd);
    static const uint8_t wd[] = {0xA5, 0x02, 0x00, 0x01, 0x06, 0x64, 0x00, 0xDC, 0xC5};
    n = alk_build_set_watchdog(b, sizeof b, 1, 100);
    assert_int_equal(n, (int)sizeof wd);
    assert_memory_equal(b, wd, sizeof wd);
    static const uint8_t wt[] = {0xA5, 0x09, 0x00, 0x02, 0x05, 0x02, 0x60, 0xE3,
                                 0x16, 0x00, 0x70, 0x2F, 0xFC, 0xFF, 0xE0, 0x75};
    const int32_t ua[2] = {1500000, -250000};
    n = alk_build_write_torque(b, sizeof b, 2, ua, 2);
    assert_int_equal(n, (int)sizeof wt);
    assert_memory_equal(b, wt, sizeof wt);
    static const uint8_t st[] = {0xA5, 0x1F, 0x00, 0x07, 0x84, 0x40, 0x42, 0x0F, 0x00, 0x01,
                                 0x00, 0x02, 0x00, 0x08, 0x00, 0x00, 0xDC, 0x05, 0x00, 0x00,
                                 0x40, 0x2B, 0xFE, 0xFF, 0x00, 0xF0, 0xFF, 0xFF, 0x00, 0x00,
                                 0x00, 0x00, 0x50, 0xC3, 0x00, 0x00, 0x02, 0xED};
    static alk_state s;
    s.head = (alk_reply_head){1000000, ALK_FLAG_ENABLED};
    s.n = 2;
    s.ch[0] = (alk_channel_state){2048, 1500, -120000};
    s.ch[1] = (alk_channel_state){-4096, 0, 50000};
    n = alk_build_state(b, sizeof b, 7, &s);
    assert_int_equal(n, (int)sizeof st);
    assert_memory_equal(b, st, sizeof st);
}

static void test_state_round_trip(void **state)
{
    (void)state;
    static alk_state s, back;
    s.head.time_us = 0xFFFFFFF0u;
    s.head.flags = ALK_FLAG_ENABLED | ALK_FLAG_OVER_TEMPERATURE;
    s.n = 6;
    for (int i = 0; i < s.n; i++)
        s.ch[i] = (alk_channel_state){-100000 * i + 7, 123456 * (i - 3), -2500000 + i};
    static uint8_t b[ALK_MAX_FRAME];
    int n = alk_build_state(b, sizeof b, 42, &s);
    assert_int_equal(n, ALK_HEADER_LEN + 7 + 12 * 6 + ALK_CRC_LEN);
    alk_frame f;
    assert_int_equal(alk_decode(b, (size_t)n, &f), ALK_OK);
    assert_int_equal(f.seq, 42);
    assert_int_equal(f.cmd, ALK_CMD_READ_STATE | ALK_REPLY);
    assert_int_equal(alk_parse_state(&f, &back), ALK_OK);
    assert_int_equal(back.head.time_us, s.head.time_us);
    assert_int_equal(back.head.flags, s.head.flags);
    assert_int_equal(back.n, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(back.ch[i].position, s.ch[i].position);
        assert_int_equal(back.ch[i].velocity, s.ch[i].velocity);
        assert_int_equal(back.ch[i].current_ua, s.ch[i].current_ua);
    }
    /* every single-bit corruption is caught */
    for (int i = 0; i < n; i++) {
        b[i] ^= 0x01;
        assert_int_not_equal(alk_decode(b, (size_t)n, &f), ALK_OK);
        b[i] ^= 0x01;
    }
}

static void test_commands_round_trip(void **state)
{
    (void)state;
    uint8_t b[512];
    alk_frame f;
    int32_t ua[5] = {1, -2, 3000000, -2147483647 - 1, 2147483647}, got[8];
    int n = alk_build_write_torque(b, sizeof b, 9, ua, 5), k = 0;
    assert_int_equal(alk_decode(b, (size_t)n, &f), ALK_OK);
    assert_int_equal(alk_parse_write_torque(&f, got, 8, &k), ALK_OK);
    assert_int_equal(k, 5);
    assert_memory_equal(got, ua, sizeof ua);
    assert_int_equal(alk_parse_write_torque(&f, got, 4, &k), ALK_EFORMAT); /* too many */

    uint16_t ms = 0;
    n = alk_build_set_watchdog(b, sizeof b, 10, 250);
    assert_int_equal(alk_decode(b, (size_t)n, &f), ALK_OK);
    assert_int_equal(alk_parse_set_watchdog(&f, &ms), ALK_OK);
    assert_int_equal(ms, 250);

    alk_reply_head h = {123456789u, ALK_FLAG_WATCHDOG_EXPIRED}, h2;
    alk_identity id = {0x0A11, 1, 4, 7, ALK_PROTOCOL_VERSION, 0xDEADBEEF}, id2;
    n = alk_build_identity(b, sizeof b, 11, &h, &id);
    assert_int_equal(alk_decode(b, (size_t)n, &f), ALK_OK);
    assert_int_equal(alk_parse_identity(&f, &h2, &id2), ALK_OK);
    assert_int_equal(h2.time_us, h.time_us);
    assert_int_equal(h2.flags, h.flags);
    assert_int_equal(id2.model, id.model);
    assert_int_equal(id2.n_channels, 7);
    assert_int_equal(id2.serial, 0xDEADBEEF);

    uint8_t code = 0, cmd = 0;
    n = alk_build_nak(b, sizeof b, 12, &h, ALK_NAK_FAULT_ACTIVE, ALK_CMD_ENABLE);
    assert_int_equal(alk_decode(b, (size_t)n, &f), ALK_OK);
    assert_int_equal(f.cmd, ALK_NAK);
    assert_int_equal(alk_parse_nak(&f, &h2, &code, &cmd), ALK_OK);
    assert_int_equal(code, ALK_NAK_FAULT_ACTIVE);
    assert_int_equal(cmd, ALK_CMD_ENABLE);

    n = alk_build_ack(b, sizeof b, 13, ALK_CMD_ENABLE, &h);
    assert_int_equal(alk_decode(b, (size_t)n, &f), ALK_OK);
    assert_int_equal(f.cmd, ALK_CMD_ENABLE | ALK_REPLY);
    assert_int_equal(alk_parse_reply_head(&f, &h2), ALK_OK);
    /* an ack is not a state reply */
    static alk_state st;
    assert_int_equal(alk_parse_state(&f, &st), ALK_EFORMAT);
}

/* Garbage (including fake sync bytes), a corrupt frame, then two good frames split over
 * pushes: both are found once. */
static void test_framer_resync(void **state)
{
    (void)state;
    static alk_framer fr;
    memset(&fr, 0, sizeof fr);
    uint8_t s[128];
    size_t n = 0;
    const uint8_t garbage[] = {0x00, 0xA5, 0x01, 0xA5, 0x13};
    memcpy(s, garbage, sizeof garbage);
    n += sizeof garbage;
    int len = alk_build_identify(s + n, sizeof s - n, 1);
    s[n + 2] ^= 0x40; /* corrupt */
    n += (size_t)len;
    n += (size_t)alk_build_enable(s + n, sizeof s - n, 2);
    n += (size_t)alk_build_set_watchdog(s + n, sizeof s - n, 3, 0xA5A5);
    int seqs[4], got = 0;
    for (size_t i = 0; i < n; i += 3) {
        size_t m = n - i < 3 ? n - i : 3;
        assert_int_equal(alk_framer_push(&fr, s + i, m), m);
        alk_frame f;
        int r;
        while ((r = alk_framer_next(&fr, &f)) != ALK_NEED_MORE)
            if (r == ALK_OK && got < 4) seqs[got++] = f.seq;
    }
    /* the corrupted LEN (0x4000) is impossible: resync finds both trailing frames */
    assert_int_equal(got, 2);
    assert_int_equal(seqs[0], 2);
    assert_int_equal(seqs[1], 3);
    assert_true(fr.bad_len >= 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_check_value),  cmocka_unit_test(test_readme_examples),
        cmocka_unit_test(test_state_round_trip), cmocka_unit_test(test_commands_round_trip),
        cmocka_unit_test(test_framer_resync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
