/* cfg_joint.c — the schema of [joint NAME] sections (kinematics, dynamics, limits, gains,
 * device mapping), the per-joint [safety] lists, and the cross-section checks. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

#define R(lo, hi) ((cfg_range){(lo), (hi), false, false})
#define R_POS(hi) ((cfg_range){0, (hi), true, false})

static const cfg_units rev_units = {"rad", "rad/s", "rad/s^2", "N m", "N m s/rad", "N m/s"};
static const cfg_units pri_units = {"m", "m/s", "m/s^2", "N", "N s/m", "N/s"};

static const char *const dh_keys[] = {"a", "alpha", "d", "theta", NULL};
static const char *const urdf_keys[] = {"origin_xyz", "origin_rpy", "axis", NULL};

/* The first present key of keys[] in section sec, or NULL. */
static cfg_entry *first_of(cfg_ctx *c, const char *sec, const char *const *keys)
{
    cfg_entry *best = NULL;
    for (int i = 0; keys[i]; i++) {
        cfg_entry *e = cfg_entry_find(c, sec, keys[i]);
        if (e && (!best || e->file < best->file || (e->file == best->file && e->line < best->line)))
            best = e;
    }
    return best;
}

static void mark_used(cfg_ctx *c, const char *sec, const char *const *keys)
{
    for (int i = 0; keys[i]; i++) {
        cfg_entry *e = cfg_entry_find(c, sec, keys[i]);
        if (e) e->used = true;
    }
}

typedef struct {
    int form;          /* -1 until the first joint with a valid form */
    const char *joint; /* that joint's name */
} form_ref;

/* Kinematics: dh = standard|modified with a, alpha, d, theta, or origin_xyz, origin_rpy, axis
 * (URDF form). One form per joint, and the same form for every joint. */
static void apply_kinematics(cfg_ctx *c, const char *sec, dyn_joint_desc *j, form_ref *ref)
{
    static const char *const forms[] = {"standard", "modified", NULL};
    cfg_entry *dh = cfg_entry_find(c, sec, "dh");
    cfg_entry *dhp = first_of(c, sec, dh_keys), *urdf = first_of(c, sec, urdf_keys);
    int form = -1;
    if (dh && urdf) {
        cfg_err(c, urdf->file, urdf->line, sec, urdf->key,
                "cannot be mixed with 'dh' (line %d): describe a joint either by dh with a, "
                "alpha, d, theta or by origin_xyz, origin_rpy, axis",
                dh->line);
        mark_used(c, sec, urdf_keys);
    } else if (!dh && dhp && urdf) {
        cfg_err(c, dhp->file, dhp->line, sec, dhp->key,
                "is a DH parameter but this joint uses %s (line %d): describe a joint either by "
                "dh with a, alpha, d, theta or by origin_xyz, origin_rpy, axis",
                urdf->key, urdf->line);
        mark_used(c, sec, dh_keys);
        mark_used(c, sec, urdf_keys);
        return;
    } else if (!dh && dhp) {
        cfg_err(c, dhp->file, dhp->line, sec, dhp->key,
                "needs 'dh = standard' or 'dh = modified' in this joint");
        mark_used(c, sec, dh_keys);
        return;
    } else if (!dh && !urdf) {
        const cfg_section *s = cfg_section_find(c, sec);
        cfg_err(c, s->file, s->line, sec, "dh",
                "missing kinematics: give dh = standard|modified with a, alpha, d, theta, or "
                "origin_xyz, origin_rpy, axis");
        return;
    }
    cfg_entry *where = dh ? dh : urdf;
    if (dh) {
        int f;
        if (cfg_get_enum(c, sec, "dh", false, forms, &f)) form = f;
        cfg_get_num(c, sec, "a", true, R(-100, 100), "m", &j->a);
        cfg_get_num(c, sec, "alpha", true, R(-100, 100), "rad", &j->alpha);
        cfg_get_num(c, sec, "d", true, R(-100, 100), "m", &j->d);
        cfg_get_num(c, sec, "theta", true, R(-100, 100), "rad", &j->theta);
    } else {
        form = DYN_URDF;
        cfg_get_vec(c, sec, "origin_xyz", true, 3, R(-100, 100), "m", j->origin_xyz);
        cfg_get_vec(c, sec, "origin_rpy", false, 3, R(-100, 100), "rad", j->origin_rpy);
        if (cfg_get_vec(c, sec, "axis", true, 3, R(-1e6, 1e6), "", j->axis)) {
            double n =
                sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
            if (n < 1e-9) {
                cfg_entry *e = cfg_entry_find(c, sec, "axis");
                cfg_err(c, e->file, e->line, sec, "axis", "must not be zero");
            } else {
                for (int k = 0; k < 3; k++) j->axis[k] /= n;
            }
        }
    }
    if (form < 0) return;
    j->form = (dyn_kin_form)form;
    static const char *const form_names[] = {"dh = standard", "dh = modified", "origin_xyz"};
    if (ref->form < 0) {
        ref->form = form;
        ref->joint = sec + 6;
    } else if (ref->form != form) {
        cfg_err(c, where->file, where->line, sec, where->key,
                "joint '%s' uses %s; every joint must use the same kinematic form", ref->joint,
                form_names[ref->form]);
    }
}

