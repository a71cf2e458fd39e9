/*
 * fuzz_drv_armlink.c — the armlink driver's whole life (drv_life.h) against a motor board
 * played from the fuzz input over the scripted fake port (fake_port.h). The board's replies are
 * built with the project's codec (valid, or with fault flags, a NAK, a late or wrong sequence
 * number, the wrong command, a flipped byte, cut short, doubled), or come raw from the input.
 *
 * Checks of what the driver writes (abort() on violation):
 *  - every write is exactly one frame that the codec decodes, with a command of armlink
 *    version 1 and its payload (SET_WATCHDOG carries the configured device_watchdog_ms);
 *  - sequence numbers: a request repeats the previous one byte for byte (a retry) or takes the
 *    next sequence number;
 *  - WRITE_TORQUE carries a current for every board channel, 0 on channels no joint uses, and
 *    for the others the documented conversion of the torque (0 for a non-finite one);
 *  - a successful probe disabled the motors and set the watchdog;
 *  - drv_enable(true) that succeeds sent ENABLE; one that fails leaves the board commanded
 *    off; drv_enable(false) sends DISABLE.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/drivers/drv_life.h"

#define MAX_SERVOS 8 /* drv_life's configurations have at most 5 */

/* Mutations of a built reply (the first script byte of a REPLY operation). */
enum {
    M_FLAGS = 0x01,    /* status flags from the script (next two bytes) */
    M_NAK = 0x02,      /* a NAK (next byte: the code) */
    M_SEQ = 0x04,      /* another sequence number: late (1..16 behind) or wrong (next byte) */
    M_FLIP = 0x08,     /* one byte flipped (next two bytes: where, how) */
    M_TRUNCATE = 0x10, /* cut short (next byte) */
    M_DATA = 0x20,     /* identity, time and channel data from the script */
    M_DOUBLE = 0x40,   /* sent twice */
    M_OTHER_CMD = 0x80 /* the acknowledgement of another command */
};

/* The channels as the config describes them, the last request and what the board was told. */
static struct {
    const armd_config *cfg;
    int n;                 /* servos (channels), config order */
    int id[MAX_SERVOS];    /* their channel numbers */
    int joint[MAX_SERVOS]; /* their joint */
    int k[MAX_SERVOS];     /* which of the joint's servos */
    int min_channels;      /* the board must have at least this many */
    alk_framer req;
    /* the last request */
    uint8_t cmd, seq;
    uint8_t last[ALK_MAX_FRAME];
    size_t last_len;
    /* the board */
    int channels;  /* announced by the last IDENTIFY reply built */
    int enable_rx; /* last ENABLE (1) / DISABLE (0) received, -1 none */
    int enable_tx; /* the same sent, received or lost */
    bool off_sent; /* a DISABLE was sent since the last check */
    bool watchdog_set;
    int32_t ua[ALK_MAX_CHANNELS]; /* currents of the last WRITE_TORQUE [uA] */
    bool torque_sent;
    uint32_t time_us;
} B;

/* Checks the sequence number of a new request against the previous one. */
static void check_sequence(const alk_frame *f, const uint8_t *b, size_t n)
{
    bool retry = n == B.last_len && memcmp(b, B.last, n) == 0;
    if (B.last_len && !retry && f->seq != (uint8_t)(B.seq + 1))
        fz_fail("armlink: request with sequence %u after %u (not a retry)", f->seq, B.seq);
    memcpy(B.last, b, n);
    B.last_len = n;
    B.cmd = f->cmd;
    B.seq = f->seq;
}

/* Records an ENABLE (1) or DISABLE (0). */
static void enable_cmd(int v, bool lost)
{
    B.enable_tx = v;
    if (!lost) B.enable_rx = v;
    if (v == 0) B.off_sent = true;
}

/* WRITE_TORQUE: every channel, 0 where no joint is. */
static void check_write_torque(const alk_frame *f)
{
    int n = 0;
    if (alk_parse_write_torque(f, B.ua, ALK_MAX_CHANNELS, &n) != ALK_OK)
        fz_fail("armlink: malformed WRITE_TORQUE (%u bytes)", f->len);
    if (n < B.min_channels)
        fz_fail("armlink: WRITE_TORQUE for %d channels, joints use %d", n, B.min_channels);
    for (int c = 0; c < n; c++) {
        bool used = false;
        for (int s = 0; s < B.n; s++) used |= B.id[s] == c;
        if (!used && B.ua[c] != 0)
            fz_fail("armlink: %d uA to channel %d, which no joint uses", B.ua[c], c);
    }
    B.torque_sent = true;
}

