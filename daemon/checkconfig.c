/*
 * checkconfig.c — `armd --check-config FILE` (see checkconfig.h). No device is opened.
 */
#include "daemon/checkconfig.h"

#include <math.h>
#include <stdlib.h>

#include "config/config.h"
#include "daemon/dyngen.h"
#include "daemon/shaper.h"
#include "drivers/drivers.h"
#include "dynamics/dynamics.h"

/* "input shaper: zvd for 4.5 Hz, damping 0.02: 0.25 at 0 s, ...; trajectories 0.22 s longer"
 * (nothing without a shaper). */
static void print_shaper(const cfg_trajectory *t, FILE *out)
{
    static const shaper_kind kinds[] = {[SHAPE_NONE] = SHAPER_NONE,
                                        [SHAPE_ZV] = SHAPER_ZV,
                                        [SHAPE_ZVD] = SHAPER_ZVD,
                                        [SHAPE_EI] = SHAPER_EI};
    shaper s;
    if (t->shaper == SHAPE_NONE ||
        shaper_design(&s, kinds[t->shaper], t->shaper_freq, t->shaper_damping))
        return;
    fprintf(out, "input shaper: %s for %g Hz, damping %g: impulses", cfg_shaper_names[t->shaper],
            t->shaper_freq, t->shaper_damping);
    for (int i = 0; i < s.n; i++) fprintf(out, "%s %.4f at %.4f s", i ? "," : "", s.a[i], s.t[i]);
    fprintf(out, "; trajectories %.4f s longer\n", shaper_duration(&s));
}

int armd_check_config(const char *path, FILE *out)
{
    armd_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) return 2;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, cfg, &rep);
    cfg_report_print(&rep, out);
    cfg_report_free(&rep);
    if (errors) {
        fprintf(out, "%s: not valid\n", path);
        free(cfg);
        return 2;
    }
    /* cfg_load already ran the model's checks and reported them with file and line */
    dyn_model *m = dyn_model_create(&cfg->model, NULL, NULL);
    dyn_data *d = m ? dyn_data_create(m) : NULL;
    if (!m || !d) {
        fprintf(out, "%s: the dynamics model cannot be built\n", path);
        dyn_data_free(d);
        dyn_model_free(m);
        free(cfg);
        return 2;
    }
    int n = cfg->n_joints;
    double q0[CFG_MAX_JOINTS] = {0}, g0[CFG_MAX_JOINTS] = {0};
    dyn_gravity(m, d, q0, g0);

    double period_us = 1e6 / cfg->rate_hz;
    fprintf(out, "arm %s: %d joints, %g Hz (period %.0f us), controller %s\n", cfg->name, n,
            cfg->rate_hz, period_us, cfg_controller_name(cfg->controller));
    fprintf(out, "driver %s on %s at %d baud\n",
            cfg->driver.type == DRIVER_DXL2 ? "dxl2" : "armlink", cfg->driver.port,
            cfg->driver.baud);
    bool dxl = cfg->driver.type == DRIVER_DXL2;
    int wd_ms = dxl ? cfg->driver.bus_watchdog_ms : cfg->driver.device_watchdog_ms;
    if (wd_ms > 0)
        fprintf(out, "watchdog: the %s the torque after %d ms of silence on the bus\n",
                dxl ? "servos cut" : "board cuts", wd_ms);
    else
        fprintf(out,
                "warning: no watchdog (%s = 0, allow_no_watchdog = true): if armd stops "
                "talking, the last torque stays applied\n",
                dxl ? "bus_watchdog_ms" : "device_watchdog_ms");
    const cfg_safety *sf = &cfg->safety;
    if (sf->collision == COLLISION_OFF) {
        fprintf(out, "collision detection: off\n");
    } else {
        fprintf(out, "collision detection: %s, observer %g 1/s (time constant %.1f ms)",
                sf->collision == COLLISION_REACT ? "react" : "detect (events only)",
                sf->collision_filter, 1e3 / sf->collision_filter);
        if (sf->collision == COLLISION_REACT)
            fprintf(out, ", reaction %s", cfg_collision_reaction_names[sf->collision_reaction]);
        if (sf->collision == COLLISION_REACT && sf->collision_reaction == REACT_RETRACT)
            fprintf(out, " (%g rad back along the path)", sf->collision_retract);
        fprintf(out, "; thresholds");
        for (int i = 0; i < cfg->n_joints; i++)
            fprintf(out, " %g", cfg->joint[i].collision_threshold);
        fprintf(out, "\n");
    }
    print_shaper(&cfg->trajectory, out);
    fprintf(out, "\n%-3s %-16s %-9s %10s %10s %10s %12s %12s\n", "#", "joint", "type", "lower",
            "upper", "mass[kg]", "torque lim", "G(0)");
    double mass = cfg->model.payload.mass;
    for (int i = 0; i < n; i++) {
        const cfg_joint *j = &cfg->joint[i];
        bool prism = cfg->model.joint[i].type == DYN_PRISMATIC;
        mass += cfg->model.joint[i].mass;
        fprintf(out, "%-3d %-16s %-9s %10.4f %10.4f %10.3f %9.3f %-2s %9.3f %-2s%s\n", i + 1,
                j->name, prism ? "prismatic" : "revolute", j->lower, j->upper,
                cfg->model.joint[i].mass, j->torque, prism ? "N" : "Nm", g0[i], prism ? "N" : "Nm",
                fabs(g0[i]) > j->torque ? "  (exceeds the limit!)" : "");
    }
    fprintf(out, "(positions in rad or m)\n\n");
    fprintf(out, "total mass: %.3f kg (payload %.3f kg)\n", mass, cfg->model.payload.mass);
    int status = 0;
    for (int i = 0; i < n; i++)
        if (fabs(g0[i]) > cfg->joint[i].torque) {
            fprintf(out,
                    "warning: joint %s: gravity torque at the zero pose %.3f exceeds the "
                    "torque limit %.3f\n",
                    cfg->joint[i].name, g0[i], cfg->joint[i].torque);
        }
    double bus_us = drv_tick_bus_time_us(cfg);
    fprintf(out, "bus time per tick: %.0f us of the %.0f us period (%.0f %%)\n", bus_us, period_us,
            100.0 * bus_us / period_us);
    if (cfg->tool.present) {
        armd_config *bare = malloc(sizeof *bare);
        if (bare) {
            *bare = *cfg;
            bare->tool.present = false;
            fprintf(out,
                    "tool %s (servo %d): in the same Sync Read, its goal in the same write "
                    "(a Bulk Write on the ticks that change it): %+.0f us per tick at worst\n",
                    cfg->tool.name, cfg->tool.id, bus_us - drv_tick_bus_time_us(bare));
            free(bare);
        }
    }
    if (!(bus_us < period_us)) {
        fprintf(out,
                "error: one tick needs %.0f us on the bus but the period is %.0f us: lower "
                "[arm] rate_hz to at most %.0f Hz or raise [driver] baud\n",
                bus_us, period_us, floor(1e6 / bus_us));
        status = 1;
    } else if (bus_us > 0.7 * period_us) {
        fprintf(out,
                "warning: the bus is busy %.0f %% of each period; little margin for "
                "retries\n",
                100.0 * bus_us / period_us);
    }
    dyngen gen;
    dyngen_find(path, m, &gen);
    fprintf(out, "dynamics: %s\n", gen.what);
    dyngen_release(&gen);
    fprintf(out, "%s: %s\n", path, status ? "NOT usable" : "valid");
    dyn_data_free(d);
    dyn_model_free(m);
    free(cfg);
    return status;
}
