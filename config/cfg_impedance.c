/* cfg_impedance.c — the [impedance] section: the cartesian_impedance law's stiffness and damping
 * ratio per task axis (config.h cfg_impedance). Its stability against the loop's sampling is
 * checked with the other feasibility checks (cfg_feasible.c). */
#include "config/cfg_internal.h"

const char *const cfg_impedance_keys[] = {"translational_stiffness", "rotational_stiffness",
                                          "damping_ratio", "guide_damping", NULL};

/* One number for the three axes, or one per axis (x, y, z) into out[0..3). */
static void get_three(cfg_ctx *c, const char *key, double hi, const char *unit, double *out)
{
    double v[3];
    int k = cfg_get_list(c, "impedance", key, 3, "x, y, z", ((cfg_range){0, hi, false, false}),
                         unit, v);
    for (int i = 0; k > 0 && i < 3; i++) out[i] = v[k == 3 ? i : 0];
}

void cfg_apply_impedance(cfg_ctx *c, armd_config *cfg)
{
    cfg_impedance *m = &cfg->impedance;
    get_three(c, "translational_stiffness", 1e6, "N/m", m->stiffness);
    get_three(c, "rotational_stiffness", 1e5, "N m/rad", m->stiffness + 3);
    double z[6];
    int k = cfg_get_list(c, "impedance", "damping_ratio", 6, "x, y, z, rx, ry, rz",
                         ((cfg_range){0, 10, false, false}), "", z);
    for (int i = 0; k > 0 && i < 6; i++) m->damping_ratio[i] = z[k == 6 ? i : 0];
    cfg_get_vec(c, "impedance", "guide_damping", false, 2, ((cfg_range){0, 1e5, false, false}),
                "N s/m, N m s/rad", m->guide_damping);
}
