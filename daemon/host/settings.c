/*
 * settings.c — run-time gains, the control law, the payload and reload (control.h): each
 * checked here; gains, payload and reload then become a change queued behind any other
 * (answers.c sends them one at a time, each built on what the loop runs then, so none is lost
 * and none asks the caller to "send again"). Main thread only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/host/host.h"

/* Queues change ch (taken over) for an answer to to; 0, or -1 with err. */
static int queue_change(ctl *c, settings_change *ch, const ctl_reply_to *to, ctl_error *err)
{
    ctl_pending *p = host_pending_new(c, to, NULL, err);
    if (!p) {
        free(ch->cand);
        free(ch);
        return -1;
    }
    if (c->mode != HOST_THREAD && c->mode != HOST_STEPPED) {
        ctl_error_set(err, "not_running", "the control loop is not running");
        p->change = ch;
        host_pending_drop(p);
        return -1;
    }
    host_pending_change(c, p, ch);
    return 0;
}

/* A zeroed change of kind k (NULL with err when out of memory). */
static settings_change *new_change(change_kind k, ctl_error *err)
{
    settings_change *ch = calloc(1, sizeof *ch);
    if (!ch) ctl_error_set(err, "internal", "out of memory");
    if (ch) ch->kind = k;
    return ch;
}

int ctl_gains_set(ctl *c, const double *kp, const double *kd, const double *ki,
                  const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = -1;
    const double *v[3] = {kp, kd, ki};
    const char *nm[3] = {"kp", "kd", "ki"};
    const double max[3] = {CTL_KP_MAX, CTL_KD_MAX, CTL_KI_MAX};
    for (int k = 0; k < 3; k++) {
        for (int j = 0; v[k] && j < c->n; j++) {
            if (!(v[k][j] >= 0 && v[k][j] <= max[k])) {
                ctl_error_set(err, "invalid_params", "joint %s: %s = %g must be within [0, %g]",
                              c->cfg.joint[j].name, nm[k], v[k][j], max[k]);
                goto out;
            }
        }
    }
    settings_change *ch = new_change(CHANGE_GAINS, err);
    if (!ch) goto out;
    for (int k = 0; k < 3; k++) {
        ch->has[k] = v[k] != NULL;
        if (v[k]) memcpy(ch->v[k], v[k], sizeof(double) * (size_t)c->n);
    }
    rc = queue_change(c, ch, host_reply_target(to, &w, &self), err);
out:
    return host_reply_finish(c, to, &w, rc, err);
}

int ctl_impedance_set(ctl *c, const cfg_impedance *imp, const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = -1;
    for (int i = 0; i < 6; i++) {
        const double kmax = i < 3 ? CTL_STIFFNESS_MAX : CTL_ROT_STIFFNESS_MAX;
        if (!(imp->stiffness[i] >= 0 && imp->stiffness[i] <= kmax && imp->damping_ratio[i] >= 0 &&
              imp->damping_ratio[i] <= CTL_DAMPING_RATIO_MAX && imp->guide_damping[i / 3] >= 0 &&
              imp->guide_damping[i / 3] <= CTL_GUIDE_DAMPING_MAX)) {
            ctl_error_set(err, "invalid_params",
                          "impedance axis %d: stiffness %g (0 to %g), damping ratio %g (0 to "
                          "%g), guide damping %g (0 to %g), all finite",
                          i, imp->stiffness[i], kmax, imp->damping_ratio[i], CTL_DAMPING_RATIO_MAX,
                          imp->guide_damping[i / 3], CTL_GUIDE_DAMPING_MAX);
            goto out;
        }
    }
    settings_change *ch = new_change(CHANGE_IMPEDANCE, err);
    if (!ch) goto out;
    ch->imp = *imp;
    rc = queue_change(c, ch, host_reply_target(to, &w, &self), err);
out:
    return host_reply_finish(c, to, &w, rc, err);
}

void ctl_impedance_get(ctl *c, cfg_impedance *out)
{
    *out = c->set->p.impedance;
}

