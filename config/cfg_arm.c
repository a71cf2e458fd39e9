/* cfg_arm.c — the schema of the whole-arm sections: [arm], [driver], [socket], [realtime],
 * [safety] (its scalar keys), [trajectory]; the key tables of every section (the [tool NAME]
 * one is cfg_tool.c's) and the unknown-key pass. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

static const char *const arm_keys[] = {"name",
                                       "rate_hz",
                                       "gravity",
                                       "controller",
                                       "tool_xyz",
                                       "tool_rpy",
                                       "payload_mass",
                                       "payload_com",
                                       "payload_inertia",
                                       "max_payload",
                                       "velocity_source",
                                       "velocity_filter_hz",
                                       "friction_smoothing",
                                       "coulomb_velocity",
                                       "coulomb_width",
                                       "viscous_velocity",
                                       NULL};
static const char *const driver_keys[] = {"type",
                                          "port",
                                          "baud",
                                          "timeout_us",
                                          "retries",
                                          "return_delay_us",
                                          "bus_watchdog_ms",
                                          "fast_sync_read",
                                          "device_watchdog_ms",
                                          "allow_no_watchdog",
                                          NULL};
static const char *const socket_keys[] = {"path",          "mode",         "group", "max_clients",
                                          "stall_timeout", "idle_timeout", NULL};
static const char *const realtime_keys[] = {"priority", "cpu", "lock_memory", NULL};
static const char *const safety_keys[] = {
    "following_error", "max_failed_reads",    "max_read_gap_ms",    "on_fault",
    "damping",         "torque_rate_limit",   "damp_stop_velocity", "damp_timeout",
    "collision",       "collision_reaction",  "collision_filter",   "collision_retract",
    "max_tool_force",  "collision_threshold", "collision_band",     NULL};
static const char *const trajectory_keys[] = {"goal_tolerance",
                                              "settle_time",
                                              "path_tolerance",
                                              "shaper",
                                              "shaper_freq",
                                              "shaper_damping",
                                              "linear_speed",
                                              "linear_acceleration",
                                              "angular_speed",
                                              "angular_acceleration",
                                              NULL};
static const char *const joint_keys[] = {"type",
                                         "dh",
                                         "a",
                                         "alpha",
                                         "d",
                                         "theta",
                                         "origin_xyz",
                                         "origin_rpy",
                                         "axis",
                                         "mass",
                                         "com",
                                         "inertia",
                                         "armature",
                                         "viscous",
                                         "coulomb",
                                         "lower",
                                         "upper",
                                         "velocity",
                                         "acceleration",
                                         "torque",
                                         "kp",
                                         "kd",
                                         "ki",
                                         "i_limit",
                                         "following_error",
                                         "damping",
                                         "torque_rate_limit",
                                         "collision_threshold",
                                         "collision_band",
                                         "id",
                                         "counts_per_rev",
                                         "gear_ratio",
                                         "direction",
                                         "zero_offset",
                                         "torque_per_amp",
                                         "flex_modes",
                                         "flex_length",
                                         "flex_mass",
                                         "flex_ei",
                                         "flex_gj",
                                         "flex_polar",
                                         "flex_damping",
                                         NULL};

const char *const cfg_section_names[] = {"arm",       "driver",     "socket",    "realtime",
                                         "safety",    "trajectory", "impedance", "joint NAME",
                                         "tool NAME", NULL};

/* The keys a (normalised) section accepts. */
const char *const *cfg_known_keys(const char *section)
{
    static const struct {
        const char *name;
        const char *const *keys;
    } t[] = {{"arm", arm_keys},
             {"driver", driver_keys},
             {"socket", socket_keys},
             {"realtime", realtime_keys},
             {"safety", safety_keys},
             {"trajectory", trajectory_keys},
             {"impedance", cfg_impedance_keys}};
    if (strncmp(section, "joint ", 6) == 0) return joint_keys;
    if (strncmp(section, "tool ", 5) == 0) return cfg_tool_keys;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(section, t[i].name) == 0) return t[i].keys;
    return NULL;
}

/* Reports every entry the schema did not read: unknown keys, with a near miss or the section
 * the key belongs to. */
