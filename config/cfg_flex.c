/* cfg_flex.c — the flexible-link keys of [joint NAME] (flex_modes, flex_length, flex_mass,
 * flex_ei, flex_gj, flex_polar, flex_damping) into armd_config.flex, and their check against the
 * arm's geometry by dyn_flex_create (El-Rayyes 1990 §2.5's assumed-mode beam, dynamics/flex.h).
 * armd controls with the rigid model; only armsim simulates the beams. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

#define R(lo, hi) ((cfg_range){(lo), (hi), false, false})

static const char *const flex_keys[] = {"flex_length", "flex_mass",    "flex_ei", "flex_gj",
                                        "flex_polar",  "flex_damping", NULL};

/* Reads link i's beam: flex_modes = Y Z T (integers 0..4: bending along y_b, i.e. in the plane
 * of a planar arm's motion; bending along z_b; torsion), then its properties: length [m], mass
 * [kg], EI [N m^2] (one value for both bending directions, or two: y_b then z_b, in flex_modes'
 * order), GJ [N m^2], polar mass moment per length [kg m], modal damping ratio. A property
 * without flex_modes is an error; a property a mode needs and that is absent too. */
void cfg_apply_flex(cfg_ctx *c, const char *sec, armd_config *cfg, int i)
{
    dyn_flex_link *f = &cfg->flex.link[i];
    memset(f, 0, sizeof *f);
    double m[3];
    cfg_entry *modes = cfg_entry_find(c, sec, "flex_modes");
    bool have = cfg_get_vec(c, sec, "flex_modes", false, 3, R(0, DYN_FLEX_MAX_MODES), "", m);
    if (have && (m[0] != floor(m[0]) || m[1] != floor(m[1]) || m[2] != floor(m[2]))) {
        cfg_err(c, modes->file, modes->line, sec, "flex_modes",
                "expected three whole numbers of modes (bending y, bending z, torsion), got '%s'",
                modes->value);
        have = false;
    }
    if (!modes) {
        for (int k = 0; flex_keys[k]; k++) {
            cfg_entry *e = cfg_entry_find(c, sec, flex_keys[k]);
            if (!e) continue;
            e->used = true;
            cfg_err(c, e->file, e->line, sec, flex_keys[k],
                    "describes a flexible link but the joint has no flex_modes (e.g. flex_modes "
                    "= 2 0 0 for two bending modes in the plane of motion)");
        }
        return;
    }
    if (!have) {
        for (int k = 0; flex_keys[k]; k++) {
            cfg_entry *e = cfg_entry_find(c, sec, flex_keys[k]);
            if (e) e->used = true;
        }
        return;
    }
    f->modes_y = (int)m[0], f->modes_z = (int)m[1], f->modes_x = (int)m[2];
    const bool bend = f->modes_y || f->modes_z, twist = f->modes_x > 0;
    cfg_get_num(c, sec, "flex_length", true, (cfg_range){0, 100, true, false}, "m", &f->length);
    cfg_get_num(c, sec, "flex_mass", bend, R(0, 1e4), "kg", &f->mass);
    double ei[2] = {0, 0};
    int k = cfg_get_list(c, sec, "flex_ei", 2, "EI for bending along y_b and along z_b",
                         (cfg_range){0, 1e12, true, false}, "N m^2", ei);
    if (k == 0 && bend && !cfg_entry_find(c, sec, "flex_ei")) cfg_missing(c, sec, "flex_ei");
    f->EI_z = ei[0];
    f->EI_y = k == 1 ? ei[0] : ei[1];
    cfg_get_num(c, sec, "flex_gj", twist, (cfg_range){0, 1e12, true, false}, "N m^2", &f->GJ);
    cfg_get_num(c, sec, "flex_polar", twist, (cfg_range){0, 1e4, true, false}, "kg m", &f->polar);
    cfg_get_num(c, sec, "flex_damping", false, R(0, 10), "", &f->damping);
    if (bend || twist) cfg->flexible = true;
}

