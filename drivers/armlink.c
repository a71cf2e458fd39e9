/*
 * armlink.c — the armlink driver (one motor board per arm; protocol in drivers/README.md).
 * Every request gets exactly one reply with the same sequence number; per tick one READ_STATE
 * and one WRITE_TORQUE. Configured servo IDs are the board's channel numbers.
 */
#include "drivers/driver_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ALK_AMPS_PER_UNIT 1e-6 /* current on the wire: microamperes */
#define ALK_RPM_PER_UNIT  1e-3 /* velocity on the wire: milli-rpm */

/* Bus time of n bytes at the configured baud (10 bits per byte) [ns]. */
static uint64_t bytes_ns(const drv *d, size_t n)
{
    return (uint64_t)n * 10u * 1000000000u / (uint64_t)d->cfg.baud;
}

/* Extends the board's 32-bit microsecond clock to 64 bits (it wraps every 71.6 minutes). */
static uint64_t unwrap_time(drv *d, uint32_t t)
{
    if (d->have_time && t < d->last_time_us) d->time_high += (uint64_t)1 << 32;
    d->last_time_us = t;
    d->have_time = true;
    return d->time_high + t;
}

/* Checks reply flags: hardware faults -> DRV_EALERT; a watchdog stop while we think the
 * motors are on -> DRV_EALERT. */
static int check_flags(drv *d, uint16_t flags, drv_fault *f)
{
    if (flags & ALK_FLAGS_ALERT) {
        drv_count(d, DRV_EALERT);
        return drv_fail(f, DRV_EALERT, -1, "armlink board fault, flags 0x%04X:%s%s%s%s%s%s", flags,
                        flags & ALK_FLAG_FAULT ? " fault" : "",
                        flags & ALK_FLAG_OVER_TEMPERATURE ? " over-temperature" : "",
                        flags & ALK_FLAG_OVER_CURRENT ? " over-current" : "",
                        flags & ALK_FLAG_UNDER_VOLTAGE ? " under-voltage" : "",
                        flags & ALK_FLAG_OVER_VOLTAGE ? " over-voltage" : "",
                        flags & ALK_FLAG_ENCODER_ERROR ? " encoder error" : "");
    }
    if (d->enabled && (flags & ALK_FLAG_WATCHDOG_EXPIRED)) {
        drv_count(d, DRV_EALERT);
        return drv_fail(f, DRV_EALERT, -1,
                        "armlink board: watchdog expired, motors are off (flags 0x%04X)", flags);
    }
    return 0;
}

/* Sends d->tx[0..len) and waits for the reply with the same sequence number; no retries.
 * A NAK becomes DRV_EDEVICE. On success *fr holds the reply (valid until the next transfer). */
