/*
 * fuzz_drv_dxl2.c — the dxl2 driver's whole life (drv_life.h) against X-series servos played
 * from the fuzz input over the scripted fake port (fake_port.h). The servos' replies are built
 * with the project's codec (valid, or with an alert, an error, a wrong ID, a flipped byte, cut
 * short, doubled, one missing), or come raw from the input.
 *
 * Checks of what the driver writes (abort() on violation):
 *  - every write is exactly one packet that the codec decodes, addressed to configured servos,
 *    with an instruction and register the driver has a reason to use: ping, read of Current
 *    Limit (38), Hardware Error Status (70) or Bus Watchdog (98, after a long quiet), write of
 *    Torque Enable (0/1), Operating Mode (current only), Return Delay and Bus Watchdog (the
 *    configured values), (Fast) Sync Read of 126..135 and Sync Write of Torque Enable or Goal
 *    Current to every servo once;
 *  - a Goal Current never exceeds the Current Limit the servo reported (and is never sent
 *    before it was read), and equals the documented conversion of the torque (0 for a
 *    non-finite one);
 *  - a successful probe read every Current Limit, set current mode and torque off, and only
 *    passes when each servo's limit covers its share of the joint's torque limit;
 *  - drv_enable(true) that succeeds switched every servo on; one that fails leaves no servo
 *    commanded on; drv_enable(false) commands every servo off.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/drivers/drv_life.h"

#define MAX_SERVOS 8 /* drv_life's configurations have at most 5 */

/* Mutations of a built reply (the first script byte of a REPLY operation). */
enum {
    M_ALERT = 0x01,    /* alert bit in the error byte */
    M_ERROR = 0x02,    /* an error number 1..7 (next byte) */
    M_WRONG_ID = 0x04, /* a servo answers with another ID (next byte) */
    M_FLIP = 0x08,     /* one byte flipped (next two bytes: where, how) */
    M_TRUNCATE = 0x10, /* cut short (next byte) */
    M_DATA = 0x20,     /* data bytes from the script instead of plausible values */
    M_DOUBLE = 0x40,   /* sent twice */
    M_DROP_ONE = 0x80  /* one servo of a Sync Read stays silent (next byte) */
};

/* The servos as the config describes them, the last request and what the servos were told. */
static struct {
    const armd_config *cfg;
    int n;                 /* servos, config order */
    int id[MAX_SERVOS];    /* their IDs */
    int joint[MAX_SERVOS]; /* their joint */
    int k[MAX_SERVOS];     /* which of the joint's servos */
    /* the last request */
    uint8_t inst, req_id;
    uint16_t addr, len;
    uint8_t ids[MAX_SERVOS];
    size_t n_ids;
    /* what the servos were told and told the driver */
    int32_t limit[MAX_SERVOS]; /* Current Limit delivered to the driver, -1 unknown */
    int expect_limit;          /* servo whose Current Limit read is open, -1 */
    bool judged;               /* the first status after the last request has been seen */
    int torque_rx[MAX_SERVOS]; /* last Torque Enable received: -1 none, 0, 1 */
    int torque_tx[MAX_SERVOS]; /* last Torque Enable sent (received or lost) */
    bool off_sent[MAX_SERVOS]; /* a torque off was sent since the last check */
    bool current_mode[MAX_SERVOS];
    int32_t goal[MAX_SERVOS]; /* Goal Current of the last Sync Write [2.69 mA] */
    bool goal_sent;
    uint32_t t; /* advances the plausible positions */
} S;
static dxl2_framer req, obs; /* parse the requests; observe the replies delivered */

/* Index of servo ID id, -1 if the config has none. */
static int servo_of(int id)
{
    for (int i = 0; i < S.n; i++)
        if (S.id[i] == id) return i;
    return -1;
}

/* The index of a configured servo ID, or a failure naming the request. */
static int require_servo(int id, const char *what)
{
    int i = servo_of(id);
    if (i < 0) fz_fail("dxl2: %s addressed to ID %d, which no joint uses", what, id);
    return i;
}

/* Checks that a Sync Read / Sync Write lists every servo exactly once. */
static void require_all_servos(const uint8_t *ids, size_t n, size_t stride, const char *what)
{
    bool seen[MAX_SERVOS] = {false};
    if (n != (size_t)S.n) fz_fail("dxl2: %s to %zu servos, the config has %d", what, n, S.n);
    for (size_t i = 0; i < n; i++) {
        int s = require_servo(ids[i * stride], what);
        if (seen[s]) fz_fail("dxl2: %s lists ID %d twice", what, S.id[s]);
        seen[s] = true;
    }
}

