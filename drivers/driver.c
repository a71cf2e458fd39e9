/*
 * driver.c — the driver interface (drivers.h): checks the config's device mapping, opens the
 * port (or a caller's drv_link), dispatches to the protocol (dxl2.c, armlink.c), and the joint <->
 * servo conversions both protocols share.
 */
#include "drivers/driver_impl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *drv_status_name(drv_status s)
{
    switch (s) {
    case DRV_OK:
        return "ok";
    case DRV_ETIMEOUT:
        return "timeout";
    case DRV_ECRC:
        return "crc";
    case DRV_EID:
        return "unexpected id";
    case DRV_ELENGTH:
        return "length";
    case DRV_EDEVICE:
        return "device error";
    case DRV_EALERT:
        return "hardware alert";
    case DRV_EIO:
        return "io";
    case DRV_EPROBE:
        return "probe";
    case DRV_ECONFIG:
        return "config";
    case DRV_EBUSY:
        return "port busy";
    }
    return "unknown";
}

int drv_fail(drv_fault *f, drv_status s, int device_id, const char *fmt, ...)
{
    if (!f) return -1;
    f->status = s;
    f->device_id = device_id;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* Clears *f to "no fault". */
static void fault_clear(drv_fault *f)
{
    if (!f) return;
    f->status = DRV_OK;
    f->device_id = -1;
    f->message[0] = '\0';
}

void drv_count(drv *d, drv_status s)
{
    drv_counters *c = &d->counters;
    switch (s) {
    case DRV_ETIMEOUT:
        c->timeouts++;
        break;
    case DRV_ECRC:
        c->crc_errors++;
        break;
    case DRV_EID:
        c->id_errors++;
        break;
    case DRV_ELENGTH:
        c->length_errors++;
        break;
    case DRV_EDEVICE:
        c->device_errors++;
        break;
    case DRV_EALERT:
        c->alerts++;
        break;
    case DRV_EIO:
        c->io_errors++;
        break;
    default:
        break;
    }
}

/* A call's result r: on success *f says DRV_OK, not the fault of an attempt that a retry
 * (or a valid reply after a corrupt frame) overcame. */
static int outcome(int r, drv_fault *f)
{
    if (r == 0) fault_clear(f);
    return r;
}

/* Checks one joint's device mapping for the protocol; returns -1 with a DRV_ECONFIG fault. */
static int check_joint(const armd_config *cfg, int j, drv_fault *f)
{
    const cfg_joint *J = &cfg->joint[j];
    bool dxl = cfg->driver.type == DRIVER_DXL2;
    int max_id = dxl ? DXL2_MAX_ID : ALK_MAX_CHANNELS - 1;
    if (J->n_ids < 1 || J->n_ids > CFG_MAX_IDS)
        return drv_fail(f, DRV_ECONFIG, -1, "joint %s: %d servo IDs (1..%d allowed)", J->name,
                        J->n_ids, CFG_MAX_IDS);
    for (int k = 0; k < J->n_ids; k++) {
        if (J->id[k] < 0 || J->id[k] > max_id)
            return drv_fail(f, DRV_ECONFIG, J->id[k], "joint %s: %s %d out of range 0..%d", J->name,
                            dxl ? "servo ID" : "channel", J->id[k], max_id);
        if (J->direction[k] != 1 && J->direction[k] != -1)
            return drv_fail(f, DRV_ECONFIG, J->id[k], "joint %s: direction %d (must be +1 or -1)",
                            J->name, J->direction[k]);
        if (!isfinite(J->zero_offset[k]))
            return drv_fail(f, DRV_ECONFIG, J->id[k], "joint %s: zero_offset not finite", J->name);
    }
    if (!(J->counts_per_rev > 0) || !isfinite(J->counts_per_rev))
        return drv_fail(f, DRV_ECONFIG, -1, "joint %s: counts_per_rev must be > 0", J->name);
    if (dxl && J->counts_per_rev != DXL2_COUNTS_PER_REV)
        return drv_fail(f, DRV_ECONFIG, -1,
                        "joint %s: counts_per_rev %g, but X-series servos count %d per revolution",
                        J->name, J->counts_per_rev, DXL2_COUNTS_PER_REV);
    if (!isfinite(J->gear_ratio) || J->gear_ratio == 0)
        return drv_fail(f, DRV_ECONFIG, -1, "joint %s: gear_ratio must be finite and non-zero",
                        J->name);
    if (!(J->torque_per_amp > 0) || !isfinite(J->torque_per_amp))
        return drv_fail(f, DRV_ECONFIG, -1, "joint %s: torque_per_amp must be > 0", J->name);
    return 0;
}

/* Builds the servo table (one entry per ID, in config order) and rejects duplicate IDs. */
static int map_servos(drv *d, drv_fault *f)
{
    d->n_servos = 0;
    for (int j = 0; j < d->n_joints; j++) {
        const cfg_joint *J = &d->joint[j];
        for (int k = 0; k < J->n_ids; k++) {
            for (int s = 0; s < d->n_servos; s++)
                if (d->servo[s].id == J->id[k])
                    return drv_fail(f, DRV_ECONFIG, J->id[k],
                                    "joint %s: ID %d already drives joint %s", J->name, J->id[k],
                                    d->joint[d->servo[s].joint].name);
            drv_servo *s = &d->servo[d->n_servos];
            memset(s, 0, sizeof *s);
            s->id = J->id[k];
            s->joint = j;
            s->k = k;
            s->current_limit = INT32_MAX;
            s->limit_amps = INFINITY;
            d->servo_of[j][k] = d->n_servos++;
        }
    }
    return 0;
}

/* Appends the tool servo ([tool NAME]) to the servo table: dxl2 only, its ID not a joint's. */
static int map_tool(drv *d, const cfg_tool *t, drv_fault *f)
{
    d->tool_servo = -1;
    if (!t->present) return 0;
    if (d->cfg.type != DRIVER_DXL2)
        return drv_fail(f, DRV_ECONFIG, t->id, "tool %s: only driver dxl2 drives a tool servo",
                        t->name);
    if (t->id < 0 || t->id > DXL2_MAX_ID)
        return drv_fail(f, DRV_ECONFIG, t->id, "tool %s: servo ID %d out of range 0..%d", t->name,
                        t->id, DXL2_MAX_ID);
    if (!isfinite(t->m_per_rad) || t->m_per_rad == 0 || !(t->counts_per_rev > 0) ||
        !(t->torque_per_amp > 0) || !(t->lower < t->upper) || !(t->velocity > 0) ||
        !(t->max_force > 0) || !isfinite(t->zero_offset) || !isfinite(t->opening_at_zero))
        return drv_fail(f, DRV_ECONFIG, t->id, "tool %s: mapping or limits not usable", t->name);
    for (int s = 0; s < d->n_servos; s++)
        if (d->servo[s].id == t->id)
            return drv_fail(f, DRV_ECONFIG, t->id, "tool %s: ID %d already drives joint %s",
                            t->name, t->id, d->joint[d->servo[s].joint].name);
    drv_servo *s = &d->servo[d->n_servos];
    memset(s, 0, sizeof *s);
    s->id = t->id;
    s->joint = DRV_TOOL_JOINT;
    s->current_limit = INT32_MAX;
    s->limit_amps = INFINITY;
    d->tool = *t;
    d->tool_servo = d->n_servos++;
    return 0;
}

/* The driver for cfg without its port: the config's device mapping checked, the servo table
 * and the torque-off frame built. NULL with *f filled on a fault. */
static drv *drv_create(const armd_config *cfg, drv_fault *f)
{
    fault_clear(f);
    const cfg_driver *dc = &cfg->driver;
    if (cfg->n_joints < 1 || cfg->n_joints > CFG_MAX_JOINTS) {
        drv_fail(f, DRV_ECONFIG, -1, "%d joints (1..%d allowed)", cfg->n_joints, CFG_MAX_JOINTS);
        return NULL;
    }
    if (dc->type != DRIVER_DXL2 && dc->type != DRIVER_ARMLINK) {
        drv_fail(f, DRV_ECONFIG, -1, "unknown driver type %d", (int)dc->type);
        return NULL;
    }
    if (dc->baud <= 0 || dc->timeout_us <= 0 || dc->retries < 0) {
        drv_fail(f, DRV_ECONFIG, -1, "[driver] baud %d, timeout_us %d, retries %d: must be > 0",
                 dc->baud, dc->timeout_us, dc->retries);
        return NULL;
    }
    for (int j = 0; j < cfg->n_joints; j++)
        if (check_joint(cfg, j, f) < 0) return NULL;

    drv *d = calloc(1, sizeof *d);
    if (!d) {
        drv_fail(f, DRV_EIO, -1, "out of memory");
        return NULL;
    }
    d->ops = dc->type == DRIVER_DXL2 ? &drv_dxl2_ops : &drv_armlink_ops;
    d->cfg = *dc;
    d->n_joints = cfg->n_joints;
    memcpy(d->joint, cfg->joint, sizeof(cfg_joint) * (size_t)cfg->n_joints);
    if (map_servos(d, f) < 0 || map_tool(d, &cfg->tool, f) < 0) {
        free(d);
        return NULL;
    }
    if (d->ops->build_off_frame(d) < 0) {
        drv_fail(f, DRV_ECONFIG, -1, "cannot build the torque-off frame for %d devices",
                 d->n_servos);
        free(d);
        return NULL;
    }
    double gap_ns = drv_tick_bus_time_us(cfg) * 1e3;
    d->off_gap_ns = gap_ns < DRV_OFF_GAP_MIN_NS   ? DRV_OFF_GAP_MIN_NS
                    : gap_ns > DRV_OFF_GAP_MAX_NS ? DRV_OFF_GAP_MAX_NS
                                                  : (long)gap_ns;
    dxl2_framer_reset(&d->rx.dxl);
    return d;
}

/* drv_create, then the serial port of the config. */
drv *drv_open(const armd_config *cfg, drv_fault *f)
{
    drv *d = drv_create(cfg, f);
    if (!d) return NULL;
    char err[sizeof f->message];
    d->port = serial_open(cfg->driver.port, cfg->driver.baud, err, sizeof err);
    if (!d->port) {
        drv_fail(f, errno == EBUSY ? DRV_EBUSY : DRV_EIO, -1, "%s", err);
        free(d);
        return NULL;
    }
    return d;
}

/* drv_create, then a port on the caller's link, named after it in messages. */
drv *drv_open_link(const armd_config *cfg, const drv_link *link, drv_fault *f)
{
    drv *d = drv_create(cfg, f);
    if (!d) return NULL;
    char err[sizeof f->message];
    d->port = serial_open_link(link, err, sizeof err);
    if (!d->port) {
        drv_fail(f, DRV_ECONFIG, -1, "%s", err);
        free(d);
        return NULL;
    }
    /* fault messages name the port: here the link */
    snprintf(d->cfg.port, sizeof d->cfg.port, "%s", link->name ? link->name : "link");
    return d;
}

/* The port's clock [ns] (serial_now_ns). */
uint64_t drv_now_ns(const drv *d)
{
    return serial_now_ns(d->port);
}

int drv_probe(drv *d, drv_fault *f)
{
    fault_clear(f);
    /* Probing is not real-time: a device just powered up, a busy host or a USB adapter's
     * latency timer may answer slower than the control loop's deadline, so the probe waits at
     * least DRV_PROBE_TIMEOUT_US per reply and retries at least DRV_PROBE_RETRIES times. */
    cfg_driver tick = d->cfg;
    if (d->cfg.timeout_us < DRV_PROBE_TIMEOUT_US) d->cfg.timeout_us = DRV_PROBE_TIMEOUT_US;
    if (d->cfg.retries < DRV_PROBE_RETRIES) d->cfg.retries = DRV_PROBE_RETRIES;
    int r = d->ops->probe(d, f);
    d->cfg = tick;
    d->probed = r == 0;
    return outcome(r, f);
}

int drv_enable(drv *d, bool on, drv_fault *f)
{
    fault_clear(f);
    if (!d->probed && on)
        return drv_fail(f, DRV_EPROBE, -1, "torque on refused: the devices were not probed");
    /* Torque on is not real-time either: the arm is disabled until it succeeds, and a host or
     * adapter that answers a few ms late must not refuse the enable, so each reply may take
     * DRV_ENABLE_TIMEOUT_US at least. Torque off keeps the loop's deadline: it must be quick. */
    cfg_driver tick = d->cfg;
    if (on && d->cfg.timeout_us < DRV_ENABLE_TIMEOUT_US) d->cfg.timeout_us = DRV_ENABLE_TIMEOUT_US;
    int r = d->ops->enable(d, on, f);
    d->cfg = tick;
    if (r == 0) d->enabled = on;
    if (!on && r != 0) d->enabled = false; /* assume the worst for the next enable */
    return outcome(r, f);
}

int drv_read(drv *d, drv_state *out, drv_fault *f)
{
    fault_clear(f);
    d->counters.reads++;
    if (!d->probed) return drv_fail(f, DRV_EPROBE, -1, "read before a successful probe");
    return outcome(d->ops->read(d, out, f), f);
}

int drv_write(drv *d, const double *tau, drv_fault *f)
{
    fault_clear(f);
    d->counters.writes++;
    if (!d->probed) return drv_fail(f, DRV_EPROBE, -1, "write before a successful probe");
    return outcome(d->ops->write(d, tau, f), f);
}

int drv_tool_set(drv *d, const drv_tool_goal *goal)
{
    if (!d || d->tool_servo < 0 || !goal) return -1;
    if (!isfinite(goal->opening) || !isfinite(goal->speed) || !isfinite(goal->force)) return -1;
    const cfg_tool *t = &d->tool;
    drv_tool_goal g = *goal;
    g.opening = fmin(fmax(g.opening, t->lower), t->upper);
    g.speed = fmin(g.speed, t->velocity);
    if (!(g.speed > 0)) g.speed = t->speed;
    g.force = fmin(fmax(g.force, 0.0), t->max_force);
    drv_tool_goal_block(d, &g, d->tool_goal);
    d->tool_pending = true;
    return 0;
}

void drv_tool_goal_block(const drv *d, const drv_tool_goal *g, uint8_t *out)
{
    const cfg_tool *t = &d->tool;
    const drv_servo *s = &d->servo[d->tool_servo];
    /* Goal Current: the force's current, at least one unit (0 would stop the servo holding),
     * within the servo's Current Limit */
    double raw = fabs(units_force_to_amps(t, g->force)) / DXL2_CURRENT_UNIT_A;
    double lim = s->current_limit < INT16_MAX ? (double)s->current_limit : (double)INT16_MAX;
    raw = fmin(fmax(nearbyint(raw), 1.0), lim);
    /* Profile Velocity [0.229 rpm]: the shaft's speed for the opening speed, at least 1 (0
     * would mean "no limit") */
    double rpm = g->speed / fabs(t->m_per_rad) * 60.0 / (2.0 * M_PI);
    double pv = fmin(fmax(nearbyint(rpm / DXL2_VELOCITY_UNIT_RPM), 1.0), 32767.0);
    memset(out, 0, DXL2_TOOL_GOAL_LEN);
    dxl2_put_u16(out, (uint16_t)(int16_t)raw);
    dxl2_put_u32(out + (DXL2_ADDR_PROFILE_VELOCITY - DXL2_TOOL_GOAL_ADDR), (uint32_t)pv);
    dxl2_put_u32(out + (DXL2_ADDR_GOAL_POSITION - DXL2_TOOL_GOAL_ADDR),
                 (uint32_t)units_opening_to_counts(t, g->opening));
}

const char *drv_servo_owner(const drv *d, const drv_servo *s, char *buf, size_t len)
{
    if (s->joint == DRV_TOOL_JOINT)
        snprintf(buf, len, "tool %s", d->tool.name);
    else
        snprintf(buf, len, "joint %s", d->joint[s->joint].name);
    return buf;
}

int drv_torque_off_each(drv *d, drv_off_report report, void *ctx)
{
    /* not real-time: wait long enough for a slow adapter, but bounded per missing device */
    cfg_driver tick = d->cfg;
    if (d->cfg.timeout_us < DRV_OFF_MIN_TIMEOUT_US) d->cfg.timeout_us = DRV_OFF_MIN_TIMEOUT_US;
    if (d->cfg.timeout_us > DRV_OFF_MAX_TIMEOUT_US) d->cfg.timeout_us = DRV_OFF_MAX_TIMEOUT_US;
    d->cfg.retries = DRV_OFF_ATTEMPTS - 1;
    int missing = d->ops->torque_off_each(d, report, ctx);
    d->cfg = tick;
    d->enabled = false;
    return missing;
}

/* Writes all of buf to fd with write(2) only, riding out EINTR and a full output buffer (at most
 * 1000 x 10 us of waiting). Async-signal-safe. */
static void write_all_raw(int fd, const uint8_t *buf, size_t len)
{
    size_t done = 0;
    for (int tries = 0; done < len && tries < 1000; tries++) {
        ssize_t w = write(fd, buf + done, len - done);
        if (w > 0) {
            done += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct timespec ts = {0, 10000};
            nanosleep(&ts, NULL);
        } else if (!(w < 0 && errno == EINTR)) {
            return; /* the port is gone: nothing more can be done */
        }
    }
}

void drv_torque_off_async(drv *d)
{
    if (!d || !d->port || d->off_len == 0 || serial_fd(d->port) < 0) return; /* a link: none */
    int saved = errno;
    serial_silence(d->port);
    int fd = serial_fd(d->port);
    write_all_raw(fd, d->off_frame, d->off_len);
    struct timespec gap = {0, d->off_gap_ns};
    while (nanosleep(&gap, &gap) < 0 && errno == EINTR) {
    }
    write_all_raw(fd, d->off_frame, d->off_len);
    errno = saved;
}

const drv_counters *drv_counters_get(const drv *d)
{
    return &d->counters;
}

void drv_close(drv *d)
{
    if (!d) return;
    serial_close(d->port);
    free(d);
}

void drv_fill_state(const drv *d, drv_state *out, double amps_per_unit, double rpm_per_unit)
{
    out->n = d->n_joints;
    for (int j = 0; j < d->n_joints; j++) {
        const cfg_joint *J = &d->joint[j];
        const drv_servo *s0 = &d->servo[d->servo_of[j][0]];
        out->q[j] = units_counts_to_q(J, 0, s0->position);
        out->qd[j] = units_rpm_to_qd(J, 0, s0->velocity * rpm_per_unit);
        double tau = 0;
        for (int k = 0; k < J->n_ids; k++)
            tau += units_amps_to_tau(J, k, d->servo[d->servo_of[j][k]].current * amps_per_unit);
        out->tau[j] = tau;
    }
    memset(&out->tool, 0, sizeof out->tool);
    if (d->tool_servo >= 0) {
        const drv_servo *s = &d->servo[d->tool_servo];
        double amps = s->current * amps_per_unit;
        out->tool.present = true;
        out->tool.opening = units_counts_to_opening(&d->tool, s->position);
        out->tool.speed = units_rpm_to_opening_speed(&d->tool, s->velocity * rpm_per_unit);
        out->tool.current = amps;
        out->tool.force = units_amps_to_force(&d->tool, amps);
    }
}

void drv_torques_to_current(drv *d, const double *tau, double amps_per_unit)
{
    for (int i = 0; i < d->n_servos; i++) {
        drv_servo *s = &d->servo[i];
        if (s->joint == DRV_TOOL_JOINT) continue; /* position mode: drv_tool_set */
        const cfg_joint *J = &d->joint[s->joint];
        double raw = units_tau_to_amps(J, s->k, tau[s->joint]) / amps_per_unit;
        double lim = s->current_limit;
        if (!isfinite(tau[s->joint]))
            raw = 0; /* NaN or infinite: no torque */
        else if (!(raw <= lim))
            raw = lim; /* also a finite torque whose conversion overflowed */
        else if (!(raw >= -lim))
            raw = -lim;
        s->current = (int32_t)lround(raw);
    }
}

int drv_check_twins(const drv *d, drv_fault *f)
{
    for (int j = 0; j < d->n_joints; j++) {
        const cfg_joint *J = &d->joint[j];
        const drv_servo *s0 = &d->servo[d->servo_of[j][0]];
        double q0 = units_counts_to_q(J, 0, s0->position);
        for (int k = 1; k < J->n_ids; k++) {
            const drv_servo *sk = &d->servo[d->servo_of[j][k]];
            double qk = units_counts_to_q(J, k, sk->position);
            if (fabs(qk - q0) > DRV_TWIN_TOLERANCE)
                return drv_fail(f, DRV_EPROBE, sk->id,
                                "joint %s: twin servos disagree: ID %d says %.4f, ID %d says %.4f "
                                "(check zero_offset and direction)",
                                J->name, s0->id, q0, sk->id, qk);
        }
    }
    return 0;
}

/* The largest |joint torque| [N m|N] joint j's servos can deliver together at their current
 * limits (shared equally, as drv_write splits it): n_ids * min_k |units_amps_to_tau(limit_k)|.
 * INFINITY when the devices report no limit. The limits are read at probe and never change
 * afterwards, so any thread may ask while the control thread drives the arm. */
double drv_torque_capacity(const drv *d, int joint)
{
    const cfg_joint *J = &d->joint[joint];
    double cap = INFINITY;
    for (int k = 0; k < J->n_ids; k++) {
        const drv_servo *s = &d->servo[d->servo_of[joint][k]];
        if (isfinite(s->limit_amps))
            cap = fmin(cap, J->n_ids * fabs(units_amps_to_tau(J, k, s->limit_amps)));
    }
    return cap;
}
