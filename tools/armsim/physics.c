/*
 * physics.c — the simulated arm's model (physics_create), its truth log, the commands the
 * devices give it and the state they read (under p->lock: the device side may run on another
 * thread than the stepping, physics_step.c), and its statistics.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armsim/perturb.h"
#include "tools/armsim/physics_impl.h"
#include "tools/armsim/simclock.h"

/* Collects the first dynamics validation error into a message. */
typedef struct {
    char *err;
    size_t len;
    bool have;
} issue_ctx;

static void on_issue(void *ctx, int joint, const char *field, int is_error, const char *message)
{
    issue_ctx *c = ctx;
    if (!is_error || c->have) return;
    snprintf(c->err, c->len, "simulated model: joint %d %s: %s", joint + 1, field, message);
    c->have = true;
}

/* Effective inertia of each joint at q, 1 / (H^-1)_jj (the inertia felt by joint j when the
 * others move freely), from forward dynamics without gravity, velocity or friction. */
static void effective_inertia(physics *p, const double *q, double *ieff)
{
    double zero[CFG_MAX_JOINTS] = {0}, tau[CFG_MAX_JOINTS] = {0}, qdd[CFG_MAX_JOINTS];
    for (int j = 0; j < p->n; j++) {
        tau[j] = 1.0;
        if (dyn_forward_chol(p->model, p->data, q, zero, tau, NULL, DYN_ARMATURE, qdd) == 0 &&
            qdd[j] > 0.0)
            ieff[j] = 1.0 / qdd[j];
        else
            ieff[j] = 1e-3;
        tau[j] = 0.0;
    }
}

/* --print-model: the [joint NAME] dynamics keys of the arm simulated (after --model,
 * --mass-scale, --perturb) as an INI drop-in, full precision, and its payload as a comment. */
static void print_model(const armd_config *cfg, const dyn_model_desc *d, FILE *out)
{
    fprintf(out, "# armsim --print-model: the arm armsim simulates (%s)\n", cfg->name);
    if (d->payload.mass > 0)
        fprintf(out, "# payload: %.17g kg at %.17g %.17g %.17g m (tool frame)\n", d->payload.mass,
                d->payload.com[0], d->payload.com[1], d->payload.com[2]);
    for (int j = 0; j < d->n; j++) {
        const dyn_joint_desc *jd = &d->joint[j];
        fprintf(out, "\n[joint %s]\nmass = %.17g\ncom = %.17g %.17g %.17g\n", cfg->joint[j].name,
                jd->mass, jd->com[0], jd->com[1], jd->com[2]);
        fprintf(out, "inertia = %.17g %.17g %.17g %.17g %.17g %.17g\n", jd->inertia[0],
                jd->inertia[1], jd->inertia[2], jd->inertia[3], jd->inertia[4], jd->inertia[5]);
        fprintf(out, "armature = %.17g\nviscous = %.17g\ncoulomb = %.17g %.17g\n", jd->armature,
                jd->viscous, jd->coulomb_pos, jd->coulomb_neg);
    }
    fflush(out);
}