/* Records a Torque Enable value v for servo s. */
static void torque_cmd(int s, int v, bool lost)
{
    if (v != 0 && v != 1) fz_fail("dxl2: Torque Enable %d to servo %d", v, S.id[s]);
    S.torque_tx[s] = v;
    if (!lost) S.torque_rx[s] = v;
    if (v == 0) S.off_sent[s] = true;
}

/* A single-register Write: only the registers the driver has a reason to set. */
static void check_write(const dxl2_packet *p, bool lost)
{
    dxl2_rw_request rq;
    if (dxl2_parse_write(p, &rq) != DXL2_OK) fz_fail("dxl2: malformed Write");
    int s = require_servo(p->id, "Write");
    const cfg_driver *dc = &S.cfg->driver;
    if (rq.len != 1) fz_fail("dxl2: Write of %u bytes at %u", rq.len, rq.addr);
    int v = rq.data[0];
    int wd = (dc->bus_watchdog_ms + DXL2_BUS_WATCHDOG_UNIT_MS - 1) / DXL2_BUS_WATCHDOG_UNIT_MS;
    switch (rq.addr) {
    case DXL2_ADDR_TORQUE_ENABLE:
        torque_cmd(s, v, lost);
        break;
    case DXL2_ADDR_OPERATING_MODE:
        if (v != DXL2_OPERATING_MODE_CURRENT) fz_fail("dxl2: Operating Mode %d, not current", v);
        if (!lost) S.current_mode[s] = true;
        break;
    case DXL2_ADDR_RETURN_DELAY:
        if (v * DXL2_RETURN_DELAY_UNIT_US != dc->return_delay_us)
            fz_fail("dxl2: Return Delay %d, config says %d us", v, dc->return_delay_us);
        break;
    case DXL2_ADDR_BUS_WATCHDOG:
        if (v != 0 && v != wd) fz_fail("dxl2: Bus Watchdog %d, config says %d", v, wd);
        break;
    default:
        fz_fail("dxl2: Write to address %u", rq.addr);
    }
}

/* A Sync Write: Torque Enable or Goal Current for every servo. */
static void check_sync_write(const dxl2_packet *p, bool lost)
{
    dxl2_sync_request rq;
    if (dxl2_parse_sync_write(p, &rq) != DXL2_OK) fz_fail("dxl2: malformed Sync Write");
    require_all_servos(rq.records, rq.n_ids, 1u + rq.len, "Sync Write");
    for (size_t i = 0; i < rq.n_ids; i++) {
        const uint8_t *rec = rq.records + i * (1u + rq.len);
        int s = servo_of(rec[0]);
        if (rq.addr == DXL2_ADDR_TORQUE_ENABLE && rq.len == 1) {
            torque_cmd(s, rec[1], lost);
        } else if (rq.addr == DXL2_ADDR_GOAL_CURRENT && rq.len == 2) {
            int32_t v = (int16_t)dxl2_get_u16(rec + 1);
            if (S.limit[s] < 0)
                fz_fail("dxl2: Goal Current %d to servo %d before its Current Limit was read", v,
                        S.id[s]);
            if (v > S.limit[s] || -v > S.limit[s])
                fz_fail("dxl2: Goal Current %d to servo %d beyond its Current Limit %d", v, S.id[s],
                        S.limit[s]);
            S.goal[s] = v;
            S.goal_sent = true;
        } else {
            fz_fail("dxl2: Sync Write of %u bytes at %u", rq.len, rq.addr);
        }
    }
}