void cfg_check_unknown_keys(cfg_ctx *c)
{
    for (int i = 0; i < c->n_e; i++) {
        cfg_entry *e = &c->e[i];
        if (e->used) continue;
        const char *const *known = cfg_known_keys(e->section);
        if (!known) continue;
        bool is_known = false;
        for (int k = 0; known[k]; k++) is_known |= strcmp(known[k], e->key) == 0;
        if (is_known) continue; /* read conditionally; its section reported why not */
        const char *s = cfg_suggest(e->key, known);
        if (s) {
            cfg_err(c, e->file, e->line, e->section, e->key, "unknown key '%s'; did you mean '%s'?",
                    e->key, s);
            continue;
        }
        const char *home = NULL;
        for (int k = 0; cfg_section_names[k] && !home; k++) {
            const char *const *other = cfg_known_keys(cfg_section_names[k]);
            for (int j = 0; other[j]; j++)
                if (strcmp(other[j], e->key) == 0) home = cfg_section_names[k];
        }
        if (home)
            cfg_err(c, e->file, e->line, e->section, e->key,
                    "unknown key '%s' here; it belongs in [%s]", e->key, home);
        else
            cfg_err(c, e->file, e->line, e->section, e->key, "unknown key '%s'", e->key);
    }
}

#define R(lo, hi) ((cfg_range){(lo), (hi), false, false})
#define R_POS(hi) ((cfg_range){0, (hi), true, false})

/* [arm]: name, rate, gravity, controller, tool, payload, velocity source. */
static void apply_arm(cfg_ctx *c, armd_config *cfg)
{
    static const char *const vsources[] = {"device", "differentiate", NULL};
    const char *s = "arm";
    if (!cfg_section_find(c, s)) {
        cfg_msg_add(c, 0, 0, true, "[arm]: missing section (name, rate_hz, ...)");
        return;
    }
    if (cfg_get_str(c, s, "name", true, cfg->name, sizeof(cfg->name)) &&
        !cfg_valid_name(cfg->name)) {
        cfg_entry *e = cfg_entry_find(c, s, "name");
        cfg_err(c, e->file, e->line, s, "name",
                "'%s' must be 1 to %d letters, digits, '_', '-' or '.'", cfg->name,
                CFG_NAME_MAX - 1);
    }
    bool rate_ok = cfg_get_num(c, s, "rate_hz", true, R(60, 4000), "Hz", &cfg->rate_hz);
    cfg_get_vec(c, s, "gravity", false, 3, R(-100, 100), "m/s^2", cfg->model.gravity);
    int v;
    if (cfg_get_enum(c, s, "controller", false, cfg_controller_names, &v)) cfg->controller = v;
    cfg_get_vec(c, s, "tool_xyz", false, 3, R(-100, 100), "m", cfg->model.tool_xyz);
    cfg_get_vec(c, s, "tool_rpy", false, 3, R(-100, 100), "rad", cfg->model.tool_rpy);
    cfg_get_num(c, s, "payload_mass", false, R(0, 10000), "kg", &cfg->model.payload.mass);
    cfg_get_vec(c, s, "payload_com", false, 3, R(-100, 100), "m", cfg->model.payload.com);
    cfg_get_vec(c, s, "payload_inertia", false, 6, R(-1e4, 1e4), "kg m^2",
                cfg->model.payload.inertia);
    cfg_get_num(c, s, "max_payload", false, R_POS(1e4), "kg", &cfg->max_payload);
    if (cfg_get_enum(c, s, "velocity_source", false, vsources, &v)) cfg->velocity_source = v;
    if (cfg_get_num(c, s, "velocity_filter_hz", false, R(0, 1e6), "Hz", &cfg->velocity_filter_hz) &&
        rate_ok && cfg->velocity_filter_hz >= cfg->rate_hz / 2) {
        cfg_entry *e = cfg_entry_find(c, s, "velocity_filter_hz");
        cfg_err(c, e->file, e->line, s, "velocity_filter_hz",
                "%g Hz must be below half the loop rate (rate_hz / 2 = %g Hz)",
                cfg->velocity_filter_hz, cfg->rate_hz / 2);
    }
    cfg_get_num(c, s, "friction_smoothing", false, R(0, 100), "rad/s",
                &cfg->model.friction_smoothing);
    static const char *const coulomb_sources[] = {"desired", "measured", NULL};
    if (cfg_get_enum(c, s, "coulomb_velocity", false, coulomb_sources, &v))
        cfg->coulomb_velocity = v;
    cfg_get_num(c, s, "coulomb_width", false, R(0, 100), "rad/s", &cfg->coulomb_width);
    static const char *const viscous_sources[] = {"measured", "desired", NULL};
    if (cfg_get_enum(c, s, "viscous_velocity", false, viscous_sources, &v))
        cfg->viscous_velocity = v;
}