static int exchange_once(drv *d, size_t len, uint8_t cmd, alk_frame *fr, size_t reply_bytes,
                         drv_fault *f)
{
    serial_flush_input(d->port);
    alk_framer_reset(&d->rx.alk);
    uint64_t t0 = serial_now_ns(d->port);
    uint64_t deadline = t0 + bytes_ns(d, len + reply_bytes) + (uint64_t)d->cfg.timeout_us * 1000u;
    if (serial_write(d->port, d->tx, len, deadline) < 0) {
        drv_status s = errno == ETIMEDOUT ? DRV_ETIMEOUT : DRV_EIO;
        drv_count(d, s);
        return drv_fail(f, s, -1, "%s: write failed: %s", d->cfg.port,
                        s == DRV_ETIMEOUT ? "timeout" : strerror(errno));
    }
    uint8_t seq = d->tx[3];
    uint8_t chunk[256];
    /* once the deadline has passed, one last read takes what already arrived: bytes that keep
     * arriving (stale replies, echoes, noise) cannot hold the exchange past its deadline */
    bool last_read = false;
    for (;;) {
        int r = alk_framer_next(&d->rx.alk, fr);
        if (r == ALK_ECRC || r == ALK_ELENGTH) {
            drv_status s = r == ALK_ECRC ? DRV_ECRC : DRV_ELENGTH;
            drv_count(d, s);
            return drv_fail(f, s, -1, "armlink: corrupt reply (%s)", alk_result_name(r));
        }
        if (r == ALK_OK) {
            if (!(fr->cmd & ALK_REPLY)) continue; /* our own request echoed */
            uint8_t behind = (uint8_t)(seq - fr->seq);
            if (behind >= 1 && behind <= ALK_STALE_WINDOW) {
                d->counters.stale_replies++; /* a late reply to an earlier, timed-out request */
                continue;
            }
            if (fr->seq != seq) {
                drv_count(d, DRV_EID);
                return drv_fail(f, DRV_EID, -1, "armlink: reply sequence %u, expected %u", fr->seq,
                                seq);
            }
            if (fr->cmd == ALK_NAK) {
                alk_reply_head h;
                uint8_t code = 0, what = 0;
                if (alk_parse_nak(fr, &h, &code, &what) != ALK_OK) {
                    drv_count(d, DRV_ELENGTH);
                    return drv_fail(f, DRV_ELENGTH, -1, "armlink: malformed NAK");
                }
                drv_count(d, DRV_EDEVICE);
                return drv_fail(f, DRV_EDEVICE, -1,
                                "armlink board refused command 0x%02X: %s (code %u, flags 0x%04X)",
                                what, alk_nak_name(code), code, h.flags);
            }
            if (fr->cmd != (cmd | ALK_REPLY)) {
                drv_count(d, DRV_ELENGTH);
                return drv_fail(f, DRV_ELENGTH, -1, "armlink: reply 0x%02X to command 0x%02X",
                                fr->cmd, cmd);
            }
            return 0;
        }
        ssize_t n = 0; /* after the last read: a timeout */
        if (!last_read) {
            last_read = serial_now_ns(d->port) >= deadline;
            n = serial_read(d->port, chunk, sizeof chunk, deadline);
        }
        if (n < 0) {
            drv_count(d, DRV_EIO);
            return drv_fail(f, DRV_EIO, -1, "%s: read failed: %s", d->cfg.port, strerror(errno));
        }
        if (n == 0) {
            drv_count(d, DRV_ETIMEOUT);
            return drv_fail(f, DRV_ETIMEOUT, -1, "armlink: no reply to command 0x%02X within %d us",
                            cmd, d->cfg.timeout_us);
        }
        size_t off = 0;
        while (off < (size_t)n) {
            size_t took = alk_framer_push(&d->rx.alk, chunk + off, (size_t)n - off);
            if (took == 0) alk_framer_reset(&d->rx.alk);
            off += took;
        }
    }
}

/* Builds a request with a fresh sequence number (build(buf, cap, seq)), then exchanges it with
 * the configured retries for transport faults; the same sequence number is reused on retry. */
static int exchange(drv *d, int len, uint8_t cmd, alk_frame *fr, size_t reply_bytes, drv_fault *f)
{
    if (len < 0) return drv_fail(f, DRV_ECONFIG, -1, "armlink: cannot build command 0x%02X", cmd);
    for (int attempt = 0;; attempt++) {
        if (exchange_once(d, (size_t)len, cmd, fr, reply_bytes, f) == 0) return 0;
        bool transport = f && (f->status == DRV_ETIMEOUT || f->status == DRV_ECRC ||
                               f->status == DRV_EID || f->status == DRV_ELENGTH);
        if (!transport || attempt >= d->cfg.retries) return -1;
        d->counters.retries++;
    }
}

static uint8_t next_seq(drv *d)
{
    return d->seq++;
}