/* Checks one request packet and remembers it as the one to answer. */
static void check_request(const dxl2_packet *p, bool lost)
{
    dxl2_rw_request rw;
    dxl2_sync_request sr;
    S.inst = p->instruction;
    S.req_id = p->id;
    switch (p->instruction) {
    case DXL2_INST_PING:
        require_servo(p->id, "Ping");
        break;
    case DXL2_INST_READ: {
        if (dxl2_parse_read(p, &rw) != DXL2_OK) fz_fail("dxl2: malformed Read");
        int s = require_servo(p->id, "Read");
        bool limit = rw.addr == DXL2_ADDR_CURRENT_LIMIT && rw.len == 2;
        if (!limit && !(rw.addr == DXL2_ADDR_HW_ERROR_STATUS && rw.len == 1) &&
            !(rw.addr == DXL2_ADDR_BUS_WATCHDOG && rw.len == 1))
            fz_fail("dxl2: Read of %u bytes at %u", rw.len, rw.addr);
        S.addr = rw.addr;
        S.len = rw.len;
        if (limit) {
            S.limit[s] = -1; /* what this read delivers is the limit from now on */
            S.expect_limit = lost ? -1 : s;
        }
        break;
    }
    case DXL2_INST_WRITE:
        check_write(p, lost);
        break;
    case DXL2_INST_SYNC_READ:
    case DXL2_INST_FAST_SYNC_READ:
        if (dxl2_parse_sync_read(p, &sr) != DXL2_OK) fz_fail("dxl2: malformed Sync Read");
        if ((p->instruction == DXL2_INST_FAST_SYNC_READ) != S.cfg->driver.fast_sync_read)
            fz_fail("dxl2: instruction 0x%02X with fast_sync_read = %d", p->instruction,
                    S.cfg->driver.fast_sync_read);
        if (sr.addr != DXL2_STATE_ADDR || sr.len != DXL2_STATE_LEN)
            fz_fail("dxl2: Sync Read of %u bytes at %u", sr.len, sr.addr);
        require_all_servos(sr.ids, sr.n_ids, 1, "Sync Read");
        memcpy(S.ids, sr.ids, sr.n_ids);
        S.n_ids = sr.n_ids;
        break;
    case DXL2_INST_SYNC_WRITE:
        check_sync_write(p, lost);
        break;
    default:
        fz_fail("dxl2: instruction 0x%02X", p->instruction);
    }
}

/* Every write is exactly one packet the codec decodes. */
static void written(void *ctx, const uint8_t *b, size_t n, bool lost)
{
    (void)ctx;
    dxl2_framer_reset(&req);
    req.dropped = req.bad_crc = req.bad_len = 0;
    dxl2_framer_reset(&obs);
    S.judged = false;
    S.expect_limit = -1;
    S.inst = 0;
    if (dxl2_framer_push(&req, b, n) != n) fz_fail("dxl2: a write of %zu bytes", n);
    dxl2_packet p;
    int r, packets = 0;
    while ((r = dxl2_framer_next(&req, &p)) != DXL2_NEED_MORE) {
        if (r != DXL2_OK)
            fz_fail("dxl2: the driver sent a corrupt packet (%s)", dxl2_result_name(r));
        check_request(&p, lost);
        packets++;
    }
    if (packets != 1 || req.len || req.dropped)
        fz_fail("dxl2: a write of %zu bytes holds %d packets and %zu stray bytes", n, packets,
                (size_t)(req.len + req.dropped));
}

/* Watches the replies as the driver receives them: the first status after a Current Limit
 * read is the limit the driver takes (or rejects). */
static void delivered(void *ctx, const uint8_t *b, size_t n)
{
    (void)ctx;
    size_t off = 0;
    while (off < n) {
        size_t took = dxl2_framer_push(&obs, b + off, n - off);
        off += took;
        dxl2_packet p;
        int r;
        while ((r = dxl2_framer_next(&obs, &p)) != DXL2_NEED_MORE) {
            if (r != DXL2_OK || p.instruction != DXL2_INST_STATUS || S.judged) continue;
            S.judged = true;
            int s = S.expect_limit;
            if (s >= 0 && p.id == S.id[s] && p.error == 0 && p.n_params == 2) {
                int32_t v = dxl2_get_u16(p.params);
                S.limit[s] = v > 32767 ? 32767 : v;
            }
        }
        if (took == 0) dxl2_framer_reset(&obs);
    }
}

/* Data bytes: from the script (M_DATA) or the plausible ones given. */
static void data_bytes(fz_in *in, uint8_t m, uint8_t *out, const uint8_t *plausible, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = m & M_DATA ? fz_u8(in) : plausible[i];
}

/* Servo s's plausible state block: joint at 0.05 (j+1) rad, moving at 0.1 rad/s, 10 units of
 * current (its twins agree). */
static void plausible_state(int s, uint8_t b[DXL2_STATE_LEN])
{
    const cfg_joint *J = &S.cfg->joint[S.joint[s]];
    double q = 0.05 * (S.joint[s] + 1) + 1e-4 * (S.t % 16);
    double rpm = units_qd_to_rpm(J, S.k[s], 0.1) / DXL2_VELOCITY_UNIT_RPM;
    int32_t vel = fabs(rpm) < 1e9 ? (int32_t)rpm : 0;
    dxl2_put_u16(b, (uint16_t)(int16_t)(10 * J->direction[S.k[s]]));
    dxl2_put_u32(b + 2, (uint32_t)vel);
    dxl2_put_u32(b + 6, (uint32_t)units_q_to_counts(J, S.k[s], q));
}

