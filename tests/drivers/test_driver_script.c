/*
 * test_driver_script.c — the driver interface (drv_*) on the scripted fake port
 * (fake_port.h): each test plays the devices' bytes, built with the codecs, on a virtual clock
 * where every timeout passes at once, and checks one behaviour the driver fuzz targets
 * (fuzz_drv_dxl2, fuzz_drv_armlink) found wrong.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/drivers.h"
#include "tests/drivers/fake_port.h"

static uint8_t script[1 << 16];
static size_t script_len;
static fake_port fp;
static armd_config cfg;
static int32_t sent[256]; /* dxl2 Goal Current / armlink current last written, by ID */
static int last_switch;   /* armlink: the last ENABLE (1) or DISABLE (0) written, -1 none */
static uint64_t stall_in_write_ns; /* the next write holds the caller up this long once sent */

/* Appends n bytes arriving at once (RAW operations of at most 255 bytes). */
static void op_raw(const uint8_t *b, size_t n)
{
    while (n > 0) {
        size_t k = n > 255 ? 255 : n;
        assert_true(script_len + 2 + k <= sizeof script);
        script[script_len++] = 1;
        script[script_len++] = (uint8_t)k;
        memcpy(script + script_len, b, k);
        script_len += k;
        b += k;
        n -= k;
    }
}

/* Appends a read that times out. */
static void op_silence(void)
{
    script[script_len++] = 0;
}

/* Appends a Dynamixel status packet. */
static void dxl_status(uint8_t id, uint8_t err, const uint8_t *data, size_t n)
{
    uint8_t b[64];
    int len = dxl2_build_status(b, sizeof b, id, err, data, n);
    assert_true(len > 0);
    op_raw(b, (size_t)len);
}

/* Servo 1's state block: present current, velocity, position 1000. */
static void dxl_state(uint8_t id)
{
    uint8_t s[DXL2_STATE_LEN] = {0};
    dxl2_put_u32(s + 6, 1000);
    dxl_status(id, 0, s, sizeof s);
}

/* Servo 1's replies to the whole probe: ping (XM430-W350), five writes, Current Limit, the
 * state read. */
static void dxl_probe_replies(uint16_t current_limit)
{
    uint8_t ping[3] = {0, 0, 45}, lim[2];
    dxl2_put_u16(ping, DXL2_MODEL_XM430_W350);
    dxl_status(1, 0, ping, 3);
    for (int i = 0; i < 5; i++) dxl_status(1, 0, NULL, 0);
    dxl2_put_u16(lim, current_limit);
    dxl_status(1, 0, lim, 2);
    dxl_state(1);
}

/* The armlink board's replies to the whole probe (IDENTIFY with 1 channel, DISABLE,
 * SET_WATCHDOG, READ_STATE), sequence numbers 0..3. */
static void alk_probe_replies(void)
{
    uint8_t b[128];
    alk_reply_head h = {1, 0};
    alk_identity id = {0x0A11, 1, 0, 1, ALK_PROTOCOL_VERSION, 1};
    alk_state st = {.head = h, .n = 1};
    op_raw(b, (size_t)alk_build_identity(b, sizeof b, 0, &h, &id));
    op_raw(b, (size_t)alk_build_ack(b, sizeof b, 1, ALK_CMD_DISABLE, &h));
    op_raw(b, (size_t)alk_build_ack(b, sizeof b, 2, ALK_CMD_SET_WATCHDOG, &h));
    op_raw(b, (size_t)alk_build_state(b, sizeof b, 3, &st));
}

