/*
 * dxl2_device.c — the Dynamixel X-series servos of the arm as seen on a Protocol 2.0 bus
 * (ROBOTIS e-Manual: emanual.robotis.com/docs/en/dxl/protocol2/ and the control tables of
 * /docs/en/dxl/x/xm430-w350/ and /docs/en/dxl/x/xm540-w270/): one servo per configured ID,
 * each with a control table; Ping, Read, Write, Sync Read, Fast Sync Read, Sync Write and
 * Bulk Write and Reboot; status packets after the Return Delay Time, per servo in the order of
 * the request; Status Return Level; Bus Watchdog; the hardware alert. Current-control mode
 * (Operating Mode 0) drives the simulated joints.
 * The servos are sized for the configured arm: Current Limit (38) covers each joint's torque
 * limit unless --current-limit sets it; Goal Current beyond it is refused (data limit error).
 * With a [tool NAME] section one more servo plays the tool at its ID: an XM430-W350 (model 1020,
 * factory Current Limit 1193, Velocity Limit 200) whose current-based position control
 * (Operating Mode 5) moves the fingers of gripper.h, starting open (the stroke's upper end).
 * --silent-id cuts one servo off the line (faults.h): it neither hears nor answers, and its Bus
 * Watchdog runs out as a real one's would.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/drivers.h"
#include "tools/armsim/device.h"
#include "tools/armsim/gripper.h"

#define TABLE_SIZE          256 /* addresses 0..255 (the indirect area beyond is not simulated) */
#define FW_VERSION          48
#define SHUTDOWN_DEFAULT    0x34    /* overheating, electrical shock, overload */
#define ADDR_VELOCITY_LIMIT 44      /* 4 B, unit 0.229 rpm (EEPROM) */
#define TOOL_VELOCITY_LIMIT 200     /* XM430-W350's factory Velocity Limit: 45.8 rpm */
#define EXTENDED_POSITION   1048575 /* |Goal Position| at most this in modes 4, 5 (256 rev) */
#define MAX_SERVOS          (CFG_MAX_JOINTS * CFG_MAX_IDS + 1) /* the joints' and the tool's */

typedef struct {
    uint8_t id;
    int joint, k; /* servo k of joint `joint`; joint -1: the tool servo */
    uint8_t t[TABLE_SIZE];
    uint64_t last_packet_ns;
} servo;

typedef struct {
    device_env env;
    int n;
    servo s[MAX_SERVOS];
    int tool;        /* the tool servo's index in s, -1 without [tool] */
    gripper grip;    /* its fingers */
    uint64_t now_ns; /* the time of the request or housekeeping being handled [ns] */
    dxl2_framer framer;
    uint8_t out[DXL2_MAX_PACKET];
    bool mode_warned, tool_mode_warned;
    bool joints_on; /* some joint's servo has its torque on: --brake released */
} dxl2_dev;

/* ------------------------------------------------------------------- control table access */
static int16_t get_i16(const servo *s, int a)
{
    return (int16_t)dxl2_get_u16(s->t + a);
}
static int8_t get_i8(const servo *s, int a)
{
    return (int8_t)s->t[a];
}

/* Baud Rate register value for a baud in bit/s (3 = 1 Mbps when unknown). */
static uint8_t baud_code(int baud)
{
    static const int rates[] = {9600, 57600, 115200, 1000000, 2000000, 3000000, 4000000, 4500000};
    for (uint8_t i = 0; i < 8; i++)
        if (rates[i] == baud) return i;
    return 3;
}

/* Factory state of the control table (RAM part also restored by Reboot). */
static void table_init(servo *s, int model, int baud)
{
    memset(s->t, 0, sizeof s->t);
    dxl2_put_u16(s->t + DXL2_ADDR_MODEL_NUMBER, (uint16_t)model);
    s->t[DXL2_ADDR_FIRMWARE_VERSION] = FW_VERSION;
    s->t[DXL2_ADDR_ID] = s->id;
    s->t[DXL2_ADDR_BAUD_RATE] = baud_code(baud);
    s->t[DXL2_ADDR_RETURN_DELAY] = 250;
    s->t[DXL2_ADDR_OPERATING_MODE] = 3; /* position control, the factory default */
    s->t[13] = 2;                       /* protocol type */
    bool xm540 = model >= DXL2_MODEL_XH540_W270 && model <= DXL2_MODEL_XM540_W150;
    dxl2_put_u16(s->t + DXL2_ADDR_CURRENT_LIMIT, xm540 ? 2047 : 1193);
    s->t[63] = SHUTDOWN_DEFAULT;
    s->t[DXL2_ADDR_STATUS_RETURN] = 2;
}

