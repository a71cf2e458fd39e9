/* cfg_feasible.c — the loader's checks of what the arm can physically do (feasible.h): each
 * joint's kp, kd within the sampled loop's stability bounds at [arm] rate_hz, ki > 0 only with
 * i_limit > 0, the damping stop's gain within its bound (D dt < 2 H_jj, H_jj at least the
 * joint's rotor and own link), and [arm] payload_mass within max_payload and, with the arm's own
 * gravity, within every joint's torque limit over the joint ranges; with controller =
 * cartesian_impedance, the [impedance] spring and damper within the sampled loop's bound over
 * the joint ranges. */
#include <string.h>

#include "config/cfg_internal.h"
#include "config/feasible.h"

/* why without its "joint NAME: " head (the section names the joint already). */
static const char *tail(const char *why)
{
    const char *p = strncmp(why, "joint ", 6) == 0 ? strstr(why, ": ") : NULL;
    return p ? p + 2 : why;
}

/* The entry of key in sec, or the section header's line. */
static void at(cfg_ctx *c, const char *sec, const char *key, int *file, int *line)
{
    const cfg_entry *e = cfg_entry_find(c, sec, key);
    const cfg_section *s = cfg_section_find(c, sec);
    *file = e ? e->file : s ? s->file : 0;
    *line = e ? e->line : s ? s->line : 0;
}

/* Only once the file parsed cleanly (as the dynamics' own validation), so that a finding is
 * not the echo of a value already refused. */
void cfg_validate_feasible(cfg_ctx *c, armd_config *cfg)
{
    char why[512], sec[CFG_NAME_MAX + 8];
    int file, line;
    if (c->n_errors > 0) return;
    for (int j = 0; j < cfg->n_joints; j++) {
        const cfg_joint *J = &cfg->joint[j];
        snprintf(sec, sizeof sec, "joint %s", J->name);
        if (cfg->rate_hz > 0 &&
            feas_gains_stable(J->name, J->kp, J->kd, 1 / cfg->rate_hz, why, sizeof why)) {
            const char *key = strstr(why, ": kd dt") ? "kd" : "kp";
            at(c, sec, key, &file, &line);
            cfg_err(c, file, line, sec, key, "%s", tail(why));
        }
        if (feas_integral(J->name, J->ki, J->i_limit, why, sizeof why)) {
            at(c, sec, "ki", &file, &line);
            cfg_err(c, file, line, sec, "ki", "%s", tail(why));
        }
        if (J->damping > 0 && cfg->rate_hz > 0 &&
            feas_damping_stable(J->name, J->damping, feas_own_inertia(cfg, j), 1 / cfg->rate_hz,
                                why, sizeof why)) {
            const char *s2 = cfg_entry_find(c, sec, "damping") ? sec : "safety";
            at(c, s2, "damping", &file, &line);
            cfg_err(c, file, line, s2, "damping", "%s", s2 == sec ? tail(why) : why);
        }
    }
    if (c->n_errors > 0) return; /* the model is valid */
    if (cfg->model.payload.mass > 0 &&
        feas_payload(cfg, &cfg->model.payload, NULL, why, sizeof why)) {
        at(c, "arm", "payload_mass", &file, &line);
        cfg_err(c, file, line, "arm", "payload_mass", "%s", why);
    }
    if (cfg->controller != CTRL_CARTESIAN_IMPEDANCE) return;
    if (feas_impedance(cfg, &cfg->impedance, &cfg->model.payload, NULL, why, sizeof why)) {
        const char *key =
            strstr(why, "rotation") ? "rotational_stiffness" : "translational_stiffness";
        at(c, "impedance", cfg_entry_find(c, "impedance", key) ? key : "damping_ratio", &file,
           &line);
        cfg_err(c, file, line, "impedance",
                cfg_entry_find(c, "impedance", key) ? key : "damping_ratio", "%s", why);
    }
}
