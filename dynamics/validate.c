/* validate.c — checks a model description and reports each finding with the joint and field. */
#include <math.h>
#include <stdio.h>

#include "dynamics/dyn_internal.h"

typedef struct {
    dyn_issue_fn fn;
    void *ctx;
    int errors;
} reporter;

static void report(reporter *r, int joint, const char *field, int is_error, const char *fmt,
                   double v)
{
    char msg[200];
    snprintf(msg, sizeof msg, fmt, v);
    if (is_error) r->errors++;
    if (r->fn) r->fn(r->ctx, joint, field, is_error, msg);
}

static int check_finite(reporter *r, int joint, const char *field, const double *v, int k)
{
    for (int i = 0; i < k; i++) {
        if (!isfinite(v[i])) {
            report(r, joint, field, 1, "value is not a finite number (component %g)", i);
            return 0;
        }
    }
    return 1;
}

/* Mass >= 0; inertia positive semi-definite (error), triangle inequality (warning). */
static void check_inertia(reporter *r, int joint, const char *mfield, const char *ifield,
                          double mass, const double I[6])
{
    if (mass < 0) report(r, joint, mfield, 1, "mass %g kg is negative", mass);
    double ev[3];
    double axes[9];
    dyn_inertia_principal(I, ev, axes);
    double scale = fabs(ev[0]) + fabs(ev[1]) + fabs(ev[2]);
    double tol = 1e-12 * scale + 1e-300;
    if (ev[0] < -tol) {
        report(r, joint, ifield, 1,
               "inertia tensor has a negative principal moment (%g kg m^2): not physical", ev[0]);
        return;
    }
    if (ev[0] + ev[1] < ev[2] - 1e-9 * scale) {
        report(r, joint, ifield, 0,
               "principal moments violate the triangle inequality (largest %g kg m^2): not a "
               "rigid body about its COM (inertia given about a joint axis?)",
               ev[2]);
    }
}

static void check_joint(reporter *r, int i, const dyn_joint_desc *j)
{
    if (j->type != DYN_REVOLUTE && j->type != DYN_PRISMATIC)
        report(r, i, "type", 1, "unknown joint type %g", (double)j->type);
    if (j->form != DYN_DH_STANDARD && j->form != DYN_DH_MODIFIED && j->form != DYN_URDF)
        report(r, i, "form", 1, "unknown kinematic description form %g", (double)j->form);
    if (j->form == DYN_URDF) {
        int ok = check_finite(r, i, "origin_xyz", j->origin_xyz, 3);
        ok &= check_finite(r, i, "origin_rpy", j->origin_rpy, 3);
        if (check_finite(r, i, "axis", j->axis, 3)) {
            double nn =
                sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
            if (!(nn > 1e-9))
                report(r, i, "axis", 1, "joint axis has zero length (%g)", nn);
            else if (fabs(nn - 1.0) > 1e-6)
                report(r, i, "axis", 0, "joint axis is not a unit vector (length %g); normalised",
                       nn);
        }
        (void)ok;
    } else {
        check_finite(r, i, "a", &j->a, 1);
        check_finite(r, i, "alpha", &j->alpha, 1);
        check_finite(r, i, "d", &j->d, 1);
        check_finite(r, i, "theta", &j->theta, 1);
    }
    int okm = check_finite(r, i, "mass", &j->mass, 1);
    check_finite(r, i, "com", j->com, 3);
    int oki = check_finite(r, i, "inertia", j->inertia, 6);
    if (okm && oki) check_inertia(r, i, "mass", "inertia", j->mass, j->inertia);
    if (check_finite(r, i, "armature", &j->armature, 1) && j->armature < 0)
        report(r, i, "armature", 1, "armature %g is negative", j->armature);
    if (check_finite(r, i, "viscous", &j->viscous, 1) && j->viscous < 0)
        report(r, i, "viscous", 1, "viscous friction %g is negative (would add energy)",
               j->viscous);
    if (check_finite(r, i, "coulomb_pos", &j->coulomb_pos, 1) && j->coulomb_pos < 0)
        report(r, i, "coulomb_pos", 1,
               "Coulomb friction for qd > 0 is %g; it must be >= 0 (it opposes motion)",
               j->coulomb_pos);
    if (check_finite(r, i, "coulomb_neg", &j->coulomb_neg, 1) && j->coulomb_neg > 0)
        report(r, i, "coulomb_neg", 1,
               "Coulomb friction for qd < 0 is %g; it must be <= 0 (signed as published)",
               j->coulomb_neg);
}

/* Checks every field of a description; returns the number of errors. */
int dyn_desc_validate(const dyn_model_desc *desc, dyn_issue_fn issue, void *ctx)
{
    reporter r = {issue, ctx, 0};
    if (!desc) {
        report(&r, -1, "n", 1, "no model description", 0);
        return r.errors;
    }
    if (desc->n < 1 || desc->n > DYN_MAX_DOF) {
        report(&r, -1, "n", 1, "number of joints %g is outside 1..64", (double)desc->n);
        return r.errors;
    }
    for (int i = 0; i < desc->n; i++) check_joint(&r, i, &desc->joint[i]);
    check_finite(&r, -1, "gravity", desc->gravity, 3);
    check_finite(&r, -1, "tool_xyz", desc->tool_xyz, 3);
    check_finite(&r, -1, "tool_rpy", desc->tool_rpy, 3);
    int okm = check_finite(&r, -1, "payload.mass", &desc->payload.mass, 1);
    check_finite(&r, -1, "payload.com", desc->payload.com, 3);
    int oki = check_finite(&r, -1, "payload.inertia", desc->payload.inertia, 6);
    if (okm && oki)
        check_inertia(&r, -1, "payload.mass", "payload.inertia", desc->payload.mass,
                      desc->payload.inertia);
    if (check_finite(&r, -1, "friction_smoothing", &desc->friction_smoothing, 1) &&
        desc->friction_smoothing < 0)
        report(&r, -1, "friction_smoothing", 1, "friction_smoothing %g is negative",
               desc->friction_smoothing);
    return r.errors;
}
