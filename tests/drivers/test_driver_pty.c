/*
 * test_driver_pty.c — the driver interface (drv_*) against small fake devices on a real
 * pseudo-terminal (reached through a symlink, as armsim provides it). A thread plays three
 * Dynamixel X servos (or an armlink board) with the drivers' own codecs; per test it injects
 * one fault and the driver must report the matching drv_status and counter.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "drivers/drivers.h"

enum {
    MODE_OK,
    MODE_SILENT,       /* no replies at all */
    MODE_BAD_CRC,      /* servo 2's state reply has a wrong CRC */
    MODE_WRONG_ID,     /* servo 2 answers as ID 9 */
    MODE_DEVICE_ERROR, /* servo 2 answers with error "data range" and no data */
    MODE_ALERT,        /* servo 3 answers with the alert bit (data intact) */
    MODE_DROP_ONCE,    /* the next state reply of servo 1 is lost, later ones arrive */
    MODE_NAK,          /* armlink: the board refuses ENABLE */
    MODE_LATE          /* armlink: a late reply to the previous request comes first */
};

typedef struct {
    int master;
    bool armlink;
    atomic_int mode;
    atomic_bool stop;
    pthread_t thread;
    char link[64];
    uint8_t regs[256][160]; /* dxl2 control tables by ID */
    int32_t board_ua[8];    /* armlink: last torque command per channel */
    uint16_t board_flags;
    atomic_int writes_seen;
} fake;

static void put_reply(fake *fk, uint8_t *b, int n)
{
    if (n > 0 && write(fk->master, b, (size_t)n) != n) fprintf(stderr, "fake: short write\n");
}

/* One servo's status reply with its 10-byte state block, subject to the fault mode. */
static void servo_state_reply(fake *fk, uint8_t id)
{
    int mode = atomic_load(&fk->mode);
    uint8_t b[64];
    int n;
    if (mode == MODE_DROP_ONCE && id == 1) {
        atomic_store(&fk->mode, MODE_OK);
        return;
    }
    if (mode == MODE_DEVICE_ERROR && id == 2)
        n = dxl2_build_status(b, sizeof b, id, DXL2_ERR_DATA_RANGE, NULL, 0);
    else
        n = dxl2_build_status(b, sizeof b, mode == MODE_WRONG_ID && id == 2 ? 9 : id,
                              mode == MODE_ALERT && id == 3 ? DXL2_ERR_ALERT : 0,
                              fk->regs[id] + DXL2_STATE_ADDR, DXL2_STATE_LEN);
    if (mode == MODE_BAD_CRC && id == 2) b[n - 1] ^= 0x5A;
    put_reply(fk, b, n);
}

/* Answers one instruction packet like X-series servos 1..3 would. */
static void dxl_answer(fake *fk, const dxl2_packet *p)
{
    uint8_t b[256];
    if (atomic_load(&fk->mode) == MODE_SILENT) return;
    if (p->instruction == DXL2_INST_SYNC_READ) {
        dxl2_sync_request rq;
        if (dxl2_parse_sync_read(p, &rq) != DXL2_OK) return;
        for (size_t i = 0; i < rq.n_ids; i++) servo_state_reply(fk, rq.ids[i]);
        return;
    }
    if (p->instruction == DXL2_INST_FAST_SYNC_READ) {
        dxl2_sync_request rq;
        dxl2_fast_entry e[8];
        if (dxl2_parse_sync_read(p, &rq) != DXL2_OK || rq.n_ids > 8) return;
        for (size_t i = 0; i < rq.n_ids; i++)
            e[i] = (dxl2_fast_entry){rq.ids[i], 0, fk->regs[rq.ids[i]] + rq.addr};
        put_reply(fk, b, dxl2_build_fast_sync_status(b, sizeof b, e, rq.n_ids, rq.len));
        return;
    }
    if (p->instruction == DXL2_INST_SYNC_WRITE) {
        dxl2_sync_request rq;
        if (dxl2_parse_sync_write(p, &rq) != DXL2_OK) return;
        for (int id = 1; id <= 3; id++) {
            const uint8_t *d = dxl2_sync_write_data(&rq, (uint8_t)id);
            if (d) memcpy(fk->regs[id] + rq.addr, d, rq.len);
        }
        atomic_fetch_add(&fk->writes_seen, 1);
        return;
    }
    if (p->id < 1 || p->id > 3) return; /* nobody there */
    uint8_t *r = fk->regs[p->id];
    dxl2_rw_request rq;
    switch (p->instruction) {
    case DXL2_INST_PING: {
        uint8_t d[3] = {r[0], r[1], r[6]};
        put_reply(fk, b, dxl2_build_status(b, sizeof b, p->id, 0, d, 3));
        break;
    }
    case DXL2_INST_READ:
        if (dxl2_parse_read(p, &rq) == DXL2_OK && rq.addr + rq.len <= 160)
            put_reply(fk, b, dxl2_build_status(b, sizeof b, p->id, 0, r + rq.addr, rq.len));
        break;
    case DXL2_INST_WRITE:
        if (dxl2_parse_write(p, &rq) == DXL2_OK && rq.addr + rq.len <= 160) {
            memcpy(r + rq.addr, rq.data, rq.len);
            put_reply(fk, b, dxl2_build_status(b, sizeof b, p->id, 0, NULL, 0));
        }
        break;
    default:
        break;
    }
}

