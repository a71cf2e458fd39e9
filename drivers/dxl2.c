/*
 * dxl2.c — the Dynamixel Protocol 2.0 driver for X-series servos in current (torque) control
 * (ROBOTIS e-Manual: Protocol 2.0, emanual.robotis.com/docs/en/dxl/protocol2/, and the control
 * tables of emanual.robotis.com/docs/en/dxl/x/xm430-w350/ and /docs/en/dxl/x/xm540-w270/).
 * Per tick: one Sync Read (or Fast Sync Read) of 126..135 (present current, velocity,
 * position) and one Sync Write of Goal Current (102).
 */
#include "drivers/driver_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Bus time of n bytes at the configured baud (10 bits per byte: start, 8 data, stop) [ns]. */
static uint64_t bytes_ns(const drv *d, size_t n)
{
    return (uint64_t)n * 10u * 1000000000u / (uint64_t)d->cfg.baud;
}

/* The servos' Bus Watchdog as configured (whole 20 ms units) [ns]; 0 = off. */
static uint64_t bus_watchdog_ns(const drv *d)
{
    int units =
        (d->cfg.bus_watchdog_ms + DXL2_BUS_WATCHDOG_UNIT_MS - 1) / DXL2_BUS_WATCHDOG_UNIT_MS;
    return units > 0 ? (uint64_t)units * DXL2_BUS_WATCHDOG_UNIT_MS * 1000000u : 0;
}

/* Notes a bus quiet for half the Bus Watchdog or more while enabled, from the last packet's
 * send to now (the control thread was held up, between ticks or inside one), for
 * check_bus_watchdog. */
static void note_quiet(drv *d, uint64_t now)
{
    uint64_t wd_ns = bus_watchdog_ns(d);
    if (d->enabled && wd_ns > 0 && d->last_tx_ns != 0 && now - d->last_tx_ns >= wd_ns / 2 &&
        d->wd_quiet_ms == 0)
        d->wd_quiet_ms = (double)(now - d->last_tx_ns) * 1e-6;
}

/* Sends buf[0..len) after discarding stale input. The packet's time (last_tx_ns) is taken
 * before the write: a hold-up inside the write or right after it then shows in the next gap,
 * and a real quiet of the whole watchdog as at least half of it in one of two gaps. */
static int send_buf(drv *d, const uint8_t *buf, size_t len, drv_fault *f)
{
    uint64_t start = serial_now_ns(d->port);
    note_quiet(d, start);
    serial_flush_input(d->port);
    dxl2_framer_reset(&d->rx.dxl);
    uint64_t deadline =
        serial_now_ns(d->port) + bytes_ns(d, len) + (uint64_t)d->cfg.timeout_us * 1000u;
    if (serial_write(d->port, buf, len, deadline) < 0) {
        drv_status s = errno == ETIMEDOUT ? DRV_ETIMEOUT : DRV_EIO;
        drv_count(d, s);
        return drv_fail(f, s, -1, "%s: write failed: %s", d->cfg.port,
                        s == DRV_ETIMEOUT ? "timeout" : strerror(errno));
    }
    d->last_tx_ns = start;
    return 0;
}

/* Sends d->tx[0..len). */
static int send_tx(drv *d, size_t len, drv_fault *f)
{
    return send_buf(d, d->tx, len, f);
}

/* One transaction's replies are read until deadline_ns [ns, the port's clock]; once it has
 * passed, one last read takes what already arrived and the window closes: bytes that keep
 * arriving (a babbling device, a noisy line) cannot hold the transaction past its deadline. */
typedef struct {
    uint64_t deadline_ns;
    bool closed;
} rx_window;

/* Waits for the next valid packet within the window. Frames rejected on the way are counted
 * and remembered in *first (the first such fault); returns 0 with *pkt, or -1 on timeout /
 * I/O error (fault filled unless a framing fault was already recorded). */