/* Every write is exactly one frame the codec decodes, of a command with its payload. */
static void written(void *ctx, const uint8_t *b, size_t n, bool lost)
{
    (void)ctx;
    alk_framer_reset(&B.req);
    B.req.dropped = B.req.bad_crc = B.req.bad_len = 0;
    if (alk_framer_push(&B.req, b, n) != n) fz_fail("armlink: a write of %zu bytes", n);
    alk_frame f;
    int r = alk_framer_next(&B.req, &f);
    if (r != ALK_OK) fz_fail("armlink: the driver sent a corrupt frame (%s)", alk_result_name(r));
    check_sequence(&f, b, n);
    uint16_t ms;
    switch (f.cmd) {
    case ALK_CMD_IDENTIFY:
    case ALK_CMD_READ_STATE:
    case ALK_CMD_ENABLE:
    case ALK_CMD_DISABLE:
        if (f.len) fz_fail("armlink: command 0x%02X with %u payload bytes", f.cmd, f.len);
        if (f.cmd == ALK_CMD_ENABLE || f.cmd == ALK_CMD_DISABLE)
            enable_cmd(f.cmd == ALK_CMD_ENABLE, lost);
        break;
    case ALK_CMD_SET_WATCHDOG:
        if (alk_parse_set_watchdog(&f, &ms) != ALK_OK) fz_fail("armlink: malformed SET_WATCHDOG");
        if (ms != B.cfg->driver.device_watchdog_ms)
            fz_fail("armlink: watchdog %u ms, config says %d", ms,
                    B.cfg->driver.device_watchdog_ms);
        if (!lost) B.watchdog_set = true;
        break;
    case ALK_CMD_WRITE_TORQUE:
        check_write_torque(&f);
        break;
    default:
        fz_fail("armlink: command 0x%02X", f.cmd);
    }
    if (alk_framer_next(&B.req, &f) != ALK_NEED_MORE || B.req.len || B.req.dropped)
        fz_fail("armlink: a write of %zu bytes holds more than one frame", n);
}

/* Channel c's plausible state: its joint at 0.05 (j+1) m or rad, moving at 0.1 per second,
 * 1 mA (twins agree); zeros for a channel no joint uses. */
static alk_channel_state plausible_channel(int c)
{
    for (int s = 0; s < B.n; s++) {
        if (B.id[s] != c) continue;
        const cfg_joint *J = &B.cfg->joint[B.joint[s]];
        double q = 0.05 * (B.joint[s] + 1) + 1e-4 * (B.time_us % 16);
        double mrpm = units_qd_to_rpm(J, B.k[s], 0.1) * 1000;
        return (alk_channel_state){units_q_to_counts(J, B.k[s], q),
                                   fabs(mrpm) < 2e9 ? (int32_t)mrpm : 0,
                                   1000 * J->direction[B.k[s]]};
    }
    return (alk_channel_state){0, 0, 0};
}

/* A signed 32-bit value from four script bytes. */
static int32_t script_i32(fz_in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)fz_u8(in) << (8 * i);
    return (int32_t)v;
}

/* The payload reply (identity, state or acknowledgement) to command cmd. */
static int answer(fz_in *in, uint8_t m, uint8_t cmd, uint8_t seq, const alk_reply_head *h,
                  uint8_t *out, size_t cap)
{
    static alk_state st;
    if (cmd == ALK_CMD_IDENTIFY) {
        alk_identity id = {0x0A11, 1, 0, (uint8_t)B.channels, ALK_PROTOCOL_VERSION, 4711};
        if (m & M_DATA) {
            id.n_channels = fz_u8(in);
            id.protocol = fz_u8(in);
        }
        B.channels = id.n_channels;
        return alk_build_identity(out, cap, seq, h, &id);
    }
    if (cmd == ALK_CMD_READ_STATE) {
        st.head = *h;
        st.n = B.channels >= 1 && B.channels <= ALK_MAX_CHANNELS ? B.channels : 1;
        for (int c = 0; c < st.n; c++) {
            st.ch[c] = plausible_channel(c);
            if (m & M_DATA)
                st.ch[c] = (alk_channel_state){script_i32(in), script_i32(in), script_i32(in)};
        }
        return alk_build_state(out, cap, seq, &st);
    }
    return alk_build_ack(out, cap, seq, cmd, h);
}