/* Marks a protocol-specific key of the other driver type as an error. */
static void wrong_driver_key(cfg_ctx *c, const char *key, const char *owner, const char *type)
{
    cfg_entry *e = cfg_entry_find(c, "driver", key);
    if (!e) return;
    e->used = true;
    cfg_err(c, e->file, e->line, "driver", key, "only for type = %s (this driver is %s)", owner,
            type);
}

/* A device watchdog switched off (key, present in the file, = 0) is an error unless
 * allow_no_watchdog = true says so on purpose, and then a warning: without it nothing stops the
 * motors when the bus goes silent (armd killed, crashed or hung, a cable pulled). */
static void check_watchdog_off(cfg_ctx *c, const cfg_driver *d, const char *key, const char *whose)
{
    cfg_entry *e = cfg_entry_find(c, "driver", key);
    if (d->allow_no_watchdog)
        cfg_warn(c, e->file, e->line, "driver", key,
                 "0 switches %s watchdog off (allowed by allow_no_watchdog): if armd stops "
                 "talking, the last torque stays applied",
                 whose);
    else
        cfg_err(c, e->file, e->line, "driver", key,
                "0 switches %s watchdog off, so a silent bus (armd killed, crashed or hung, a "
                "cable pulled) leaves the last torque applied; set it > 0, or add "
                "allow_no_watchdog = true to [driver] to run without it on purpose",
                whose);
}

/* [driver]: type, port, baud and the protocol's timing keys. */
static void apply_driver(cfg_ctx *c, armd_config *cfg)
{
    static const char *const types[] = {"dxl2", "armlink", NULL};
    static const int dxl_bauds[] = {9600,    57600,   115200,  1000000,
                                    2000000, 3000000, 4000000, 4500000};
    const char *s = "driver";
    cfg_driver *d = &cfg->driver;
    if (!cfg_section_find(c, s)) {
        cfg_msg_add(c, 0, 0, true, "[driver]: missing section (type, port, ...)");
        return;
    }
    int t = -1;
    if (cfg_get_enum(c, s, "type", true, types, &t)) d->type = t;
    cfg_get_str(c, s, "port", true, d->port, sizeof(d->port));
    if (cfg_get_int(c, s, "baud", false, 1200, 12000000, "baud", &d->baud) && t == DRIVER_DXL2) {
        bool ok = false;
        for (size_t i = 0; i < sizeof(dxl_bauds) / sizeof(dxl_bauds[0]); i++)
            ok |= d->baud == dxl_bauds[i];
        if (!ok) {
            cfg_entry *e = cfg_entry_find(c, s, "baud");
            cfg_err(c, e->file, e->line, s, "baud",
                    "%d is not a Dynamixel rate (9600, 57600, 115200, 1000000, 2000000, "
                    "3000000, 4000000 or 4500000)",
                    d->baud);
        }
    }
    cfg_get_int(c, s, "timeout_us", false, 50, 1000000, "us", &d->timeout_us);
    cfg_get_int(c, s, "retries", false, 0, 10, "", &d->retries);
    cfg_get_bool(c, s, "allow_no_watchdog", &d->allow_no_watchdog);
    if (t == DRIVER_ARMLINK) {
        wrong_driver_key(c, "return_delay_us", "dxl2", "armlink");
        wrong_driver_key(c, "bus_watchdog_ms", "dxl2", "armlink");
        wrong_driver_key(c, "fast_sync_read", "dxl2", "armlink");
        if (cfg_get_int(c, s, "device_watchdog_ms", false, 0, 10000, "ms",
                        &d->device_watchdog_ms) &&
            d->device_watchdog_ms == 0)
            check_watchdog_off(c, d, "device_watchdog_ms", "the board's");
    } else if (t == DRIVER_DXL2) {
        wrong_driver_key(c, "device_watchdog_ms", "armlink", "dxl2");
        if (cfg_get_int(c, s, "return_delay_us", false, 0, 508, "us", &d->return_delay_us) &&
            d->return_delay_us % 2) {
            cfg_entry *e = cfg_entry_find(c, s, "return_delay_us");
            cfg_err(c, e->file, e->line, s, "return_delay_us",
                    "%d is not a multiple of 2 us (the servo's unit)", d->return_delay_us);
        }
        if (cfg_get_int(c, s, "bus_watchdog_ms", false, 0, 2540, "ms", &d->bus_watchdog_ms)) {
            if (d->bus_watchdog_ms % 20) {
                cfg_entry *e = cfg_entry_find(c, s, "bus_watchdog_ms");
                cfg_err(c, e->file, e->line, s, "bus_watchdog_ms",
                        "%d is not a multiple of 20 ms (the servo's unit)", d->bus_watchdog_ms);
            } else if (d->bus_watchdog_ms == 0) {
                check_watchdog_off(c, d, "bus_watchdog_ms", "the servos' bus");
            }
        }
        cfg_get_bool(c, s, "fast_sync_read", &d->fast_sync_read);
    } else { /* type missing or wrong: still read the keys for their own errors */
        cfg_get_int(c, s, "return_delay_us", false, 0, 508, "us", &d->return_delay_us);
        cfg_get_int(c, s, "bus_watchdog_ms", false, 0, 2540, "ms", &d->bus_watchdog_ms);
        cfg_get_bool(c, s, "fast_sync_read", &d->fast_sync_read);
        cfg_get_int(c, s, "device_watchdog_ms", false, 0, 10000, "ms", &d->device_watchdog_ms);
    }
}