static int next_packet(drv *d, dxl2_packet *pkt, rx_window *w, drv_fault *first, bool *have_first)
{
    uint8_t chunk[256];
    for (;;) {
        int r = dxl2_framer_next(&d->rx.dxl, pkt);
        if (r == DXL2_OK) return 0;
        if (r == DXL2_ECRC || r == DXL2_ELENGTH) {
            drv_status s = r == DXL2_ECRC ? DRV_ECRC : DRV_ELENGTH;
            drv_count(d, s);
            if (!*have_first) {
                drv_fail(first, s, -1, "%s: corrupt reply (%s)", d->cfg.port, dxl2_result_name(r));
                *have_first = true;
            }
            continue;
        }
        if (w->closed) return -1;
        if (serial_now_ns(d->port) >= w->deadline_ns) w->closed = true; /* this read is the last */
        ssize_t n = serial_read(d->port, chunk, sizeof chunk, w->deadline_ns);
        if (n < 0) {
            drv_count(d, DRV_EIO);
            drv_fail(first, DRV_EIO, -1, "%s: read failed: %s", d->cfg.port, strerror(errno));
            *have_first = true;
            return -1;
        }
        if (n == 0) return -1;
        size_t off = 0;
        while (off < (size_t)n) {
            size_t took = dxl2_framer_push(&d->rx.dxl, chunk + off, (size_t)n - off);
            off += took;
            if (took == 0) dxl2_framer_reset(&d->rx.dxl); /* cannot happen: a frame fits */
        }
    }
}

/* Index into d->servo of ID id, -1 if not configured. */
static int servo_index(const drv *d, int id)
{
    for (int i = 0; i < d->n_servos; i++)
        if (d->servo[i].id == id) return i;
    return -1;
}

/* Checks a status packet's error byte: error number -> DRV_EDEVICE, alert bit -> DRV_EALERT. */
static int check_error_byte(drv *d, const dxl2_packet *p, drv_fault *f)
{
    if (p->error & DXL2_ERR_MASK) {
        static const char *names[] = {"",
                                      "result fail",
                                      "instruction error",
                                      "CRC error",
                                      "data range error",
                                      "data length error",
                                      "data limit error",
                                      "access error"};
        int e = p->error & DXL2_ERR_MASK;
        drv_count(d, DRV_EDEVICE);
        return drv_fail(f, DRV_EDEVICE, p->id, "servo %d: %s (status error 0x%02X)", p->id,
                        e < 8 ? names[e] : "unknown error", p->error);
    }
    if (p->error & DXL2_ERR_ALERT) {
        drv_count(d, DRV_EALERT);
        return drv_fail(f, DRV_EALERT, p->id,
                        "servo %d: hardware alert (see Hardware Error Status, address 70)", p->id);
    }
    return 0;
}

/* One request to one servo and its status reply (ping / read / write), no retries. On success
 * *pkt holds the reply with n_params checked against want (-1 = any). */
static int transact_once(drv *d, size_t len, int id, int want, dxl2_packet *pkt, drv_fault *f)
{
    if (send_tx(d, len, f) < 0) return -1;
    rx_window w = {serial_now_ns(d->port) +
                       bytes_ns(d, len + DXL2_STATUS_MIN + (size_t)(want + 1)) +
                       (uint64_t)(d->cfg.timeout_us + d->cfg.return_delay_us) * 1000u,
                   false};
    bool have = false;
    for (;;) {
        if (next_packet(d, pkt, &w, f, &have) < 0) {
            if (have) return -1;
            drv_count(d, DRV_ETIMEOUT);
            return drv_fail(f, DRV_ETIMEOUT, id, "servo %d: no reply within %d us", id,
                            d->cfg.timeout_us);
        }
        if (pkt->instruction != DXL2_INST_STATUS) continue; /* our own echo (half duplex) */
        if (pkt->id != id) {
            drv_count(d, DRV_EID);
            return drv_fail(f, DRV_EID, pkt->id, "servo %d: reply from ID %d", id, pkt->id);
        }
        if (check_error_byte(d, pkt, f) < 0) return -1;
        if (want >= 0 && pkt->n_params != want) {
            drv_count(d, DRV_ELENGTH);
            return drv_fail(f, DRV_ELENGTH, id, "servo %d: reply has %d data bytes, expected %d",
                            id, pkt->n_params, want);
        }
        return 0;
    }
}

