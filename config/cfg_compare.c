/* cfg_compare.c — what a reload would change: live keys (gains, limits, safety, trajectory,
 * controller, the links' dynamics) and keys that need a restart (structure, kinematics,
 * devices, daemon, flexible links, the tool). */
#include <string.h>

#include "config/cfg_internal.h"

/* A comma-separated list in a fixed buffer; "..." marks truncation. */
typedef struct {
    char *buf;
    size_t len, used;
    int count;
} list;

static void add(list *l, const char *section, const char *key)
{
    l->count++;
    if (!l->buf || l->len == 0) return;
    char item[CFG_NAME_MAX + 64];
    snprintf(item, sizeof(item), "%s[%s] %s", l->count > 1 ? ", " : "", section, key);
    size_t n = strlen(item);
    if (l->used + n + 4 < l->len) {
        memcpy(l->buf + l->used, item, n + 1);
        l->used += n;
    } else if (l->used + 4 <= l->len && !strstr(l->buf, "...")) {
        memcpy(l->buf + l->used, "...", 4);
        l->used += 3;
    }
}

static bool vec_ne(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return true;
    return false;
}

#define CHK(l, sec, key, cond)                                                                     \
    do {                                                                                           \
        if (cond) add(l, sec, key);                                                                \
    } while (0)
/* The key named like the struct field: a number or enum, a vector of n, a string. */
#define DIFF(l, sec, x, y, field)        CHK(l, sec, #field, (x)->field != (y)->field)
#define DIFF_VEC(l, sec, x, y, field, n) CHK(l, sec, #field, vec_ne((x)->field, (y)->field, n))
#define DIFF_STR(l, sec, x, y, field)    CHK(l, sec, #field, strcmp((x)->field, (y)->field) != 0)

/* Joint i of a against joint k of b (same name). */
static void compare_joint(const armd_config *a, int i, const armd_config *b, int k, list *live,
                          list *restart)
{
    char sec[CFG_NAME_MAX + 8];
    snprintf(sec, sizeof(sec), "joint %s", a->joint[i].name);
    const cfg_joint *x = &a->joint[i], *y = &b->joint[k];
    const dyn_joint_desc *p = &a->model.joint[i], *q = &b->model.joint[k];
    DIFF(restart, sec, p, q, type);
    CHK(restart, sec, "dh", p->form != q->form);
    DIFF(restart, sec, p, q, a);
    DIFF(restart, sec, p, q, alpha);
    DIFF(restart, sec, p, q, d);
    DIFF(restart, sec, p, q, theta);
    DIFF_VEC(restart, sec, p, q, origin_xyz, 3);
    DIFF_VEC(restart, sec, p, q, origin_rpy, 3);
    DIFF_VEC(restart, sec, p, q, axis, 3);
    DIFF(live, sec, p, q, mass);
    DIFF_VEC(live, sec, p, q, com, 3);
    DIFF_VEC(live, sec, p, q, inertia, 6);
    DIFF(live, sec, p, q, armature);
    DIFF(live, sec, p, q, viscous);
    CHK(live, sec, "coulomb", p->coulomb_pos != q->coulomb_pos || p->coulomb_neg != q->coulomb_neg);
    DIFF(live, sec, x, y, lower);
    DIFF(live, sec, x, y, upper);
    DIFF(live, sec, x, y, velocity);
    DIFF(live, sec, x, y, acceleration);
    DIFF(live, sec, x, y, torque);
    DIFF(live, sec, x, y, kp);
    DIFF(live, sec, x, y, kd);
    DIFF(live, sec, x, y, ki);
    DIFF(live, sec, x, y, i_limit);
    DIFF(live, sec, x, y, following_error);
    DIFF(live, sec, x, y, damping);
    DIFF(live, sec, x, y, torque_rate_limit);
    DIFF(live, sec, x, y, collision_threshold);
    DIFF(live, sec, x, y, collision_band);
    bool ids = x->n_ids != y->n_ids, dir = false, zero = false;
    for (int s = 0; s < CFG_MAX_IDS; s++) {
        ids |= s < x->n_ids && x->id[s] != y->id[s];
        dir |= x->direction[s] != y->direction[s];
        zero |= x->zero_offset[s] != y->zero_offset[s];
    }
    CHK(restart, sec, "id", ids);
    CHK(restart, sec, "direction", dir);
    CHK(restart, sec, "zero_offset", zero);
    DIFF(restart, sec, x, y, counts_per_rev);
    DIFF(restart, sec, x, y, gear_ratio);
    DIFF(restart, sec, x, y, torque_per_amp);
    /* flexible links: armsim reads them at start; armd does not use them (restart-only) */
    const dyn_flex_link *f = &a->flex.link[i], *g = &b->flex.link[k];
    CHK(restart, sec, "flex_modes",
        f->modes_y != g->modes_y || f->modes_z != g->modes_z || f->modes_x != g->modes_x);
    CHK(restart, sec, "flex_length", f->length != g->length);
    CHK(restart, sec, "flex_mass", f->mass != g->mass);
    CHK(restart, sec, "flex_ei", f->EI_z != g->EI_z || f->EI_y != g->EI_y);
    CHK(restart, sec, "flex_gj", f->GJ != g->GJ);
    CHK(restart, sec, "flex_polar", f->polar != g->polar);
    CHK(restart, sec, "flex_damping", f->damping != g->damping);
}