/* Current Limit (38) [2.69 mA] of servo k of joint cj: --current-limit if given, else the
 * model's factory value or, if larger, what the joint's torque limit needs per servo
 * (|tau_max| / (n_ids * torque_per_amp), rounded up to the unit), at most 32767. */
static uint16_t sized_current_limit(const armsim_options *opt, const cfg_joint *cj, int k,
                                    uint16_t factory)
{
    if (opt->current_limit_a >= 0)
        return (uint16_t)fmin(32767.0, nearbyint(opt->current_limit_a / DXL2_CURRENT_UNIT_A));
    double need = fabs(units_tau_to_amps(cj, k, cj->torque)) / DXL2_CURRENT_UNIT_A;
    if (!isfinite(need)) need = 32767.0;
    return (uint16_t)fmax(factory, fmin(32767.0, ceil(need)));
}

/* Reboot: RAM back to defaults, EEPROM kept. */
static void table_reboot(servo *s)
{
    memset(s->t + 64, 0, TABLE_SIZE - 64);
    s->t[DXL2_ADDR_STATUS_RETURN] = 2;
}

/* The Operating Mode simulated for servo s: current control (0) for a joint's, current-based
 * position control (5) for the tool's. */
static uint8_t simulated_mode(const servo *s)
{
    return s->joint < 0 ? DXL2_OPERATING_MODE_CURRENT_POSITION : DXL2_OPERATING_MODE_CURRENT;
}

/* True while the servo drives its joint (or the fingers) as commanded. */
static bool servo_active(const servo *s)
{
    return s->t[DXL2_ADDR_TORQUE_ENABLE] == 1 &&
           s->t[DXL2_ADDR_OPERATING_MODE] == simulated_mode(s) &&
           s->t[DXL2_ADDR_HW_ERROR_STATUS] == 0 && get_i8(s, DXL2_ADDR_BUS_WATCHDOG) >= 0;
}

/* Goal Current [2.69 mA] within +-Current Limit: the servo never drives more (writes beyond it
 * are refused; this also covers a goal left over from before the limit was lowered). */
static int goal_current(const servo *s)
{
    int lim = dxl2_get_u16(s->t + DXL2_ADDR_CURRENT_LIMIT);
    int goal = get_i16(s, DXL2_ADDR_GOAL_CURRENT);
    return goal > lim ? lim : goal < -lim ? -lim : goal;
}

/* When servo s's Bus Watchdog runs out if nothing more reaches it [ns], 0 = never. */
static uint64_t watchdog_expiry(const servo *s)
{
    int8_t wd = get_i8(s, DXL2_ADDR_BUS_WATCHDOG);
    return wd > 0 ? s->last_packet_ns + (uint64_t)wd * DXL2_BUS_WATCHDOG_UNIT_MS * 1000000ull : 0;
}

/* Says once per kind of servo (joint, tool) that torque went on in a mode not simulated. */
static void warn_mode(dxl2_dev *d, const servo *s)
{
    bool tool = s->joint < 0;
    bool *warned = tool ? &d->tool_mode_warned : &d->mode_warned;
    if (*warned || !s->t[DXL2_ADDR_TORQUE_ENABLE] ||
        s->t[DXL2_ADDR_OPERATING_MODE] == simulated_mode(s))
        return;
    fprintf(stderr, "armsim: servo %d: torque on in operating mode %d; only %s is simulated, %s\n",
            s->id, s->t[DXL2_ADDR_OPERATING_MODE],
            tool ? "current-based position control (5) of the tool servo" : "current control (0)",
            tool ? "the fingers stay still" : "the joint stays limp");
    *warned = true;
}

/* Hands the tool servo's goal to the gripper in SI: Goal Position [counts] -> opening, Profile
 * Velocity [0.229 rpm] (0 or beyond Velocity Limit (44): that limit) -> opening speed, Goal
 * Current [2.69 mA] -> force. new_goal: Goal Position was written (the profile restarts). */