/* transact_once with the configured retries for transport faults (timeout, CRC, ID, length). */
static int transact(drv *d, size_t len, int id, int want, dxl2_packet *pkt, drv_fault *f)
{
    for (int attempt = 0;; attempt++) {
        if (transact_once(d, len, id, want, pkt, f) == 0) return 0;
        bool transport = f && (f->status == DRV_ETIMEOUT || f->status == DRV_ECRC ||
                               f->status == DRV_EID || f->status == DRV_ELENGTH);
        if (!transport || attempt >= d->cfg.retries) return -1;
        d->counters.retries++;
    }
}

/* Writes n bytes at addr of servo id and waits for its status. */
static int write_reg(drv *d, int id, uint16_t addr, const uint8_t *data, size_t n, drv_fault *f)
{
    int len = dxl2_build_write(d->tx, sizeof d->tx, (uint8_t)id, addr, data, n);
    if (len < 0) return drv_fail(f, DRV_ECONFIG, id, "cannot build write");
    return transact(d, (size_t)len, id, 0, &(dxl2_packet){0}, f);
}

static int write_u8(drv *d, int id, uint16_t addr, uint8_t v, drv_fault *f)
{
    return write_reg(d, id, addr, &v, 1, f);
}

/* Reads n bytes at addr of servo id into out. */
static int read_reg(drv *d, int id, uint16_t addr, uint8_t *out, uint16_t n, drv_fault *f)
{
    int len = dxl2_build_read(d->tx, sizeof d->tx, (uint8_t)id, addr, n);
    if (len < 0) return drv_fail(f, DRV_ECONFIG, id, "cannot build read");
    dxl2_packet p;
    if (transact(d, (size_t)len, id, n, &p, f) < 0) return -1;
    memcpy(out, p.params, n);
    return 0;
}

/* Replaces an alert fault's message with the decoded Hardware Error Status (not in a tick). */
static void describe_alert(drv *d, drv_fault *f)
{
    if (!f || f->status != DRV_EALERT || f->device_id < 0) return;
    int id = f->device_id;
    drv_fault tmp = {0};
    dxl2_packet p = {0};
    int len = dxl2_build_read(d->tx, sizeof d->tx, (uint8_t)id, DXL2_ADDR_HW_ERROR_STATUS, 1);
    if (len < 0) return;
    if (transact_once(d, (size_t)len, id, 1, &p, &tmp) < 0 && tmp.status != DRV_EALERT) return;
    uint8_t hw = p.n_params == 1 ? p.params[0] : 0; /* an alert reply still carries the data */
    snprintf(f->message, sizeof f->message,
             "servo %d: hardware alert, Hardware Error Status 0x%02X:%s%s%s%s%s (reboot the "
             "servo to clear)",
             id, hw, hw & DXL2_HW_INPUT_VOLTAGE ? " input voltage" : "",
             hw & DXL2_HW_OVERHEATING ? " overheating" : "",
             hw & DXL2_HW_MOTOR_ENCODER ? " motor encoder" : "",
             hw & DXL2_HW_ELECTRICAL_SHOCK ? " electrical shock" : "",
             hw & DXL2_HW_OVERLOAD ? " overload" : "");
}

/* Bytes of the per-tick read reply(ies). */
static size_t state_reply_bytes(const drv *d)
{
    if (d->cfg.fast_sync_read)
        return DXL2_HEADER_LEN + 1 + (size_t)d->n_servos * (DXL2_STATE_LEN + 4);
    return (size_t)d->n_servos * (DXL2_STATUS_MIN + DXL2_STATE_LEN);
}

/* Stores one servo's 10-byte state block. */
static void store_state(drv_servo *s, const uint8_t *b)
{
    s->current = (int16_t)dxl2_get_u16(b);
    s->velocity = (int32_t)dxl2_get_u32(b + 2);
    s->position = (int32_t)dxl2_get_u32(b + 6);
    s->seen = true;
}

/* Records the first fault of a tick read into f (and keeps collecting). */
static void note(drv_fault *f, bool *have, drv_status s, int id, const char *what)
{
    if (*have) return;
    drv_fail(f, s, id, "servo %d: %s", id, what);
    *have = true;
}

/* One Sync Read / Fast Sync Read transaction: sends the prebuilt request and collects every
 * servo's state. Device errors and alerts are recorded but the data is kept. */