/* Answers one armlink request like a 4-channel board. */
static void alk_answer(fake *fk, const alk_frame *f)
{
    static uint8_t b[ALK_MAX_FRAME];
    static alk_state st;
    alk_reply_head h = {123456, fk->board_flags};
    int mode = atomic_load(&fk->mode);
    if (mode == MODE_SILENT) return;
    switch (f->cmd) {
    case ALK_CMD_IDENTIFY: {
        alk_identity id = {0x0A11, 1, 2, 4, ALK_PROTOCOL_VERSION, 77};
        put_reply(fk, b, alk_build_identity(b, sizeof b, f->seq, &h, &id));
        break;
    }
    case ALK_CMD_ENABLE:
        if (mode == MODE_NAK) {
            put_reply(fk, b, alk_build_nak(b, sizeof b, f->seq, &h, ALK_NAK_FAULT_ACTIVE, f->cmd));
            break;
        }
        fk->board_flags |= ALK_FLAG_ENABLED;
        h.flags = fk->board_flags;
        put_reply(fk, b, alk_build_ack(b, sizeof b, f->seq, f->cmd, &h));
        break;
    case ALK_CMD_DISABLE:
    case ALK_CMD_SET_WATCHDOG:
        put_reply(fk, b, alk_build_ack(b, sizeof b, f->seq, f->cmd, &h));
        break;
    case ALK_CMD_WRITE_TORQUE: {
        int n = 0;
        if (alk_parse_write_torque(f, fk->board_ua, 8, &n) != ALK_OK) {
            put_reply(fk, b, alk_build_nak(b, sizeof b, f->seq, &h, ALK_NAK_BAD_LENGTH, f->cmd));
            break;
        }
        atomic_fetch_add(&fk->writes_seen, 1);
        put_reply(fk, b, alk_build_ack(b, sizeof b, f->seq, f->cmd, &h));
        break;
    }
    case ALK_CMD_READ_STATE:
        st.head = h;
        st.n = 4;
        for (int i = 0; i < 4; i++)
            st.ch[i] = (alk_channel_state){1024 * i, 60000 * i, fk->board_ua[i]};
        {
            uint8_t seq = mode == MODE_WRONG_ID ? (uint8_t)(f->seq ^ 0x80) : f->seq; /* stale */
            if (mode == MODE_LATE) put_reply(fk, b, alk_build_state(b, sizeof b, f->seq - 1, &st));
            int n = alk_build_state(b, sizeof b, seq, &st);
            if (mode == MODE_BAD_CRC) b[n - 2] ^= 0x01;
            put_reply(fk, b, n);
        }
        break;
    default:
        put_reply(fk, b, alk_build_nak(b, sizeof b, f->seq, &h, ALK_NAK_UNKNOWN_COMMAND, f->cmd));
    }
}