/* Servo s's plausible Current Limit: enough for its share of the joint's torque limit. */
static uint16_t plausible_limit(int s)
{
    const cfg_joint *J = &S.cfg->joint[S.joint[s]];
    double need = J->torque / (J->n_ids * J->torque_per_amp) / DXL2_CURRENT_UNIT_A;
    return need < 32766 ? (uint16_t)ceil(need) + 1 : 32767;
}

/* Error byte of a reply under mutation m. */
static uint8_t error_byte(fz_in *in, uint8_t m)
{
    uint8_t e = m & M_ALERT ? DXL2_ERR_ALERT : 0;
    if (m & M_ERROR) e |= (uint8_t)(1 + fz_u8(in) % 7);
    return e;
}

/* The servos' answer to a Sync Read / Fast Sync Read. */
static int answer_sync_read(fz_in *in, uint8_t m, uint8_t *out, size_t cap)
{
    static uint8_t blocks[MAX_SERVOS][DXL2_STATE_LEN];
    size_t drop = m & M_DROP_ONE ? fz_u8(in) % S.n_ids : SIZE_MAX;
    size_t odd = m & (M_ALERT | M_ERROR | M_WRONG_ID) ? fz_u8(in) % S.n_ids : SIZE_MAX;
    dxl2_fast_entry e[MAX_SERVOS];
    size_t n = 0;
    int len = 0;
    for (size_t i = 0; i < S.n_ids; i++) {
        if (i == drop) continue;
        uint8_t plausible[DXL2_STATE_LEN];
        plausible_state(servo_of(S.ids[i]), plausible);
        data_bytes(in, m, blocks[i], plausible, DXL2_STATE_LEN);
        uint8_t id = S.ids[i], err = 0;
        if (i == odd) {
            err = error_byte(in, m);
            if (m & M_WRONG_ID) id = fz_u8(in);
        }
        if (S.inst == DXL2_INST_FAST_SYNC_READ) {
            e[n++] = (dxl2_fast_entry){id, err, blocks[i]};
            continue;
        }
        int r = dxl2_build_status(out + len, cap - (size_t)len, id, err, blocks[i],
                                  err & DXL2_ERR_MASK ? 0 : DXL2_STATE_LEN);
        if (r > 0) len += r;
    }
    if (S.inst == DXL2_INST_FAST_SYNC_READ && n > 0)
        len = dxl2_build_fast_sync_status(out, cap, e, n, DXL2_STATE_LEN);
    return len;
}

/* The addressed servo's status reply to a Ping, Read or Write. */
static int answer_one(fz_in *in, uint8_t m, uint8_t *out, size_t cap)
{
    int s = servo_of(S.req_id);
    uint8_t data[8] = {0}, plausible[8] = {0};
    size_t n = 0;
    if (S.inst == DXL2_INST_PING) {
        dxl2_put_u16(plausible, DXL2_MODEL_XM430_W350);
        plausible[2] = 45; /* firmware */
        n = 3;
    } else if (S.inst == DXL2_INST_READ) {
        if (S.addr == DXL2_ADDR_CURRENT_LIMIT) dxl2_put_u16(plausible, plausible_limit(s));
        n = S.len <= sizeof data ? S.len : 0;
    }
    data_bytes(in, m, data, plausible, n);
    uint8_t err = error_byte(in, m);
    uint8_t id = m & M_WRONG_ID ? fz_u8(in) : S.req_id;
    return dxl2_build_status(out, cap, id, err, data, n);
}

/* The servos' reply to the last request, mutated as the script says. */
static size_t reply(void *ctx, fz_in *in, uint8_t *out, size_t cap)
{
    (void)ctx;
    uint8_t m = fz_u8(in);
    int len = 0;
    S.t++;
    if (S.inst == DXL2_INST_SYNC_READ || S.inst == DXL2_INST_FAST_SYNC_READ)
        len = answer_sync_read(in, m, out, cap / 2);
    else if (S.inst == DXL2_INST_PING || S.inst == DXL2_INST_READ || S.inst == DXL2_INST_WRITE)
        len = answer_one(in, m, out, cap / 2);
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
    static const char *const bauds[8] = {"1000000", "57600",   "9600",    "4000000",
                                         "115200",  "2000000", "3000000", "4500000"};
    static const char *const delays[4] = {"0", "508", "100", "0"};
    static const char *const watchdogs[4] = {"100", "0", "2540", "20"};
    return snprintf(buf, cap,
                    "type = dxl2\nbaud = %s\nreturn_delay_us = %s\nbus_watchdog_ms = %s\n"
                    "fast_sync_read = %s\n",
                    bauds[v & 7], delays[(v >> 3) & 3], watchdogs[(v >> 5) & 3],
                    v & 0x80 ? "true" : "false");
}