static int state_once(drv *d, drv_fault *f, bool *data_ok)
{
    *data_ok = false;
    for (int i = 0; i < d->n_servos; i++) d->servo[i].seen = false;
    if (send_buf(d, d->tx_state, d->tx_state_len, f) < 0) return -1;
    size_t n_delay = d->cfg.fast_sync_read ? 1 : (size_t)d->n_servos;
    rx_window w = {serial_now_ns(d->port) + bytes_ns(d, state_reply_bytes(d) + d->tx_state_len) +
                       (uint64_t)d->cfg.timeout_us * 1000u +
                       (uint64_t)n_delay * (uint64_t)d->cfg.return_delay_us * 1000u,
                   false};
    bool have = false; /* a fault recorded in f */
    int got = 0;
    while (got < d->n_servos) {
        dxl2_packet p;
        if (next_packet(d, &p, &w, f, &have) < 0) break;
        if (p.instruction != DXL2_INST_STATUS) continue; /* echo of our request */
        if (d->cfg.fast_sync_read) {
            dxl2_fast_entry e[DRV_MAX_SERVOS];
            int n = dxl2_parse_fast_sync_status(&p, DXL2_STATE_LEN, e, DRV_MAX_SERVOS);
            if (n != d->n_servos) {
                drv_count(d, DRV_ELENGTH);
                note(f, &have, DRV_ELENGTH, p.id, "fast sync read reply of unexpected length");
                continue;
            }
            for (int k = 0; k < n; k++) {
                int i = servo_index(d, e[k].id);
                if (i < 0 || d->servo[i].seen) {
                    drv_count(d, DRV_EID);
                    note(f, &have, DRV_EID, e[k].id, "unexpected ID in fast sync read reply");
                    continue;
                }
                dxl2_packet one = {.id = e[k].id, .error = e[k].error};
                if (!have && check_error_byte(d, &one, f) < 0) have = true;
                store_state(&d->servo[i], e[k].data);
                got++;
            }
            continue;
        }
        int i = servo_index(d, p.id);
        if (i < 0 || d->servo[i].seen) {
            drv_count(d, DRV_EID);
            note(f, &have, DRV_EID, p.id, i < 0 ? "reply from an unexpected ID" : "second reply");
            continue;
        }
        if (p.error & DXL2_ERR_MASK) {
            if (!have)
                have = check_error_byte(d, &p, f) < 0;
            else
                drv_count(d, DRV_EDEVICE);
            d->servo[i].seen = true; /* answered, without data */
            continue;
        }
        if (p.n_params != DXL2_STATE_LEN) {
            drv_count(d, DRV_ELENGTH);
            note(f, &have, DRV_ELENGTH, p.id, "state reply of unexpected length");
            continue;
        }
        if (p.error & DXL2_ERR_ALERT) {
            if (!have)
                have = check_error_byte(d, &p, f) < 0;
            else
                drv_count(d, DRV_EALERT);
        }
        store_state(&d->servo[i], p.params);
        got++;
    }
    if (got == d->n_servos) *data_ok = true;
    if (have) return -1;
    if (got < d->n_servos) {
        int missing = -1;
        for (int i = 0; i < d->n_servos && missing < 0; i++)
            if (!d->servo[i].seen) missing = d->servo[i].id;
        drv_count(d, DRV_ETIMEOUT);
        return drv_fail(f, DRV_ETIMEOUT, missing, "servo %d: no state reply within %d us", missing,
                        d->cfg.timeout_us);
    }
    return 0;
}

/* Builds the per-tick state request once (it never changes). */
static int build_state_request(drv *d, drv_fault *f)
{
    uint8_t ids[DRV_MAX_SERVOS];
    for (int i = 0; i < d->n_servos; i++) ids[i] = (uint8_t)d->servo[i].id;
    int len = d->cfg.fast_sync_read
                  ? dxl2_build_fast_sync_read(d->tx_state, sizeof d->tx_state, DXL2_STATE_ADDR,
                                              DXL2_STATE_LEN, ids, (size_t)d->n_servos)
                  : dxl2_build_sync_read(d->tx_state, sizeof d->tx_state, DXL2_STATE_ADDR,
                                         DXL2_STATE_LEN, ids, (size_t)d->n_servos);
    if (len < 0) return drv_fail(f, DRV_ECONFIG, -1, "cannot build the sync read");
    d->tx_state_len = (size_t)len;
    return 0;
}

