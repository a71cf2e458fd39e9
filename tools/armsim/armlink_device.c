/*
 * armlink_device.c — the arm's custom motor board as seen over armlink (drivers/README.md,
 * drivers/armlink_codec.h): one board, channels 0..N-1 (N = highest configured channel + 1),
 * IDENTIFY, ENABLE, DISABLE, READ_STATE, WRITE_TORQUE, SET_WATCHDOG; every reply carries the
 * device timestamp (the simulated time of the latest physics step, us) and the status flags.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/drivers.h"
#include "tools/armsim/device.h"

#define BOARD_MODEL    0x0A51 /* armsim's board model number */
#define BOARD_FW_MAJOR 1
#define BOARD_FW_MINOR 0

typedef struct {
    int joint, k; /* -1 when no joint uses the channel */
    int32_t current_ua;
    double limit_ua; /* |current| clamp: the joint's torque limit, or --current-limit */
} channel;

typedef struct {
    device_env env;
    int n_ch;
    channel ch[ALK_MAX_CHANNELS];
    bool enabled, fault, wd_expired, clamped;
    bool braked; /* the physics' brake (--brake) is engaged: the motors are not driven */
    uint16_t watchdog_ms;
    uint64_t last_frame_ns;
    alk_framer framer;
    uint8_t out[ALK_MAX_FRAME];
    alk_state state;
} alk_dev;

/* Motors energised: enabled and neither a fault nor the watchdog holding them off. */
static bool driving(const alk_dev *d)
{
    return d->enabled && !d->fault && !d->wd_expired;
}

/* Hands every channel's current [uA] to the physics as its joint torque share, and whether the
 * motors are driven to its brake (--brake: engaged while they are not). */
static void push_commands(alk_dev *d)
{
    uint64_t expiry = d->watchdog_ms ? d->last_frame_ns + (uint64_t)d->watchdog_ms * 1000000ull : 0;
    for (int c = 0; c < d->n_ch; c++) {
        const channel *ch = &d->ch[c];
        if (ch->joint < 0) continue;
        const cfg_joint *cj = &d->env.cfg->joint[ch->joint];
        double tau = units_amps_to_tau(cj, ch->k, ch->current_ua * 1e-6);
        physics_command(d->env.phys, ch->joint, ch->k, tau, driving(d), expiry);
    }
    bool braked = !driving(d);
    if (braked != d->braked) physics_brake(d->env.phys, braked);
    d->braked = braked;
}

/* Watchdog expiry and the scheduled alert at now_ns. */
static void housekeeping(alk_dev *d, uint64_t now_ns)
{
    if (d->watchdog_ms && d->enabled && !d->wd_expired &&
        now_ns >= d->last_frame_ns + (uint64_t)d->watchdog_ms * 1000000ull) {
        d->wd_expired = true;
        for (int c = 0; c < d->n_ch; c++) d->ch[c].current_ua = 0;
        push_commands(d);
    }
    if (faults_alert_due(d->env.faults, now_ns)) {
        d->fault = true;
        push_commands(d);
    }
}

/* Reply header: device time [us] = simulated time of st, and the flags. */
static alk_reply_head head_of(const alk_dev *d, const physics_state *st)
{
    alk_reply_head h;
    h.time_us = (uint32_t)(uint64_t)llround(st->t * 1e6);
    h.flags = 0;
    if (driving(d)) h.flags |= ALK_FLAG_ENABLED;
    if (d->fault) h.flags |= ALK_FLAG_FAULT | ALK_FLAG_OVER_CURRENT;
    if (d->wd_expired) h.flags |= ALK_FLAG_WATCHDOG_EXPIRED;
    if (d->clamped) h.flags |= ALK_FLAG_CURRENT_CLAMPED;
    return h;
}