void ctl_gains_get(ctl *c, double *kp, double *kd, double *ki)
{
    const law_params *p = &c->set->p;
    for (int j = 0; j < c->n; j++) {
        if (kp) kp[j] = p->kp[j];
        if (kd) kd[j] = p->kd[j];
        if (ki) ki[j] = p->ki[j];
    }
}

int ctl_controller_set(ctl *c, cfg_controller law, const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    const ctl_reply_to *dst = host_reply_target(to, &w, &self);
    int rc = -1;
    ctl_status st;
    ctl_status_get(c, &st);
    char why[400];
    if (law != CTRL_COMPUTED_TORQUE && law != CTRL_PD_GRAVITY && law != CTRL_GRAVITY_COMP &&
        law != CTRL_CARTESIAN_IMPEDANCE) {
        ctl_error_set(err, "invalid_params", "unknown controller %d", (int)law);
    } else if (law == CTRL_CARTESIAN_IMPEDANCE && law != st.controller &&
               host_impedance_feasible(c, &c->cfg, &c->set->p.impedance, &c->payload, why,
                                       sizeof why)) {
        ctl_error_set(err, "infeasible", "cartesian_impedance: %s", why);
    } else if (st.state == CTL_MOVING && law != st.controller) {
        /* another law is the largest change of character (config/feasible.h) */
        ctl_error_set(err, "bad_state",
                      "controller %s -> %s: refused while the arm is moving; let the "
                      "trajectory end or cancel it first",
                      cfg_controller_name(st.controller), cfg_controller_name(law));
    } else {
        ctl_pending *p = host_pending_new(c, dst, NULL, err);
        loop_cmd m = {.type = LOOP_CONTROLLER, .law = law};
        if (p) rc = host_pending_send(c, p, &m, err);
    }
    return host_reply_finish(c, to, &w, rc, err);
}

int ctl_payload_set(ctl *c, const dyn_payload *payload, const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = -1;
    bool ok = payload->mass >= 0 && payload->mass <= CTL_PAYLOAD_MASS_MAX;
    for (int i = 0; i < 3; i++) ok = ok && fabs(payload->com[i]) <= CTL_PAYLOAD_COM_MAX;
    for (int i = 0; i < 6; i++) ok = ok && fabs(payload->inertia[i]) <= CTL_PAYLOAD_INERTIA_MAX;
    if (!ok) {
        ctl_error_set(
            err, "invalid_params",
            "payload: mass must be within [0, %g] kg, each com coordinate within %g m and "
            "each inertia value within %g kg m^2, all finite",
            CTL_PAYLOAD_MASS_MAX, CTL_PAYLOAD_COM_MAX, CTL_PAYLOAD_INERTIA_MAX);
        goto out;
    }
    settings_change *ch = new_change(CHANGE_PAYLOAD, err);
    if (!ch) goto out;
    ch->payload = *payload;
    rc = queue_change(c, ch, host_reply_target(to, &w, &self), err);
out:
    return host_reply_finish(c, to, &w, rc, err);
}

void ctl_payload_get(ctl *c, dyn_payload *out)
{
    *out = c->payload;
}

int ctl_reload(ctl *c, const armd_config *candidate, char *changed, size_t changed_len,
               const ctl_reply_to *to, ctl_error *err)
{
    host_waiter w;
    ctl_reply_to self;
    int rc = -1;
    if (changed && changed_len) changed[0] = 0;
    settings_change *ch = new_change(CHANGE_RELOAD, err);
    if (ch) ch->cand = malloc(sizeof *ch->cand);
    if (ch && !ch->cand) {
        free(ch);
        ctl_error_set(err, "internal", "out of memory");
        goto out;
    }
    if (!ch) goto out;
    *ch->cand = *candidate;
    rc = queue_change(c, ch, host_reply_target(to, &w, &self), err);
out:
    rc = host_reply_finish(c, to, &w, rc, err);
    if (!to && rc == 0 && changed && changed_len)
        snprintf(changed, changed_len, "%s", w.res.changed);
    return rc;
}