/* After the bus was quiet for half the Bus Watchdog or more while enabled (note_quiet):
 * reads each servo's Bus Watchdog (98), which reads -1 once it expired. An expired servo has
 * stopped and refuses Goal Current until it is enabled again, and neither the Sync Read's
 * replies nor the Sync Write (no reply) would show it: the arm would hang limp while armd
 * holds. An expired one is DRV_EALERT; a failed read is returned as such, and the check is
 * made again at the next read until every servo answered. */
static int check_bus_watchdog(drv *d, drv_fault *f)
{
    note_quiet(d, serial_now_ns(d->port));
    if (!d->enabled) d->wd_quiet_ms = 0;
    if (d->wd_quiet_ms == 0) return 0;
    for (int i = 0; i < d->n_servos; i++) {
        uint8_t v = 0;
        if (read_reg(d, d->servo[i].id, DXL2_ADDR_BUS_WATCHDOG, &v, 1, f) < 0) return -1;
        if ((int8_t)v < 0) {
            drv_count(d, DRV_EALERT);
            return drv_fail(f, DRV_EALERT, d->servo[i].id,
                            "servo %d: Bus Watchdog expired (bus quiet %.0f ms, watchdog %.0f ms): "
                            "no torque until enabled again",
                            d->servo[i].id, d->wd_quiet_ms, (double)bus_watchdog_ns(d) * 1e-6);
        }
    }
    d->wd_quiet_ms = 0;
    return 0;
}

/* One state read with retries for transport faults; device errors and alerts are not retried.
 * out is filled whenever every servo delivered its data (also with an alert). A read after a
 * long quiet first checks the servos' Bus Watchdog (check_bus_watchdog). */
static int dxl_read(drv *d, drv_state *out, drv_fault *f)
{
    if (check_bus_watchdog(d, f) < 0) return -1;
    for (int attempt = 0;; attempt++) {
        bool data_ok;
        int r = state_once(d, f, &data_ok);
        if (data_ok) {
            drv_fill_state(d, out, DXL2_CURRENT_UNIT_A, DXL2_VELOCITY_UNIT_RPM);
            out->has_velocity = true;
            out->host_time_ns = serial_now_ns(d->port);
            out->device_time_us = 0;
        }
        if (r == 0) return 0;
        bool transport = f && (f->status == DRV_ETIMEOUT || f->status == DRV_ECRC ||
                               f->status == DRV_EID || f->status == DRV_ELENGTH);
        if (!transport || attempt >= d->cfg.retries) return -1;
        d->counters.retries++;
    }
}

/* Sync Write of Goal Current (102, 2 bytes signed) to every joint servo; no replies. When
 * drv_tool_set queued a tool goal, one Bulk Write instead: each joint servo's Goal Current
 * block and the tool servo's goal block (DXL2_TOOL_GOAL_ADDR, DXL2_TOOL_GOAL_LEN), so the tool
 * costs no transaction of its own (ROBOTIS e-Manual, Protocol 2.0, Bulk Write). */
static int dxl_write(drv *d, const double *tau, drv_fault *f)
{
    drv_torques_to_current(d, tau, DXL2_CURRENT_UNIT_A);
    uint8_t ids[DRV_MAX_SERVOS], data[2 * DRV_MAX_SERVOS];
    dxl2_bulk_block blocks[DRV_MAX_SERVOS];
    int n = 0;
    for (int i = 0; i < d->n_servos; i++) {
        if (i == d->tool_servo) continue;
        ids[n] = (uint8_t)d->servo[i].id;
        dxl2_put_u16(data + 2 * n, (uint16_t)(int16_t)d->servo[i].current);
        blocks[n] = (dxl2_bulk_block){ids[n], DXL2_ADDR_GOAL_CURRENT, 2, data + 2 * n};
        n++;
    }
    bool tool = d->tool_pending && d->tool_servo >= 0;
    int len;
    if (tool) {
        blocks[n] = (dxl2_bulk_block){(uint8_t)d->servo[d->tool_servo].id, DXL2_TOOL_GOAL_ADDR,
                                      DXL2_TOOL_GOAL_LEN, d->tool_goal};
        len = dxl2_build_bulk_write(d->tx, sizeof d->tx, blocks, (size_t)n + 1);
    } else {
        len = dxl2_build_sync_write(d->tx, sizeof d->tx, DXL2_ADDR_GOAL_CURRENT, 2, ids, data,
                                    (size_t)n);
    }
    if (len < 0) return drv_fail(f, DRV_ECONFIG, -1, "cannot build the goal write");
    int r = send_tx(d, (size_t)len, f);
    if (r == 0 && tool) d->tool_pending = false; /* else sent again with the next write */
    return r;
}

