/* cfg_compare.c — what a reload would change: live keys (gains, limits, safety, trajectory,
 * controller) and keys that need a restart (structure, kinematics, dynamics, devices, daemon). */
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

/* Joint i of a against joint k of b (same name). */
static void compare_joint(const armd_config *a, int i, const armd_config *b, int k, list *live,
                          list *restart)
{
    char sec[CFG_NAME_MAX + 8];
    snprintf(sec, sizeof(sec), "joint %s", a->joint[i].name);
    const cfg_joint *x = &a->joint[i], *y = &b->joint[k];
    const dyn_joint_desc *p = &a->model.joint[i], *q = &b->model.joint[k];
    CHK(restart, sec, "type", p->type != q->type);
    CHK(restart, sec, "dh", p->form != q->form);
    CHK(restart, sec, "a", p->a != q->a);
    CHK(restart, sec, "alpha", p->alpha != q->alpha);
    CHK(restart, sec, "d", p->d != q->d);
    CHK(restart, sec, "theta", p->theta != q->theta);
    CHK(restart, sec, "origin_xyz", vec_ne(p->origin_xyz, q->origin_xyz, 3));
    CHK(restart, sec, "origin_rpy", vec_ne(p->origin_rpy, q->origin_rpy, 3));
    CHK(restart, sec, "axis", vec_ne(p->axis, q->axis, 3));
    CHK(restart, sec, "mass", p->mass != q->mass);
    CHK(restart, sec, "com", vec_ne(p->com, q->com, 3));
    CHK(restart, sec, "inertia", vec_ne(p->inertia, q->inertia, 6));
    CHK(restart, sec, "armature", p->armature != q->armature);
    CHK(restart, sec, "viscous", p->viscous != q->viscous);
    CHK(restart, sec, "coulomb",
        p->coulomb_pos != q->coulomb_pos || p->coulomb_neg != q->coulomb_neg);
    CHK(live, sec, "lower", x->lower != y->lower);
    CHK(live, sec, "upper", x->upper != y->upper);
    CHK(live, sec, "velocity", x->velocity != y->velocity);
    CHK(live, sec, "acceleration", x->acceleration != y->acceleration);
    CHK(live, sec, "torque", x->torque != y->torque);
    CHK(live, sec, "kp", x->kp != y->kp);
    CHK(live, sec, "kd", x->kd != y->kd);
    CHK(live, sec, "ki", x->ki != y->ki);
    CHK(live, sec, "i_limit", x->i_limit != y->i_limit);
    CHK(live, sec, "following_error", x->following_error != y->following_error);
    CHK(live, sec, "damping", x->damping != y->damping);
    CHK(live, sec, "torque_rate_limit", x->torque_rate_limit != y->torque_rate_limit);
    bool ids = x->n_ids != y->n_ids, dir = false, zero = false;
    for (int s = 0; s < CFG_MAX_IDS; s++) {
        ids |= s < x->n_ids && x->id[s] != y->id[s];
        dir |= x->direction[s] != y->direction[s];
        zero |= x->zero_offset[s] != y->zero_offset[s];
    }
    CHK(restart, sec, "id", ids);
    CHK(restart, sec, "direction", dir);
    CHK(restart, sec, "zero_offset", zero);
    CHK(restart, sec, "counts_per_rev", x->counts_per_rev != y->counts_per_rev);
    CHK(restart, sec, "gear_ratio", x->gear_ratio != y->gear_ratio);
    CHK(restart, sec, "torque_per_amp", x->torque_per_amp != y->torque_per_amp);
}

/* Index of the joint named name in c, or -1. */
static int joint_index(const armd_config *c, const char *name)
{
    for (int i = 0; i < c->n_joints; i++)
        if (strcmp(c->joint[i].name, name) == 0) return i;
    return -1;
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
    CHK(&rs, "arm", "name", strcmp(a->name, b->name) != 0);
    CHK(&rs, "arm", "rate_hz", a->rate_hz != b->rate_hz);
    CHK(&rs, "arm", "gravity", vec_ne(m->gravity, n->gravity, 3));
    CHK(&live, "arm", "controller", a->controller != b->controller);
    CHK(&rs, "arm", "tool_xyz", vec_ne(m->tool_xyz, n->tool_xyz, 3));
    CHK(&rs, "arm", "tool_rpy", vec_ne(m->tool_rpy, n->tool_rpy, 3));
    CHK(&rs, "arm", "payload_mass", m->payload.mass != n->payload.mass);
    CHK(&rs, "arm", "payload_com", vec_ne(m->payload.com, n->payload.com, 3));
    CHK(&rs, "arm", "payload_inertia", vec_ne(m->payload.inertia, n->payload.inertia, 6));
    CHK(&rs, "arm", "velocity_source", a->velocity_source != b->velocity_source);
    CHK(&live, "arm", "velocity_filter_hz", a->velocity_filter_hz != b->velocity_filter_hz);
    CHK(&rs, "arm", "friction_smoothing", m->friction_smoothing != n->friction_smoothing);
    /* [driver], [socket], [realtime]: all need a restart */
    const cfg_driver *d = &a->driver, *e = &b->driver;
    CHK(&rs, "driver", "type", d->type != e->type);
    CHK(&rs, "driver", "port", strcmp(d->port, e->port) != 0);
    CHK(&rs, "driver", "baud", d->baud != e->baud);
    CHK(&rs, "driver", "timeout_us", d->timeout_us != e->timeout_us);
    CHK(&rs, "driver", "retries", d->retries != e->retries);
    CHK(&rs, "driver", "return_delay_us", d->return_delay_us != e->return_delay_us);
    CHK(&rs, "driver", "bus_watchdog_ms", d->bus_watchdog_ms != e->bus_watchdog_ms);
    CHK(&rs, "driver", "fast_sync_read", d->fast_sync_read != e->fast_sync_read);
    CHK(&rs, "driver", "device_watchdog_ms", d->device_watchdog_ms != e->device_watchdog_ms);
    CHK(&rs, "socket", "path", strcmp(a->socket.path, b->socket.path) != 0);
    CHK(&rs, "socket", "mode", a->socket.mode != b->socket.mode);
    CHK(&rs, "socket", "group", strcmp(a->socket.group, b->socket.group) != 0);
    CHK(&rs, "socket", "max_clients", a->socket.max_clients != b->socket.max_clients);
    CHK(&rs, "realtime", "priority", a->realtime.priority != b->realtime.priority);
    CHK(&rs, "realtime", "cpu", a->realtime.cpu != b->realtime.cpu);
    CHK(&rs, "realtime", "lock_memory", a->realtime.lock_memory != b->realtime.lock_memory);
    /* [safety], [trajectory]: live */
    CHK(&live, "safety", "max_failed_reads",
        a->safety.max_failed_reads != b->safety.max_failed_reads);
    CHK(&live, "safety", "on_fault", a->safety.on_fault != b->safety.on_fault);
    CHK(&live, "safety", "damp_stop_velocity",
        a->safety.damp_stop_velocity != b->safety.damp_stop_velocity);
    CHK(&live, "safety", "damp_timeout", a->safety.damp_timeout != b->safety.damp_timeout);
    CHK(&live, "trajectory", "goal_tolerance",
        a->trajectory.goal_tolerance != b->trajectory.goal_tolerance);
    CHK(&live, "trajectory", "settle_time", a->trajectory.settle_time != b->trajectory.settle_time);
    CHK(&live, "trajectory", "path_tolerance",
        a->trajectory.path_tolerance != b->trajectory.path_tolerance);
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
    return rs.count > 0;
}