/* Link i's beam end in its link frame at q = 0 [m]: the next joint's origin (modified DH: eq
 * Rx(alpha) Tx(a) Rz(theta) Tz(d) gives (a, -sin(alpha) d, cos(alpha) d); URDF: origin_xyz), the
 * tool origin for the last link. The link frame is the joint's moving frame in these two forms
 * (dynamics.h), which is where dynamics/flex.h starts the beam. */
static void beam_end(const dyn_model_desc *d, int i, double p[3])
{
    if (i + 1 == d->n) {
        memcpy(p, d->tool_xyz, sizeof d->tool_xyz);
        return;
    }
    const dyn_joint_desc *j = &d->joint[i + 1];
    if (j->form == DYN_URDF) {
        memcpy(p, j->origin_xyz, sizeof j->origin_xyz);
    } else {
        p[0] = j->a;
        p[1] = -sin(j->alpha) * j->d;
        p[2] = cos(j->alpha) * j->d;
    }
}

/* J += s (m |r|^2 1 - m r r^T + I0): inertia tensor entries xx xy xz yy yz zz [kg m^2] of a body
 * of mass m, COM r, inertia I0 about its COM, about the frame origin (parallel axis theorem). */
static void add_about_origin(double J[6], double s, double m, const double r[3], const double I0[6])
{
    const double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    const int a[6] = {0, 0, 0, 1, 1, 2}, b[6] = {0, 1, 2, 1, 2, 2};
    for (int k = 0; k < 6; k++)
        J[k] += s * (I0[k] + m * ((a[k] == b[k] ? r2 : 0.0) - r[a[k]] * r[b[k]]));
}

int cfg_flex_rigid_parts(const armd_config *cfg, dyn_model_desc *out, char *err, size_t len)
{
    *out = cfg->model;
    for (int i = 0; i < cfg->model.n; i++) {
        const dyn_flex_link *f = &cfg->flex.link[i];
        if (!(f->modes_y || f->modes_z || f->modes_x) && f->mass == 0.0) continue;
        dyn_joint_desc *j = &out->joint[i];
        if (j->form == DYN_DH_STANDARD) {
            snprintf(err, len,
                     "joint '%s': flexible links need dh = modified or origin_xyz (the beam starts "
                     "at the joint; standard DH's link frame is at the link's far end)",
                     cfg->joint[i].name);
            return -1;
        }
        double pe[3], cb[3], u[3];
        beam_end(&cfg->model, i, pe);
        const double L = sqrt(pe[0] * pe[0] + pe[1] * pe[1] + pe[2] * pe[2]);
        if (!(L > 0.0)) continue; /* dyn_flex_create reports the length */
        const double mb = f->mass, mr = j->mass - mb;
        if (mr < -1e-9 * fmax(1.0, j->mass)) {
            snprintf(err, len,
                     "joint '%s': flex_mass %g kg is more than the link's mass %g kg (mass, com "
                     "and inertia describe the whole link, beam included)",
                     cfg->joint[i].name, mb, j->mass);
            return -1;
        }
        /* the beam as a uniform rigid rod: COM at its middle, m L^2/12 across, polar L along */
        double Ib[6];
        for (int k = 0; k < 3; k++) u[k] = pe[k] / L, cb[k] = 0.5 * pe[k];
        const int a[6] = {0, 0, 0, 1, 1, 2}, b[6] = {0, 1, 2, 1, 2, 2};
        for (int k = 0; k < 6; k++) {
            const double uu = u[a[k]] * u[b[k]], id = a[k] == b[k] ? 1.0 : 0.0;
            Ib[k] = mb * L * L / 12.0 * (id - uu) + f->polar * L * uu;
        }
        double J[6] = {0}, h[3];
        add_about_origin(J, 1.0, j->mass, j->com, j->inertia);
        add_about_origin(J, -1.0, mb, cb, Ib);
        for (int k = 0; k < 3; k++) h[k] = j->mass * j->com[k] - mb * cb[k];
        j->mass = mr > 0.0 ? mr : 0.0;
        for (int k = 0; k < 3; k++) j->com[k] = j->mass > 0.0 ? h[k] / j->mass : 0.0;
        static const double Z6[6] = {0};
        for (int k = 0; k < 6; k++) j->inertia[k] = J[k];
        add_about_origin(j->inertia, -1.0, j->mass, j->com, Z6);
        /* what is left of a point mass at the joint or the beam's end is 0 up to the rounding
         * of the INI's numbers: a diagonal moment within 1e-4 of the rod's is taken as 0 */
        const double tol = 1e-4 * mb * L * L / 12.0 + 1e-12;
        for (int k = 0; k < 6; k++)
            if (fabs(j->inertia[k]) < tol) j->inertia[k] = 0.0;
    }
    return 0;
}

