/*
 * linear.c — move_linear (control.h): the request checked, the goal pose made from it and the
 * pose where the move starts, the line planned into a free plan slot (traj_linear.h), its
 * torques checked (physical.c) and the plan handed over like any trajectory. Main thread only.
 */
#include <math.h>
#include <string.h>

#include "daemon/host/host.h"
#include "daemon/traj_linear.h"

#define LINEAR_SPEED_MAX 10.0  /* [m/s]: the bounds of [trajectory] linear_speed ... */
#define LINEAR_ACCEL_MAX 100.0 /* [m/s^2]: ... and linear_acceleration */

/* R (3x3 row-major) of the quaternion q = (w, x, y, z), normalised first. */
static void quat_to_rot(const double q[4], double R[9])
{
    const double s = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    const double w = q[0] / s, x = q[1] / s, y = q[2] / s, z = q[3] / s;
    const double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                         2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

/* req's numbers: finite xyz, a unit quaternion (to 1e-3) when given, speed and acceleration 0
 * (the defaults) or within (0, max]. 0, or -1 with err. */
static int check_request(const ctl_linear *req, ctl_error *err)
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(req->xyz[i])) {
            ctl_error_set(err, "invalid_params", "%s: %c is not a finite number [m]",
                          req->relative ? "offset" : "position", "xyz"[i]);
            return -1;
        }
    if (req->has_orientation) {
        if (req->relative) {
            ctl_error_set(err, "invalid_params",
                          "an orientation goes with a goal position, not with an offset");
            return -1;
        }
        double n2 = 0;
        for (int i = 0; i < 4; i++) n2 += req->quat[i] * req->quat[i];
        if (!(fabs(sqrt(n2) - 1) <= 1e-3)) {
            ctl_error_set(err, "invalid_params",
                          "orientation: |q| = %.6g, a unit quaternion (w, x, y, z) has 1",
                          sqrt(n2));
            return -1;
        }
    }
    if (!(req->speed == 0 || (req->speed > 0 && req->speed <= LINEAR_SPEED_MAX))) {
        ctl_error_set(err, "invalid_params", "speed %g m/s: above 0 up to %g, or 0 for the default",
                      req->speed, LINEAR_SPEED_MAX);
        return -1;
    }
    if (!(req->acceleration == 0 ||
          (req->acceleration > 0 && req->acceleration <= LINEAR_ACCEL_MAX))) {
        ctl_error_set(err, "invalid_params",
                      "acceleration %g m/s^2: above 0 up to %g, or 0 for the default",
                      req->acceleration, LINEAR_ACCEL_MAX);
        return -1;
    }
    return 0;
}

/* The goal pose of req from the start pose (both 3x4 in the base frame): the start's position
 * plus the offset (turned into the base frame from the start's tool axes for CTL_FRAME_TOOL),
 * or the position given; the orientation given, or the start's. */
static void goal_pose(const ctl_linear *req, const double start[12], double goal[12])
{
    memcpy(goal, start, 12 * sizeof(double));
    for (int i = 0; i < 3; i++) {
        double v = req->xyz[i];
        if (req->relative && req->frame == CTL_FRAME_TOOL)
            v = start[4 * i] * req->xyz[0] + start[4 * i + 1] * req->xyz[1] +
                start[4 * i + 2] * req->xyz[2];
        goal[4 * i + 3] = req->relative ? start[4 * i + 3] + v : v;
    }
    if (req->has_orientation) {
        double R[9];
        quat_to_rot(req->quat, R);
        for (int i = 0; i < 3; i++) memcpy(goal + 4 * i, R + 3 * i, 3 * sizeof(double));
    }
}

/* -1 with err ("bad_state") when the start state s is not at rest. */
static int check_at_rest(const ctl *c, const traj_state *s, ctl_error *err)
{
    for (int j = 0; j < c->n; j++)
        if (!(fabs(s->qd[j]) <= 1e-9 && fabs(s->qdd[j]) <= 1e-9)) {
            ctl_error_set(err, "bad_state",
                          "the arm is moving (joint %s at %.3g rad/s): a line starts at rest; "
                          "wait for the move to end, append the line to it, or cancel it",
                          c->cfg.joint[j].name, s->qd[j]);
            return -1;
        }
    return 0;
}

int ctl_move_linear(ctl *c, const ctl_linear *req, uint32_t *id, double *duration,
                    const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = -1;
    dyn_model *m = NULL;
    dyn_data *d = NULL;
    if (!req) {
        ctl_error_set(err, "invalid_params", "move_linear needs a goal");
        goto out;
    }
    if (host_check_enabled(c, err) || check_request(req, err)) goto out;
    int slot = host_plan_free_slot(c, err);
    if (slot < 0) goto out;
    traj_state s;
    uint32_t after;
    host_plan_start(c, req->append, &s, &after);
    if (check_at_rest(c, &s, err)) goto out;
    dyn_model_desc desc = c->cfg.model;
    desc.payload = c->payload;
    m = dyn_model_create(&desc, NULL, NULL);
    d = m ? dyn_data_create(m) : NULL;
    if (!d) { /* the running model was valid: only memory can fail */
        ctl_error_set(err, "internal", "out of memory planning the line");
        goto out;
    }
    const cfg_trajectory *ct = &c->cfg.trajectory;
    traj_line line = {.orientation = req->has_orientation,
                      .task = traj_linear_task(c->n),
                      .l = {req->speed > 0 ? req->speed : ct->linear_speed,
                            req->acceleration > 0 ? req->acceleration : ct->linear_acceleration,
                            ct->angular_speed, ct->angular_acceleration}};
    double start[12];
    dyn_fk(m, d, s.q, NULL, start);
    goal_pose(req, start, line.goal);
    if (traj_linear_build(&c->plans[slot], &c->lim, m, d, &s, &line, err)) goto out;
    if (host_plan_feasible(c, &c->plans[slot], err)) goto out;
    rc = host_submit_plan(c, slot, req->append, after, host_reply_target(to, &w, &self), err);
out:
    dyn_data_free(d);
    dyn_model_free(m);
    return host_traj_finish(c, to, &w, rc, id, duration, err);
}