/* x rounded down to 3 significant digits (a torque limit that surely fits), 0 for x <= 0. */
static double floor_3_digits(double x)
{
    if (!(x > 0)) return 0;
    double p = pow(10.0, floor(log10(x)) - 2.0);
    return floor(x / p + 1e-9) * p;
}

/* Checks that every servo can deliver its share of its joint's configured torque limit:
 * amps = |tau_max| / (n_ids * torque_per_amp) (units_tau_to_amps) against the servo's Current
 * Limit (address 38) x 2.69 mA. Per joint the servo with the lowest limit is the one reported,
 * with the largest torque limit all its servos can deliver (rounded down). DRV_EPROBE if not. */
static int check_current_limits(drv *d, drv_fault *f)
{
    for (int j = 0; j < d->n_joints; j++) {
        const cfg_joint *J = &d->joint[j];
        int worst = -1;
        double worst_margin = 0; /* limit - need [A], most negative */
        double worst_need = 0, worst_lim = 0;
        for (int k = 0; k < J->n_ids; k++) {
            const drv_servo *s = &d->servo[d->servo_of[j][k]];
            double need = fabs(units_tau_to_amps(J, k, J->torque));
            double lim = s->current_limit * DXL2_CURRENT_UNIT_A;
            /* tolerance: a limit rounded up to the register unit passes */
            double margin = lim - need + 1e-9 * fmax(1.0, need);
            if (margin < worst_margin || !isfinite(need)) {
                worst = k;
                worst_margin = isfinite(need) ? margin : -INFINITY;
                worst_need = need;
                worst_lim = lim;
            }
        }
        if (worst < 0) continue;
        int id = J->id[worst];
        double tau_ok = floor_3_digits(worst_lim * J->n_ids * J->torque_per_amp);
        return drv_fail(f, DRV_EPROBE, id,
                        "[joint %s] torque %g needs %.2f A per servo but servo %d's Current Limit "
                        "(address 38) is %.2f A: lower torque to %g or raise the limit",
                        J->name, J->torque, worst_need, id, worst_lim, tau_ok);
    }
    return 0;
}

/* Ping every servo, check its model, then torque off, current mode, return delay, watchdog,
 * current limit; check the current limits against the joints' torque limits; finally one
 * state read and the twin check. */
