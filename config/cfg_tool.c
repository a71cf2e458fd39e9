/* cfg_tool.c — the schema of the [tool NAME] section: a gripper's servo on the joints' Dynamixel
 * bus (config.h cfg_tool; armd.conf(5) documents every key).
 *
 * The servo runs in current-based position control (Operating Mode 5): armd writes a Goal
 * Position, a Profile Velocity and a Goal Current that caps the squeezing force. Its opening is
 *   opening = opening_at_zero + m_per_rad (shaft - zero_offset),  shaft = counts 2 pi / cpr
 * and the force on the fingers follows from the motor's torque by virtual work:
 *   force = -torque_per_amp amps / m_per_rad  [N, > 0 squeezing]  (drivers/units.c).
 *
 * Checks, each at the key concerned: one tool at most, driver dxl2 only, an ID no joint uses,
 * 0 <= lower < upper, m_per_rad != 0, speed <= velocity, force <= max_force, max_force within
 * Goal Current's reach, and the stroke's Goal Positions within the servo's +-256 turns. Every
 * number goes through cfg_get_num, which refuses NaN, inf and values beyond the range. */
#include <math.h>
#include <string.h>

#include "config/cfg_internal.h"

#define R(lo, hi) ((cfg_range){(lo), (hi), false, false})
#define R_POS(hi) ((cfg_range){0, (hi), true, false})

/* Goal Position's range in current-based position control: +-256 turns (ROBOTIS e-Manual,
 * XM430-W350, Goal Position (116)) */
#define DXL_MAX_GOAL_POSITION 1048575.0

/* In the order armd.conf(5) documents them. */
const char *const cfg_tool_keys[] = {
    "id",        "zero_offset",    "counts_per_rev", "opening_at_zero",
    "m_per_rad", "torque_per_amp", "lower",          "upper",
    "velocity",  "speed",          "max_force",      "force",
    "tolerance", "epsilon",        "timeout",        NULL};

/* The [tool NAME] section that counts (the first, main file first), or NULL; a second one with
 * another name is an error naming both (one with the same name is a drop-in's override, merged
 * by the reader). */
static const cfg_section *the_tool_section(cfg_ctx *c)
{
    const cfg_section *first = NULL;
    for (int s = 0; s < c->n_s; s++) {
        const cfg_section *sec = &c->s[s];
        if (strncmp(sec->name, "tool ", 5) != 0) continue;
        if (!first) {
            first = sec;
        } else if (strcmp(sec->name, first->name) != 0) {
            cfg_err(c, sec->file, sec->line, sec->name, NULL,
                    "a second tool section: armd drives one tool, and [%s] is at %s:%d; remove "
                    "one of them",
                    first->name, c->files[first->file], first->line);
        }
    }
    return first;
}

/* The ID: 0..252 and no joint's. */
static void apply_id(cfg_ctx *c, const char *sec, armd_config *cfg)
{
    cfg_tool *t = &cfg->tool;
    if (!cfg_get_int(c, sec, "id", true, 0, 252, "", &t->id)) return;
    for (int j = 0; j < cfg->n_joints; j++)
        for (int k = 0; k < cfg->joint[j].n_ids; k++)
            if (cfg->joint[j].id[k] == t->id) {
                cfg_entry *e = cfg_entry_find(c, sec, "id");
                cfg_err(c, e->file, e->line, sec, "id",
                        "servo ID %d is already used by joint '%s'; the tool needs a servo of its "
                        "own",
                        t->id, cfg->joint[j].name);
                return;
            }
}

/* The mapping: zero_offset (may be written pi), counts_per_rev, opening_at_zero, m_per_rad.
 * true when all four are usable (given and valid, or absent with a default). */
static bool apply_mapping(cfg_ctx *c, const char *sec, cfg_tool *t)
{
    bool zo = cfg_get_num(c, sec, "zero_offset", false, R(-1e6, 1e6), "rad", &t->zero_offset) ||
              !cfg_entry_find(c, sec, "zero_offset");
    bool cpr =
        cfg_get_num(c, sec, "counts_per_rev", false, R(1, 1e9), "counts", &t->counts_per_rev) ||
        !cfg_entry_find(c, sec, "counts_per_rev");
    bool oz = cfg_get_num(c, sec, "opening_at_zero", true, R(-100, 100), "m", &t->opening_at_zero);
    bool mpr = cfg_get_num(c, sec, "m_per_rad", true, R(-100, 100), "m/rad", &t->m_per_rad);
    if (mpr && t->m_per_rad == 0) {
        cfg_entry *e = cfg_entry_find(c, sec, "m_per_rad");
        cfg_err(c, e->file, e->line, sec, "m_per_rad",
                "must not be 0: it is how much the opening changes per rad the shaft turns "
                "(negative when the fingers close as the shaft angle grows)");
        mpr = false;
    }
    return zo && cpr && oz && mpr;
}

/* The shaft's Goal Position [counts] for an opening. */
static double goal_counts(const cfg_tool *t, double opening)
{
    double shaft = t->zero_offset + (opening - t->opening_at_zero) / t->m_per_rad;
    return shaft * t->counts_per_rev / (2 * M_PI);
}

