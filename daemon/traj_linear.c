/*
 * traj_linear.c — straight-line tool moves turned into joint-space plans (traj_linear.h): the
 * line's geometry and timing, inverse kinematics waypoint by waypoint, and the check of the
 * plan's own tool path against the line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/traj_linear.h"

dyn_ik_task traj_linear_task(int n)
{
    return n >= 6 ? DYN_IK_FULL : n >= 4 ? DYN_IK_POSITION_PITCH : DYN_IK_POSITION;
}

/* The line: position p(s) = p0 + s dp; orientation R(s) = R0 Exp(s angle axis), the axis in
 * the start's tool frame (full task), or the pitch pitch0 + s dpitch (position + pitch);
 * s in [0, 1] the quintic of t / T. */
typedef struct {
    dyn_ik_task task;
    double p0[3], dp[3], len;
    double R0[9], axis[3], angle;
    double pitch0, dpitch;
    double T;
} line_geom;

/* The pitch of a rotation (dynamics.h DYN_IK_POSITION_PITCH): atan2(-u_x, u_z), u its third
 * row; NAN when the tool y axis is vertical (|(u_x, u_z)| below 1e-6: no pitch). */
static double pitch_of(const double *R, int stride)
{
    const double ux = R[2 * stride], uz = R[2 * stride + 2];
    return hypot(ux, uz) < 1e-6 ? NAN : atan2(-ux, uz);
}

/* R = Exp(v) (Rodrigues), v a rotation vector [rad]. */
static void rot_exp(const double v[3], double R[9])
{
    const double th = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double a = th < 1e-8 ? 1 - th * th / 6 : sin(th) / th;
    const double b = th < 1e-8 ? 0.5 - th * th / 24 : (1 - cos(th)) / (th * th);
    const double K[9] = {0, -v[2], v[1], v[2], 0, -v[0], -v[1], v[0], 0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double k2 = 0;
            for (int l = 0; l < 3; l++) k2 += K[3 * i + l] * K[3 * l + j];
            R[3 * i + j] = (i == j) + a * K[3 * i + j] + b * k2;
        }
}

/* The 3x4 pose of rotation R (3x3) and position p. */
static void make_pose(const double R[9], const double p[3], double T[12])
{
    for (int i = 0; i < 3; i++) {
        memcpy(T + 4 * i, R + 3 * i, 3 * sizeof(double));
        T[4 * i + 3] = p[i];
    }
}

/* The rotation vector of R_b^T R_a in R_b's own axes [rad] (poses, 3x4). */
static void rot_between(const double Ta[12], const double Tb[12], double v[3])
{
    double e[6]; /* e + 3 = log(R_a R_b^T) in the base frame; R_b^T of it: in R_b's axes */
    dyn_pose_error(Ta, Tb, e);
    for (int i = 0; i < 3; i++) v[i] = Tb[i] * e[3] + Tb[4 + i] * e[4] + Tb[8 + i] * e[5];
}

/* The target pose at s: p(s) and R(s) (yaw 0 for position + pitch: dyn_ik ignores it). */
static void target_at(const line_geom *g, double s, double T[12])
{
    double p[3], R[9];
    for (int i = 0; i < 3; i++) p[i] = g->p0[i] + s * g->dp[i];
    if (g->task == DYN_IK_FULL) {
        double v[3] = {s * g->angle * g->axis[0], s * g->angle * g->axis[1],
                       s * g->angle * g->axis[2]},
               E[9];
        rot_exp(v, E);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                R[3 * i + j] =
                    g->R0[3 * i] * E[j] + g->R0[3 * i + 1] * E[3 + j] + g->R0[3 * i + 2] * E[6 + j];
    } else if (g->task == DYN_IK_POSITION_PITCH) {
        const double b = g->pitch0 + s * g->dpitch; /* Ry(b) */
        const double Ry[9] = {cos(b), 0, sin(b), 0, 1, 0, -sin(b), 0, cos(b)};
        memcpy(R, Ry, sizeof R);
    } else {
        memcpy(R, g->R0, sizeof R);
    }
    make_pose(R, p, T);
}

/* The task rates for path rate sd (velocity rows) and their rates for sdd (xdd), in
 * dyn_ik_rates' rows. */