/* The device thread: bytes from the pty master through the framer to the answer functions. */
static void *device_main(void *arg)
{
    fake *fk = arg;
    static dxl2_framer df;
    static alk_framer af;
    dxl2_framer_reset(&df);
    alk_framer_reset(&af);
    uint8_t chunk[512];
    while (!atomic_load(&fk->stop)) {
        struct pollfd pfd = {fk->master, POLLIN, 0};
        if (poll(&pfd, 1, 10) <= 0) continue;
        ssize_t n = read(fk->master, chunk, sizeof chunk);
        if (n <= 0) continue;
        if (fk->armlink) {
            alk_framer_push(&af, chunk, (size_t)n);
            alk_frame f;
            int r;
            while ((r = alk_framer_next(&af, &f)) != ALK_NEED_MORE)
                if (r == ALK_OK) alk_answer(fk, &f);
        } else {
            dxl2_framer_push(&df, chunk, (size_t)n);
            dxl2_packet p;
            int r;
            while ((r = dxl2_framer_next(&df, &p)) != DXL2_NEED_MORE)
                if (r == DXL2_OK) dxl_answer(fk, &p);
        }
    }
    return NULL;
}

static fake *fk_global;
static armd_config cfg;

/* Servo 1 drives joint "base"; 2 and 3 are mirrored twins on joint "shoulder". */
static void make_config(bool armlink)
{
    memset(&cfg, 0, sizeof cfg);
    cfg.n_joints = 2;
    cfg.driver.type = armlink ? DRIVER_ARMLINK : DRIVER_DXL2;
    snprintf(cfg.driver.port, sizeof cfg.driver.port, "%s", fk_global ? fk_global->link : "");
    cfg.driver.baud = 1000000;
    cfg.driver.timeout_us = 50000; /* generous: the fake is a thread on a loaded machine */
    cfg.driver.retries = 0;
    cfg.driver.return_delay_us = 0;
    cfg.driver.bus_watchdog_ms = 100;
    cfg.driver.device_watchdog_ms = 100;
    for (int j = 0; j < 2; j++) {
        cfg_joint *J = &cfg.joint[j];
        snprintf(J->name, sizeof J->name, "%s", j ? "shoulder" : "base");
        J->counts_per_rev = 4096;
        J->gear_ratio = 1;
        J->torque_per_amp = 1.0;
    }
    cfg.joint[0].n_ids = 1;
    cfg.joint[0].id[0] = armlink ? 0 : 1;
    cfg.joint[0].direction[0] = 1;
    cfg.joint[1].n_ids = 2;
    cfg.joint[1].id[0] = armlink ? 1 : 2;
    cfg.joint[1].id[1] = armlink ? 3 : 3;
    cfg.joint[1].direction[0] = 1;
    cfg.joint[1].direction[1] = -1;
    cfg.joint[1].zero_offset[0] = M_PI;
    cfg.joint[1].zero_offset[1] = M_PI;
}

/* Sets a servo's present current / velocity / position registers. */
static void set_present(fake *fk, int id, int16_t cur, int32_t vel, int32_t pos)
{
    dxl2_put_u16(fk->regs[id] + DXL2_ADDR_PRESENT_CURRENT, (uint16_t)cur);
    dxl2_put_u32(fk->regs[id] + DXL2_ADDR_PRESENT_VELOCITY, (uint32_t)vel);
    dxl2_put_u32(fk->regs[id] + DXL2_ADDR_PRESENT_POSITION, (uint32_t)pos);
}