static void push_tool_command(dxl2_dev *d, servo *s, bool new_goal)
{
    const cfg_tool *t = &d->env.cfg->tool;
    warn_mode(d, s);
    uint32_t vlim = dxl2_get_u32(s->t + ADDR_VELOCITY_LIMIT);
    uint32_t profile = dxl2_get_u32(s->t + DXL2_ADDR_PROFILE_VELOCITY);
    if (profile == 0 || profile > vlim) profile = vlim;
    gripper_cmd c = {
        .active = servo_active(s),
        .goal = units_counts_to_opening(t, (int32_t)dxl2_get_u32(s->t + DXL2_ADDR_GOAL_POSITION)),
        .speed = fabs(units_rpm_to_opening_speed(t, profile * DXL2_VELOCITY_UNIT_RPM)),
        .max_speed = fabs(units_rpm_to_opening_speed(t, vlim * DXL2_VELOCITY_UNIT_RPM)),
        .force = fabs(units_amps_to_force(t, goal_current(s) * DXL2_CURRENT_UNIT_A)),
        .expiry_ns = watchdog_expiry(s),
    };
    gripper_command(&d->grip, &c, new_goal);
}

/* Tells the physics when the joints' torque goes all off or one on (the brake of --brake): on
 * is Torque Enable 1 with the Bus Watchdog not run out; the tool servo is not a joint. */
static void update_brake(dxl2_dev *d)
{
    bool on = false;
    for (int i = 0; i < d->n; i++)
        on |= d->s[i].joint >= 0 && d->s[i].t[DXL2_ADDR_TORQUE_ENABLE] == 1 &&
              get_i8(&d->s[i], DXL2_ADDR_BUS_WATCHDOG) >= 0;
    if (on != d->joints_on) physics_brake(d->env.phys, !on);
    d->joints_on = on;
}

/* Hands servo s's command to the physics: Goal Current [2.69 mA] -> joint torque share, and the
 * joints' torque state to the brake (the tool servo's to the gripper). */
static void push_command(dxl2_dev *d, servo *s)
{
    if (s->joint < 0) {
        push_tool_command(d, s, false);
        return;
    }
    const cfg_joint *cj = &d->env.cfg->joint[s->joint];
    double tau = units_amps_to_tau(cj, s->k, goal_current(s) * DXL2_CURRENT_UNIT_A);
    warn_mode(d, s);
    physics_command(d->env.phys, s->joint, s->k, tau, servo_active(s), watchdog_expiry(s));
    update_brake(d);
}

/* Puts Present Current [A], Velocity [rpm] and Position [counts] (+ encoder noise) in servo
 * s's table, in its units, saturated to the registers. */
static void put_present(dxl2_dev *d, servo *s, double amps, double rpm, int32_t pos)
{
    double cur = fmax(-32768.0, fmin(32767.0, nearbyint(amps / DXL2_CURRENT_UNIT_A)));
    dxl2_put_u16(s->t + DXL2_ADDR_PRESENT_CURRENT, (uint16_t)(int16_t)cur);
    double vel = fmax(-2147483648.0, fmin(2147483647.0, nearbyint(rpm / DXL2_VELOCITY_UNIT_RPM)));
    dxl2_put_u32(s->t + DXL2_ADDR_PRESENT_VELOCITY, (uint32_t)(int32_t)vel);
    if (d->env.opt->noise_counts > 0.0)
        pos += (int32_t)nearbyint(d->env.opt->noise_counts * faults_gauss(d->env.faults));
    dxl2_put_u32(s->t + DXL2_ADDR_PRESENT_POSITION, (uint32_t)pos);
}

/* The tool servo's present values from the gripper: the motor's current for its force, the
 * shaft's rate (opening rate / m_per_rad), the shaft's position. */
static void refresh_tool(dxl2_dev *d, servo *s)
{
    const cfg_tool *t = &d->env.cfg->tool;
    const gripper *g = &d->grip;
    double amps = units_force_to_amps(t, gripper_closing_force(g));
    double rpm = g->rate / t->m_per_rad * 60.0 / (2.0 * M_PI);
    put_present(d, s, amps, rpm, units_opening_to_counts(t, g->x));
}