/* READ_STATE -> joint state. */
static int alk_read(drv *d, drv_state *out, drv_fault *f)
{
    alk_frame fr;
    int len = alk_build_read_state(d->tx, sizeof d->tx, next_seq(d));
    size_t reply = ALK_HEADER_LEN + 7 + 12 * (size_t)d->board_channels + ALK_CRC_LEN;
    if (exchange(d, len, ALK_CMD_READ_STATE, &fr, reply, f) < 0) return -1;
    alk_state *s = &d->alk_state;
    if (alk_parse_state(&fr, s) != ALK_OK || s->n != d->board_channels) {
        drv_count(d, DRV_ELENGTH);
        return drv_fail(f, DRV_ELENGTH, -1, "armlink: state reply for %d channels, expected %d",
                        alk_parse_state(&fr, s) == ALK_OK ? s->n : -1, d->board_channels);
    }
    for (int i = 0; i < d->n_servos; i++) {
        drv_servo *sv = &d->servo[i];
        sv->position = s->ch[sv->id].position;
        sv->velocity = s->ch[sv->id].velocity;
        sv->current = s->ch[sv->id].current_ua;
    }
    drv_fill_state(d, out, ALK_AMPS_PER_UNIT, ALK_RPM_PER_UNIT);
    out->has_velocity = true;
    out->host_time_ns = serial_now_ns(d->port);
    out->device_time_us = unwrap_time(d, s->head.time_us);
    return check_flags(d, s->head.flags, f);
}

/* WRITE_TORQUE: currents for every board channel (unconfigured channels get 0). */
static int alk_write(drv *d, const double *tau, drv_fault *f)
{
    drv_torques_to_current(d, tau, ALK_AMPS_PER_UNIT);
    int32_t ua[ALK_MAX_CHANNELS] = {0};
    for (int i = 0; i < d->n_servos; i++) ua[d->servo[i].id] = d->servo[i].current;
    alk_frame fr;
    int len = alk_build_write_torque(d->tx, sizeof d->tx, next_seq(d), ua, d->board_channels);
    if (exchange(d, len, ALK_CMD_WRITE_TORQUE, &fr, ALK_HEADER_LEN + 6 + ALK_CRC_LEN, f) < 0)
        return -1;
    alk_reply_head h;
    if (alk_parse_reply_head(&fr, &h) != ALK_OK) {
        drv_count(d, DRV_ELENGTH);
        return drv_fail(f, DRV_ELENGTH, -1, "armlink: short acknowledgement");
    }
    (void)unwrap_time(d, h.time_us);
    return check_flags(d, h.flags, f);
}

/* A command whose reply is a bare acknowledgement. */
static int simple(drv *d, int len, uint8_t cmd, drv_fault *f)
{
    alk_frame fr;
    if (exchange(d, len, cmd, &fr, ALK_HEADER_LEN + 6 + ALK_CRC_LEN, f) < 0) return -1;
    alk_reply_head h;
    if (alk_parse_reply_head(&fr, &h) != ALK_OK) {
        drv_count(d, DRV_ELENGTH);
        return drv_fail(f, DRV_ELENGTH, -1, "armlink: short acknowledgement");
    }
    return check_flags(d, h.flags, f);
}

/* IDENTIFY (protocol version, channel count vs. the configured channels), DISABLE, set the
 * watchdog, one state read, twin check. */