/* Dynamics: mass, com, inertia, armature, viscous, coulomb (one value c -> +c/-c, or two signed
 * values for qd > 0 and qd < 0). */
static void apply_dynamics(cfg_ctx *c, const char *sec, dyn_joint_desc *j, const cfg_units *u)
{
    char unit[32];
    cfg_get_num(c, sec, "mass", true, R(0, 1e4), "kg", &j->mass);
    cfg_get_vec(c, sec, "com", false, 3, R(-100, 100), "m", j->com);
    cfg_get_vec(c, sec, "inertia", true, 6, R(-1e4, 1e4), "kg m^2", j->inertia);
    cfg_get_num(c, sec, "armature", false, R(0, 1e4), u == &rev_units ? "kg m^2" : "kg",
                &j->armature);
    cfg_get_num(c, sec, "viscous", false, R(0, 1e6), u->damping, &j->viscous);
    double cv[2];
    snprintf(unit, sizeof(unit), "%s", u->force);
    int n = cfg_get_list(c, sec, "coulomb", 2, "for qd > 0 and qd < 0", R(-1e5, 1e5), unit, cv);
    cfg_entry *e = cfg_entry_find(c, sec, "coulomb");
    if (n == 1) {
        if (cv[0] < 0)
            cfg_err(c, e->file, e->line, sec, "coulomb",
                    "%g is out of range: must be >= 0 %s (one value c means +c for qd > 0 and -c "
                    "for qd < 0)",
                    cv[0], u->force);
        else
            j->coulomb_pos = cv[0], j->coulomb_neg = -cv[0];
    } else if (n == 2) {
        if (cv[0] < 0 || cv[1] > 0)
            cfg_err(c, e->file, e->line, sec, "coulomb",
                    "expected a value >= 0 for qd > 0 and a value <= 0 for qd < 0, got %g %g",
                    cv[0], cv[1]);
        else
            j->coulomb_pos = cv[0], j->coulomb_neg = cv[1];
    }
}

