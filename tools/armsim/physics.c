/*
 * physics.c — RK4 integration of the forward dynamics at a fixed step in real time.
 */
#include "tools/armsim/physics.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "dynamics/dynamics.h"
#include "tools/armsim/contact.h"
#include "tools/armsim/flexsim.h"
#include "tools/armsim/perturb.h"
#include "tools/armsim/simclock.h"

/* Longest lateness caught up step by step in one wake-up [s]; beyond it the missed time is
 * skipped (the arm freezes for it). The host stalls for several ms at times (hypervisor): a
 * plant that skipped those would drift from real time, and the truth from armd's clock. */
#define MAX_CATCHUP_S 0.05
#define ENDSTOP_HZ    50.0 /* natural frequency of a joint against its end stop */
#define ENDSTOP_ZETA  0.7  /* damping ratio of the end stop */

typedef struct {
    double tau;
    bool active;
    uint64_t expiry_ns;
} actuator;

struct physics {
    int n;
    int n_ids[CFG_MAX_JOINTS];
    dyn_model *model;
    dyn_data *data;
    double dt;
    uint64_t dt_ns, start_ns;
    double lower[CFG_MAX_JOINTS], upper[CFG_MAX_JOINTS];
    double k_stop[CFG_MAX_JOINTS], c_stop[CFG_MAX_JOINTS];
    truth_log *truth;
    flexsim flex; /* a flexible arm's model (flex.m NULL: rigid, dyn_forward_aba) */
    int nx;       /* state size: joints, then a flexible arm's modal coordinates */
    /* integration state (physics thread only): x = (q, modal coordinates), xd its rate */
    double q[FLEXSIM_MAX_X], qd[FLEXSIM_MAX_X];
    armsim_contact contact; /* --push, --wall */
    /* shared with the device thread, under lock */
    pthread_mutex_t lock;
    actuator act[CFG_MAX_JOINTS][CFG_MAX_IDS];
    physics_state pub;
    physics_stats stats;
    pthread_t thread;
    bool running;
    _Atomic bool stop;
};

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

/* End-stop torque [N m|N] on joint j: a spring-damper acting only beyond lower/upper, never
 * pulling the joint into the stop. */
static double endstop(const physics *p, int j, double q, double qd)
{
    double f = 0.0;
    if (q > p->upper[j]) {
        f = -p->k_stop[j] * (q - p->upper[j]) - p->c_stop[j] * qd;
        if (f > 0.0) f = 0.0;
    } else if (q < p->lower[j]) {
        f = -p->k_stop[j] * (q - p->lower[j]) - p->c_stop[j] * qd;
        if (f < 0.0) f = 0.0;
    }
    return f;
}

/* Accelerations qdd = FD(q, qd, tau_held + tau_stop + tau_wall) with gravity, armature,
 * friction; tau_held is what is held over the step (motor + pushes). Adds w x the wall's joint
 * torque to ext and w x its force [N] to *wall_force (the RK4 stage weight). A flexible arm: q,
 * qd, qdd are over all nx coordinates and FD is dyn_flex_forward (El-Rayyes 1990 eq 2.9), the
 * joint torques acting on the joint coordinates; the wall's contact point is the rigid arm's. */
static int accel(physics *p, const double *q, const double *qd, const double *tau_held, double *qdd,
                 double w, double *ext, double *wall_force)
{
    double tau[CFG_MAX_JOINTS], wall[CFG_MAX_JOINTS];
    *wall_force += w * contact_wall_torque(&p->contact, p->model, p->data, q, qd, wall);
    for (int j = 0; j < p->n; j++) {
        tau[j] = tau_held[j] + wall[j] + endstop(p, j, q[j], qd[j]);
        ext[j] += w * wall[j];
    }
    if (p->flex.m) return dyn_flex_forward(p->flex.m, p->flex.d, q, qd, tau, NULL, DYN_ALL, qdd);
    return dyn_forward_aba(p->model, p->data, q, qd, tau, NULL, DYN_ALL, qdd);
}

/* One classical Runge-Kutta (RK4) step of x = (q, qd), x' = (qd, FD(q, qd, tau + push + wall)),
 * with the motor torque tau and the pushes held constant over the step and the wall evaluated at
 * every stage (seed 000: RK4 simulation via M^-1 (tau - C - G)). ext receives the external
 * joint torque of the step (push + the RK4-weighted mean of the wall's stage torques, the
 * torque that acted in effect) [N m|N], *wall_force the same mean of the wall force [N]. */
