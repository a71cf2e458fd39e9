/* cfg_load.c — cfg_load / cfg_load_string: defaults, parse, schema, validation, report. */
#include <string.h>

#include "config/cfg_internal.h"

/* The value of every optional key when the file does not give it (documented in armd.conf(5),
 * config/armd.conf.5.md: change both together). */
static void set_defaults(armd_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->controller = CTRL_COMPUTED_TORQUE;
    cfg->velocity_source = VELOCITY_DEVICE;
    cfg->coulomb_velocity = COULOMB_DESIRED;
    cfg->coulomb_width = 0.01;
    cfg->viscous_velocity = VISCOUS_MEASURED;
    cfg->model.gravity[2] = -9.81;
    cfg->driver.baud = 1000000;
    cfg->driver.timeout_us = 1000;
    cfg->driver.retries = 1;
    cfg->driver.bus_watchdog_ms = 100;
    cfg->driver.device_watchdog_ms = 100;
    cfg->socket.mode = 0660;
    cfg->socket.max_clients = 8;
    cfg->socket.stall_timeout = 2;
    cfg->socket.idle_timeout = 300;
    cfg->realtime.cpu = -1;
    cfg->safety.max_failed_reads = 3;
    cfg->safety.max_read_gap_ms = 20;
    cfg->safety.on_fault = ON_FAULT_TORQUE_OFF;
    cfg->safety.damp_stop_velocity = 0.05;
    cfg->safety.damp_timeout = 2.0;
    cfg->safety.collision = COLLISION_OFF;
    cfg->safety.collision_reaction = REACT_STOP;
    cfg->safety.collision_filter = 100;
    cfg->safety.collision_retract = 0.1;
    cfg->trajectory.goal_tolerance = 0.01;
    cfg->trajectory.settle_time = 0.1;
    cfg->trajectory.path_tolerance = 0.05;
    cfg->trajectory.shaper = SHAPE_NONE;
    cfg->trajectory.shaper_damping = 0.05;
    cfg->trajectory.linear_speed = 0.1;
    cfg->trajectory.linear_acceleration = 0.5;
    cfg->trajectory.angular_speed = 0.5;
    cfg->trajectory.angular_acceleration = 2.0;
    for (int i = 0; i < 6; i++) {
        cfg->impedance.stiffness[i] = i < 3 ? 500 : 10;
        cfg->impedance.damping_ratio[i] = 0.7;
    }
    cfg->impedance.guide_damping[0] = 50;
    cfg->impedance.guide_damping[1] = 2;
    /* [tool NAME] (present only with the section); speed and force default to min(0.05,
     * velocity) and max_force / 2 (cfg_tool.c) */
    cfg->tool.counts_per_rev = 4096;
    cfg->tool.tolerance = 0.001;
    cfg->tool.epsilon = 0.005;
    cfg->tool.timeout = 5;
    for (int i = 0; i < CFG_MAX_JOINTS; i++) {
        cfg_joint *j = &cfg->joint[i];
        j->following_error = 0.1;
        j->counts_per_rev = 4096;
        j->gear_ratio = 1;
        j->torque_per_amp = 1;
        for (int k = 0; k < CFG_MAX_IDS; k++) j->direction[k] = 1;
    }
}

/* Applies the schema to what was parsed and moves the messages into rep. */
static int finish(cfg_ctx *c, armd_config *cfg, cfg_report *rep)
{
    cfg_apply_arm(c, cfg);
    cfg_apply_joints(c, cfg);
    cfg_apply_tool(c, cfg);
    cfg_check_unknown_keys(c);
    cfg_validate_model(c, cfg);
    int errors = c->n_errors + (c->oom ? 1 : 0);
    cfg_msgs_to_report(c, rep);
    cfg_ctx_free(c);
    return errors;
}

/* Loads PATH, then PATH-without-.ini + ".d/ *.ini" in byte order; see config.h. */
int cfg_load(const char *path, armd_config *cfg, cfg_report *rep)
{
    cfg_ctx c = {0};
    set_defaults(cfg);
    snprintf(cfg->source, sizeof(cfg->source), "%s", path);
    if (cfg_parse_path(&c, path) < 0) {
        int errors = c.n_errors + (c.oom ? 1 : 0);
        cfg_msgs_to_report(&c, rep);
        cfg_ctx_free(&c);
        return errors > 0 ? errors : 1;
    }
    cfg_parse_dropins(&c, path);
    return finish(&c, cfg, rep);
}

/* Loads from a string; name stands for the file in messages. */
int cfg_load_string(const char *text, const char *name, armd_config *cfg, cfg_report *rep)
{
    cfg_ctx c = {0};
    set_defaults(cfg);
    snprintf(cfg->source, sizeof(cfg->source), "%s", name ? name : "<string>");
    int f = cfg_ctx_add_file(&c, name ? name : "<string>");
    if (f >= 0 && text) cfg_parse_text(&c, f, text, strlen(text));
    return finish(&c, cfg, rep);
}

const char *const cfg_collision_reaction_names[] = {"stop", "damp", "retract", "float", NULL};
const char *const cfg_shaper_names[] = {"none", "zv", "zvd", "ei", NULL};

const char *const cfg_controller_names[] = {"computed_torque", "pd_gravity", "gravity_comp",
                                            "cartesian_impedance", NULL};
#define N_CONTROLLERS 4

/* The name of cfg_controller_names (or "?" for a bad value). */
const char *cfg_controller_name(cfg_controller c)
{
    unsigned i = (unsigned)c;
    return i < N_CONTROLLERS ? cfg_controller_names[i] : "?";
}

/* The controller with that name: 0, or -1 if unknown. */
int cfg_controller_parse(const char *name, cfg_controller *out)
{
    for (int i = 0; name && i < N_CONTROLLERS; i++)
        if (strcmp(name, cfg_controller_names[i]) == 0) {
            *out = (cfg_controller)i;
            return 0;
        }
    return -1;
}