/* Limits and gains; lower < upper. */
static void apply_limits_gains(cfg_ctx *c, const char *sec, cfg_joint *cj, const cfg_units *u)
{
    bool lo = cfg_get_num(c, sec, "lower", true, R(-1e4, 1e4), u->pos, &cj->lower);
    bool hi = cfg_get_num(c, sec, "upper", true, R(-1e4, 1e4), u->pos, &cj->upper);
    if (lo && hi && cj->lower >= cj->upper) {
        cfg_entry *e = cfg_entry_find(c, sec, "upper");
        cfg_err(c, e->file, e->line, sec, "upper", "%g %s must be above lower (%g %s)", cj->upper,
                u->pos, cj->lower, u->pos);
    }
    cfg_get_num(c, sec, "velocity", true, R_POS(1e4), u->vel, &cj->velocity);
    cfg_get_num(c, sec, "acceleration", true, R_POS(1e6), u->acc, &cj->acceleration);
    cfg_get_num(c, sec, "torque", true, R_POS(1e6), u->force, &cj->torque);
    cfg_get_num(c, sec, "kp", true, R(0, 1e7), "", &cj->kp);
    cfg_get_num(c, sec, "kd", true, R(0, 1e7), "", &cj->kd);
    cfg_get_num(c, sec, "ki", false, R(0, 1e9), "", &cj->ki);
    cfg_get_num(c, sec, "i_limit", false, R(0, 1e4), "", &cj->i_limit);
    cfg_get_num(c, sec, "following_error", false, R_POS(100), u->pos, &cj->following_error);
    cfg_get_num(c, sec, "damping", false, R(0, 1e6), u->damping, &cj->damping);
    cfg_get_num(c, sec, "torque_rate_limit", false, R(0, 1e9), u->force_rate,
                &cj->torque_rate_limit);
    cfg_get_num(c, sec, "collision_threshold", false, R_POS(1e6), u->force,
                &cj->collision_threshold);
    cfg_get_num(c, sec, "collision_band", false, R(0, 1e6), u->damping, &cj->collision_band);
}

/* Servo IDs: 1..CFG_MAX_IDS integers 0..252, unique over the arm. */
static void apply_ids(cfg_ctx *c, const char *sec, armd_config *cfg, int i)
{
    cfg_joint *cj = &cfg->joint[i];
    cfg_entry *e = cfg_entry_find(c, sec, "id");
    if (!e) {
        cfg_missing(c, sec, "id");
        return;
    }
    e->used = true;
    char tok[CFG_MAX_IDS + 1][64];
    int n = cfg_tokens(e->value, tok, CFG_MAX_IDS + 1);
    if (n < 1 || n > CFG_MAX_IDS) {
        if (n == 0)
            cfg_err(c, e->file, e->line, sec, "id", "missing value");
        else
            cfg_err(c, e->file, e->line, sec, "id", "expected 1 to %d servo IDs, got more",
                    CFG_MAX_IDS);
        return;
    }
    for (int k = 0; k < n; k++) {
        double v;
        if (!cfg_parse_number(tok[k], &v) || v != floor(v) || strchr(tok[k], 'p')) {
            cfg_err(c, e->file, e->line, sec, "id", "expected an integer, got '%s'", tok[k]);
            return;
        }
        if (v < 0 || v > 252) {
            cfg_range_error(c, e, tok[k], R(0, 252), "");
            return;
        }
        cj->id[k] = (int)v;
        for (int p = 0; p <= i; p++)
            for (int q = 0; q < (p == i ? k : cfg->joint[p].n_ids); q++)
                if (cfg->joint[p].id[q] == cj->id[k]) {
                    if (p == i)
                        cfg_err(c, e->file, e->line, sec, "id", "servo ID %d is listed twice",
                                cj->id[k]);
                    else
                        cfg_err(c, e->file, e->line, sec, "id",
                                "servo ID %d is already used by joint '%s'", cj->id[k],
                                cfg->joint[p].name);
                    return;
                }
    }
    cj->n_ids = n;
}

/* Device mapping: counts_per_rev, gear_ratio, direction, zero_offset (one value for all servos
 * or one per servo), torque_per_amp; for dxl2, the torque limit must fit Goal Current. */
