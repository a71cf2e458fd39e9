/*
 * gripper.c — the tool servo's fingers and the object between them (gripper.h): the profile's
 * reference, the fingers' rest opening under the motor's and the object's forces, the step in
 * time. Device thread.
 */
#include "tools/armsim/gripper.h"

#include <math.h>
#include <string.h>

/* x clamped into [-lim, lim] (lim >= 0). */
static double clampf(double x, double lim)
{
    return x > lim ? lim : x < -lim ? -lim : x;
}

/* See gripper.h: kp [N/m] = GRIPPER_SHAFT_STIFFNESS [N m/rad] / m_per_rad^2 [m^2/rad^2], so
 * that the torque kp e m_per_rad on the shaft per shaft error e / m_per_rad is the servo's. */
void gripper_init(gripper *g, const cfg_tool *tool, const armsim_options *o, double x0)
{
    memset(g, 0, sizeof *g);
    g->kp = GRIPPER_SHAFT_STIFFNESS / (tool->m_per_rad * tool->m_per_rad);
    g->object = o->object.on;
    g->width = o->object.width;
    g->stiffness = o->object.stiffness;
    g->x = g->ref = x0;
}

/* Whether the motor drives at t_ns [ns]: commanded active with some force, before the
 * watchdog's expiry. */
static bool drives_at(const gripper *g, uint64_t t_ns)
{
    const gripper_cmd *c = &g->cmd;
    return c->active && c->force > 0.0 && (c->expiry_ns == 0 || t_ns < c->expiry_ns);
}

/* The opening [m] where the fingers rest for reference ref [m] and force limit fmax [N]: the
 * root of f_motor(x) + f_object(x) = 0, both non-increasing in x (gripper.h lists the cases),
 * at least 0 (the fingers meet). */
static double rest_opening(const gripper *g, double ref, double fmax)
{
    double x = ref;
    if (g->object && ref < g->width) {
        x = (g->kp * ref + g->stiffness * g->width) / (g->kp + g->stiffness);
        if (g->kp * (x - ref) > fmax) x = g->width - fmax / g->stiffness;
    }
    return x > 0.0 ? x : 0.0;
}

/* One step to t_ns [ns] under the drive state at its start: the reference moves toward the goal
 * by speed dt [m], the fingers toward their rest opening by at most max_speed dt [m]. */
static void step_to(gripper *g, uint64_t t_ns)
{
    double dt = (double)(t_ns - g->t_ns) * 1e-9;
    bool drive = drives_at(g, g->t_ns);
    g->t_ns = t_ns;
    if (!drive) {
        g->driving = false;
        g->rate = 0.0;
        g->f_motor = 0.0;
        return;
    }
    if (!g->driving) g->ref = g->x; /* the profile starts where the fingers are */
    g->driving = true;
    const gripper_cmd *c = &g->cmd;
    double to_goal = c->goal - g->ref, travel = fmax(c->speed, 0.0) * dt;
    g->ref = fabs(to_goal) <= travel ? c->goal : g->ref + copysign(travel, to_goal);
    double dx = clampf(rest_opening(g, g->ref, c->force) - g->x, fmax(c->max_speed, 0.0) * dt);
    g->x += dx;
    g->rate = dx / dt;
    g->f_motor = clampf(g->kp * (g->ref - g->x), c->force);
}

/* See gripper.h. */
void gripper_command(gripper *g, const gripper_cmd *c, bool new_goal)
{
    g->cmd = *c;
    if (new_goal) g->ref = g->x;
}

/* See gripper.h: one step, or two when the watchdog expires inside the span. */
void gripper_advance_to(gripper *g, uint64_t t_ns)
{
    if (!g->started) {
        g->started = true;
        g->t_ns = t_ns;
        return;
    }
    if (t_ns <= g->t_ns) return;
    uint64_t expiry = g->cmd.expiry_ns;
    if (expiry > g->t_ns && expiry < t_ns) step_to(g, expiry);
    step_to(g, t_ns);
}

/* -f_motor [N]. */
double gripper_closing_force(const gripper *g)
{
    return -g->f_motor;
}