/* Present Current / Velocity / Position from the simulated state (+ encoder noise). */
static void refresh_present(dxl2_dev *d, const physics_state *st)
{
    for (int i = 0; i < d->n; i++) {
        servo *s = &d->s[i];
        if (s->joint < 0) {
            refresh_tool(d, s);
            continue;
        }
        const cfg_joint *cj = &d->env.cfg->joint[s->joint];
        int nid = cj->n_ids > 0 ? cj->n_ids : 1;
        /* this servo's current: the inverse of its share tau_k = dir * torque_per_amp * amps */
        double amps = units_tau_to_amps(cj, s->k, st->tau_act[s->joint][s->k] * nid);
        put_present(d, s, amps, units_qd_to_rpm(cj, s->k, st->qd[s->joint]),
                    units_q_to_counts(cj, s->k, st->q[s->joint]));
    }
}

/* Bus watchdog and scheduled alert, evaluated at now_ns. The watchdog watches only while the
 * torque is on (e-Manual, Bus Watchdog (98): "monitors the communication interval ... when
 * Torque Enable(64) is '1'"); its error makes the goal values read-only until 98 is written. */
static void housekeeping(dxl2_dev *d, uint64_t now_ns)
{
    for (int i = 0; i < d->n; i++) {
        servo *s = &d->s[i];
        int8_t wd = get_i8(s, DXL2_ADDR_BUS_WATCHDOG);
        if (wd > 0 && s->t[DXL2_ADDR_TORQUE_ENABLE] == 1 &&
            now_ns >= s->last_packet_ns + (uint64_t)wd * DXL2_BUS_WATCHDOG_UNIT_MS * 1000000ull) {
            s->t[DXL2_ADDR_BUS_WATCHDOG] = 0xFF; /* -1: Bus Watchdog error, goal values locked */
            dxl2_put_u16(s->t + DXL2_ADDR_GOAL_CURRENT, 0);
            push_command(d, s);
        }
    }
    if (faults_alert_due(d->env.faults, now_ns)) {
        int want = d->env.opt->alert_id;
        for (int i = 0; i < d->n; i++) {
            servo *s = &d->s[i];
            if (want >= 0 ? s->id != want : i != 0) continue;
            s->t[DXL2_ADDR_HW_ERROR_STATUS] |= DXL2_HW_OVERLOAD;
            if (s->t[63] & DXL2_HW_OVERLOAD) s->t[DXL2_ADDR_TORQUE_ENABLE] = 0;
            push_command(d, s);
        }
    }
}

/* ----------------------------------------------------------------------------- writes */
/* Whether addr is read-only in the X-series table. */
static bool read_only(int addr)
{
    return addr < DXL2_ADDR_ID || addr == DXL2_ADDR_HW_ERROR_STATUS || (addr >= 120 && addr < 148);
}