typedef struct {
    cfg_ctx *c;
    armd_config *cfg;
} issue_ctx;

/* dyn_flex_create's field ("flex.length", "flex.EI_z", ...) -> the INI key. */
static const char *key_of(const char *field)
{
    static const char *const map[][2] = {
        {"flex.modes", "flex_modes"},    {"flex.length", "flex_length"},
        {"flex.mass", "flex_mass"},      {"flex.EI", "flex_ei"},
        {"flex.GJ", "flex_gj"},          {"flex.polar", "flex_polar"},
        {"flex.damping", "flex_damping"}};
    for (size_t k = 0; field && k < sizeof map / sizeof map[0]; k++)
        if (strncmp(field, map[k][0], strlen(map[k][0])) == 0) return map[k][1];
    return NULL;
}

/* dyn_flex_create's findings at the key's file and line ("[joint NAME] flex_length: ..."). */
static void on_issue(void *vctx, int joint, const char *field, int is_error, const char *message)
{
    issue_ctx *x = vctx;
    char sec[CFG_NAME_MAX + 8];
    if (joint >= 0 && joint < x->cfg->n_joints)
        snprintf(sec, sizeof sec, "joint %s", x->cfg->joint[joint].name);
    else
        snprintf(sec, sizeof sec, "arm");
    const char *key = key_of(field);
    /* a finding on the rigid parts (the link minus its beam): at the link's own key */
    const char *rigid = key                                          ? NULL
                        : field && strncmp(field, "inertia", 7) == 0 ? "inertia"
                        : field && strncmp(field, "com", 3) == 0     ? "com"
                                                                     : "mass";
    cfg_entry *e = cfg_entry_find(x->c, sec, key ? key : rigid);
    if (!e) e = cfg_entry_find(x->c, sec, "flex_modes");
    const cfg_section *s = cfg_section_find(x->c, sec);
    int file = e ? e->file : s ? s->file : 0, line = e ? e->line : s ? s->line : 0;
    const char *pre = key ? ""
                          : "the link without its beam (flex_mass as a uniform rod, its "
                            "polar moment flex_polar x length taken off): ";
    if (is_error)
        cfg_err(x->c, file, line, sec, e ? e->key : NULL, "%s%s", pre,
                message ? message : "invalid");
    else
        cfg_warn(x->c, file, line, sec, e ? e->key : NULL, "%s%s", pre, message ? message : "");
}

/* Builds the flexible model once (allocation at load time only) to check every beam against
 * the arm: a length that is not the distance to the next joint (the tool for the last link) is
 * reported at flex_length. */
void cfg_validate_flex(cfg_ctx *c, armd_config *cfg)
{
    if (!cfg->flexible || c->n_errors != 0) return;
    issue_ctx x = {c, cfg};
    dyn_model_desc *rigid = malloc(sizeof *rigid);
    char err[300];
    if (!rigid) {
        c->oom = true;
        return;
    }
    if (cfg_flex_rigid_parts(cfg, rigid, err, sizeof err) != 0) {
        cfg_entry *e = cfg_entry_find(c, "arm", "name");
        cfg_err(c, e ? e->file : 0, e ? e->line : 0, "arm", NULL, "%s", err);
        free(rigid);
        return;
    }
    dyn_flex_model *m = dyn_flex_create(rigid, &cfg->flex, on_issue, &x);
    free(rigid);
    if (!m && c->n_errors == 0) {
        const cfg_section *s = cfg_section_find(c, "arm");
        cfg_err(c, 0, s ? s->line : 0, "arm", NULL, "the flexible links' model cannot be built");
    }
    dyn_flex_free(m);
}