/* [socket]: path (default /run/armd/NAME/armd.sock), octal mode, group, client limit, and the
 * times after which a client that stopped reading or says nothing is dropped. */
static void apply_socket(cfg_ctx *c, armd_config *cfg)
{
    const char *s = "socket";
    cfg_socket *k = &cfg->socket;
    if (cfg_get_str(c, s, "path", false, k->path, sizeof(k->path)) && k->path[0] != '/') {
        cfg_entry *e = cfg_entry_find(c, s, "path");
        cfg_err(c, e->file, e->line, s, "path", "'%s' must be an absolute path", k->path);
    }
    cfg_entry *e = cfg_entry_find(c, s, "mode");
    if (e) {
        e->used = true;
        char *end;
        errno = 0;
        long m = strtol(e->value, &end, 8);
        bool digits = e->value[0] != 0 && strspn(e->value, "01234567") == strlen(e->value);
        if (!digits || *end || errno)
            cfg_err(c, e->file, e->line, s, "mode", "expected an octal mode like 0660, got '%s'",
                    e->value);
        else if (m > 0777)
            cfg_err(c, e->file, e->line, s, "mode", "%s is out of range: must be 0 to 0777",
                    e->value);
        else
            k->mode = (unsigned)m;
    }
    cfg_get_str(c, s, "group", false, k->group, sizeof(k->group));
    cfg_get_int(c, s, "max_clients", false, 1, 64, "", &k->max_clients);
    cfg_get_num(c, s, "stall_timeout", false, R(0.1, 600), "s", &k->stall_timeout);
    cfg_get_num(c, s, "idle_timeout", false, R(1, 86400), "s", &k->idle_timeout);
}

/* [trajectory] shaper, shaper_freq [Hz], shaper_damping [1]: a shaper needs its mode's
 * frequency, within 0.5 ... 200 Hz (a longest shaper of 2 s) and below half the loop rate (its
 * impulses at least a loop period apart); the damping ratio in [0, 1). */
static void apply_shaper(cfg_ctx *c, armd_config *cfg)
{
    cfg_trajectory *t = &cfg->trajectory;
    int v;
    if (cfg_get_enum(c, "trajectory", "shaper", false, cfg_shaper_names, &v))
        t->shaper = (cfg_shaper)v;
    cfg_get_num(c, "trajectory", "shaper_damping", false, ((cfg_range){0, 1, false, true}), "",
                &t->shaper_damping);
    cfg_entry *fe = cfg_entry_find(c, "trajectory", "shaper_freq");
    if (!fe) {
        cfg_entry *se = cfg_entry_find(c, "trajectory", "shaper");
        if (t->shaper != SHAPE_NONE && se)
            cfg_err(c, se->file, se->line, "trajectory", "shaper",
                    "shaper = %s needs shaper_freq, the frequency of the mode to cancel [Hz]",
                    cfg_shaper_names[t->shaper]);
        return;
    }
    if (cfg_get_num(c, "trajectory", "shaper_freq", false, R(0.5, 200), "Hz", &t->shaper_freq) &&
        cfg->rate_hz > 0 && !(t->shaper_freq < 0.5 * cfg->rate_hz))
        cfg_err(c, fe->file, fe->line, "trajectory", "shaper_freq",
                "%g Hz is not below half the loop rate (%g Hz): the loop cannot follow it",
                t->shaper_freq, cfg->rate_hz);
}