/* Validates and applies a write of len bytes at addr; returns the status error number (0 ok). */
static uint8_t servo_write(dxl2_dev *d, servo *s, uint16_t addr, const uint8_t *data, uint16_t len)
{
    if (len == 0 || (size_t)addr + len > TABLE_SIZE) return DXL2_ERR_DATA_LENGTH;
    for (int a = addr; a < addr + len; a++) {
        if (read_only(a)) return DXL2_ERR_ACCESS;
        if (a < 64 && s->t[DXL2_ADDR_TORQUE_ENABLE]) return DXL2_ERR_ACCESS; /* EEPROM locked */
    }
    uint8_t t[TABLE_SIZE];
    memcpy(t, s->t, sizeof t);
    memcpy(t + addr, data, len);
#define TOUCHES(a, n) ((a) < addr + len && addr < (a) + (n))
    if (TOUCHES(DXL2_ADDR_TORQUE_ENABLE, 1)) {
        if (t[DXL2_ADDR_TORQUE_ENABLE] > 1) return DXL2_ERR_DATA_RANGE;
        if (t[DXL2_ADDR_TORQUE_ENABLE] == 1 && s->t[DXL2_ADDR_HW_ERROR_STATUS])
            return DXL2_ERR_RESULT_FAIL; /* no torque until a reboot clears the error */
    }
    if (TOUCHES(DXL2_ADDR_OPERATING_MODE, 1)) {
        uint8_t m = t[DXL2_ADDR_OPERATING_MODE];
        if (!(m == 0 || m == 1 || m == 3 || m == 4 || m == 5 || m == 16))
            return DXL2_ERR_DATA_RANGE;
    }
    if (TOUCHES(DXL2_ADDR_ID, 1) && t[DXL2_ADDR_ID] > DXL2_MAX_ID) return DXL2_ERR_DATA_RANGE;
    if (TOUCHES(DXL2_ADDR_RETURN_DELAY, 1) && t[DXL2_ADDR_RETURN_DELAY] > 254)
        return DXL2_ERR_DATA_RANGE;
    if (TOUCHES(DXL2_ADDR_STATUS_RETURN, 1) && t[DXL2_ADDR_STATUS_RETURN] > 2)
        return DXL2_ERR_DATA_RANGE;
    if (TOUCHES(DXL2_ADDR_BUS_WATCHDOG, 1) && (int8_t)t[DXL2_ADDR_BUS_WATCHDOG] < 0)
        return DXL2_ERR_DATA_RANGE;
    bool new_goal = TOUCHES(DXL2_ADDR_GOAL_POSITION, 4);
    if ((TOUCHES(DXL2_ADDR_GOAL_CURRENT, 2) || TOUCHES(DXL2_ADDR_GOAL_VELOCITY, 4) || new_goal) &&
        get_i8(s, DXL2_ADDR_BUS_WATCHDOG) < 0 && !TOUCHES(DXL2_ADDR_BUS_WATCHDOG, 1))
        return DXL2_ERR_DATA_RANGE; /* goal values rejected after a watchdog error */
    if (TOUCHES(DXL2_ADDR_GOAL_CURRENT, 2)) {
        int g = (int16_t)dxl2_get_u16(t + DXL2_ADDR_GOAL_CURRENT);
        int lim = dxl2_get_u16(t + DXL2_ADDR_CURRENT_LIMIT);
        if (g > lim || g < -lim) return DXL2_ERR_DATA_LIMIT;
    }
    uint8_t mode = t[DXL2_ADDR_OPERATING_MODE];
    if (new_goal && (mode == 4 || mode == 5)) { /* extended position: +-256 rev */
        int32_t g = (int32_t)dxl2_get_u32(t + DXL2_ADDR_GOAL_POSITION);
        if (g > EXTENDED_POSITION || g < -EXTENDED_POSITION) return DXL2_ERR_DATA_LIMIT;
    }
#undef TOUCHES
    memcpy(s->t, t, sizeof t);
    s->id = s->t[DXL2_ADDR_ID];
    if (s->joint < 0)
        push_tool_command(d, s, new_goal);
    else
        push_command(d, s);
    return 0;
}

/* ---------------------------------------------------------------------------- replies */
/* Error byte of a status packet: the error number plus the alert bit while a hardware error
 * is latched. */
static uint8_t status_error(const servo *s, uint8_t err)
{
    return (uint8_t)(err | (s->t[DXL2_ADDR_HW_ERROR_STATUS] ? DXL2_ERR_ALERT : 0));
}

/* Whether the servo answers an instruction of this kind (Status Return Level). */
static bool answers(const servo *s, uint8_t inst)
{
    uint8_t level = s->t[DXL2_ADDR_STATUS_RETURN];
    if (inst == DXL2_INST_PING) return true;
    if (inst == DXL2_INST_READ || inst == DXL2_INST_SYNC_READ || inst == DXL2_INST_FAST_SYNC_READ)
        return level >= 1;
    return level >= 2;
}

/* Return Delay Time of servo s [us]. */
static long return_delay_us(const servo *s)
{
    return (long)s->t[DXL2_ADDR_RETURN_DELAY] * DXL2_RETURN_DELAY_UNIT_US;
}

/* Sends one status packet from servo s (with the wrong-ID fault applied). */
static void send_status(dxl2_dev *d, const servo *s, uint8_t err, const uint8_t *data, size_t n)
{
    uint8_t id = s->id;
    if (faults_wrong_id_reply(d->env.faults)) id = id >= DXL2_MAX_ID ? 0 : (uint8_t)(id + 1);
    int len = dxl2_build_status(d->out, sizeof d->out, id, status_error(s, err), data, n);
    if (len > 0) device_reply(&d->env, d->out, (size_t)len, (size_t)len - 1, return_delay_us(s));
}

static servo *find(dxl2_dev *d, uint8_t id)
{
    for (int i = 0; i < d->n; i++)
        if (d->s[i].id == id) return &d->s[i];
    return NULL;
}

/* Whether servo s is cut off the line now (--silent-id): it neither hears nor answers. */
static bool deaf(dxl2_dev *d, const servo *s)
{
    return faults_id_silent(d->env.faults, s->id, d->now_ns);
}