static fake_port_device begin(const armd_config *cfg)
{
    memset(&S, 0, sizeof S);
    dxl2_framer_reset(&req);
    dxl2_framer_reset(&obs);
    S.cfg = cfg;
    for (int j = 0; j < cfg->n_joints; j++)
        for (int k = 0; k < cfg->joint[j].n_ids && S.n < MAX_SERVOS; k++) {
            S.id[S.n] = cfg->joint[j].id[k];
            S.joint[S.n] = j;
            S.k[S.n] = k;
            S.limit[S.n] = -1;
            S.torque_rx[S.n] = S.torque_tx[S.n] = -1;
            S.n++;
        }
    S.expect_limit = -1;
    return (fake_port_device){NULL, written, reply, delivered};
}

/* Longest reply wait: timeout (at least least_us), every servo's return delay, and the
 * wire time of the largest request and replies (Sync Read and its status packets). */
static uint64_t tx_budget_ns(const armd_config *cfg, int least_us)
{
    const cfg_driver *dc = &cfg->driver;
    uint64_t t = (uint64_t)dc->timeout_us;
    if (t < (uint64_t)least_us) t = (uint64_t)least_us;
    t += (uint64_t)S.n * (uint64_t)dc->return_delay_us;
    uint64_t bytes = 64 + 32 * (uint64_t)S.n;
    return t * 1000u + bytes * 10u * 1000000000u / (uint64_t)dc->baud;
}

static void after_probe(int rc)
{
    for (int s = 0; rc == 0 && s < S.n; s++) {
        const cfg_joint *J = &S.cfg->joint[S.joint[s]];
        if (S.limit[s] < 0) fz_fail("dxl2: probe passed without servo %d's Current Limit", S.id[s]);
        if (!S.current_mode[s] || S.torque_rx[s] != 0)
            fz_fail("dxl2: probe passed, servo %d: current mode %d, torque %d", S.id[s],
                    S.current_mode[s], S.torque_rx[s]);
        double need = fabs(J->torque) / (J->n_ids * J->torque_per_amp);
        /* the driver's own tolerance: relative for real currents, 1e-9 A absolute for a
         * torque limit so small (1e-300 N m) that it needs no current at all */
        if (S.limit[s] * DXL2_CURRENT_UNIT_A < need * (1 - 1e-6) - 1e-9)
            fz_fail("dxl2: probe passed, servo %d's Current Limit %.3f A below the %.3f A its "
                    "share of torque %g needs",
                    S.id[s], S.limit[s] * DXL2_CURRENT_UNIT_A, need, J->torque);
    }
    memset(S.off_sent, 0, sizeof S.off_sent);
}

static void after_enable(bool on, int rc)
{
    for (int s = 0; s < S.n; s++) {
        if (on && rc == 0 && S.torque_rx[s] != 1)
            fz_fail("dxl2: enable succeeded, servo %d has torque %d", S.id[s], S.torque_rx[s]);
        if (on && rc != 0 && S.torque_tx[s] == 1)
            fz_fail("dxl2: enable failed and left servo %d commanded on", S.id[s]);
        if (!on && !S.off_sent[s]) fz_fail("dxl2: disable sent no torque off to servo %d", S.id[s]);
    }
    memset(S.off_sent, 0, sizeof S.off_sent);
}

static void after_write(const double *tau, int rc)
{
    (void)rc;
    if (!S.goal_sent) fz_fail("dxl2: drv_write sent no Goal Current");
    S.goal_sent = false;
    for (int s = 0; s < S.n; s++) {
        const cfg_joint *J = &S.cfg->joint[S.joint[s]];
        double want =
            drv_life_expected_current(J, S.k[s], tau[S.joint[s]], DXL2_CURRENT_UNIT_A, S.limit[s]);
        if (fabs(S.goal[s] - want) > 1)
            fz_fail("dxl2: torque %g gave Goal Current %d to servo %d, %g expected",
                    tau[S.joint[s]], S.goal[s], S.id[s], want);
    }
}

static const drv_proto proto = {DRIVER_DXL2, driver_ini,   begin,      tx_budget_ns,
                                after_probe, after_enable, after_write};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return drv_life_run(&proto, data, size);
}