static int setup(void **state, bool armlink)
{
    fake *fk = calloc(1, sizeof *fk);
    int slave;
    char name[64];
    if (!fk || openpty(&fk->master, &slave, name, NULL, NULL) < 0) return -1;
    close(slave); /* the driver opens it by name */
    snprintf(fk->link, sizeof fk->link, "/tmp/armd-test-drv-%d", (int)getpid());
    unlink(fk->link);
    if (symlink(name, fk->link) < 0) return -1;
    fk->armlink = armlink;
    for (int id = 1; id <= 3; id++) {
        dxl2_put_u16(fk->regs[id] + DXL2_ADDR_MODEL_NUMBER, DXL2_MODEL_XM430_W350);
        fk->regs[id][DXL2_ADDR_OPERATING_MODE] = 3; /* factory default: position */
        fk->regs[id][DXL2_ADDR_RETURN_DELAY] = 250;
        dxl2_put_u16(fk->regs[id] + DXL2_ADDR_CURRENT_LIMIT, 1193);
    }
    set_present(fk, 1, 100, 10, 1000);
    set_present(fk, 2, 50, 20, 2048 + 100);
    set_present(fk, 3, -50, -20, 2048 - 100);
    fk_global = fk;
    make_config(armlink);
    if (pthread_create(&fk->thread, NULL, device_main, fk) != 0) return -1;
    *state = fk;
    return 0;
}
static int setup_dxl(void **state)
{
    return setup(state, false);
}
static int setup_alk(void **state)
{
    return setup(state, true);
}

static int teardown(void **state)
{
    fake *fk = *state;
    atomic_store(&fk->stop, true);
    pthread_join(fk->thread, NULL);
    close(fk->master);
    unlink(fk->link);
    free(fk);
    fk_global = NULL;
    return 0;
}

/* Opens and probes the driver, asserting success. */
static drv *open_probed(void)
{
    drv_fault f;
    drv *d = drv_open(&cfg, &f);
    if (!d) fail_msg("drv_open: %s", f.message);
    if (drv_probe(d, &f) != 0) fail_msg("drv_probe: %s: %s", drv_status_name(f.status), f.message);
    return d;
}

static void test_dxl_probe_configures_servos(void **state)
{
    fake *fk = *state;
    drv *d = open_probed();
    for (int id = 1; id <= 3; id++) {
        assert_int_equal(fk->regs[id][DXL2_ADDR_OPERATING_MODE], DXL2_OPERATING_MODE_CURRENT);
        assert_int_equal(fk->regs[id][DXL2_ADDR_TORQUE_ENABLE], 0);
        assert_int_equal(fk->regs[id][DXL2_ADDR_RETURN_DELAY], 0);
        assert_int_equal(fk->regs[id][DXL2_ADDR_BUS_WATCHDOG], 100 / 20);
    }
    drv_fault f;
    assert_int_equal(drv_enable(d, true, &f), 0);
    for (int id = 1; id <= 3; id++) assert_int_equal(fk->regs[id][DXL2_ADDR_TORQUE_ENABLE], 1);
    assert_int_equal(drv_enable(d, false, &f), 0);
    for (int id = 1; id <= 3; id++) assert_int_equal(fk->regs[id][DXL2_ADDR_TORQUE_ENABLE], 0);
    drv_close(d);
}

static void test_dxl_read_state(void **state)
{
    (void)state;
    drv *d = open_probed();
    drv_state s;
    drv_fault f;
    assert_int_equal(drv_read(d, &s, &f), 0);
    assert_int_equal(s.n, 2);
    assert_true(s.has_velocity);
    assert_true(s.host_time_ns > 0);
    double cnt = 2 * M_PI / 4096;
    assert_true(fabs(s.q[0] - 1000 * cnt) < 1e-12);
    assert_true(fabs(s.q[1] - 100 * cnt) < 1e-12); /* from servo 2 */
    assert_true(fabs(s.qd[0] - 10 * 0.229 * 2 * M_PI / 60) < 1e-12);
    /* twins: 50 and -50 units with directions +1 / -1 add up */
    assert_true(fabs(s.tau[1] - 2 * 50 * 0.00269) < 1e-12);
    assert_true(fabs(s.tau[0] - 100 * 0.00269) < 1e-12);
    assert_int_equal(drv_counters_get(d)->timeouts, 0);
    drv_close(d);
}