/* The servo with this ID that hears the request now, or NULL. */
static servo *hearer(dxl2_dev *d, uint8_t id)
{
    servo *s = find(d, id);
    return s && !deaf(d, s) ? s : NULL;
}

/* Answers Read: data of the table, or an error with no data. */
static void do_read(dxl2_dev *d, servo *s, const dxl2_packet *p)
{
    dxl2_rw_request r;
    if (dxl2_parse_read(p, &r) != DXL2_OK) {
        send_status(d, s, DXL2_ERR_DATA_LENGTH, NULL, 0);
    } else if (r.len == 0 || (size_t)r.addr + r.len > TABLE_SIZE) {
        send_status(d, s, DXL2_ERR_ACCESS, NULL, 0);
    } else {
        send_status(d, s, 0, s->t + r.addr, r.len);
    }
}

/* Sync Read: each addressed servo answers in the order of the ID list. */
static void do_sync_read(dxl2_dev *d, const dxl2_packet *p)
{
    dxl2_sync_request r;
    if (dxl2_parse_sync_read(p, &r) != DXL2_OK) return;
    bool ok = r.len > 0 && (size_t)r.addr + r.len <= TABLE_SIZE;
    for (size_t i = 0; i < r.n_ids; i++) {
        servo *s = hearer(d, r.ids[i]);
        if (!s || !answers(s, p->instruction)) continue;
        if (ok)
            send_status(d, s, 0, s->t + r.addr, r.len);
        else
            send_status(d, s, DXL2_ERR_ACCESS, NULL, 0);
    }
}

/* Fast Sync Read: one combined reply from the addressed servos, in list order. */
static void do_fast_sync_read(dxl2_dev *d, const dxl2_packet *p)
{
    dxl2_sync_request r;
    if (dxl2_parse_sync_read(p, &r) != DXL2_OK) return;
    if (r.len == 0 || (size_t)r.addr + r.len > TABLE_SIZE) return;
    dxl2_fast_entry e[MAX_SERVOS];
    size_t n = 0;
    long delay = 0;
    for (size_t i = 0; i < r.n_ids && n < sizeof e / sizeof e[0]; i++) {
        servo *s = hearer(d, r.ids[i]);
        if (!s || !answers(s, p->instruction)) continue;
        if (n == 0) delay = return_delay_us(s);
        uint8_t id = s->id;
        if (faults_wrong_id_reply(d->env.faults)) id = id >= DXL2_MAX_ID ? 0 : (uint8_t)(id + 1);
        e[n++] = (dxl2_fast_entry){id, status_error(s, 0), s->t + r.addr};
    }
    if (n == 0) return;
    int len = dxl2_build_fast_sync_status(d->out, sizeof d->out, e, n, r.len);
    if (len > 0) device_reply(&d->env, d->out, (size_t)len, (size_t)len - 1, delay);
}

/* Sync Write: every addressed servo applies its record; no replies. */
static void do_sync_write(dxl2_dev *d, const dxl2_packet *p)
{
    dxl2_sync_request r;
    if (dxl2_parse_sync_write(p, &r) != DXL2_OK) return;
    for (int i = 0; i < d->n; i++) {
        const uint8_t *data = dxl2_sync_write_data(&r, d->s[i].id);
        if (data && !deaf(d, &d->s[i])) servo_write(d, &d->s[i], r.addr, data, r.len);
    }
}

/* Bulk Write: every addressed servo applies its own block (its address and length); no
 * replies. A packet whose blocks do not tile its parameters is ignored whole. */
static void do_bulk_write(dxl2_dev *d, const dxl2_packet *p)
{
    for (int i = 0; i < d->n; i++) {
        servo *s = &d->s[i];
        dxl2_bulk_block b;
        if (!deaf(d, s) && dxl2_parse_bulk_write(p, s->id, &b) == DXL2_OK)
            servo_write(d, s, b.addr, b.data, b.len);
    }
}

/* The tool servo's Goal Position where it was switched on: where the fingers are (so that a
 * torque on without a goal written holds them). */
static void tool_goal_here(dxl2_dev *d, servo *s)
{
    int32_t here = units_opening_to_counts(&d->env.cfg->tool, d->grip.x);
    dxl2_put_u32(s->t + DXL2_ADDR_GOAL_POSITION, (uint32_t)here);
}