static int dxl_probe(drv *d, drv_fault *f)
{
    int rd = d->cfg.return_delay_us / DXL2_RETURN_DELAY_UNIT_US;
    if (rd < 0 || rd > 254)
        return drv_fail(f, DRV_ECONFIG, -1, "return_delay_us %d out of range 0..508",
                        d->cfg.return_delay_us);
    int wd = (d->cfg.bus_watchdog_ms + DXL2_BUS_WATCHDOG_UNIT_MS - 1) / DXL2_BUS_WATCHDOG_UNIT_MS;
    if (wd < 0 || wd > 127)
        return drv_fail(f, DRV_ECONFIG, -1, "bus_watchdog_ms %d out of range 0..2540",
                        d->cfg.bus_watchdog_ms);
    for (int i = 0; i < d->n_servos; i++) {
        drv_servo *s = &d->servo[i];
        char owner[CFG_NAME_MAX + 8];
        drv_servo_owner(d, s, owner, sizeof owner);
        bool is_tool = i == d->tool_servo;
        dxl2_packet p;
        int len = dxl2_build_ping(d->tx, sizeof d->tx, (uint8_t)s->id);
        if (len < 0 || transact(d, (size_t)len, s->id, 3, &p, f) < 0) {
            describe_alert(d, f);
            if (f && f->status == DRV_ETIMEOUT)
                drv_fail(f, DRV_EPROBE, s->id, "%s: servo %d does not answer ping", owner, s->id);
            return -1;
        }
        uint16_t model = dxl2_get_u16(p.params);
        if (!dxl2_model_name(model))
            return drv_fail(f, DRV_EPROBE, s->id,
                            "%s: servo %d is model %u, not an X-series servo with current "
                            "control (XM430/XM540/XH430/XH540)",
                            owner, s->id, model);
        uint8_t lim[2];
        if (write_u8(d, s->id, DXL2_ADDR_TORQUE_ENABLE, 0, f) < 0 ||
            write_u8(d, s->id, DXL2_ADDR_OPERATING_MODE,
                     is_tool ? DXL2_OPERATING_MODE_CURRENT_POSITION : DXL2_OPERATING_MODE_CURRENT,
                     f) < 0 ||
            write_u8(d, s->id, DXL2_ADDR_RETURN_DELAY, (uint8_t)rd, f) < 0 ||
            write_u8(d, s->id, DXL2_ADDR_BUS_WATCHDOG, 0, f) < 0 || /* clears a tripped one */
            write_u8(d, s->id, DXL2_ADDR_BUS_WATCHDOG, (uint8_t)wd, f) < 0 ||
            read_reg(d, s->id, DXL2_ADDR_CURRENT_LIMIT, lim, 2, f) < 0) {
            describe_alert(d, f);
            return -1;
        }
        s->current_limit = dxl2_get_u16(lim);
        if (s->current_limit > 32767) s->current_limit = 32767; /* Goal Current is 16-bit signed */
        s->limit_amps = s->current_limit * DXL2_CURRENT_UNIT_A;
        double need = is_tool ? fabs(units_force_to_amps(&d->tool, d->tool.max_force)) : 0;
        if (need > s->limit_amps + 1e-9)
            return drv_fail(f, DRV_EPROBE, s->id,
                            "[tool %s] max_force %g N needs %.2f A but servo %d's Current Limit "
                            "(address 38) is %.2f A: lower max_force to %g or raise the limit",
                            d->tool.name, d->tool.max_force, need, s->id, s->limit_amps,
                            floor_3_digits(fabs(units_amps_to_force(&d->tool, s->limit_amps))));
    }
    if (check_current_limits(d, f) < 0) return -1;
    drv_state st;
    if (build_state_request(d, f) < 0) return -1;
    if (dxl_read(d, &st, f) < 0) {
        describe_alert(d, f);
        return -1;
    }
    return drv_check_twins(d, f);
}

/* Torque Enable (64) on every servo: one Sync Write (all at once), then a confirmed Write per
 * servo. Enabling first resets the Bus Watchdog (a tripped watchdog blocks goal writes). */
static int dxl_enable(drv *d, bool on, drv_fault *f)
{
    uint8_t ids[DRV_MAX_SERVOS], data[DRV_MAX_SERVOS];
    for (int i = 0; i < d->n_servos; i++) {
        ids[i] = (uint8_t)d->servo[i].id;
        data[i] = on ? 1 : 0;
    }
    int first_fail = 0;
    drv_fault tmp;
    if (!on) {
        int len = dxl2_build_sync_write(d->tx, sizeof d->tx, DXL2_ADDR_TORQUE_ENABLE, 1, ids, data,
                                        (size_t)d->n_servos);
        if (len > 0) (void)send_tx(d, (size_t)len, &tmp);
    }
    int wd = (d->cfg.bus_watchdog_ms + DXL2_BUS_WATCHDOG_UNIT_MS - 1) / DXL2_BUS_WATCHDOG_UNIT_MS;
    for (int i = 0; i < d->n_servos; i++) {
        int id = d->servo[i].id;
        int r = 0;
        if (on && wd > 0)
            r = write_u8(d, id, DXL2_ADDR_BUS_WATCHDOG, 0, &tmp) < 0 ||
                write_u8(d, id, DXL2_ADDR_BUS_WATCHDOG, (uint8_t)wd, &tmp) < 0;
        if (!r && on && i == d->tool_servo) {
            /* the tool servo goes to its Goal Position at torque on: make that where it is,
             * at the default speed and force (it holds, it does not jump); after the watchdog
             * reset, as a tripped watchdog refuses goal writes */
            drv_tool_goal g = {units_counts_to_opening(&d->tool, d->servo[i].position),
                               d->tool.speed, d->tool.force};
            uint8_t block[DXL2_TOOL_GOAL_LEN];
            drv_tool_goal_block(d, &g, block);
            r = write_reg(d, id, DXL2_TOOL_GOAL_ADDR, block, DXL2_TOOL_GOAL_LEN, &tmp) < 0;
            d->tool_pending = false;
        }
        if (!r) r = write_u8(d, id, DXL2_ADDR_TORQUE_ENABLE, on ? 1 : 0, &tmp) < 0;
        if (r && !first_fail) {
            first_fail = 1;
            describe_alert(d, &tmp);
            if (f) *f = tmp;
            if (on) break; /* torque off: keep going, every servo must get it */
        }
    }
    if (first_fail && on) { /* leave nothing half-enabled */
        for (int i = 0; i < d->n_servos; i++) data[i] = 0;
        int len = dxl2_build_sync_write(d->tx, sizeof d->tx, DXL2_ADDR_TORQUE_ENABLE, 1, ids, data,
                                        (size_t)d->n_servos);
        if (len > 0) (void)send_tx(d, (size_t)len, &tmp);
    }
    return first_fail ? -1 : 0;
}