static void task_rates(const line_geom *g, double sd, double sdd, double *xd, double *xdd)
{
    for (int i = 0; i < 3; i++) xd[i] = sd * g->dp[i], xdd[i] = sdd * g->dp[i];
    if (g->task == DYN_IK_FULL)
        for (int i = 0; i < 3; i++) /* the slerp's angular velocity in tool axes: sd angle axis */
            xd[3 + i] = sd * g->angle * g->axis[i], xdd[3 + i] = sdd * g->angle * g->axis[i];
    else if (g->task == DYN_IK_POSITION_PITCH)
        xd[3] = sd * g->dpitch, xdd[3] = sdd * g->dpitch;
}

/* The geometry and duration of line from the tool pose start (3x4). 0, or -1 with err. */
static int make_geom(const traj_line *line, const double start[12], double period, line_geom *g,
                     traj_error *err)
{
    memset(g, 0, sizeof *g);
    g->task = line->task;
    for (int i = 0; i < 3; i++) {
        g->p0[i] = start[4 * i + 3];
        g->dp[i] = line->goal[4 * i + 3] - g->p0[i];
        for (int j = 0; j < 3; j++) g->R0[3 * i + j] = start[4 * i + j];
    }
    g->len = sqrt(g->dp[0] * g->dp[0] + g->dp[1] * g->dp[1] + g->dp[2] * g->dp[2]);
    if (line->task == DYN_IK_FULL && line->orientation) {
        double v[3];
        rot_between(line->goal, start, v); /* R0^T R_goal in the start's tool axes */
        g->angle = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int i = 0; i < 3; i++) g->axis[i] = g->angle > 0 ? v[i] / g->angle : 0;
    } else if (line->task == DYN_IK_POSITION_PITCH) {
        g->pitch0 = pitch_of(start, 4);
        const double p1 = line->orientation ? pitch_of(line->goal, 4) : g->pitch0;
        if (isnan(g->pitch0) || isnan(p1)) {
            ctl_error_set(err, "unreachable",
                          "the %s tool y axis is vertical: it has no pitch, which this arm's "
                          "moves follow (position and pitch)",
                          isnan(g->pitch0) ? "present" : "goal's");
            return -1;
        }
        g->dpitch = remainder(p1 - g->pitch0, 2 * M_PI);
    }
    const double turn = g->task == DYN_IK_FULL ? g->angle : fabs(g->dpitch);
    const traj_linear_limits *l = &line->l;
    g->T = fmax(traj_min_quintic_time(g->len, l->speed, l->acceleration),
                traj_min_quintic_time(turn, l->angular_speed, l->angular_acceleration));
    g->T = fmax(g->T, period);
    if (!(g->T <= TRAJ_MAX_DURATION)) {
        ctl_error_set(err, "limits",
                      "the line (%.4g m, %.4g rad) would take %.4g s at %.4g m/s and %.4g rad/s, "
                      "more than the %.0f s a move may",
                      g->len, turn, g->T, l->speed, l->angular_speed, TRAJ_MAX_DURATION);
        return -1;
    }
    return 0;
}

/* The path parameter at t [s] and its rates: the quintic s(tau) = tau^3 (10 - 15 tau + 6 tau^2),
 * tau = t / T, at rest outside [0, T], convolved with the shaper sh (sum of a_i s(t - t_i)):
 * shaping the path parameter keeps the tool on the line; its speed and acceleration stay
 * within the unshaped profile's peaks (a convex combination of them). */
static void path_at(const line_geom *g, const shaper *sh, double t, double *s, double *sd,
                    double *sdd)
{
    *s = *sd = *sdd = 0;
    for (int i = 0; i < sh->n; i++) {
        const double tau = fmin(fmax((t - sh->t[i]) / g->T, 0), 1);
        *s += sh->a[i] * tau * tau * tau * (10 - 15 * tau + 6 * tau * tau);
        *sd += sh->a[i] * 30 * tau * tau * (1 - tau) * (1 - tau) / g->T;
        *sdd += sh->a[i] * 60 * tau * (1 - tau) * (1 - 2 * tau) / (g->T * g->T);
    }
}