static void test_dxl_fast_sync_read(void **state)
{
    (void)state;
    cfg.driver.fast_sync_read = true;
    drv *d = open_probed();
    drv_state s;
    drv_fault f;
    assert_int_equal(drv_read(d, &s, &f), 0);
    assert_true(fabs(s.q[0] - 1000 * 2 * M_PI / 4096) < 1e-12);
    assert_true(fabs(s.q[1] - 100 * 2 * M_PI / 4096) < 1e-12);
    drv_close(d);
}

static void test_dxl_write_torques(void **state)
{
    fake *fk = *state;
    drv *d = open_probed();
    drv_fault f;
    double tau[2] = {0.5, 1.0};
    assert_int_equal(drv_write(d, tau, &f), 0);
    drv_state s;
    assert_int_equal(drv_read(d, &s, &f), 0); /* the fake handles requests in order */
    assert_int_equal(atomic_load(&fk->writes_seen), 1);
    int16_t g1 = (int16_t)dxl2_get_u16(fk->regs[1] + DXL2_ADDR_GOAL_CURRENT);
    int16_t g2 = (int16_t)dxl2_get_u16(fk->regs[2] + DXL2_ADDR_GOAL_CURRENT);
    int16_t g3 = (int16_t)dxl2_get_u16(fk->regs[3] + DXL2_ADDR_GOAL_CURRENT);
    assert_int_equal(g1, lround(0.5 / 0.00269));
    assert_int_equal(g2, lround(0.5 / 0.00269)); /* 1 N m split over two servos */
    assert_int_equal(g3, -g2);                   /* mirrored */
    /* a huge torque is clamped to the servo's Current Limit */
    double big[2] = {1e6, -1e6};
    assert_int_equal(drv_write(d, big, &f), 0);
    assert_int_equal(drv_read(d, &s, &f), 0);
    assert_int_equal((int16_t)dxl2_get_u16(fk->regs[1] + DXL2_ADDR_GOAL_CURRENT), 1193);
    assert_int_equal((int16_t)dxl2_get_u16(fk->regs[2] + DXL2_ADDR_GOAL_CURRENT), -1193);
    assert_int_equal(drv_counters_get(d)->writes, 2);
    drv_close(d);
}

/* Runs one read under a fault mode and checks status, device ID and counter. */
static void expect_fault(int mode, drv_status want, int want_id, size_t counter_offset)
{
    drv *d = open_probed();
    atomic_store(&fk_global->mode, mode);
    drv_state s;
    drv_fault f;
    assert_int_equal(drv_read(d, &s, &f), -1);
    if (f.status != want)
        fail_msg("want %s, got %s: %s", drv_status_name(want), drv_status_name(f.status),
                 f.message);
    if (want_id >= 0) assert_int_equal(f.device_id, want_id);
    assert_true(strlen(f.message) > 0);
    const uint64_t *counter =
        (const uint64_t *)((const char *)drv_counters_get(d) + counter_offset);
    assert_int_equal(*counter, 1);
    atomic_store(&fk_global->mode, MODE_OK);
    drv_close(d);
}

static void test_dxl_timeout(void **state)
{
    (void)state;
    expect_fault(MODE_SILENT, DRV_ETIMEOUT, -1, offsetof(drv_counters, timeouts));
}
static void test_dxl_crc(void **state)
{
    (void)state;
    expect_fault(MODE_BAD_CRC, DRV_ECRC, -1, offsetof(drv_counters, crc_errors));
}
static void test_dxl_wrong_id(void **state)
{
    (void)state;
    expect_fault(MODE_WRONG_ID, DRV_EID, 9, offsetof(drv_counters, id_errors));
}
static void test_dxl_device_error(void **state)
{
    (void)state;
    expect_fault(MODE_DEVICE_ERROR, DRV_EDEVICE, 2, offsetof(drv_counters, device_errors));
}
static void test_dxl_alert(void **state)
{
    (void)state;
    expect_fault(MODE_ALERT, DRV_EALERT, 3, offsetof(drv_counters, alerts));
}

