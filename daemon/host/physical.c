/*
 * physical.c — what a settings change asks of the arm, checked before it is handed to the loop
 * (config/feasible.h): every joint's gains within the sampled loop's stability bounds and ki
 * only with i_limit; while the arm moves, no change of the law's character; the payload within
 * [arm] max_payload and, with the arm's own gravity, within every joint's torque limit at the
 * present measured pose and over the joint ranges; the cartesian_impedance law's spring and
 * damper within the sampled loop's bound (and, while moving, no spring turned on or off or
 * changed by more than a factor of 2); a plan whose inverse dynamics exceed a
 * joint's torque limit somewhere along it. Main thread only.
 */
#include <math.h>
#include <stdio.h>

#include "config/feasible.h"
#include "daemon/host/host.h"

/* The arm as the loop last published it: its state and measured pose (the hand-off's status). */
static ctl_status arm_now(ctl *c)
{
    ctl_pub pub;
    handoff_status(c->h, &pub);
    return pub.st;
}

int host_change_feasible(ctl *c, const settings_change *ch, const law_params *next,
                         const dyn_payload *payload, ctl_error *err)
{
    const armd_config *cfg = ch->kind == CHANGE_RELOAD ? ch->cand : &c->cfg;
    char why[512];
    ctl_status st = arm_now(c);
    if (next) {
        const law_params *now = &c->set->p;
        for (int j = 0; j < c->n; j++) {
            const char *nm = next->name[j];
            if (feas_gains_stable(nm, next->kp[j], next->kd[j], 1 / cfg->rate_hz, why,
                                  sizeof why) ||
                feas_integral(nm, next->ki[j], next->i_limit[j], why, sizeof why)) {
                ctl_error_set(err, "invalid_params", "%s", why);
                return -1;
            }
            const double a[3] = {now->kp[j], now->kd[j], now->ki[j]},
                         b[3] = {next->kp[j], next->kd[j], next->ki[j]};
            if (st.state == CTL_MOVING && feas_gain_character(nm, a, b, why, sizeof why)) {
                ctl_error_set(err, "bad_state",
                              "%s: refused while the arm is moving; let the trajectory end or "
                              "cancel it first",
                              why);
                return -1;
            }
        }
    }
    if (next && next->law == CTRL_CARTESIAN_IMPEDANCE) {
        if (host_impedance_feasible(c, cfg, &next->impedance, payload, why, sizeof why)) {
            ctl_error_set(err, "infeasible", "[impedance] %s", why);
            return -1;
        }
        const law_params *now = &c->set->p;
        for (int i = 0; st.state == CTL_MOVING && now->law == next->law && i < 6; i++) {
            double a = now->impedance.stiffness[i], b = next->impedance.stiffness[i];
            if ((a == 0) != (b == 0) || (a != 0 && !(b <= 2 * a && b >= 0.5 * a))) {
                ctl_error_set(err, "bad_state",
                              "[impedance] stiffness %g -> %g on axis %d (x, y, z, rx, ry, rz) "
                              "%s: refused while the arm is moving; let the trajectory end or "
                              "cancel it first",
                              a, b, i,
                              (a == 0) != (b == 0) ? "turns a spring on or off"
                                                   : "is more than a factor of 2");
                return -1;
            }
        }
    }
    if (ch->kind == CHANGE_PAYLOAD || (ch->kind == CHANGE_RELOAD && payload->mass > 0)) {
        if (feas_payload(cfg, payload, st.q, why, sizeof why)) {
            ctl_error_set(err, "infeasible", "%s", why);
            return -1;
        }
    }
    return 0;
}

int host_impedance_feasible(ctl *c, const armd_config *cfg, const cfg_impedance *imp,
                            const dyn_payload *payload, char *why, size_t len)
{
    ctl_status st = arm_now(c);
    return feas_impedance(cfg, imp, payload, st.q, why, len);
}

/* Samples of a plan checked: every PLAN_STEP_S, at most PLAN_SAMPLES_MAX (a longer plan more
 * coarsely); about 1 us of RNEA each on a 6-joint arm. */
#define PLAN_STEP_S      0.005
#define PLAN_SAMPLES_MAX 2000

int host_plan_feasible(ctl *c, const traj_plan *pl, ctl_error *err)
{
    dyn_model_desc desc = c->cfg.model;
    desc.payload = c->payload;
    dyn_model *m = dyn_model_create(&desc, NULL, NULL);
    dyn_data *d = m ? dyn_data_create(m) : NULL;
    int rc = 0;
    if (!m || !d) { /* the running model was valid: only memory can fail */
        ctl_error_set(err, "internal", "out of memory checking the plan's torques");
        rc = -1;
        goto out;
    }
    int n = (int)fmin(PLAN_SAMPLES_MAX, ceil(pl->duration / PLAN_STEP_S)), seg = 0;
    for (int i = 0; i <= n && rc == 0; i++) {
        double t = n > 0 ? pl->duration * i / n : 0, q[CFG_MAX_JOINTS], qd[CFG_MAX_JOINTS],
               qdd[CFG_MAX_JOINTS], tau[CFG_MAX_JOINTS];
        traj_sample(pl, t, &seg, q, qd, qdd);
        dyn_rnea(m, d, q, qd, qdd, NULL, DYN_ALL, tau);
        for (int j = 0; j < c->n; j++) {
            double lim = c->cfg.joint[j].torque;
            if (!(fabs(tau[j]) > lim * (1 + 1e-9))) continue;
            const char *u = c->cfg.model.joint[j].type == DYN_PRISMATIC ? "N" : "N m";
            ctl_error_set(err, "limits",
                          "joint %s needs %.2f %s at t = %.3f s of the plan (gravity, inertia, "
                          "friction and the payload of armd's model), above its torque limit "
                          "of %.2f %s (a slower move or another path)",
                          c->cfg.joint[j].name, fabs(tau[j]), u, t, lim, u);
            rc = -1;
            break;
        }
    }
out:
    dyn_data_free(d);
    dyn_model_free(m);
    return rc;
}