/* "waypoint K of N (P % along the line, tool at (x, y, z) m)" into buf. */
static void where(char *buf, size_t size, int k, int n, double s, const double T[12])
{
    snprintf(buf, size, "waypoint %d of %d (%.0f %% along the line, tool at (%.4f, %.4f, %.4f) m)",
             k, n, 100 * s, T[3], T[7], T[11]);
}

/* The smallest singular value of the task Jacobian met along the line, and where. */
typedef struct {
    double sigma;
    int k;
    char pos[128];
} near_singular;

/* The motion of the joints the task leaves free (an arm with more joints than the task has
 * rows) toward the middle of their ranges, in proportion to how fast the joints move (Liegeois
 * 1977's gradient of sum ((q_j - mid_j) / h_j)^2 / 2, h_j the half range):
 *   v0_j = -TRAJ_LINEAR_CENTERING |qd| c_j,  c_j = (q_j - mid_j) / h_j
 *   a0_j = d v0_j / dt = -TRAJ_LINEAR_CENTERING ((qd . qdd) / |qd| c_j + |qd| qd_j / h_j)
 * at q, with qd, qdd the joint rates (the previous waypoint's, 10 ms before: one rates solve
 * per waypoint); 0 at rest, and where a joint's range is not finite. Without it the least-norm
 * steps leave the posture a little elsewhere after every closed path, and repeated paths walk
 * it toward a limit. */
static void centering(const traj_limits *lim, const double *q, const double *qd, const double *qdd,
                      double *v0, double *a0)
{
    const int n = lim->n;
    double speed = 0, dot = 0;
    for (int j = 0; j < n; j++) speed += qd[j] * qd[j], dot += qd[j] * qdd[j];
    speed = sqrt(speed);
    const double dspeed = speed > 0 ? dot / speed : 0;
    for (int j = 0; j < n; j++) {
        const double h = (lim->upper[j] - lim->lower[j]) / 2;
        v0[j] = a0[j] = 0;
        if (!(h > 0) || !isfinite(h)) continue;
        const double c = (q[j] - (lim->upper[j] + lim->lower[j]) / 2) / h;
        v0[j] = -TRAJ_LINEAR_CENTERING * speed * c;
        a0[j] = -TRAJ_LINEAR_CENTERING * (dspeed * c + speed * qd[j] / h);
    }
}

/* The waypoints of g: IK from q0 onwards; w[k] at t = (k + 1) total / n_pts, the path
 * parameter shaped by lim->shape; *ns the closest approach to a singularity. 0, or -1 with
 * err. */