/* One lost reply with retries = 1: the read succeeds on the second attempt. */
static void test_dxl_retry(void **state)
{
    (void)state;
    cfg.driver.retries = 1;
    drv *d = open_probed();
    atomic_store(&fk_global->mode, MODE_DROP_ONCE);
    drv_state s;
    drv_fault f;
    if (drv_read(d, &s, &f) != 0) fail_msg("%s", f.message);
    assert_int_equal(drv_counters_get(d)->retries, 1);
    assert_int_equal(drv_counters_get(d)->timeouts, 1);
    drv_close(d);
}

/* A missing servo or a wrong model fails the probe with the servo's ID. */
static void test_dxl_probe_mismatch(void **state)
{
    fake *fk = *state;
    drv_fault f;
    cfg.joint[0].id[0] = 5; /* nobody answers */
    drv *d = drv_open(&cfg, &f);
    assert_non_null(d);
    assert_int_equal(drv_probe(d, &f), -1);
    assert_int_equal(f.status, DRV_EPROBE);
    assert_int_equal(f.device_id, 5);
    drv_close(d);
    cfg.joint[0].id[0] = 1;
    dxl2_put_u16(fk->regs[1] + DXL2_ADDR_MODEL_NUMBER, 1060); /* XL430: no current mode */
    d = drv_open(&cfg, &f);
    assert_int_equal(drv_probe(d, &f), -1);
    assert_int_equal(f.status, DRV_EPROBE);
    assert_int_equal(f.device_id, 1);
    assert_non_null(strstr(f.message, "1060"));
    drv_close(d);
    /* a twin whose zero offset is wrong by a quarter turn */
    dxl2_put_u16(fk->regs[1] + DXL2_ADDR_MODEL_NUMBER, DXL2_MODEL_XM430_W350);
    cfg.joint[1].zero_offset[1] = M_PI / 2;
    d = drv_open(&cfg, &f);
    assert_int_equal(drv_probe(d, &f), -1);
    assert_int_equal(f.status, DRV_EPROBE);
    assert_non_null(strstr(f.message, "twin"));
    drv_close(d);
}

/* Probes once and returns the result; *f holds the fault. */
static int probe_once(drv_fault *f)
{
    drv *d = drv_open(&cfg, f);
    if (!d) fail_msg("drv_open: %s", f->message);
    int r = drv_probe(d, f);
    drv_close(d);
    return r;
}

/* A servo whose Current Limit (38) cannot deliver its share of the joint's torque limit fails
 * the probe with its ID and a message naming the joint, both currents and the key to change;
 * a sufficient limit passes, and so does the torque the message proposes. */
/* What the servos can deliver together: twins share the torque equally, so the weaker one
 * bounds the joint (n_ids x its limit x torque_per_amp). */
static void test_dxl_torque_capacity(void **state)
{
    fake *fk = *state;
    dxl2_put_u16(fk->regs[2] + DXL2_ADDR_CURRENT_LIMIT, 2000);
    dxl2_put_u16(fk->regs[3] + DXL2_ADDR_CURRENT_LIMIT, 1500);
    cfg.joint[0].torque = cfg.joint[1].torque = 1.0;
    drv *d = open_probed();
    double shoulder = 2 * 1500 * DXL2_CURRENT_UNIT_A * cfg.joint[1].torque_per_amp;
    double base = 1193 * DXL2_CURRENT_UNIT_A * cfg.joint[0].torque_per_amp;
    assert_true(fabs(drv_torque_capacity(d, 1) - shoulder) < 1e-9);
    assert_true(fabs(drv_torque_capacity(d, 0) - base) < 1e-9);
    drv_close(d);
}

