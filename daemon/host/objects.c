/*
 * objects.c — the objects the host makes for the loop (see host.h): the plan
 * pool, the settings and the dynamics. An object is the loop's from the command that carries it
 * until a reply hands it back; the host frees settings and dynamics only then (or at the end,
 * once the loop is gone), never while the loop may read them. Main thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/host/host.h"

int host_plans_alloc(ctl *c)
{
    for (int i = 0; i < HOST_PLANS; i++)
        if (traj_plan_alloc(&c->plans[i], c->n, TRAJ_MAX_POINTS) != 0) return -1;
    return 0;
}

int host_plan_free_slot(ctl *c, ctl_error *err)
{
    for (int i = 0; i < HOST_PLANS; i++)
        if (!c->plan_in_loop[i]) return i;
    ctl_error_set(err, "busy", "too many trajectories queued; wait for one to finish");
    return -1;
}

int host_obj_add(ctl *c, void *obj, bool is_dyn)
{
    for (int i = 0; i < HOST_OBJS; i++) {
        if (c->objs[i]) continue;
        c->objs[i] = obj;
        c->obj_is_dyn[i] = is_dyn;
        return 0;
    }
    return -1;
}

void host_dyn_free(loop_dyn *d)
{
    if (!d) return;
    dyn_data_free(d->data);
    dyn_model_free(d->model);
    free(d);
}

/* Frees a registered object (settings or dynamics) and forgets it. */
static void obj_free(ctl *c, const void *obj)
{
    for (int i = 0; obj && i < HOST_OBJS; i++) {
        if (c->objs[i] != obj) continue;
        if (c->obj_is_dyn[i])
            host_dyn_free(c->objs[i]);
        else
            free(c->objs[i]);
        c->objs[i] = NULL;
        return;
    }
}

void host_objects_returned(ctl *c, const loop_reply *r)
{
    for (int i = 0; r->plan && i < HOST_PLANS; i++)
        if (&c->plans[i] == r->plan) c->plan_in_loop[i] = false;
    if (r->settings && r->settings != c->set) obj_free(c, r->settings);
    if (r->dyn && r->dyn != c->dyn) obj_free(c, r->dyn);
}

void host_objects_free(ctl *c)
{
    for (int i = 0; i < HOST_PLANS; i++) traj_plan_free(&c->plans[i]);
    for (int i = 0; i < HOST_OBJS; i++) obj_free(c, c->objs[i]);
    free(c->inflight.cand);
    c->inflight.cand = NULL;
    c->set = NULL;
    c->dyn = NULL;
}

loop_dyn *host_dyn_wrap(ctl *c, dyn_model *model, ctl_error *err)
{
    loop_dyn *d = calloc(1, sizeof *d);
    dyn_data *data = d ? dyn_data_create(model) : NULL;
    if (!data) {
        free(d);
        ctl_error_set(err, "internal", "out of memory for the dynamics' workspace");
        return NULL;
    }
    d->model = model;
    d->data = data;
    d->dy = (law_dyn){dyn_funcs_for(model, c->gen), model, data};
    return d;
}

loop_dyn *host_dyn_new(ctl *c, const dyn_model_desc *desc, ctl_error *err)
{
    dyn_model *m = dyn_model_create(desc, NULL, NULL);
    if (!m) {
        ctl_error_set(err, "invalid_config", "the new dynamics do not make a model");
        return NULL;
    }
    loop_dyn *d = host_dyn_wrap(c, m, err);
    if (!d) dyn_model_free(m);
    return d;
}

/* Whether a reload changes the dynamics keys (mass, com, inertia, armature, viscous, coulomb)
 * of any joint: then the loop needs a new model. */
static bool dynamics_changed(const dyn_model_desc *a, const dyn_model_desc *b)
{
    for (int j = 0; j < a->n; j++) {
        const dyn_joint_desc *x = &a->joint[j], *y = &b->joint[j];
        if (x->mass != y->mass || memcmp(x->com, y->com, sizeof x->com) ||
            memcmp(x->inertia, y->inertia, sizeof x->inertia) || x->armature != y->armature ||
            x->viscous != y->viscous || x->coulomb_pos != y->coulomb_pos ||
            x->coulomb_neg != y->coulomb_neg)
            return true;
    }
    return false;
}

/* A reload's checks against the running configuration: only live keys changed (err names the
 * ones needing a restart), and no joint's torque limit beyond what its servos deliver. Fills
 * the result's `changed`. 0, or -1 with err. */