/* The board's reply to the last request, mutated as the script says. */
static size_t reply(void *ctx, fz_in *in, uint8_t *out, size_t cap)
{
    (void)ctx;
    if (!B.last_len) return 0;
    uint8_t m = fz_u8(in);
    B.time_us += 1000;
    alk_reply_head h = {B.time_us, B.enable_rx == 1 ? ALK_FLAG_ENABLED : 0};
    if (m & M_DATA) h.time_us = (uint32_t)script_i32(in);
    if (m & M_FLAGS) h.flags = (uint16_t)(fz_u8(in) | fz_u8(in) << 8);
    uint8_t seq = B.seq, cmd = B.cmd;
    if (m & M_SEQ) {
        uint8_t k = fz_u8(in);
        seq = k & 0x80 ? (uint8_t)(seq - 1 - (k & 15)) : (uint8_t)(seq + 1 + (k & 0x7F));
    }
    if (m & M_OTHER_CMD) cmd = (uint8_t)(1 + fz_u8(in) % 6);
    int len = m & M_NAK ? alk_build_nak(out, cap / 2, seq, &h, fz_u8(in) % 8, cmd)
                        : answer(in, m, cmd, seq, &h, out, cap / 2);
    if (len <= 0) return 0;
    size_t n = (size_t)len;
    if (m & M_FLIP) {
        size_t at = fz_u8(in) % n;
        out[at] ^= (uint8_t)(1 + fz_u8(in) % 255);
    }
    if (m & M_TRUNCATE) n -= 1 + fz_u8(in) % n;
    if (m & M_DOUBLE) {
        memcpy(out + n, out, n);
        n *= 2;
    }
    return n;
}

static int driver_ini(char *buf, size_t cap, uint8_t v)
{
    static const char *const bauds[8] = {"1000000", "1200",    "9600",  "12000000",
                                         "115200",  "3000000", "57600", "250000"};
    static const char *const watchdogs[4] = {"100", "0", "10000", "50"};
    return snprintf(buf, cap, "type = armlink\nbaud = %s\ndevice_watchdog_ms = %s\n", bauds[v & 7],
                    watchdogs[(v >> 3) & 3]);
}

static fake_port_device begin(const armd_config *cfg)
{
    memset(&B, 0, sizeof B);
    B.cfg = cfg;
    for (int j = 0; j < cfg->n_joints; j++)
        for (int k = 0; k < cfg->joint[j].n_ids && B.n < MAX_SERVOS; k++) {
            B.id[B.n] = cfg->joint[j].id[k];
            B.joint[B.n] = j;
            B.k[B.n] = k;
            if (B.id[B.n] + 1 > B.min_channels) B.min_channels = B.id[B.n] + 1;
            B.n++;
        }
    B.channels = B.min_channels;
    B.enable_rx = B.enable_tx = -1;
    return (fake_port_device){NULL, written, reply, NULL};
}

/* Longest reply wait: timeout (at least least_us) and the wire time of the largest
 * request and reply (WRITE_TORQUE and READ_STATE of 64 channels). */
static uint64_t tx_budget_ns(const armd_config *cfg, int least_us)
{
    const cfg_driver *dc = &cfg->driver;
    uint64_t t = (uint64_t)dc->timeout_us;
    if (t < (uint64_t)least_us) t = (uint64_t)least_us;
    uint64_t bytes = (8 + 4 * ALK_MAX_CHANNELS) + (14 + 12 * ALK_MAX_CHANNELS);
    return t * 1000u + bytes * 10u * 1000000000u / (uint64_t)dc->baud;
}

static void after_probe(int rc)
{
    if (rc == 0 && (B.enable_rx != 0 || !B.watchdog_set))
        fz_fail("armlink: probe passed, board enable %d, watchdog set %d", B.enable_rx,
                B.watchdog_set);
    B.off_sent = false;
}

static void after_enable(bool on, int rc)
{
    if (on && rc == 0 && B.enable_rx != 1) fz_fail("armlink: enable succeeded without ENABLE");
    if (on && rc != 0 && B.enable_tx == 1)
        fz_fail("armlink: enable failed and left the board commanded on");
    if (!on && !B.off_sent) fz_fail("armlink: disable sent no DISABLE");
    B.off_sent = false;
}

static void after_write(const double *tau, int rc)
{
    (void)rc;
    if (!B.torque_sent) fz_fail("armlink: drv_write sent no WRITE_TORQUE");
    B.torque_sent = false;
    for (int s = 0; s < B.n; s++) {
        const cfg_joint *J = &B.cfg->joint[B.joint[s]];
        double want = drv_life_expected_current(J, B.k[s], tau[B.joint[s]], 1e-6, INT32_MAX);
        if (fabs(B.ua[B.id[s]] - want) > 1)
            fz_fail("armlink: torque %g gave %d uA on channel %d, %g expected", tau[B.joint[s]],
                    B.ua[B.id[s]], B.id[s], want);
    }
}

static const drv_proto proto = {DRIVER_ARMLINK, driver_ini,   begin,      tx_budget_ns,
                                after_probe,    after_enable, after_write};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return drv_life_run(&proto, data, size);
}