static void test_dxl_probe_current_limit(void **state)
{
    fake *fk = *state;
    drv_fault f;
    cfg.joint[0].torque = 1.0; /* base: 1 A on servo 1, far inside 3.21 A */
    cfg.joint[1].torque = 9.0; /* shoulder: twins 2 and 3 share it, 4.5 A each */
    dxl2_put_u16(fk->regs[2] + DXL2_ADDR_CURRENT_LIMIT, 2000); /* 5.38 A */
    /* servo 3 keeps the XM430 default 1193 = 3.21 A */
    assert_int_equal(probe_once(&f), -1);
    assert_int_equal(f.status, DRV_EPROBE);
    assert_int_equal(f.device_id, 3);
    assert_non_null(strstr(f.message, "[joint shoulder] torque 9 "));
    assert_non_null(strstr(f.message, "4.50 A per servo"));
    assert_non_null(strstr(f.message, "servo 3's Current Limit (address 38) is 3.21 A"));
    double proposed = floor(1193 * DXL2_CURRENT_UNIT_A * 2 * 1.0 * 100) / 100; /* 3 digits */
    char want[64];
    snprintf(want, sizeof want, "lower torque to %g ", proposed);
    assert_non_null(strstr(f.message, want));

    /* the proposed torque fits the servos as they are */
    cfg.joint[1].torque = proposed;
    if (probe_once(&f) != 0) fail_msg("proposed torque %g refused: %s", proposed, f.message);

    /* raising servo 3's limit: 4.5 A / 2.69 mA = 1672.9 units, so 1672 fails and 1673 passes */
    cfg.joint[1].torque = 9.0;
    dxl2_put_u16(fk->regs[3] + DXL2_ADDR_CURRENT_LIMIT, 1672);
    assert_int_equal(probe_once(&f), -1);
    assert_int_equal(f.device_id, 3);
    dxl2_put_u16(fk->regs[3] + DXL2_ADDR_CURRENT_LIMIT, 1673);
    if (probe_once(&f) != 0) fail_msg("sufficient Current Limit refused: %s", f.message);

    /* a single servo (no twin) on joint base, and a limit of 0 (no current at all) */
    dxl2_put_u16(fk->regs[1] + DXL2_ADDR_CURRENT_LIMIT, 0);
    assert_int_equal(probe_once(&f), -1);
    assert_int_equal(f.status, DRV_EPROBE);
    assert_int_equal(f.device_id, 1);
    assert_non_null(strstr(f.message, "[joint base] torque 1 needs 1.00 A per servo"));
}

/* Configuration errors are caught before any traffic. */
static void test_config_errors(void **state)
{
    (void)state;
    drv_fault f;
    cfg.joint[1].id[1] = 2; /* duplicate */
    assert_null(drv_open(&cfg, &f));
    assert_int_equal(f.status, DRV_ECONFIG);
    make_config(false);
    cfg.joint[0].counts_per_rev = 1000;
    assert_null(drv_open(&cfg, &f));
    assert_int_equal(f.status, DRV_ECONFIG);
    make_config(false);
    snprintf(cfg.driver.port, sizeof cfg.driver.port, "/nonexistent/tty");
    assert_null(drv_open(&cfg, &f));
    assert_int_equal(f.status, DRV_EIO);
    assert_non_null(strstr(f.message, "/nonexistent/tty"));
    make_config(false);
}

/* The port is claimed exclusively: a second drv_open on it (another armd) fails with a clear
 * message and DRV_EBUSY (armd --torque-off tells it from other failures) and leaves the first
 * driver working; after drv_close the port can be opened again. */
static void test_port_exclusive(void **state)
{
    fake *fk = *state;
    drv *d = open_probed();
    drv_fault f;
    assert_null(drv_open(&cfg, &f));
    assert_int_equal(f.status, DRV_EBUSY);
    assert_non_null(strstr(f.message, fk->link));
    assert_non_null(strstr(f.message, "in use by another process"));
    drv_state s;
    assert_int_equal(drv_read(d, &s, &f), 0); /* the first is undisturbed */
    drv_close(d);
    d = drv_open(&cfg, &f);
    if (!d) fail_msg("drv_open after drv_close: %s", f.message);
    assert_int_equal(drv_probe(d, &f), 0);
    drv_close(d);
}