/* One instruction packet addressed to servo s (unicast) or to all (broadcast). */
static void handle_unicast(dxl2_dev *d, servo *s, const dxl2_packet *p, bool broadcast)
{
    uint8_t err = 0;
    switch (p->instruction) {
    case DXL2_INST_PING: {
        uint8_t data[3] = {s->t[0], s->t[1], s->t[DXL2_ADDR_FIRMWARE_VERSION]};
        send_status(d, s, 0, data, sizeof data);
        return;
    }
    case DXL2_INST_READ:
        if (!broadcast) do_read(d, s, p);
        return;
    case DXL2_INST_WRITE: {
        dxl2_rw_request r;
        err = dxl2_parse_write(p, &r) == DXL2_OK ? servo_write(d, s, r.addr, r.data, r.len)
                                                 : DXL2_ERR_DATA_LENGTH;
        break;
    }
    case DXL2_INST_REBOOT:
        if (!broadcast && answers(s, p->instruction)) send_status(d, s, 0, NULL, 0);
        table_reboot(s);
        if (s->joint < 0) tool_goal_here(d, s);
        push_command(d, s);
        return;
    default:
        err = DXL2_ERR_INSTRUCTION;
        break;
    }
    if (!broadcast && answers(s, p->instruction)) send_status(d, s, err, NULL, 0);
}

/* Dispatches one decoded instruction packet. */
static void handle_packet(dxl2_dev *d, const dxl2_packet *p, uint64_t now_ns)
{
    if (p->instruction == DXL2_INST_STATUS) return; /* another device's reply: ignore */
    d->now_ns = now_ns;
    if (d->tool >= 0) gripper_advance_to(&d->grip, now_ns);
    housekeeping(d, now_ns);
    physics_state st;
    physics_snapshot(d->env.phys, &st);
    refresh_present(d, &st);
    bool bc = p->id == DXL2_BROADCAST_ID;
    for (int i = 0; i < d->n; i++) {
        servo *s = &d->s[i];
        if (!bc && s->id != p->id) continue;
        if (deaf(d, s)) {
            d->env.faults->n_silenced++;
            continue;
        }
        s->last_packet_ns = now_ns;
        push_command(d, s); /* re-arms the watchdog expiry */
    }
    switch (p->instruction) {
    case DXL2_INST_SYNC_READ:
        if (bc) do_sync_read(d, p);
        return;
    case DXL2_INST_FAST_SYNC_READ:
        if (bc) do_fast_sync_read(d, p);
        return;
    case DXL2_INST_SYNC_WRITE:
        if (bc) do_sync_write(d, p);
        return;
    case DXL2_INST_BULK_WRITE:
        if (bc) do_bulk_write(d, p);
        return;
    default:
        break;
    }
    if (bc) {
        /* broadcast Ping is answered by every servo in ID order; other broadcasts silently */
        servo *order[MAX_SERVOS];
        for (int i = 0; i < d->n; i++) order[i] = &d->s[i];
        for (int i = 1; i < d->n; i++)
            for (int j = i; j > 0 && order[j - 1]->id > order[j]->id; j--) {
                servo *tmp = order[j];
                order[j] = order[j - 1];
                order[j - 1] = tmp;
            }
        for (int i = 0; i < d->n; i++)
            if (!deaf(d, order[i]) &&
                (p->instruction == DXL2_INST_PING || p->instruction == DXL2_INST_WRITE ||
                 p->instruction == DXL2_INST_REBOOT))
                handle_unicast(d, order[i], p, true);
        return;
    }
    servo *s = hearer(d, p->id);
    if (s) handle_unicast(d, s, p, false);
}

/* ---------------------------------------------------------------------- device interface */
static void dxl2_feed(void *self, const uint8_t *data, size_t n, uint64_t now_ns)
{
    dxl2_dev *d = self;
    while (n > 0) {
        size_t used = dxl2_framer_push(&d->framer, data, n);
        data += used;
        n -= used;
        dxl2_packet p;
        int r;
        while ((r = dxl2_framer_next(&d->framer, &p)) != DXL2_NEED_MORE)
            if (r == DXL2_OK) handle_packet(d, &p, now_ns);
        if (used == 0 && n > 0) dxl2_framer_reset(&d->framer); /* cannot happen; never spin */
    }
}

static void dxl2_tick(void *self, uint64_t now_ns)
{
    dxl2_dev *d = self;
    d->now_ns = now_ns;
    if (d->tool >= 0) gripper_advance_to(&d->grip, now_ns);
    housekeeping(d, now_ns);
}