/* The fatal-signal frame: one Sync Write of Torque Enable (64) = 0 to every configured ID. A Sync
 * Write gets no status reply (ROBOTIS e-Manual, Protocol 2.0, Sync Write), so it adds no reply
 * of its own to a half-duplex bus. */
static int dxl_build_off_frame(drv *d)
{
    uint8_t ids[DRV_MAX_SERVOS], zeros[DRV_MAX_SERVOS] = {0};
    for (int i = 0; i < d->n_servos; i++) ids[i] = (uint8_t)d->servo[i].id;
    int len = dxl2_build_sync_write(d->off_frame, sizeof d->off_frame, DXL2_ADDR_TORQUE_ENABLE, 1,
                                    ids, zeros, (size_t)d->n_servos);
    if (len <= 0) return -1;
    d->off_len = (size_t)len;
    return 0;
}

/* Torque Enable = 0 written to servo id and confirmed by its status reply, with the retries in
 * d->cfg. A reply with only the alert bit set confirms it (a latched hardware error does not
 * refuse the write); an error number does not. */
static int torque_off_one(drv *d, int id, drv_fault *f)
{
    uint8_t zero = 0;
    int len = dxl2_build_write(d->tx, sizeof d->tx, (uint8_t)id, DXL2_ADDR_TORQUE_ENABLE, &zero, 1);
    if (len < 0) return drv_fail(f, DRV_ECONFIG, id, "cannot build write");
    dxl2_packet p;
    for (int attempt = 0;; attempt++) {
        if (transact_once(d, (size_t)len, id, 0, &p, f) == 0) return 0;
        if (f->status == DRV_EALERT && f->device_id == id) return 0;
        bool transport = f->status == DRV_ETIMEOUT || f->status == DRV_ECRC ||
                         f->status == DRV_EID || f->status == DRV_ELENGTH;
        if (!transport || attempt >= d->cfg.retries) return -1;
        d->counters.retries++;
    }
}

/* drv_torque_off_each for servos: the Sync Write to all at once, then one confirmed write each;
 * a servo that does not confirm is reported by ID and joint. */
static int dxl_torque_off_each(drv *d, drv_off_report report, void *ctx)
{
    drv_fault f;
    (void)send_buf(d, d->off_frame, d->off_len, &f);
    int missing = 0;
    for (int i = 0; i < d->n_servos; i++) {
        int id = d->servo[i].id;
        if (torque_off_one(d, id, &f) == 0) continue;
        missing++;
        char why[sizeof f.message], owner[CFG_NAME_MAX + 8];
        snprintf(why, sizeof why, "%s", f.message);
        drv_fail(&f, f.status, id,
                 "%s: servo %d did not confirm Torque Enable = 0 (%d "
                 "attempts): %s",
                 drv_servo_owner(d, &d->servo[i], owner, sizeof owner), id, d->cfg.retries + 1,
                 why);
        if (report) report(ctx, &f);
    }
    return missing;
}

const drv_ops drv_dxl2_ops = {dxl_probe, dxl_enable,          dxl_read,
                              dxl_write, dxl_build_off_frame, dxl_torque_off_each};