physics *physics_create(const armd_config *cfg, const armsim_options *o, truth_log *truth,
                        char *err, size_t errlen)
{
    dyn_model_desc desc = cfg->model;
    dyn_flex_desc flex = cfg->flex; /* the beams: the config's, or --model's */
    if (o->model_path) {
        armd_config *other = calloc(1, sizeof *other);
        cfg_report rep;
        cfg_report_init(&rep);
        int nerr = other ? cfg_load(o->model_path, other, &rep) : 1;
        if (nerr) {
            cfg_report_print(&rep, stderr);
            snprintf(err, errlen, "--model %s: cannot be loaded", o->model_path);
        } else if (other->model.n != cfg->model.n) {
            snprintf(err, errlen, "--model %s: %d joints, but the config has %d", o->model_path,
                     other->model.n, cfg->model.n);
            nerr = 1;
        } else {
            desc = other->model;
            flex = other->flex;
        }
        cfg_report_free(&rep);
        free(other);
        if (nerr) return NULL;
    }
    if (o->n_q0 && o->n_q0 != cfg->n_joints) {
        snprintf(err, errlen, "--q0: %d values for %d joints", o->n_q0, cfg->n_joints);
        return NULL;
    }
    armsim_contact contact;
    if (contact_init(&contact, o, desc.n, err, errlen) != 0) return NULL;
    bool flexible = false;
    for (int j = 0; j < desc.n; j++) {
        const dyn_flex_link *l = &flex.link[j];
        flexible |= l->modes_y || l->modes_z || l->modes_x;
        flex.link[j].mass *= o->mass_scale;
        flex.link[j].polar *= o->mass_scale;
        desc.joint[j].mass *= o->mass_scale;
        for (int i = 0; i < 6; i++) desc.joint[j].inertia[i] *= o->mass_scale;
    }
    if (o->perturb_on && flexible) {
        snprintf(err, errlen, "--perturb: not available for an arm with flexible links");
        return NULL;
    }
    if (o->perturb_on) perturb_desc(&desc, o->perturb_seed, o->print_model ? stderr : stdout);
    if (o->payload_on) {
        memset(&desc.payload, 0, sizeof desc.payload);
        desc.payload.mass = o->payload[0];
        for (int i = 0; i < 3; i++) desc.payload.com[i] = o->payload[i + 1];
    }
    if (o->no_gravity) desc.gravity[0] = desc.gravity[1] = desc.gravity[2] = 0.0;
    if (o->print_model) print_model(cfg, &desc, stdout);

    physics *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->n = desc.n;
    p->truth = truth;
    p->contact = contact;
    p->dt_ns = (uint64_t)llround(1e9 / o->rate_hz);
    p->dt = (double)p->dt_ns * 1e-9;
    pthread_mutex_init(&p->lock, NULL);
    issue_ctx ic = {err, errlen, false};
    /* first build without friction to size the smoothing band and the end stops */
    double smoothing = desc.friction_smoothing;
    desc.friction_smoothing = smoothing > 0.0 ? smoothing : 1.0;
    p->model = dyn_model_create(&desc, on_issue, &ic);
    if (!p->model) {
        if (!ic.have) snprintf(err, errlen, "simulated model: invalid");
        physics_free(p);
        return NULL;
    }
    p->data = dyn_data_create(p->model);
    for (int j = 0; j < p->n; j++) {
        const cfg_joint *cj = &cfg->joint[j];
        p->n_ids[j] = cj->n_ids;
        p->lower[j] = isfinite(cj->lower) ? cj->lower : -INFINITY;
        p->upper[j] = isfinite(cj->upper) ? cj->upper : INFINITY;
        double q = o->n_q0 ? o->q0[j] : 0.0;
        if (q < p->lower[j]) q = p->lower[j];
        if (q > p->upper[j]) q = p->upper[j];
        p->q[j] = q;
    }
    double ieff[CFG_MAX_JOINTS];
    effective_inertia(p, p->q, ieff);
    /* Coulomb friction is smoothed over |qd| < s; its slope coulomb/s acts like a damper that
     * RK4 integrates stably only if slope * dt / I stays below ~2.8: keep it under 1. */
    double need = 1e-3;
    for (int j = 0; j < p->n; j++) {
        double coul = fmax(fabs(desc.joint[j].coulomb_pos), fabs(desc.joint[j].coulomb_neg));
        need = fmax(need, coul * p->dt / ieff[j]);
        double w = 2.0 * M_PI * ENDSTOP_HZ;
        p->k_stop[j] = ieff[j] * w * w;
        p->c_stop[j] = 2.0 * ENDSTOP_ZETA * ieff[j] * w;
    }
    if (o->friction_smoothing > 0.0)
        desc.friction_smoothing = o->friction_smoothing;
    else
        desc.friction_smoothing = fmax(smoothing, need);
    dyn_data_free(p->data);
    dyn_model_free(p->model);
    p->data = NULL;
    p->model = dyn_model_create(&desc, on_issue, &ic);
    if (!p->model) {
        physics_free(p);
        return NULL;
    }
    p->data = dyn_data_create(p->model);
    if (!p->data) {
        snprintf(err, errlen, "out of memory");
        physics_free(p);
        return NULL;
    }
    if (flexible && flexsim_create(&p->flex, cfg, &desc, &flex, p->dt, err, errlen) != 0) {
        physics_free(p);
        return NULL;
    }
    p->nx = p->flex.m ? p->flex.nx : p->n;
    p->brake_fitted = p->brake_engaged = o->brake; /* every servo starts with its torque off */
    p->stats.friction_smoothing = desc.friction_smoothing;
    p->stats.endstop_hz = ENDSTOP_HZ;
    p->pub.n = p->n;
    memcpy(p->pub.q, p->q, sizeof p->pub.q);
    return p;
}

/* The truth file with p's columns (a flexible arm's extras named after cfg's joints). */
truth_log *physics_open_truth(physics *p, const armd_config *cfg, const char *path, int decimate,
                              truth_mode mode, char *err, size_t errlen)
{
    size_t len = (size_t)(p->nx + 3) * (CFG_NAME_MAX + 8) + 1;
    char *hdr = malloc(len);
    if (!hdr) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    flexsim_header(&p->flex, cfg, hdr, len);
    p->truth =
        truth_open(path, p->n, decimate, hdr, p->flex.m ? p->flex.n_extra : 0, mode, err, errlen);
    free(hdr);
    return p->truth;
}

void physics_free(physics *p)
{
    if (!p) return;
    physics_stop(p);
    flexsim_free(&p->flex);
    if (p->data) dyn_data_free(p->data);
    if (p->model) dyn_model_free(p->model);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Stores the actuator's command under the lock (any thread). */
void physics_command(physics *p, int j, int k, double tau, bool active, uint64_t expiry_ns)
{
    if (j < 0 || j >= p->n || k < 0 || k >= CFG_MAX_IDS) return;
    pthread_mutex_lock(&p->lock);
    p->act[j][k] = (actuator){tau, active, expiry_ns};
    pthread_mutex_unlock(&p->lock);
}

/* Sets the brake under the lock (any thread); the next step takes it. */
void physics_brake(physics *p, bool engaged)
{
    if (!p->brake_fitted) return;
    pthread_mutex_lock(&p->lock);
    p->brake_engaged = engaged;
    pthread_mutex_unlock(&p->lock);
}

/* Copies the state published after the last step, under the lock (any thread). */
void physics_snapshot(physics *p, physics_state *s)
{
    pthread_mutex_lock(&p->lock);
    *s = p->pub;
    pthread_mutex_unlock(&p->lock);
}

/* Copies the statistics; run_s: the wall time since physics_start, or the simulated time
 * stepped in process. */
void physics_get_stats(physics *p, physics_stats *s)
{
    pthread_mutex_lock(&p->lock);
    *s = p->stats;
    pthread_mutex_unlock(&p->lock);
    if (p->realtime) s->run_s = (double)(armsim_now_ns() - p->start_ns) * 1e-9;
}