static void dxl2_destroy(void *self)
{
    free(self);
}

/* Adds the tool servo of cfg->tool after the joints' (d->n of them): an XM430-W350 at its
 * factory table (Current Limit: --current-limit or 1193), the fingers open at the stroke's upper
 * end, Goal Position there. 0, or -1 with err. */
static int add_tool(dxl2_dev *d, char *err, size_t errlen)
{
    const cfg_tool *t = &d->env.cfg->tool;
    if (t->id < 0 || t->id > DXL2_MAX_ID || find(d, (uint8_t)t->id)) {
        snprintf(err, errlen, "[tool %s] id %d: not a usable Dynamixel ID apart from the joints'",
                 t->name, t->id);
        return -1;
    }
    d->tool = d->n;
    servo *s = &d->s[d->n++];
    s->id = (uint8_t)t->id;
    s->joint = -1;
    table_init(s, DXL2_MODEL_XM430_W350, d->env.cfg->driver.baud);
    if (d->env.opt->current_limit_a >= 0)
        dxl2_put_u16(
            s->t + DXL2_ADDR_CURRENT_LIMIT,
            (uint16_t)fmin(32767.0, nearbyint(d->env.opt->current_limit_a / DXL2_CURRENT_UNIT_A)));
    dxl2_put_u32(s->t + ADDR_VELOCITY_LIMIT, TOOL_VELOCITY_LIMIT);
    gripper_init(&d->grip, t, d->env.opt, t->upper);
    tool_goal_here(d, s);
    refresh_tool(d, s);
    push_tool_command(d, s, false);
    return 0;
}

/* What the options ask of servos that are not there; 0, or -1 with err. */
static int check_options(dxl2_dev *d, char *err, size_t errlen)
{
    const armsim_options *o = d->env.opt;
    if (o->object.on && d->tool < 0) {
        snprintf(err, errlen,
                 "--object: the config has no [tool NAME] section, so no fingers hold the "
                 "object (add one, or drop --object)");
        return -1;
    }
    if (o->silent_id >= 0 && !find(d, (uint8_t)o->silent_id)) {
        snprintf(err, errlen, "--silent-id %d: no servo of the config has that ID", o->silent_id);
        return -1;
    }
    return 0;
}

int dxl2_device_create(const device_env *env, sim_device *out, char *err, size_t errlen)
{
    dxl2_dev *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->env = *env;
    d->tool = -1;
    const armd_config *cfg = env->cfg;
    for (int j = 0; j < cfg->n_joints; j++)
        for (int k = 0; k < cfg->joint[j].n_ids; k++) {
            int id = cfg->joint[j].id[k];
            if (id < 0 || id > DXL2_MAX_ID || find(d, (uint8_t)id)) {
                snprintf(err, errlen, "[joint %s] id %d: not a usable, unique Dynamixel ID",
                         cfg->joint[j].name, id);
                free(d);
                return -1;
            }
            servo *s = &d->s[d->n++];
            s->id = (uint8_t)id;
            s->joint = j;
            s->k = k;
            table_init(s, env->opt->model_number, cfg->driver.baud);
            uint16_t factory = dxl2_get_u16(s->t + DXL2_ADDR_CURRENT_LIMIT);
            dxl2_put_u16(s->t + DXL2_ADDR_CURRENT_LIMIT,
                         sized_current_limit(env->opt, &cfg->joint[j], k, factory));
        }
    int joint_servos = d->n;
    if ((cfg->tool.present && add_tool(d, err, errlen) != 0) ||
        check_options(d, err, errlen) != 0) {
        free(d);
        return -1;
    }
    dxl2_framer_reset(&d->framer);
    out->self = d;
    out->feed = dxl2_feed;
    out->tick = dxl2_tick;
    out->destroy = dxl2_destroy;
    int n = snprintf(out->summary, sizeof out->summary, "dxl2, %d servo%s", joint_servos,
                     joint_servos == 1 ? "" : "s");
    if (d->tool >= 0 && n > 0 && (size_t)n < sizeof out->summary)
        snprintf(out->summary + n, sizeof out->summary - (size_t)n, " + tool servo %d%s",
                 cfg->tool.id, env->opt->object.on ? ", an --object between its fingers" : "");
    return 0;
}