static void apply_device(cfg_ctx *c, const char *sec, armd_config *cfg, int i, const cfg_units *u)
{
    cfg_joint *cj = &cfg->joint[i];
    apply_ids(c, sec, cfg, i);
    int n = cj->n_ids > 0 ? cj->n_ids : 1;
    /* lower bounds keep every encoder reading a finite joint position and velocity:
     * |q| <= (2^31 counts * 2 pi / 1 + 1e6 rad) / 1e-3 ~ 1.4e13 */
    cfg_get_num(c, sec, "counts_per_rev", false, R(1, 1e9), "counts", &cj->counts_per_rev);
    cfg_get_num(c, sec, "gear_ratio", false, R(1e-3, 1e5), "", &cj->gear_ratio);
    double v[CFG_MAX_IDS];
    int k = cfg_get_list(c, sec, "direction", n, "one per servo", R(-1, 1), "", v);
    for (int s = 0; s < k; s++)
        if (v[s] != 1 && v[s] != -1) {
            cfg_entry *e = cfg_entry_find(c, sec, "direction");
            cfg_err(c, e->file, e->line, sec, "direction", "expected +1 or -1, got %g", v[s]);
            k = 0;
        }
    for (int s = 0; s < (k == 1 ? CFG_MAX_IDS : k); s++) cj->direction[s] = (int)v[k == 1 ? 0 : s];
    k = cfg_get_list(c, sec, "zero_offset", n, "one per servo", R(-1e6, 1e6), "rad", v);
    for (int s = 0; s < (k == 1 ? CFG_MAX_IDS : k); s++) cj->zero_offset[s] = v[k == 1 ? 0 : s];
    bool dxl = cfg->driver.type == DRIVER_DXL2 && cfg_entry_find(c, "driver", "type");
    bool tpa = cfg_get_num(c, sec, "torque_per_amp", true, R_POS(1e4),
                           u == &rev_units ? "N m/A" : "N/A", &cj->torque_per_amp);
    double amps = cj->torque / (n * cj->torque_per_amp);
    if (dxl && tpa && cj->torque > 0 && amps > CFG_DXL_MAX_AMPS) {
        cfg_entry *e = cfg_entry_find(c, sec, "torque");
        cfg_err(c, e->file, e->line, sec, "torque",
                "%g %s needs %.1f A per servo at torque_per_amp = %g; Dynamixel Goal Current "
                "reaches only %.1f A (32767 x 2.69 mA)",
                cj->torque, u->force, amps, cj->torque_per_amp, CFG_DXL_MAX_AMPS);
    }
}

/* Per-joint [safety] keys: one value for every joint or one per joint; a joint's own key wins. */
static void apply_safety_lists(cfg_ctx *c, armd_config *cfg)
{
    static const char *const keys[] = {"following_error", "damping", "torque_rate_limit",
                                       "collision_threshold", "collision_band"};
    const cfg_range ranges[] = {R_POS(100), R(0, 1e6), R(0, 1e9), R_POS(1e6), R(0, 1e6)};
    static const char *const units[] = {"rad or m", "N m s/rad or N s/m", "N m/s or N/s",
                                        "N m or N", "N m s/rad or N s/m"};
    const size_t field[] = {offsetof(cfg_joint, following_error), offsetof(cfg_joint, damping),
                            offsetof(cfg_joint, torque_rate_limit),
                            offsetof(cfg_joint, collision_threshold),
                            offsetof(cfg_joint, collision_band)};
    int n = cfg->n_joints;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        double v[CFG_MAX_JOINTS];
        int got = cfg_get_list(c, "safety", keys[k], n > 0 ? n : 1, "one per joint", ranges[k],
                               units[k], v);
        for (int i = 0; got && i < n; i++)
            *(double *)((char *)&cfg->joint[i] + field[k]) = v[got == 1 ? 0 : i];
    }
}