static int rk4_step(physics *p, double h, const double *tau, const double *push, double *ext,
                    double *wall_force)
{
    const int n = p->nx, nj = p->n;
    double a1[FLEXSIM_MAX_X], a2[FLEXSIM_MAX_X], a3[FLEXSIM_MAX_X], a4[FLEXSIM_MAX_X];
    double v2[FLEXSIM_MAX_X], v3[FLEXSIM_MAX_X], v4[FLEXSIM_MAX_X], x[FLEXSIM_MAX_X];
    double held[CFG_MAX_JOINTS], wall[CFG_MAX_JOINTS] = {0};
    *wall_force = 0.0;
    for (int j = 0; j < nj; j++) held[j] = tau[j] + push[j];
    int rc = accel(p, p->q, p->qd, held, a1, 1.0 / 6.0, wall, wall_force);
    for (int j = 0; j < n; j++) {
        x[j] = p->q[j] + 0.5 * h * p->qd[j];
        v2[j] = p->qd[j] + 0.5 * h * a1[j];
    }
    rc |= accel(p, x, v2, held, a2, 2.0 / 6.0, wall, wall_force);
    for (int j = 0; j < n; j++) {
        x[j] = p->q[j] + 0.5 * h * v2[j];
        v3[j] = p->qd[j] + 0.5 * h * a2[j];
    }
    rc |= accel(p, x, v3, held, a3, 2.0 / 6.0, wall, wall_force);
    for (int j = 0; j < n; j++) {
        x[j] = p->q[j] + h * v3[j];
        v4[j] = p->qd[j] + h * a3[j];
    }
    rc |= accel(p, x, v4, held, a4, 1.0 / 6.0, wall, wall_force);
    for (int j = 0; j < nj; j++) ext[j] = push[j] + wall[j];
    if (rc != 0) return -1;
    for (int j = 0; j < n; j++) {
        p->q[j] += h / 6.0 * (p->qd[j] + 2.0 * v2[j] + 2.0 * v3[j] + v4[j]);
        p->qd[j] += h / 6.0 * (a1[j] + 2.0 * a2[j] + 2.0 * a3[j] + a4[j]);
    }
    return 0;
}

/* One physics step of p->dt: a rigid arm one RK4 step; a flexible arm flex.substeps RK4 steps
 * of dt / substeps (the highest mode resolved, flexsim.h), ext and *wall_force their means. */
static int physics_step(physics *p, const double *tau, const double *push, double *ext,
                        double *wall_force)
{
    const int s = p->flex.substeps;
    if (s <= 1) return rk4_step(p, p->dt, tau, push, ext, wall_force);
    double e[CFG_MAX_JOINTS], wf;
    int rc = 0;
    for (int j = 0; j < p->n; j++) ext[j] = 0.0;
    *wall_force = 0.0;
    for (int i = 0; i < s; i++) {
        rc |= rk4_step(p, p->dt / s, tau, push, e, &wf);
        for (int j = 0; j < p->n; j++) ext[j] += e[j] / s;
        *wall_force += wf / s;
    }
    return rc;
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
    p->stats.friction_smoothing = desc.friction_smoothing;
    p->stats.endstop_hz = ENDSTOP_HZ;
    p->pub.n = p->n;
    memcpy(p->pub.q, p->q, sizeof p->pub.q);
    return p;
}