/* The stroke: 0 <= lower < upper, each end a Goal Position the servo accepts. */
static void apply_stroke(cfg_ctx *c, const char *sec, cfg_tool *t, bool mapped)
{
    bool lo = cfg_get_num(c, sec, "lower", true, R(0, 100), "m", &t->lower);
    bool hi = cfg_get_num(c, sec, "upper", true, R(0, 100), "m", &t->upper);
    if (lo && hi && !(t->lower < t->upper)) {
        cfg_entry *e = cfg_entry_find(c, sec, "upper");
        cfg_err(c, e->file, e->line, sec, "upper", "%g m must be above lower (%g m)", t->upper,
                t->lower);
        return;
    }
    static const char *const keys[] = {"lower", "upper"};
    const double ends[] = {t->lower, t->upper};
    for (int i = 0; mapped && lo && hi && i < 2; i++) {
        double n = goal_counts(t, ends[i]);
        if (!(fabs(n) <= DXL_MAX_GOAL_POSITION)) {
            cfg_entry *e = cfg_entry_find(c, sec, keys[i]);
            cfg_err(c, e->file, e->line, sec, keys[i],
                    "%g m is shaft angle %.4g rad (%.4g counts), beyond the servo's Goal "
                    "Position range of +-%.0f counts (256 turns); check m_per_rad (%g m/rad) "
                    "and opening_at_zero (%g m)",
                    ends[i], n * 2 * M_PI / t->counts_per_rev, n, DXL_MAX_GOAL_POSITION,
                    t->m_per_rad, t->opening_at_zero);
        }
    }
}

/* velocity and speed (default min(0.05, velocity)); speed <= velocity. */
static void apply_speed(cfg_ctx *c, const char *sec, cfg_tool *t)
{
    bool v = cfg_get_num(c, sec, "velocity", true, R_POS(100), "m/s", &t->velocity);
    cfg_entry *e = cfg_entry_find(c, sec, "speed");
    if (!e) {
        if (v) t->speed = fmin(0.05, t->velocity);
        return;
    }
    if (cfg_get_num(c, sec, "speed", false, R_POS(100), "m/s", &t->speed) && v &&
        !(t->speed <= t->velocity))
        cfg_err(c, e->file, e->line, sec, "speed",
                "%g m/s is above velocity (%g m/s), the largest speed accepted", t->speed,
                t->velocity);
}

/* max_force, force (default max_force / 2), torque_per_amp; force <= max_force, and max_force
 * needs a Goal Current within 32767 x 2.69 mA. */
static void apply_force(cfg_ctx *c, const char *sec, cfg_tool *t, bool mapped)
{
    bool mf = cfg_get_num(c, sec, "max_force", true, R_POS(1e6), "N", &t->max_force);
    bool tpa = cfg_get_num(c, sec, "torque_per_amp", true, R_POS(1e4), "N m/A", &t->torque_per_amp);
    cfg_entry *e = cfg_entry_find(c, sec, "force");
    if (!e) {
        if (mf) t->force = t->max_force / 2;
    } else if (cfg_get_num(c, sec, "force", false, R_POS(1e6), "N", &t->force) && mf &&
               !(t->force <= t->max_force)) {
        cfg_err(c, e->file, e->line, sec, "force",
                "%g N is above max_force (%g N), the largest force accepted", t->force,
                t->max_force);
    }
    if (!mf || !tpa || !mapped) return;
    double amps = t->max_force * fabs(t->m_per_rad) / t->torque_per_amp;
    if (!(amps <= CFG_DXL_MAX_AMPS)) {
        cfg_entry *m = cfg_entry_find(c, sec, "max_force");
        cfg_err(c, m->file, m->line, sec, "max_force",
                "%g N needs %.1f A at torque_per_amp = %g N m/A and m_per_rad = %g m/rad; "
                "Dynamixel Goal Current reaches only %.1f A (32767 x 2.69 mA)",
                t->max_force, amps, t->torque_per_amp, t->m_per_rad, CFG_DXL_MAX_AMPS);
    }
}

/* The [tool NAME] section into cfg->tool (cfg->tool.present false without one). */
void cfg_apply_tool(cfg_ctx *c, armd_config *cfg)
{
    const cfg_section *s = the_tool_section(c);
    if (!s) return;
    const char *sec = s->name;
    cfg_tool *t = &cfg->tool;
    t->present = true;
    snprintf(t->name, sizeof(t->name), "%s", sec + 5);
    cfg_entry *type = cfg_entry_find(c, "driver", "type");
    if (type && cfg->driver.type == DRIVER_ARMLINK)
        cfg_err(c, s->file, s->line, sec, NULL,
                "[driver] type = armlink (%s:%d) has no tool servo: the armlink protocol carries "
                "joints only; a tool needs type = dxl2",
                c->files[type->file], type->line);
    apply_id(c, sec, cfg);
    bool mapped = apply_mapping(c, sec, t);
    apply_stroke(c, sec, t, mapped);
    apply_speed(c, sec, t);
    apply_force(c, sec, t, mapped);
    cfg_get_num(c, sec, "tolerance", false, R_POS(10), "m", &t->tolerance);
    cfg_get_num(c, sec, "epsilon", false, R(0, 10), "m", &t->epsilon);
    cfg_get_num(c, sec, "timeout", false, R_POS(3600), "s", &t->timeout);
}