/* Remembers the currents of every Sync Write of Goal Current / WRITE_TORQUE. */
static void written(void *ctx, const uint8_t *b, size_t n, bool lost)
{
    (void)ctx;
    (void)lost;
    fp.now_ns += stall_in_write_ns;
    stall_in_write_ns = 0;
    static uint8_t copy[DXL2_MAX_PACKET];
    dxl2_packet p;
    dxl2_sync_request rq;
    alk_frame f;
    int32_t ua[ALK_MAX_CHANNELS];
    int channels;
    memcpy(copy, b, n);
    if (cfg.driver.type == DRIVER_DXL2 && dxl2_decode(copy, n, &p) == DXL2_OK &&
        p.instruction == DXL2_INST_SYNC_WRITE && dxl2_parse_sync_write(&p, &rq) == DXL2_OK &&
        rq.addr == DXL2_ADDR_GOAL_CURRENT)
        for (size_t i = 0; i < rq.n_ids; i++)
            sent[rq.records[3 * i]] = (int16_t)dxl2_get_u16(rq.records + 3 * i + 1);
    if (cfg.driver.type == DRIVER_ARMLINK && alk_decode(b, n, &f) == ALK_OK) {
        if (alk_parse_write_torque(&f, ua, ALK_MAX_CHANNELS, &channels) == ALK_OK)
            for (int c = 0; c < channels; c++) sent[c] = ua[c];
        if (f.cmd == ALK_CMD_ENABLE || f.cmd == ALK_CMD_DISABLE)
            last_switch = f.cmd == ALK_CMD_ENABLE;
    }
}

/* One joint on dxl2 servo 1 or armlink channel 0: 1 Mbps, 1 ms timeout, no retries. */
static int setup(void **state)
{
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    memset(sent, 0, sizeof sent);
    last_switch = -1;
    stall_in_write_ns = 0;
    script_len = 0;
    cfg.n_joints = 1;
    cfg.driver.type = DRIVER_DXL2;
    snprintf(cfg.driver.port, sizeof cfg.driver.port, "/dev/fake0");
    cfg.driver.baud = 1000000;
    cfg.driver.timeout_us = 1000;
    cfg.driver.bus_watchdog_ms = 100;
    cfg.driver.device_watchdog_ms = 100;
    cfg_joint *J = &cfg.joint[0];
    snprintf(J->name, sizeof J->name, "j1");
    J->n_ids = 1;
    J->id[0] = 1;
    J->direction[0] = 1;
    J->counts_per_rev = 4096;
    J->gear_ratio = 1;
    J->torque_per_amp = 1;
    J->torque = 1;
    return 0;
}

/* Opens the driver on the script built so far. */
static drv *start(void)
{
    fake_port_begin(&fp, script, script_len, cfg.driver.baud,
                    (fake_port_device){NULL, written, NULL, NULL});
    drv_fault f;
    drv *d = drv_open(&cfg, &f);
    if (!d) fail_msg("drv_open: %s", f.message);
    return d;
}

/* Probes, asserting success. */
static void probe_ok(drv *d)
{
    drv_fault f;
    if (drv_probe(d, &f) != 0) fail_msg("drv_probe: %s: %s", drv_status_name(f.status), f.message);
}

/* A call that succeeds says DRV_OK, also when a retry overcame a timeout or a valid reply
 * followed a corrupt frame (the fault of the failed attempt used to stay in *f). */
static void test_success_clears_fault(void **state)
{
    (void)state;
    cfg.driver.retries = 1;
    op_silence(); /* the first ping goes unanswered; the probe retries */
    uint8_t bad[32];
    int n = dxl2_build_status(bad, sizeof bad, 1, 0, NULL, 0);
    bad[n - 1] ^= 0x55;
    op_raw(bad, (size_t)n); /* a corrupt frame before the ping reply */
    dxl_probe_replies(1193);
    op_silence(); /* the tick's first attempt times out, the retry gets the state */
    dxl_state(1);
    drv *d = start();
    drv_fault f;
    assert_int_equal(drv_probe(d, &f), 0);
    assert_int_equal(f.status, DRV_OK);
    assert_int_equal(f.device_id, -1);
    assert_string_equal(f.message, "");
    drv_state st;
    assert_int_equal(drv_read(d, &st, &f), 0);
    assert_int_equal(f.status, DRV_OK);
    assert_string_equal(f.message, "");
    assert_int_equal(drv_counters_get(d)->retries, 2);
    drv_close(d);
}

/* A finite torque whose conversion to device units overflows is clamped to the servo's
 * limit like any other too-large torque (it used to become 0); NaN and inf give 0. */