static int solve_waypoints(const dyn_model *m, dyn_data *d, const traj_limits *lim,
                           const line_geom *g, double total, const double *q0, ctl_waypoint *w,
                           int n_pts, near_singular *ns, traj_error *err)
{
    ns->sigma = INFINITY;
    const int n = lim->n;
    dyn_ik_opts opt = {.task = g->task, .lower = lim->lower, .upper = lim->upper};
    const double rest[CFG_MAX_JOINTS] = {0}; /* zero rates: task (6 at most) and joints */
    double qd[CFG_MAX_JOINTS];
    const int rows = dyn_ik_rates(m, d, q0, &opt, rest, NULL, qd, NULL);
    if (rows < 0) {
        ctl_error_set(err, "unreachable",
                      "the arm is at a singularity (a tool motion it cannot make from here): "
                      "move the joints away from it first (move_to)");
        return -1;
    }
    /* joints beyond the rows: centred, and each IK solve starts from the previous waypoint
     * moved on at its rates (its least-norm step keeps the null-space part of that) */
    const bool centre = rows < n;
    double guess[CFG_MAX_JOINTS], v0[CFG_MAX_JOINTS], a0[CFG_MAX_JOINTS];
    const double *prev = q0, *prev_qd = rest, *prev_qdd = rest;
    double t_prev = 0;
    for (int k = 0; k < n_pts; k++) {
        const double t = k + 1 == n_pts ? total : total * (k + 1) / n_pts;
        for (int j = 0; j < n; j++) guess[j] = prev[j] + (centre ? prev_qd[j] * (t - t_prev) : 0);
        double s, sd, sdd;
        path_at(g, &lim->shape, t, &s, &sd, &sdd);
        double target[12], xd[6], xdd[6];
        char pos[128];
        target_at(g, s, target);
        where(pos, sizeof pos, k + 1, n_pts, s, target);
        dyn_ik_result r;
        const int st = dyn_ik(m, d, target, guess, &opt, w[k].q, &r);
        if (st == DYN_IK_SINGULAR) {
            ctl_error_set(err, "unreachable",
                          "%s is at a singularity of the arm (smallest singular value %.2g of the "
                          "task Jacobian): the line cannot be followed through it; go around it "
                          "in two moves",
                          pos, r.sigma_min);
            return -1;
        }
        if (st != DYN_IK_OK) {
            ctl_error_set(err, "unreachable",
                          "%s is out of reach within the joint limits: the nearest pose found is "
                          "%.3g mm and %.3g deg from it",
                          pos, 1e3 * r.err_pos, r.err_rot * 180 / M_PI);
            return -1;
        }
        if (r.sigma_min < ns->sigma) {
            ns->sigma = r.sigma_min;
            ns->k = k + 1;
            memcpy(ns->pos, pos, sizeof pos);
        }
        task_rates(g, sd, sdd, xd, xdd);
        if (centre) centering(lim, w[k].q, prev_qd, prev_qdd, v0, a0);
        if (dyn_ik_rates_null(m, d, w[k].q, &opt, xd, xdd, centre ? v0 : NULL, centre ? a0 : NULL,
                              w[k].qd, w[k].qdd) < 0) {
            ctl_error_set(err, "unreachable",
                          "%s is next to a singularity of the arm: the line cannot be followed "
                          "through it; go around it in two moves",
                          pos);
            return -1;
        }
        if (k + 1 == n_pts) /* at rest at the end: exactly */
            for (int j = 0; j < n; j++) w[k].qd[j] = w[k].qdd[j] = 0;
        w[k].t = t;
        w[k].has_qd = w[k].has_qdd = true;
        prev = w[k].q;
        prev_qd = w[k].qd;
        prev_qdd = w[k].qdd;
        t_prev = t;
    }
    return 0;
}

/* A reduced task reaches a goal orientation only if it is the arm's at the end: -1 with err
 * when the end pose's orientation is more than 1e-6 rad from the goal's. */
static int check_end_orientation(const dyn_model *m, dyn_data *d, const traj_line *line,
                                 const double *q_end, traj_error *err)
{
    if (line->task == DYN_IK_FULL || !line->orientation) return 0;
    double T[12], v[3];
    dyn_fk(m, d, q_end, NULL, T);
    rot_between(line->goal, T, v);
    const double ang = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (ang <= 1e-6) return 0;
    ctl_error_set(err, "unreachable",
                  "this arm has %d joints and its tool follows %s only: at the goal position "
                  "its orientation is %.2f deg from the one asked; ask for the position alone%s",
                  dyn_model_dof(m),
                  line->task == DYN_IK_POSITION_PITCH ? "position and pitch" : "position",
                  ang * 180 / M_PI,
                  line->task == DYN_IK_POSITION_PITCH
                      ? ", or an orientation with the yaw the position gives and no roll"
                      : "");
    return -1;
}

/* The plan's tool path against the line: four samples per segment, each one's distance from
 * the segment p0 .. p0 + dp and (full task) its orientation's distance from the slerp's
 * geodesic. 0, or -1 with err at the worst sample beyond the tolerances. */