/* Every [joint NAME] of the main file, in order, into cfg->joint and cfg->model.joint. */
void cfg_apply_joints(cfg_ctx *c, armd_config *cfg)
{
    static const char *const types[] = {"revolute", "prismatic", NULL};
    form_ref ref = {-1, NULL};
    const char *names[CFG_MAX_JOINTS];
    for (int s = 0; s < c->n_s; s++) {
        const cfg_section *sec = &c->s[s];
        if (sec->file != 0 || strncmp(sec->name, "joint ", 6) != 0) continue;
        if (cfg->n_joints == CFG_MAX_JOINTS) {
            cfg_err(c, sec->file, sec->line, sec->name, NULL, "too many joints (at most %d)",
                    CFG_MAX_JOINTS);
            break;
        }
        snprintf(cfg->joint[cfg->n_joints].name, CFG_NAME_MAX, "%s", sec->name + 6);
        names[cfg->n_joints++] = sec->name;
    }
    cfg->model.n = cfg->n_joints;
    apply_safety_lists(c, cfg); /* defaults first; the joints' own keys override */
    for (int i = 0; i < cfg->n_joints; i++) {
        const char *sec = names[i];
        dyn_joint_desc *j = &cfg->model.joint[i];
        int t = 0;
        cfg_get_enum(c, sec, "type", true, types, &t);
        j->type = (dyn_joint_type)t;
        const cfg_units *u = t == DYN_PRISMATIC ? &pri_units : &rev_units;
        apply_kinematics(c, sec, j, &ref);
        apply_dynamics(c, sec, j, u);
        apply_limits_gains(c, sec, &cfg->joint[i], u);
        apply_device(c, sec, cfg, i, u);
        cfg_apply_flex(c, sec, cfg, i);
    }
    if (cfg->n_joints == 0) {
        const cfg_section *arm = cfg_section_find(c, "arm");
        cfg_msg_add(c, 0, arm ? arm->line : 0, true,
                    "[joint NAME]: no joint sections; describe each joint, base to tool");
    }
}

/* Checks across sections: damping stop needs damping; trajectory vs fault thresholds. */
static void cross_checks(cfg_ctx *c, armd_config *cfg)
{
    cfg_entry *e = cfg_entry_find(c, "safety", "on_fault");
    if (e && cfg->safety.on_fault == ON_FAULT_DAMP) {
        for (int i = 0; i < cfg->n_joints; i++)
            if (cfg->joint[i].damping <= 0) {
                cfg_err(c, e->file, e->line, "safety", "on_fault",
                        "damp needs damping > 0 for every joint; joint '%s' has %g",
                        cfg->joint[i].name, cfg->joint[i].damping);
                break;
            }
    }
    e = cfg_entry_find(c, "trajectory", "path_tolerance");
    for (int i = 0; e && i < cfg->n_joints; i++)
        if (cfg->trajectory.path_tolerance >= cfg->joint[i].following_error) {
            cfg_warn(c, e->file, e->line, "trajectory", "path_tolerance",
                     "%g is not below joint '%s' following_error (%g): the fault trips before "
                     "the trajectory is aborted",
                     cfg->trajectory.path_tolerance, cfg->joint[i].name,
                     cfg->joint[i].following_error);
            break;
        }
    /* collision detection needs a threshold for every joint */
    e = cfg_entry_find(c, "safety", "collision");
    if (e && cfg->safety.collision != COLLISION_OFF) {
        for (int i = 0; i < cfg->n_joints; i++)
            if (!(cfg->joint[i].collision_threshold > 0)) {
                cfg_err(c, e->file, e->line, "safety", "collision",
                        "needs collision_threshold > 0 for every joint ([safety] or [joint "
                        "NAME]); joint '%s' has none (measure with armctl collision calibrate)",
                        cfg->joint[i].name);
                break;
            }
    }
    /* the tool force is estimated from the observer's external torques: no observer, no check */
    cfg_entry *tf = cfg_entry_find(c, "safety", "max_tool_force");
    if (tf && cfg->safety.max_tool_force > 0 && cfg->safety.collision == COLLISION_OFF)
        cfg_err(c, tf->file, tf->line, "safety", "max_tool_force",
                "%g N needs collision = detect or react: the force at the tool is estimated "
                "from the collision observer",
                cfg->safety.max_tool_force);
    /* a hard Coulomb step: the observer's friction flips by the whole Coulomb torque at every
     * reversal, where the real friction (stiction) is anything in between */
    if (e && cfg->safety.collision != COLLISION_OFF && !(cfg->model.friction_smoothing > 0))
        for (int i = 0; i < cfg->n_joints; i++)
            if (cfg->model.joint[i].coulomb_pos != 0 || cfg->model.joint[i].coulomb_neg != 0) {
                cfg_warn(c, e->file, e->line, "safety", "collision",
                         "[arm] friction_smoothing is 0 (a hard Coulomb step) and joint '%s' has "
                         "Coulomb friction: the external torque estimate jumps by the Coulomb "
                         "torque at every velocity reversal; set friction_smoothing > 0 (e.g. "
                         "0.01 rad/s) or thresholds above the Coulomb torques",
                         cfg->joint[i].name);
                break;
            }
    e = cfg_entry_find(c, "safety", "collision_reaction");
    /* damp stops with the damping gains, float damps the hand-guided arm with them (without,
     * the arm would coast on with the momentum it had when it hit) */
    bool damped = cfg->safety.collision_reaction == REACT_DAMP ||
                  cfg->safety.collision_reaction == REACT_FLOAT;
    if (e && damped) {
        for (int i = 0; i < cfg->n_joints; i++)
            if (!(cfg->joint[i].damping > 0)) {
                cfg_err(c, e->file, e->line, "safety", "collision_reaction",
                        "%s needs damping > 0 for every joint; joint '%s' has %g",
                        cfg->safety.collision_reaction == REACT_DAMP ? "damp" : "float",
                        cfg->joint[i].name, cfg->joint[i].damping);
                break;
            }
    }
    /* the servos' watchdog should not cut the torque before armd has judged a read gap */
    const cfg_driver *d = &cfg->driver;
    bool dxl = d->type == DRIVER_DXL2;
    int wd = dxl ? d->bus_watchdog_ms : d->device_watchdog_ms;
    const char *wd_key = dxl ? "bus_watchdog_ms" : "device_watchdog_ms";
    e = cfg_entry_find(c, "safety", "max_read_gap_ms");
    if (!e) e = cfg_entry_find(c, "driver", wd_key);
    if (e && wd > 0 && wd <= cfg->safety.max_read_gap_ms)
        cfg_warn(c, e->file, e->line, e->section, e->key,
                 "the %s (%s = %d ms) cuts the torque before armd faults on a read gap "
                 "(max_read_gap_ms = %d ms): a gap that outlasts the watchdog stops the arm and "
                 "faults anyway; keep max_read_gap_ms below the watchdog",
                 dxl ? "servos' bus watchdog" : "board's watchdog", wd_key, wd,
                 cfg->safety.max_read_gap_ms);
}