static void test_overflowing_torque_is_clamped(void **state)
{
    (void)state;
    dxl_probe_replies(1193);
    drv *d = start();
    probe_ok(d);
    drv_fault f;
    const double taus[] = {DBL_MAX, -DBL_MAX, 1e300, NAN, INFINITY, -INFINITY};
    const int32_t want[] = {1193, -1193, 1193, 0, 0, 0};
    for (size_t i = 0; i < sizeof taus / sizeof taus[0]; i++) {
        sent[1] = 12345;
        assert_int_equal(drv_write(d, &taus[i], &f), 0);
        if (sent[1] != want[i])
            fail_msg("torque %g: Goal Current %d, want %d", taus[i], sent[1], want[i]);
    }
    drv_close(d);
    /* armlink: 1 N m at torque_per_amp 1e-300 N m/A overflows the microampere conversion */
    setup(state);
    cfg.driver.type = DRIVER_ARMLINK;
    cfg.joint[0].id[0] = 0;
    cfg.joint[0].torque_per_amp = 1e-300;
    uint8_t b[128];
    alk_reply_head h = {1, 0};
    alk_probe_replies();
    op_raw(b, (size_t)alk_build_ack(b, sizeof b, 4, ALK_CMD_WRITE_TORQUE, &h));
    d = start();
    probe_ok(d);
    double one = 1;
    assert_int_equal(drv_write(d, &one, &f), 0);
    assert_int_equal(sent[0], INT32_MAX);
    drv_close(d);
}

/* Replies the driver passes over (here: status packets from an ID no joint uses) that keep
 * arriving cannot hold a read past its deadline: it ends within one chunk of it (it used to
 * read on for as long as bytes came). */
static void test_dxl_babble_ends_at_deadline(void **state)
{
    (void)state;
    dxl_probe_replies(1193);
    for (int i = 0; i < 600; i++) dxl_status(9, 0, NULL, 0); /* 6.6 kB: 66 ms at 1 Mbps */
    drv *d = start();
    probe_ok(d);
    drv_state st;
    drv_fault f;
    uint64_t t0 = fp.now_ns;
    assert_int_equal(drv_read(d, &st, &f), -1);
    uint64_t took = fp.now_ns - t0;
    if (took > 10000000u) fail_msg("drv_read took %.1f ms with a 1 ms timeout", took / 1e6);
    assert_int_equal(f.status, DRV_EID);
    assert_int_equal(f.device_id, 9);
    drv_close(d);
}

/* The same for armlink: late replies to an earlier request (stale sequence numbers) that keep
 * arriving end the exchange at its deadline with a timeout. */
static void test_armlink_babble_ends_at_deadline(void **state)
{
    (void)state;
    cfg.driver.type = DRIVER_ARMLINK;
    cfg.joint[0].id[0] = 0;
    uint8_t b[128];
    alk_reply_head h = {1, 0};
    alk_state st = {.head = h, .n = 1};
    alk_probe_replies();
    for (int i = 0; i < 300; i++) /* READ_STATE 4 is answered as if it were 3: 8 kB */
        op_raw(b, (size_t)alk_build_state(b, sizeof b, 3, &st));
    drv *d = start();
    probe_ok(d);
    drv_state s;
    drv_fault f;
    uint64_t t0 = fp.now_ns;
    assert_int_equal(drv_read(d, &s, &f), -1);
    uint64_t took = fp.now_ns - t0;
    if (took > 10000000u) fail_msg("drv_read took %.1f ms with a 1 ms timeout", took / 1e6);
    assert_int_equal(f.status, DRV_ETIMEOUT);
    assert_true(drv_counters_get(d)->stale_replies > 0);
    drv_close(d);
}

/* An ENABLE whose reply never comes may still have switched the motors on: the driver reports
 * the failure and sends DISABLE (it used to leave the board as it was). */
static void test_armlink_failed_enable_disables(void **state)
{
    (void)state;
    cfg.driver.type = DRIVER_ARMLINK;
    cfg.joint[0].id[0] = 0;
    alk_probe_replies();
    op_silence(); /* ENABLE (sequence 4): no reply, no retry */
    drv *d = start();
    probe_ok(d);
    drv_fault f;
    assert_int_equal(drv_enable(d, true, &f), -1);
    assert_int_equal(f.status, DRV_ETIMEOUT);
    assert_int_equal(last_switch, 0);
    drv_close(d);
}