/* Fills the READ_STATE payload: per channel counts, milli-rpm and microamperes. */
static void fill_state(alk_dev *d, const physics_state *st)
{
    d->state.head = head_of(d, st);
    d->state.n = d->n_ch;
    for (int c = 0; c < d->n_ch; c++) {
        const channel *ch = &d->ch[c];
        alk_channel_state *o = &d->state.ch[c];
        memset(o, 0, sizeof *o);
        if (ch->joint < 0) continue;
        const cfg_joint *cj = &d->env.cfg->joint[ch->joint];
        int nid = cj->n_ids > 0 ? cj->n_ids : 1;
        o->position = units_q_to_counts(cj, ch->k, st->q[ch->joint]);
        if (d->env.opt->noise_counts > 0.0)
            o->position +=
                (int32_t)nearbyint(d->env.opt->noise_counts * faults_gauss(d->env.faults));
        double mrpm = nearbyint(units_qd_to_rpm(cj, ch->k, st->qd[ch->joint]) * 1000.0);
        o->velocity = (int32_t)fmax(-2147483648.0, fmin(2147483647.0, mrpm));
        /* this channel's current: inverse of its share tau_k = dir * torque_per_amp * amps */
        double ua = units_tau_to_amps(cj, ch->k, st->tau_act[ch->joint][ch->k] * nid) * 1e6;
        o->current_ua = (int32_t)fmax(-2147483648.0, fmin(2147483647.0, nearbyint(ua)));
    }
}

/* Sends a reply frame (wrong-ID fault: armlink has no device ID, so the SEQ is wrong). */
static void send(alk_dev *d, int len)
{
    if (len <= 0) return;
    if (faults_wrong_id_reply(d->env.faults)) {
        alk_frame f;
        if (alk_decode(d->out, (size_t)len, &f) == ALK_OK) {
            uint8_t payload[ALK_MAX_PAYLOAD];
            memcpy(payload, f.payload, f.len);
            len = alk_encode(d->out, sizeof d->out, (uint8_t)(f.seq + 1), f.cmd, payload, f.len);
            if (len <= 0) return;
        }
    }
    device_reply(&d->env, d->out, (size_t)len, (size_t)len - 1, 0);
}

static int nak(alk_dev *d, const alk_frame *f, const physics_state *st, uint8_t code)
{
    alk_reply_head h = head_of(d, st);
    return alk_build_nak(d->out, sizeof d->out, f->seq, &h, code, f->cmd);
}

/* One request frame. */
static void handle_frame(alk_dev *d, const alk_frame *f, uint64_t now_ns)
{
    if (f->cmd & ALK_REPLY) return; /* a reply (echo): not for us */
    housekeeping(d, now_ns);
    d->last_frame_ns = now_ns;
    physics_state st;
    physics_snapshot(d->env.phys, &st);
    int len;
    alk_reply_head h;
    switch (f->cmd) {
    case ALK_CMD_IDENTIFY: {
        if (f->len != 0) {
            len = nak(d, f, &st, ALK_NAK_BAD_LENGTH);
            break;
        }
        alk_identity id = {
            BOARD_MODEL,          BOARD_FW_MAJOR,
            BOARD_FW_MINOR,       (uint8_t)d->n_ch,
            ALK_PROTOCOL_VERSION, (uint32_t)(0x41530000u | (d->env.opt->seed & 0xFFFF))};
        h = head_of(d, &st);
        len = alk_build_identity(d->out, sizeof d->out, f->seq, &h, &id);
        break;
    }
    case ALK_CMD_ENABLE:
        if (f->len != 0) {
            len = nak(d, f, &st, ALK_NAK_BAD_LENGTH);
        } else if (d->fault) {
            len = nak(d, f, &st, ALK_NAK_FAULT_ACTIVE);
        } else {
            d->enabled = true;
            d->wd_expired = false;
            for (int c = 0; c < d->n_ch; c++) d->ch[c].current_ua = 0;
            push_commands(d);
            h = head_of(d, &st);
            len = alk_build_ack(d->out, sizeof d->out, f->seq, f->cmd, &h);
        }
        break;
    case ALK_CMD_DISABLE:
        if (f->len != 0) {
            len = nak(d, f, &st, ALK_NAK_BAD_LENGTH);
            break;
        }
        d->enabled = false;
        for (int c = 0; c < d->n_ch; c++) d->ch[c].current_ua = 0;
        push_commands(d);
        h = head_of(d, &st);
        len = alk_build_ack(d->out, sizeof d->out, f->seq, f->cmd, &h);
        break;
    case ALK_CMD_READ_STATE:
        if (f->len != 0) {
            len = nak(d, f, &st, ALK_NAK_BAD_LENGTH);
            break;
        }
        push_commands(d); /* re-arms the watchdog expiry */
        fill_state(d, &st);
        len = alk_build_state(d->out, sizeof d->out, f->seq, &d->state);
        break;
    case ALK_CMD_WRITE_TORQUE: {
        int32_t ua[ALK_MAX_CHANNELS];
        int n = 0;
        if (alk_parse_write_torque(f, ua, ALK_MAX_CHANNELS, &n) != ALK_OK) {
            len = nak(d, f, &st, ALK_NAK_BAD_LENGTH);
        } else if (n != d->n_ch) {
            len = nak(d, f, &st, ALK_NAK_BAD_CHANNELS);
        } else if (!driving(d)) {
            push_commands(d);
            len = nak(d, f, &st, ALK_NAK_NOT_ENABLED);
        } else {
            d->clamped = false;
            for (int c = 0; c < n; c++) {
                double v = ua[c];
                if (fabs(v) > d->ch[c].limit_ua) {
                    v = copysign(d->ch[c].limit_ua, v);
                    d->clamped = true;
                }
                d->ch[c].current_ua = (int32_t)v;
            }
            push_commands(d);
            h = head_of(d, &st);
            len = alk_build_ack(d->out, sizeof d->out, f->seq, f->cmd, &h);
        }
        break;
    }
    case ALK_CMD_SET_WATCHDOG: {
        uint16_t ms;
        if (alk_parse_set_watchdog(f, &ms) != ALK_OK) {
            len = nak(d, f, &st, ALK_NAK_BAD_LENGTH);
            break;
        }
        d->watchdog_ms = ms;
        push_commands(d);
        h = head_of(d, &st);
        len = alk_build_ack(d->out, sizeof d->out, f->seq, f->cmd, &h);
        break;
    }
    default:
        len = nak(d, f, &st, ALK_NAK_UNKNOWN_COMMAND);
        break;
    }
    send(d, len);
}