/* Index of the joint named name in c, or -1. */
static int joint_index(const armd_config *c, const char *name)
{
    for (int i = 0; i < c->n_joints; i++)
        if (strcmp(c->joint[i].name, name) == 0) return i;
    return -1;
}

/* [tool NAME]: added, removed or renamed, or any key changed: all restart (the driver probes
 * the tool servo and sets its mode at start). */
static void compare_tool(const cfg_tool *x, const cfg_tool *y, list *restart)
{
    char sec[CFG_NAME_MAX + 8];
    if (x->present && (!y->present || strcmp(x->name, y->name) != 0)) {
        snprintf(sec, sizeof(sec), "tool %s", x->name);
        add(restart, sec, "(removed)");
    }
    if (y->present && (!x->present || strcmp(x->name, y->name) != 0)) {
        snprintf(sec, sizeof(sec), "tool %s", y->name);
        add(restart, sec, "(added)");
    }
    if (!x->present || !y->present || strcmp(x->name, y->name) != 0) return;
    snprintf(sec, sizeof(sec), "tool %s", x->name);
    DIFF(restart, sec, x, y, id);
    DIFF(restart, sec, x, y, zero_offset);
    DIFF(restart, sec, x, y, counts_per_rev);
    DIFF(restart, sec, x, y, opening_at_zero);
    DIFF(restart, sec, x, y, m_per_rad);
    DIFF(restart, sec, x, y, torque_per_amp);
    DIFF(restart, sec, x, y, lower);
    DIFF(restart, sec, x, y, upper);
    DIFF(restart, sec, x, y, velocity);
    DIFF(restart, sec, x, y, speed);
    DIFF(restart, sec, x, y, max_force);
    DIFF(restart, sec, x, y, force);
    DIFF(restart, sec, x, y, tolerance);
    DIFF(restart, sec, x, y, epsilon);
    DIFF(restart, sec, x, y, timeout);
}