static int alk_probe(drv *d, drv_fault *f)
{
    alk_frame fr;
    int len = alk_build_identify(d->tx, sizeof d->tx, next_seq(d));
    if (exchange(d, len, ALK_CMD_IDENTIFY, &fr, ALK_HEADER_LEN + 16 + ALK_CRC_LEN, f) < 0) {
        if (f && f->status == DRV_ETIMEOUT)
            drv_fail(f, DRV_EPROBE, -1, "%s: no armlink board answers IDENTIFY", d->cfg.port);
        return -1;
    }
    alk_reply_head h;
    alk_identity id;
    if (alk_parse_identity(&fr, &h, &id) != ALK_OK)
        return drv_fail(f, DRV_EPROBE, -1, "armlink: malformed IDENTIFY reply (%u bytes)", fr.len);
    if (id.protocol != ALK_PROTOCOL_VERSION)
        return drv_fail(f, DRV_EPROBE, -1,
                        "armlink board model %u speaks protocol version %u, armd speaks %d",
                        id.model, id.protocol, ALK_PROTOCOL_VERSION);
    if (id.n_channels < 1 || id.n_channels > ALK_MAX_CHANNELS)
        return drv_fail(f, DRV_EPROBE, -1, "armlink board reports %u channels", id.n_channels);
    for (int i = 0; i < d->n_servos; i++)
        if (d->servo[i].id >= id.n_channels)
            return drv_fail(f, DRV_EPROBE, d->servo[i].id,
                            "joint %s: channel %d, but the board (model %u, firmware %u.%u) has "
                            "channels 0..%u",
                            d->joint[d->servo[i].joint].name, d->servo[i].id, id.model, id.fw_major,
                            id.fw_minor, id.n_channels - 1);
    d->board_channels = id.n_channels;
    int wd = d->cfg.device_watchdog_ms;
    if (wd < 0 || wd > 65535)
        return drv_fail(f, DRV_ECONFIG, -1, "device_watchdog_ms %d out of range 0..65535", wd);
    d->enabled = false;
    if (simple(d, alk_build_disable(d->tx, sizeof d->tx, next_seq(d)), ALK_CMD_DISABLE, f) < 0)
        return -1;
    if (simple(d, alk_build_set_watchdog(d->tx, sizeof d->tx, next_seq(d), (uint16_t)wd),
               ALK_CMD_SET_WATCHDOG, f) < 0)
        return -1;
    drv_state st;
    if (alk_read(d, &st, f) < 0) return -1;
    return drv_check_twins(d, f);
}

/* ENABLE / DISABLE (the board acts on all channels at once). An ENABLE that fails is followed
 * by a DISABLE: its reply may have been lost after the board switched the motors on, and
 * nothing may stay enabled that the driver believes off. */
static int alk_enable(drv *d, bool on, drv_fault *f)
{
    uint8_t seq = next_seq(d);
    int len = on ? alk_build_enable(d->tx, sizeof d->tx, seq)
                 : alk_build_disable(d->tx, sizeof d->tx, seq);
    bool was = d->enabled;
    d->enabled = false; /* a latched watchdog flag is not an error while switching */
    int r = simple(d, len, on ? ALK_CMD_ENABLE : ALK_CMD_DISABLE, f);
    if (on && r != 0) {
        drv_fault ignored;
        (void)simple(d, alk_build_disable(d->tx, sizeof d->tx, next_seq(d)), ALK_CMD_DISABLE,
                     &ignored);
        was = false;
    }
    d->enabled = was;
    return r;
}

/* The fatal-signal frame: DISABLE (all channels at once). Its sequence number is 0, whatever
 * the last one was: the board executes every valid request (drivers/README.md). */
static int alk_build_off_frame(drv *d)
{
    int len = alk_build_disable(d->off_frame, sizeof d->off_frame, 0);
    if (len <= 0) return -1;
    d->off_len = (size_t)len;
    return 0;
}

/* drv_torque_off_each for the board: DISABLE, acknowledged, with the retries in d->cfg. A reply
 * with fault flags confirms it too (the board took the command). */
static int alk_torque_off_each(drv *d, drv_off_report report, void *ctx)
{
    drv_fault f;
    d->enabled = false; /* a latched watchdog flag is not an error here */
    int r = simple(d, alk_build_disable(d->tx, sizeof d->tx, next_seq(d)), ALK_CMD_DISABLE, &f);
    if (r == 0 || f.status == DRV_EALERT) return 0;
    char why[sizeof f.message];
    snprintf(why, sizeof why, "%s", f.message);
    drv_fail(&f, f.status, -1, "armlink board on %s did not acknowledge DISABLE (%d attempts): %s",
             d->cfg.port, d->cfg.retries + 1, why);
    if (report) report(ctx, &f);
    return 1;
}

const drv_ops drv_armlink_ops = {alk_probe, alk_enable,          alk_read,
                                 alk_write, alk_build_off_frame, alk_torque_off_each};