static void alk_feed(void *self, const uint8_t *data, size_t n, uint64_t now_ns)
{
    alk_dev *d = self;
    while (n > 0) {
        size_t used = alk_framer_push(&d->framer, data, n);
        data += used;
        n -= used;
        alk_frame f;
        int r;
        while ((r = alk_framer_next(&d->framer, &f)) != ALK_NEED_MORE)
            if (r == ALK_OK) handle_frame(d, &f, now_ns);
        if (used == 0 && n > 0) alk_framer_reset(&d->framer); /* never spin */
    }
}

static void alk_tick(void *self, uint64_t now_ns)
{
    housekeeping(self, now_ns);
}

static void alk_destroy(void *self)
{
    free(self);
}

int armlink_device_create(const device_env *env, sim_device *out, char *err, size_t errlen)
{
    alk_dev *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->env = *env;
    d->braked = true; /* the board starts disabled, the brake engaged */
    for (int c = 0; c < ALK_MAX_CHANNELS; c++) d->ch[c].joint = d->ch[c].k = -1;
    const armd_config *cfg = env->cfg;
    if (cfg->tool.present || env->opt->object.on || env->opt->silent_id >= 0) {
        snprintf(err, errlen, "%s",
                 cfg->tool.present ? "[tool]: a tool servo needs the dxl2 protocol; the armlink "
                                     "board drives joints only"
                 : env->opt->object.on ? "--object: the armlink board has no tool servo to hold "
                                         "it (drop --object)"
                                       : "--silent-id: the armlink board answers as one device "
                                         "(use --silent-after alone)");
        free(d);
        return -1;
    }
    for (int j = 0; j < cfg->n_joints; j++)
        for (int k = 0; k < cfg->joint[j].n_ids; k++) {
            int c = cfg->joint[j].id[k];
            if (c < 0 || c >= ALK_MAX_CHANNELS || d->ch[c].joint >= 0) {
                snprintf(err, errlen, "[joint %s] id %d: not a usable, unique armlink channel",
                         cfg->joint[j].name, c);
                free(d);
                return -1;
            }
            d->ch[c].joint = j;
            d->ch[c].k = k;
            const cfg_joint *cj = &cfg->joint[j];
            double lim = cj->torque > 0 && isfinite(cj->torque) ? cj->torque : 1e3;
            d->ch[c].limit_ua = fmin(2e9, fabs(units_tau_to_amps(cj, k, lim)) * 1e6);
            if (env->opt->current_limit_a >= 0) d->ch[c].limit_ua = env->opt->current_limit_a * 1e6;
            if (c + 1 > d->n_ch) d->n_ch = c + 1;
        }
    alk_framer_reset(&d->framer);
    d->last_frame_ns = env->faults->start_ns;
    out->self = d;
    out->feed = alk_feed;
    out->tick = alk_tick;
    out->destroy = alk_destroy;
    snprintf(out->summary, sizeof out->summary, "armlink, %d channel%s", d->n_ch,
             d->n_ch == 1 ? "" : "s");
    return 0;
}