/* Lists changed keys; returns 1 if any needs a restart (see config.h). */
int cfg_compare(const armd_config *a, const armd_config *b, char *changed, size_t changed_len,
                char *restart_keys, size_t restart_len)
{
    list live = {changed, changed_len, 0, 0}, rs = {restart_keys, restart_len, 0, 0};
    if (changed && changed_len) changed[0] = 0;
    if (restart_keys && restart_len) restart_keys[0] = 0;
    const dyn_model_desc *m = &a->model, *n = &b->model;
    /* [arm] */
    DIFF_STR(&rs, "arm", a, b, name);
    DIFF(&rs, "arm", a, b, rate_hz);
    DIFF_VEC(&rs, "arm", m, n, gravity, 3);
    DIFF(&live, "arm", a, b, controller);
    DIFF_VEC(&rs, "arm", m, n, tool_xyz, 3);
    DIFF_VEC(&rs, "arm", m, n, tool_rpy, 3);
    CHK(&rs, "arm", "payload_mass", m->payload.mass != n->payload.mass);
    DIFF(&live, "arm", a, b, max_payload);
    CHK(&rs, "arm", "payload_com", vec_ne(m->payload.com, n->payload.com, 3));
    CHK(&rs, "arm", "payload_inertia", vec_ne(m->payload.inertia, n->payload.inertia, 6));
    DIFF(&rs, "arm", a, b, velocity_source);
    DIFF(&live, "arm", a, b, velocity_filter_hz);
    DIFF(&rs, "arm", m, n, friction_smoothing);
    DIFF(&live, "arm", a, b, coulomb_velocity);
    DIFF(&live, "arm", a, b, coulomb_width);
    DIFF(&live, "arm", a, b, viscous_velocity);
    /* [driver], [socket], [realtime]: all need a restart */
    const cfg_driver *d = &a->driver, *e = &b->driver;
    DIFF(&rs, "driver", d, e, type);
    DIFF_STR(&rs, "driver", d, e, port);
    DIFF(&rs, "driver", d, e, baud);
    DIFF(&rs, "driver", d, e, timeout_us);
    DIFF(&rs, "driver", d, e, retries);
    DIFF(&rs, "driver", d, e, return_delay_us);
    DIFF(&rs, "driver", d, e, bus_watchdog_ms);
    DIFF(&rs, "driver", d, e, fast_sync_read);
    DIFF(&rs, "driver", d, e, device_watchdog_ms);
    DIFF(&rs, "driver", d, e, allow_no_watchdog);
    DIFF_STR(&rs, "socket", &a->socket, &b->socket, path);
    DIFF(&rs, "socket", &a->socket, &b->socket, mode);
    DIFF_STR(&rs, "socket", &a->socket, &b->socket, group);
    DIFF(&rs, "socket", &a->socket, &b->socket, max_clients);
    DIFF(&rs, "socket", &a->socket, &b->socket, stall_timeout);
    DIFF(&rs, "socket", &a->socket, &b->socket, idle_timeout);
    DIFF(&rs, "realtime", &a->realtime, &b->realtime, priority);
    DIFF(&rs, "realtime", &a->realtime, &b->realtime, cpu);
    DIFF(&rs, "realtime", &a->realtime, &b->realtime, lock_memory);
    /* [safety], [trajectory]: live */
    DIFF(&live, "safety", &a->safety, &b->safety, max_failed_reads);
    DIFF(&live, "safety", &a->safety, &b->safety, max_read_gap_ms);
    DIFF(&live, "safety", &a->safety, &b->safety, on_fault);
    DIFF(&live, "safety", &a->safety, &b->safety, damp_stop_velocity);
    DIFF(&live, "safety", &a->safety, &b->safety, damp_timeout);
    DIFF(&live, "safety", &a->safety, &b->safety, collision);
    DIFF(&live, "safety", &a->safety, &b->safety, collision_reaction);
    DIFF(&live, "safety", &a->safety, &b->safety, collision_filter);
    DIFF(&live, "safety", &a->safety, &b->safety, collision_retract);
    DIFF(&live, "safety", &a->safety, &b->safety, max_tool_force);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, goal_tolerance);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, settle_time);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, path_tolerance);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, shaper);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, shaper_freq);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, shaper_damping);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, linear_speed);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, linear_acceleration);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, angular_speed);
    DIFF(&live, "trajectory", &a->trajectory, &b->trajectory, angular_acceleration);
    const cfg_impedance *ia = &a->impedance, *ib = &b->impedance;
    CHK(&live, "impedance", "translational_stiffness", vec_ne(ia->stiffness, ib->stiffness, 3));
    CHK(&live, "impedance", "rotational_stiffness",
        vec_ne(ia->stiffness + 3, ib->stiffness + 3, 3));
    DIFF_VEC(&live, "impedance", ia, ib, damping_ratio, 6);
    DIFF_VEC(&live, "impedance", ia, ib, guide_damping, 2);
    /* joints: added, removed, reordered (restart), then key by key by name */
    char sec[CFG_NAME_MAX + 8];
    for (int i = 0; i < a->n_joints; i++)
        if (joint_index(b, a->joint[i].name) < 0) {
            snprintf(sec, sizeof(sec), "joint %s", a->joint[i].name);
            add(&rs, sec, "(removed)");
        }
    for (int k = 0; k < b->n_joints; k++)
        if (joint_index(a, b->joint[k].name) < 0) {
            snprintf(sec, sizeof(sec), "joint %s", b->joint[k].name);
            add(&rs, sec, "(added)");
        }
    bool order = false;
    for (int i = 0; i < a->n_joints; i++) {
        int k = joint_index(b, a->joint[i].name);
        if (k < 0) continue;
        order |= k != i;
        compare_joint(a, i, b, k, &live, &rs);
    }
    if (order && a->n_joints == b->n_joints) add(&rs, "arm", "joint order");
    compare_tool(&a->tool, &b->tool, &rs);
    return rs.count > 0;
}