static int check_reload(ctl *c, const armd_config *cand, char *changed, size_t len, ctl_error *err)
{
    char restart[512] = "";
    if (cfg_compare(&c->cfg, cand, changed, len, restart, sizeof restart)) {
        ctl_error_set(err, "restart_needed", "not reloaded: these keys need a restart: %s",
                      restart);
        return -1;
    }
    for (int j = 0; j < cand->n_joints; j++) {
        double cap = drv_torque_capacity(c->driver, j);
        if (cand->joint[j].torque > cap * (1 + 1e-9)) {
            ctl_error_set(
                err, "limits",
                "not reloaded: [joint %s] torque %g is more than its servos can deliver at "
                "their Current Limit (%.4g)",
                cand->joint[j].name, cand->joint[j].torque, cap);
            return -1;
        }
    }
    return 0;
}

/* New settings: a copy of what runs with ch's gains or impedance, or (a reload) the
 * candidate's. */
static loop_settings *settings_for(ctl *c, const settings_change *ch)
{
    loop_settings *s = malloc(sizeof *s);
    if (!s) return NULL;
    if (ch->kind == CHANGE_RELOAD) {
        law_params_from_config(&s->p, ch->cand);
        traj_limits_from_config(&s->lim, ch->cand);
        return s;
    }
    *s = *c->set;
    if (ch->kind == CHANGE_IMPEDANCE) {
        s->p.impedance = ch->imp;
        return s;
    }
    for (int j = 0; j < c->n; j++) {
        if (ch->has[0]) s->p.kp[j] = ch->v[0][j];
        if (ch->has[1]) s->p.kd[j] = ch->v[1][j];
        if (ch->has[2]) s->p.ki[j] = ch->v[2][j];
    }
    return s;
}

int host_change_build(ctl *c, const settings_change *ch, char *changed, size_t len, ctl_error *err)
{
    host_inflight *f = &c->inflight;
    memset(f, 0, sizeof *f);
    f->payload = c->payload;
    bool new_set = ch->kind != CHANGE_PAYLOAD, new_dyn = ch->kind == CHANGE_PAYLOAD;
    dyn_model_desc desc = c->cfg.model;
    if (ch->kind == CHANGE_RELOAD) {
        if (check_reload(c, ch->cand, changed, len, err)) return -1;
        new_dyn = dynamics_changed(&c->cfg.model, &ch->cand->model);
        desc = ch->cand->model;
        f->cand = malloc(sizeof *f->cand);
        if (!f->cand) goto oom;
        *f->cand = *ch->cand;
    }
    if (ch->kind == CHANGE_PAYLOAD) f->payload = ch->payload;
    desc.payload = f->payload;
    if (new_set) {
        loop_settings *s = settings_for(c, ch);
        if (s && host_change_feasible(c, ch, &s->p, &f->payload, err)) {
            free(s);
            goto fail;
        }
        if (!s || host_obj_add(c, s, false)) {
            free(s);
            goto oom;
        }
        f->set = s;
    } else if (host_change_feasible(c, ch, NULL, &f->payload, err)) {
        goto fail;
    }
    if (new_dyn) {
        loop_dyn *d = host_dyn_new(c, &desc, err);
        if (!d) goto fail;
        if (host_obj_add(c, d, true)) {
            host_dyn_free(d);
            goto oom;
        }
        f->dyn = d;
    }
    return 0;
oom:
    ctl_error_set(err, "internal", "out of memory");
fail:
    host_change_clear(c); /* what was registered goes with it */
    return -1;
}

void host_change_accepted(ctl *c)
{
    host_inflight *f = &c->inflight;
    if (f->set) c->set = f->set;
    if (f->dyn) c->dyn = f->dyn;
    c->payload = f->payload;
    if (f->cand) {
        c->cfg = *f->cand;
        traj_limits_from_config(&c->lim, f->cand);
    }
    f->set = NULL; /* in use now: freed when the loop hands them back */
    f->dyn = NULL;
}

void host_change_clear(ctl *c)
{
    host_inflight *f = &c->inflight;
    /* objects the loop never got (a change refused before it was sent) */
    if (!f->seq) {
        obj_free(c, f->set);
        obj_free(c, f->dyn);
    }
    free(f->cand);
    memset(f, 0, sizeof *f);
}