/* A bus quiet for longer than the Bus Watchdog while enabled (the control thread held up)
 * left the servo stopped and refusing Goal Current, and nothing in the per-tick traffic shows
 * that: the next read checks the servo's Bus Watchdog (98) and reports -1 as an alert (armd
 * used to hold on with the arm limp). A quiet of half the watchdog or more is checked too,
 * and passes when the servo says it is fine; shorter ones are not checked. */
static void test_dxl_expired_bus_watchdog_is_an_alert(void **state)
{
    (void)state;
    uint8_t fine = 5, expired = 0xFF; /* 5 x 20 ms = the configured 100 ms; -1 once expired */
    dxl_probe_replies(1193);
    for (int i = 0; i < 3; i++) dxl_status(1, 0, NULL, 0); /* enable: watchdog 0, 5, torque */
    dxl_state(1);                                          /* a tick 1 ms after the last */
    dxl_status(1, 0, &fine, 1);                            /* after 60 ms: checked, fine */
    dxl_state(1);
    dxl_status(1, 0, &expired, 1); /* after 150 ms: expired */
    drv *d = start();
    probe_ok(d);
    drv_fault f;
    drv_state st;
    if (drv_enable(d, true, &f) != 0) fail_msg("drv_enable: %s", f.message);
    fp.now_ns += 1000000u;
    if (drv_read(d, &st, &f) != 0) fail_msg("drv_read 1 ms after: %s", f.message);
    uint64_t writes = fp.writes;
    fp.now_ns += 60000000u;
    if (drv_read(d, &st, &f) != 0) fail_msg("drv_read 60 ms after: %s", f.message);
    assert_int_equal(fp.writes - writes, 2); /* the check's Read, then the Sync Read */
    fp.now_ns += 150000000u;
    assert_int_equal(drv_read(d, &st, &f), -1);
    assert_int_equal(f.status, DRV_EALERT);
    assert_int_equal(f.device_id, 1);
    assert_non_null(strstr(f.message, "Bus Watchdog expired"));
    drv_close(d);
}

/* The same when the hold-up comes right after a packet went out, inside the write: the next
 * gap shows it (the packet's time is taken before the write), and the read after that checks
 * (a packet time taken after the write used to hide it). */
static void test_dxl_quiet_inside_a_write_is_checked(void **state)
{
    (void)state;
    uint8_t expired = 0xFF;
    dxl_probe_replies(1193);
    for (int i = 0; i < 3; i++) dxl_status(1, 0, NULL, 0); /* enable */
    dxl_state(1);                                          /* its Sync Read stalls 150 ms */
    dxl_status(1, 0, &expired, 1);
    drv *d = start();
    probe_ok(d);
    drv_fault f;
    drv_state st;
    double tau[1] = {0.1};
    if (drv_enable(d, true, &f) != 0) fail_msg("drv_enable: %s", f.message);
    fp.now_ns += 1000000u;
    stall_in_write_ns = 150000000u;
    if (drv_read(d, &st, &f) != 0) fail_msg("drv_read: %s", f.message);
    if (drv_write(d, tau, &f) != 0) fail_msg("drv_write: %s", f.message);
    fp.now_ns += 1000000u;
    assert_int_equal(drv_read(d, &st, &f), -1);
    assert_int_equal(f.status, DRV_EALERT);
    assert_non_null(strstr(f.message, "Bus Watchdog expired"));
    drv_close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_success_clears_fault, setup),
        cmocka_unit_test_setup(test_overflowing_torque_is_clamped, setup),
        cmocka_unit_test_setup(test_dxl_babble_ends_at_deadline, setup),
        cmocka_unit_test_setup(test_armlink_babble_ends_at_deadline, setup),
        cmocka_unit_test_setup(test_armlink_failed_enable_disables, setup),
        cmocka_unit_test_setup(test_dxl_expired_bus_watchdog_is_an_alert, setup),
        cmocka_unit_test_setup(test_dxl_quiet_inside_a_write_is_checked, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