static int check_path(const dyn_model *m, dyn_data *d, const traj_plan *p, const line_geom *g,
                      traj_error *err)
{
    double worst_p = 0, worst_r = 0, t_worst = 0;
    int seg = 0;
    for (int k = 0; k < p->n_seg; k++)
        for (int i = 1; i <= 4; i++) {
            const double t = p->t0[k] + p->h[k] * i / 4.0;
            double q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS], qdd[CFG_MAX_JOINTS], T[12];
            traj_sample(p, t, &seg, q, qd, qdd);
            dyn_fk(m, d, q, NULL, T);
            double rel[3], along = 0, dist = 0;
            for (int j = 0; j < 3; j++) rel[j] = T[4 * j + 3] - g->p0[j];
            if (g->len > 0) {
                for (int j = 0; j < 3; j++) along += rel[j] * g->dp[j];
                along = fmin(fmax(along / (g->len * g->len), 0), 1);
            }
            for (int j = 0; j < 3; j++) {
                const double e = rel[j] - along * g->dp[j];
                dist += e * e;
            }
            dist = sqrt(dist);
            double rot = 0;
            if (g->task == DYN_IK_FULL) {
                double T0[12], zero[3] = {0}, v[3], sp = 0;
                make_pose(g->R0, zero, T0);
                rot_between(T, T0, v);
                for (int j = 0; j < 3; j++) sp += v[j] * g->axis[j];
                sp = g->angle > 0 ? fmin(fmax(sp, 0), g->angle) : 0;
                for (int j = 0; j < 3; j++) {
                    const double e = v[j] - sp * g->axis[j];
                    rot += e * e;
                }
                rot = sqrt(rot);
            }
            if (dist > worst_p || rot > worst_r) t_worst = t;
            worst_p = fmax(worst_p, dist);
            worst_r = fmax(worst_r, rot);
        }
    if (worst_p <= TRAJ_LINEAR_PATH_TOL && worst_r <= TRAJ_LINEAR_ROT_TOL) return 0;
    ctl_error_set(err, "unreachable",
                  "the joint plan's tool leaves the line by %.3f mm and %.3f mrad at t = %.3f s "
                  "(allowed %.3f mm, %.3f mrad): the arm changes its configuration or passes "
                  "near a singularity there",
                  1e3 * worst_p, 1e3 * worst_r, t_worst, 1e3 * TRAJ_LINEAR_PATH_TOL,
                  1e3 * TRAJ_LINEAR_ROT_TOL);
    return -1;
}

int traj_linear_build(traj_plan *p, const traj_limits *lim, const dyn_model *m, dyn_data *d,
                      const traj_state *start, const traj_line *line, traj_error *err)
{
    double pose0[12];
    dyn_fk(m, d, start->q, NULL, pose0);
    line_geom g;
    if (make_geom(line, pose0, lim->period, &g, err)) return -1;
    /* the shaper acts on the path parameter (path_at), so the joint plan is not shaped again */
    const double total = g.T + shaper_duration(&lim->shape);
    traj_limits unshaped = *lim;
    unshaped.shape = (shaper){.n = 1, .a = {1}, .t = {0}};
    int n_pts = (int)ceil(total / TRAJ_LINEAR_STEP - 1e-9);
    if (n_pts > TRAJ_LINEAR_MAX_POINTS) n_pts = TRAJ_LINEAR_MAX_POINTS;
    if (total / n_pts < lim->period) n_pts = (int)floor(total / lim->period * (1 + 1e-12));
    if (n_pts < 1) n_pts = 1;
    ctl_waypoint *w = calloc((size_t)n_pts, sizeof *w);
    if (!w) {
        ctl_error_set(err, "internal", "out of memory planning the line");
        return -1;
    }
    int rc = -1;
    near_singular ns;
    if (solve_waypoints(m, d, lim, &g, total, start->q, w, n_pts, &ns, err)) goto out;
    if (check_end_orientation(m, d, line, w[n_pts - 1].q, err)) goto out;
    traj_error e2;
    if (traj_build(p, &unshaped, start, w, n_pts, 0, &e2)) {
        char hint[200] = "";
        if (strcmp(e2.code, "limits") == 0 && ns.sigma < TRAJ_LINEAR_NEAR_SINGULAR)
            snprintf(hint, sizeof hint,
                     "; the line passes near a singularity at %s (smallest singular value "
                     "%.2g): go around it",
                     ns.pos, ns.sigma);
        else if (strcmp(e2.code, "limits") == 0)
            snprintf(hint, sizeof hint, "; a lower speed or acceleration");
        ctl_error_set(err, e2.code, "the line's joint plan (%d waypoints %.0f ms apart): %s%s",
                      n_pts, 1e3 * total / n_pts, e2.message, hint);
        goto out;
    }
    rc = check_path(m, d, p, &g, err);
out:
    free(w);
    return rc;
}