typedef struct {
    cfg_ctx *c;
    armd_config *cfg;
} issue_ctx;

/* dyn_desc_validate callback: maps (joint, field) to the key's file and line. */
static void on_issue(void *vctx, int joint, const char *field, int is_error, const char *message)
{
    issue_ctx *x = vctx;
    char sec[CFG_NAME_MAX + 8], key[64];
    if (joint >= 0 && joint < x->cfg->n_joints)
        snprintf(sec, sizeof(sec), "joint %s", x->cfg->joint[joint].name);
    else
        snprintf(sec, sizeof(sec), "arm");
    snprintf(key, sizeof(key), "%s", field ? field : "");
    for (char *p = key; *p; p++)
        if (*p == '.') *p = '_';
    if (strncmp(key, "coulomb", 7) == 0) key[7] = 0;
    if (strcmp(key, "payload") == 0) snprintf(key, sizeof(key), "payload_mass");
    if (strcmp(key, "form") == 0) snprintf(key, sizeof(key), "dh");
    cfg_entry *e = key[0] ? cfg_entry_find(x->c, sec, key) : NULL;
    const cfg_section *s = cfg_section_find(x->c, sec);
    int file = e ? e->file : s ? s->file : 0, line = e ? e->line : s ? s->line : 0;
    if (is_error)
        cfg_err(x->c, file, line, sec, key[0] ? key : NULL, "%s", message ? message : "invalid");
    else
        cfg_warn(x->c, file, line, sec, key[0] ? key : NULL, "%s", message ? message : "");
}

/* Cross checks, then the dynamics' own validation (only once the file parsed cleanly, so its
 * findings are not echoes of errors already reported). */
void cfg_validate_model(cfg_ctx *c, armd_config *cfg)
{
    cross_checks(c, cfg);
    if (c->n_errors == 0 && cfg->n_joints > 0) {
        issue_ctx x = {c, cfg};
        dyn_desc_validate(&cfg->model, on_issue, &x);
    }
    cfg_validate_feasible(c, cfg);
    cfg_validate_flex(c, cfg);
}