/* [realtime], [safety] scalars and [trajectory]. */
static void apply_rest(cfg_ctx *c, armd_config *cfg)
{
    static const char *const faults[] = {"torque_off", "damp", NULL};
    cfg_get_int(c, "realtime", "priority", false, 0, 99, "", &cfg->realtime.priority);
    cfg_get_int(c, "realtime", "cpu", false, -1, 1023, "", &cfg->realtime.cpu);
    cfg_get_bool(c, "realtime", "lock_memory", &cfg->realtime.lock_memory);
    cfg_get_int(c, "safety", "max_failed_reads", false, 1, 1000, "", &cfg->safety.max_failed_reads);
    cfg_get_int(c, "safety", "max_read_gap_ms", false, 1, 10000, "ms",
                &cfg->safety.max_read_gap_ms);
    int v;
    if (cfg_get_enum(c, "safety", "on_fault", false, faults, &v)) cfg->safety.on_fault = v;
    cfg_get_num(c, "safety", "damp_stop_velocity", false, R_POS(100), "rad/s",
                &cfg->safety.damp_stop_velocity);
    cfg_get_num(c, "safety", "damp_timeout", false, R_POS(60), "s", &cfg->safety.damp_timeout);
    static const char *const collision[] = {"off", "detect", "react", NULL};
    if (cfg_get_enum(c, "safety", "collision", false, collision, &v)) cfg->safety.collision = v;
    if (cfg_get_enum(c, "safety", "collision_reaction", false, cfg_collision_reaction_names, &v))
        cfg->safety.collision_reaction = v;
    /* the observer gain: K_O dt <= 0.5, beyond it the discrete observer overshoots and rings;
     * by default 100 1/s (10 ms), or rate_hz / 4 for a loop slower than 400 Hz */
    cfg_entry *fe = cfg_entry_find(c, "safety", "collision_filter");
    if (!fe) {
        if (cfg->rate_hz > 0) cfg->safety.collision_filter = fmin(100, 0.25 * cfg->rate_hz);
    } else if (cfg_get_num(c, "safety", "collision_filter", false, R(1, 1e4), "1/s",
                           &cfg->safety.collision_filter) &&
               cfg->rate_hz > 0 && !(cfg->safety.collision_filter <= 0.5 * cfg->rate_hz)) {
        cfg_err(c, fe->file, fe->line, "safety", "collision_filter",
                "%g 1/s is above half the loop rate (%g Hz): the observer would overshoot",
                cfg->safety.collision_filter, cfg->rate_hz);
    }
    cfg_get_num(c, "safety", "collision_retract", false, R_POS(1), "rad",
                &cfg->safety.collision_retract);
    cfg_get_num(c, "safety", "max_tool_force", false, R(0, 1e5), "N", &cfg->safety.max_tool_force);
    cfg_get_num(c, "trajectory", "goal_tolerance", false, R_POS(10), "rad",
                &cfg->trajectory.goal_tolerance);
    cfg_get_num(c, "trajectory", "settle_time", false, R(0, 60), "s", &cfg->trajectory.settle_time);
    cfg_get_num(c, "trajectory", "path_tolerance", false, R_POS(100), "rad",
                &cfg->trajectory.path_tolerance);
    cfg_trajectory *t = &cfg->trajectory;
    cfg_get_num(c, "trajectory", "linear_speed", false, R_POS(10), "m/s", &t->linear_speed);
    cfg_get_num(c, "trajectory", "linear_acceleration", false, R_POS(100), "m/s^2",
                &t->linear_acceleration);
    cfg_get_num(c, "trajectory", "angular_speed", false, R_POS(100), "rad/s", &t->angular_speed);
    cfg_get_num(c, "trajectory", "angular_acceleration", false, R_POS(1000), "rad/s^2",
                &t->angular_acceleration);
    apply_shaper(c, cfg);
}

/* The whole-arm sections, in file order of importance. */
void cfg_apply_arm(cfg_ctx *c, armd_config *cfg)
{
    apply_arm(c, cfg);
    apply_driver(c, cfg);
    apply_socket(c, cfg);
    apply_rest(c, cfg);
    cfg_apply_impedance(c, cfg);
    if (!cfg->socket.path[0] && cfg_valid_name(cfg->name))
        snprintf(cfg->socket.path, sizeof(cfg->socket.path), "/run/armd/%s/armd.sock",
                 cfg->name); /* where armd@NAME has it, and armctl --arm NAME looks */
}