static void test_alk_probe_read_write(void **state)
{
    fake *fk = *state;
    drv *d = open_probed();
    drv_fault f;
    assert_int_equal(drv_enable(d, true, &f), 0);
    double tau[2] = {0.25, -1.0};
    assert_int_equal(drv_write(d, tau, &f), 0);
    assert_int_equal(fk->board_ua[0], 250000);
    assert_int_equal(fk->board_ua[1], -500000);
    assert_int_equal(fk->board_ua[2], 0);      /* unconfigured channel */
    assert_int_equal(fk->board_ua[3], 500000); /* mirrored twin */
    drv_state s;
    assert_int_equal(drv_read(d, &s, &f), 0);
    assert_int_equal(s.device_time_us, 123456);
    assert_true(fabs(s.q[0]) < 1e-12);                                   /* channel 0: 0 counts */
    assert_true(fabs(s.q[1] - (1024 * 2 * M_PI / 4096 - M_PI)) < 1e-12); /* channel 1 */
    assert_true(fabs(s.qd[1] - 60.0 * 2 * M_PI / 60) < 1e-9);            /* 60000 milli-rpm */
    assert_true(fabs(s.tau[1] - (-0.5 - 0.5)) < 1e-9);                   /* read back currents */
    drv_close(d);
}

static void test_alk_faults(void **state)
{
    fake *fk = *state;
    expect_fault(MODE_SILENT, DRV_ETIMEOUT, -1, offsetof(drv_counters, timeouts));
    expect_fault(MODE_BAD_CRC, DRV_ECRC, -1, offsetof(drv_counters, crc_errors));
    expect_fault(MODE_WRONG_ID, DRV_EID, -1, offsetof(drv_counters, id_errors));
    fk->board_flags = ALK_FLAG_OVER_TEMPERATURE;
    drv *d = drv_open(&cfg, &(drv_fault){0});
    drv_fault f;
    assert_int_equal(drv_probe(d, &f), -1);
    assert_int_equal(f.status, DRV_EALERT);
    assert_non_null(strstr(f.message, "over-temperature"));
    fk->board_flags = 0;
    drv_close(d);
    d = open_probed();
    atomic_store(&fk->mode, MODE_NAK);
    assert_int_equal(drv_enable(d, true, &f), -1);
    assert_int_equal(f.status, DRV_EDEVICE);
    assert_non_null(strstr(f.message, "fault still active"));
    assert_int_equal(drv_counters_get(d)->device_errors, 1);
    atomic_store(&fk->mode, MODE_OK);
    drv_close(d);
}

/* A late reply to an earlier request (sequence number just behind) is discarded, not a fault. */
static void test_alk_late_reply_ignored(void **state)
{
    fake *fk = *state;
    drv *d = open_probed();
    drv_fault f;
    atomic_store(&fk->mode, MODE_LATE);
    drv_state s;
    assert_int_equal(drv_read(d, &s, &f), 0);
    assert_int_equal(drv_counters_get(d)->stale_replies, 1);
    assert_int_equal(drv_counters_get(d)->id_errors, 0);
    atomic_store(&fk->mode, MODE_OK);
    drv_close(d);
}

static void test_bus_time(void **state)
{
    (void)state;
    make_config(false);
    cfg.driver.baud = 4000000;
    cfg.driver.return_delay_us = 0;
    /* 3 servos: (14+3) + 3*21 + (14+9) = 103 bytes at 2.5 us + one turnaround */
    assert_true(fabs(drv_tick_bus_time_us(&cfg) - (103 * 2.5 + DRV_TURNAROUND_US)) < 1e-9);
    cfg.driver.return_delay_us = 10;
    assert_true(fabs(drv_tick_bus_time_us(&cfg) - (103 * 2.5 + 30 + DRV_TURNAROUND_US)) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dxl_probe_configures_servos, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_read_state, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_fast_sync_read, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_write_torques, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_timeout, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_crc, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_wrong_id, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_device_error, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_alert, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_retry, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_probe_mismatch, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_probe_current_limit, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_dxl_torque_capacity, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_config_errors, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_port_exclusive, setup_dxl, teardown),
        cmocka_unit_test_setup_teardown(test_alk_probe_read_write, setup_alk, teardown),
        cmocka_unit_test_setup_teardown(test_alk_faults, setup_alk, teardown),
        cmocka_unit_test_setup_teardown(test_alk_late_reply_ignored, setup_alk, teardown),
        cmocka_unit_test(test_bus_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