/* Sums the motor torque per joint from the actuators active at time now_ns. */
static void gather_torque(physics *p, uint64_t now_ns, double *tau, double tau_act[][CFG_MAX_IDS])
{
    pthread_mutex_lock(&p->lock);
    for (int j = 0; j < p->n; j++) {
        tau[j] = 0.0;
        for (int k = 0; k < p->n_ids[j]; k++) {
            const actuator *a = &p->act[j][k];
            bool on = a->active && (a->expiry_ns == 0 || now_ns < a->expiry_ns);
            tau_act[j][k] = on ? a->tau : 0.0;
            tau[j] += tau_act[j][k];
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* Makes the state after a step visible to the device side. */
static void publish(physics *p, double t, const double *tau, double tau_act[][CFG_MAX_IDS])
{
    pthread_mutex_lock(&p->lock);
    p->pub.t = t;
    memcpy(p->pub.q, p->q, sizeof(double) * (size_t)p->n);
    memcpy(p->pub.qd, p->qd, sizeof(double) * (size_t)p->n);
    memcpy(p->pub.tau, tau, sizeof(double) * (size_t)p->n);
    memcpy(p->pub.tau_act, tau_act, sizeof(double) * CFG_MAX_IDS * (size_t)p->n);
    pthread_mutex_unlock(&p->lock);
}

/* The integration thread: absolute deadlines start + k dt; when late, up to MAX_CATCHUP_S worth
 * of steps per wake-up, beyond that the missed time is skipped (the arm freezes for it). */
static void *physics_thread(void *arg)
{
    physics *p = arg;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    double tau[CFG_MAX_JOINTS] = {0}, push[CFG_MAX_JOINTS], ext[CFG_MAX_JOINTS];
    static double tau_act[CFG_MAX_JOINTS][CFG_MAX_IDS];
    uint64_t k = 0, skipped_ns = 0;
    const uint64_t max_catchup = (uint64_t)ceil(MAX_CATCHUP_S / p->dt);
    /* the first row: the state at t = 0 and the wall's force there (no step, no push yet) */
    double wall_force = contact_wall_torque(&p->contact, p->model, p->data, p->q, p->qd, ext);
    double tool[12];
    dyn_fk(p->model, p->data, p->q, NULL, tool);
    const double mono0 = (double)p->start_ns * 1e-9; /* CLOCK_MONOTONIC of t = 0 [s] */
    double extra[FLEXSIM_MAX_X + 3];
    if (p->truth) flexsim_truth(&p->flex, p->q, extra);
    truth_push(p->truth, 0.0, mono0, p->q, p->qd, tau, ext, wall_force, tool, extra);
    while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
        uint64_t next = p->start_ns + skipped_ns + (k + 1) * p->dt_ns;
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        uint64_t now = armsim_now_ns();
        uint64_t due = (now - p->start_ns - skipped_ns) / p->dt_ns;
        uint64_t todo = due > k ? due - k : 1;
        if (todo > 1) p->stats.late_wakeups++;
        if (todo > max_catchup) {
            skipped_ns += (todo - max_catchup) * p->dt_ns;
            p->stats.skips++;
            todo = max_catchup;
        }
        for (uint64_t i = 0; i < todo; i++) {
            uint64_t t_ns = skipped_ns + k * p->dt_ns;
            gather_torque(p, p->start_ns + t_ns, tau, tau_act);
            contact_push_torque(&p->contact, t_ns, push);
            if (physics_step(p, tau, push, ext, &wall_force) != 0) p->stats.solver_failures++;
            k++;
            double t = (double)(t_ns + p->dt_ns) * 1e-9;
            if (p->truth) {
                dyn_fk(p->model, p->data, p->q, NULL, tool);
                flexsim_truth(&p->flex, p->q, extra);
            }
            truth_push(p->truth, t, mono0 + t, p->q, p->qd, tau, ext, wall_force, tool, extra);
            publish(p, t, tau, tau_act);
        }
        pthread_mutex_lock(&p->lock);
        p->stats.steps = k;
        p->stats.skipped_s = (double)skipped_ns * 1e-9;
        pthread_mutex_unlock(&p->lock);
    }
    return NULL;
}

truth_log *physics_open_truth(physics *p, const armd_config *cfg, const char *path, int decimate,
                              char *err, size_t errlen)
{
    size_t len = (size_t)(p->nx + 3) * (CFG_NAME_MAX + 8) + 1;
    char *hdr = malloc(len);
    if (!hdr) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    flexsim_header(&p->flex, cfg, hdr, len);
    p->truth = truth_open(path, p->n, decimate, hdr, p->flex.m ? p->flex.n_extra : 0, err, errlen);
    free(hdr);
    return p->truth;
}

int physics_start(physics *p, uint64_t start_ns)
{
    p->start_ns = start_ns;
    if (pthread_create(&p->thread, NULL, physics_thread, p) != 0) return -1;
    p->running = true;
    return 0;
}

void physics_stop(physics *p)
{
    if (!p || !p->running) return;
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
    p->running = false;
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

void physics_command(physics *p, int j, int k, double tau, bool active, uint64_t expiry_ns)
{
    if (j < 0 || j >= p->n || k < 0 || k >= CFG_MAX_IDS) return;
    pthread_mutex_lock(&p->lock);
    p->act[j][k] = (actuator){tau, active, expiry_ns};
    pthread_mutex_unlock(&p->lock);
}

void physics_snapshot(physics *p, physics_state *s)
{
    pthread_mutex_lock(&p->lock);
    *s = p->pub;
    pthread_mutex_unlock(&p->lock);
}

void physics_get_stats(physics *p, physics_stats *s)
{
    pthread_mutex_lock(&p->lock);
    *s = p->stats;
    pthread_mutex_unlock(&p->lock);
    if (p->start_ns) s->run_s = (double)(armsim_now_ns() - p->start_ns) * 1e-9;
}
