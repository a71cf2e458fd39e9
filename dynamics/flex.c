/* flex.c — the flexible model: validation, beam geometry, clamped-free mode shapes and
 * Gauss-Legendre quadrature (El-Rayyes 1990 §2.5.2, eqs 2.24, 2.25, 2.42). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamics/flex_internal.h"

/* Gauss-Legendre nodes x and weights w of order g on [-1, 1]: Newton's method on P_g from the
 * Chebyshev-like first guess, weights 2 / ((1 - x^2) P_g'(x)^2). */
static void gauss_legendre(int g, double *x, double *w)
{
    for (int i = 0; i < g; i++) {
        double z = cos(M_PI * (i + 0.75) / (g + 0.5)), dp = 1.0;
        for (int it = 0; it < 100; it++) {
            double p0 = 1.0, p1 = z;
            for (int k = 2; k <= g; k++) {
                double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
                p0 = p1;
                p1 = p2;
            }
            if (g == 1) p0 = 1.0, p1 = z;
            dp = g * (z * p1 - p0) / (z * z - 1.0);
            double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) < 1e-16) break;
        }
        x[i] = z;
        w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
}

/* k-th root (k = 0..3) of cos x cosh x = -1, the clamped-free bending eigenvalue beta_k L:
 * Newton on cos x + 1/cosh x from the tabulated value. */
static double bending_root(int k)
{
    static const double guess[DYN_FLEX_MAX_MODES] = {1.8751, 4.6941, 7.8548, 10.9955};
    double x = guess[k];
    for (int it = 0; it < 50; it++) {
        double ch = cosh(x);
        double f = cos(x) + 1.0 / ch, df = -sin(x) - tanh(x) / ch;
        double dx = f / df;
        x -= dx;
        if (fabs(dx) < 1e-15 * x) break;
    }
    return x;
}

/* Clamped-free eigenfunction of eq 2.24 at eta, D = cosh s - cos s - sig (sinh s - sin s),
 * s = beta eta, sig = (cosh bL + cos bL) / (sinh bL + sin bL), and its first and second
 * derivatives [1/m, 1/m^2]; written with exponentials and 1 - sig formed without
 * cancellation. Normalised as int_0^L D^2 = L, D(L) = +-2. */
static void bending_shape(double bl, double L, double eta, double *D, double *d1, double *d2)
{
    const double beta = bl / L, s = beta * eta;
    const double den = sinh(bl) + sin(bl);
    const double sig = (cosh(bl) + cos(bl)) / den;
    const double oms = (sin(bl) - cos(bl) - exp(-bl)) / den; /* 1 - sig */
    const double ep = 0.5 * oms * exp(s), em = 0.5 * (1.0 + sig) * exp(-s);
    const double c = cos(s), sn = sin(s);
    *D = ep + em - c + sig * sn;
    *d1 = beta * (ep - em + sn + sig * c);
    *d2 = beta * beta * (ep + em + c - sig * sn);
}

typedef struct {
    dyn_issue_fn issue;
    void *ctx;
    int errors;
} flex_check;

/* Counts an error and reports it (joint -1: the whole model). */
static void flex_error(flex_check *c, int joint, const char *field, const char *msg)
{
    c->errors++;
    if (c->issue) c->issue(c->ctx, joint, field, 1, msg);
}

/* Checks one link's beam description against its geometry (distance to the next joint). */
static void check_link(flex_check *c, int i, const dyn_flex_link *f, double dist)
{
    char msg[200];
    const int *nm[3] = {&f->modes_y, &f->modes_z, &f->modes_x};
    static const char *nm_name[3] = {"flex.modes_y", "flex.modes_z", "flex.modes_x"};
    for (int k = 0; k < 3; k++) {
        if (*nm[k] < 0 || *nm[k] > DYN_FLEX_MAX_MODES) {
            snprintf(msg, sizeof msg, "joint %d: %d modes asked, a beam has 0 to %d per direction",
                     i, *nm[k], DYN_FLEX_MAX_MODES);
            flex_error(c, i, nm_name[k], msg);
        }
    }
    const double vals[7] = {f->length, f->mass, f->EI_z, f->EI_y, f->GJ, f->polar, f->damping};
    static const char *names[7] = {"flex.length", "flex.mass",  "flex.EI_z",   "flex.EI_y",
                                   "flex.GJ",     "flex.polar", "flex.damping"};
    for (int k = 0; k < 7; k++) {
        if (!isfinite(vals[k]) || vals[k] < 0.0) {
            snprintf(msg, sizeof msg, "joint %d: %s is %g, it must be finite and >= 0", i,
                     names[k] + 5, vals[k]);
            flex_error(c, i, names[k], msg);
        }
    }
    const int any = f->modes_y || f->modes_z || f->modes_x;
    if (!any && f->mass == 0.0) return; /* no beam */
    if (!(f->length > 0.0) || fabs(f->length - dist) > 1e-9 * fmax(1.0, dist)) {
        snprintf(msg, sizeof msg,
                 "joint %d: the beam's length %.9g m must equal the distance %.9g m from joint "
                 "%d to %s",
                 i, f->length, dist, i, "the next joint's origin at q = 0 (the tool for the last)");
        flex_error(c, i, "flex.length", msg);
    }
    if ((f->modes_y || f->modes_z) && !(f->mass > 0.0)) {
        snprintf(msg, sizeof msg, "joint %d: bending modes need a beam mass > 0 (got %g kg)", i,
                 f->mass);
        flex_error(c, i, "flex.mass", msg);
    }
    if (f->modes_y && !(f->EI_z > 0.0)) {
        snprintf(msg, sizeof msg, "joint %d: %d bending modes along y need EI_z > 0 (got %g)", i,
                 f->modes_y, f->EI_z);
        flex_error(c, i, "flex.EI_z", msg);
    }
    if (f->modes_z && !(f->EI_y > 0.0)) {
        snprintf(msg, sizeof msg, "joint %d: %d bending modes along z need EI_y > 0 (got %g)", i,
                 f->modes_z, f->EI_y);
        flex_error(c, i, "flex.EI_y", msg);
    }
    if (f->modes_x && !(f->GJ > 0.0 && f->polar > 0.0)) {
        snprintf(msg, sizeof msg,
                 "joint %d: %d torsion modes need GJ > 0 and polar > 0 (got %g N m^2, %g kg m)", i,
                 f->modes_x, f->GJ, f->polar);
        flex_error(c, i, "flex.GJ", msg);
    }
}

/* Beam axes in M_i (see flex.h): x_b along pend, z_b the joint axis (or x) made orthogonal. */
static void beam_axes(const double pend[3], double C[9])
{
    const double L = sqrt(pend[0] * pend[0] + pend[1] * pend[1] + pend[2] * pend[2]);
    const double xb[3] = {pend[0] / L, pend[1] / L, pend[2] / L};
    double zb[3] = {-xb[2] * xb[0], -xb[2] * xb[1], 1.0 - xb[2] * xb[2]};
    double nz = sqrt(zb[0] * zb[0] + zb[1] * zb[1] + zb[2] * zb[2]);
    if (nz < 1e-9) {
        zb[0] = 1.0 - xb[0] * xb[0], zb[1] = -xb[0] * xb[1], zb[2] = -xb[0] * xb[2];
        nz = sqrt(zb[0] * zb[0] + zb[1] * zb[1] + zb[2] * zb[2]);
    }
    for (int k = 0; k < 3; k++) zb[k] /= nz;
    const double yb[3] = {zb[1] * xb[2] - zb[2] * xb[1], zb[2] * xb[0] - zb[0] * xb[2],
                          zb[0] * xb[1] - zb[1] * xb[0]};
    for (int r = 0; r < 3; r++) C[3 * r] = xb[r], C[3 * r + 1] = yb[r], C[3 * r + 2] = zb[r];
}

/* Quadrature points, shapes, modal mass, stiffness (eq 2.42, diagonal by orthogonality of the
 * eigenfunctions, by quadrature) and modal damping of one beam. */
static void build_beam(flex_beam *b, const dyn_flex_link *f, int G, int *next)
{
    b->nm[0] = f->modes_y, b->nm[1] = f->modes_z, b->nm[2] = f->modes_x;
    for (int k = 0; k < 3; k++) b->off[k] = *next, *next += b->nm[k];
    const int any = b->nm[0] || b->nm[1] || b->nm[2];
    if (!any && f->mass == 0.0) {
        b->G = 0;
        return;
    }
    const double L = f->length, mu = f->mass / L;
    double xg[DYN_FLEX_MAX_QUAD], wg[DYN_FLEX_MAX_QUAD], bl[DYN_FLEX_MAX_MODES];
    gauss_legendre(G, xg, wg);
    for (int k = 0; k < DYN_FLEX_MAX_MODES; k++) bl[k] = bending_root(k);
    b->G = G;
    b->L = L;
    double kd2[DYN_FLEX_MAX_MODES] = {0}, kp1[DYN_FLEX_MAX_MODES] = {0};
    double md[DYN_FLEX_MAX_MODES] = {0}, mp[DYN_FLEX_MAX_MODES] = {0};
    for (int g = 0; g < G; g++) {
        const double eta = 0.5 * L * (xg[g] + 1.0), w = 0.5 * L * wg[g];
        b->eta[g] = eta;
        b->mw[g] = mu * w;
        b->jw[g] = f->polar * w;
        for (int k = 0; k < DYN_FLEX_MAX_MODES; k++) {
            double D, d1, d2;
            bending_shape(bl[k], L, eta, &D, &d1, &d2);
            const double gam = (2 * k + 1) * M_PI / (2.0 * L);
            b->D[g][k] = D;
            b->P[g][k] = sin(gam * eta);
            kd2[k] += w * d2 * d2;
            md[k] += w * D * D;
            kp1[k] += w * gam * gam * cos(gam * eta) * cos(gam * eta);
            mp[k] += w * b->P[g][k] * b->P[g][k];
        }
    }
    for (int k = 0; k < DYN_FLEX_MAX_MODES; k++) {
        double d2;
        bending_shape(bl[k], L, L, &b->DL[k], &b->dDL[k], &d2);
        b->PL[k] = sin((2 * k + 1) * M_PI / 2.0);
        const double EI[2] = {f->EI_z, f->EI_y};
        for (int dir = 0; dir < 2; dir++) {
            b->K[dir][k] = EI[dir] * kd2[k];
            b->mm[dir][k] = mu * md[k];
        }
        b->K[2][k] = f->GJ * kp1[k];
        b->mm[2][k] = f->polar * mp[k];
        for (int dir = 0; dir < 3; dir++)
            b->Dm[dir][k] = 2.0 * f->damping * sqrt(b->K[dir][k] * b->mm[dir][k]);
    }
}

/* 1 if a payload must ride on the last link's bending tip. */
static int has_payload_on_flex_tip(const dyn_flex_model *m, const dyn_model_desc *rigid)
{
    const flex_beam *b = &m->beam[m->n - 1];
    return rigid->payload.mass > 0.0 && (b->nm[0] || b->nm[1] || b->nm[2]);
}

/* The payload rides on the deflected tip of the last link: its body (the rigid form's last body
 * less the link alone, in M_{n-1} about the origin) is moved to the tip origin p = pend (-1: out of
 * memory): h_p = h - m p, I_p = I - 2 (p.h) E + h p^T + p h^T + m (|p|^2 E - p p^T). */
static int move_payload_to_tip(dyn_flex_model *m, const dyn_model_desc *rigid)
{
    dyn_model_desc *bare = malloc(sizeof *bare); /* large: not on the stack */
    if (!bare) return -1;
    *bare = *rigid;
    bare->payload.mass = 0.0;
    memset(bare->payload.com, 0, sizeof bare->payload.com);
    memset(bare->payload.inertia, 0, sizeof bare->payload.inertia);
    dyn_model *lm = dyn_model_create(bare, NULL, NULL);
    free(bare);
    if (!lm) return -1;
    dyn_form *lf = malloc(sizeof *lf);
    if (!lf) {
        dyn_model_free(lm);
        return -1;
    }
    dyn_model_form(lm, lf);
    const int n = m->n;
    dyn_form_joint *j = &m->form.joint[n - 1];
    const dyn_form_joint *l = &lf->joint[n - 1];
    const double *p = m->pend[n - 1];
    double h[3], I[6];
    const double mp = j->mass - l->mass;
    for (int k = 0; k < 3; k++) h[k] = j->h[k] - l->h[k];
    for (int k = 0; k < 6; k++) I[k] = j->I[k] - l->I[k];
    const double ph = p[0] * h[0] + p[1] * h[1] + p[2] * h[2];
    const double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
    static const int ri[6] = {0, 0, 0, 1, 1, 2}, ci[6] = {0, 1, 2, 1, 2, 2};
    for (int k = 0; k < 6; k++) {
        const int r = ri[k], c = ci[k], e = r == c;
        m->tip_I[k] = I[k] - 2.0 * ph * e + h[r] * p[c] + p[r] * h[c] + mp * (pp * e - p[r] * p[c]);
    }
    for (int k = 0; k < 3; k++) m->tip_h[k] = h[k] - mp * p[k];
    m->tip_m = mp;
    m->tip_load = 1;
    j->mass = l->mass;
    memcpy(j->h, l->h, sizeof j->h);
    memcpy(j->I, l->I, sizeof j->I);
    free(lf);
    dyn_model_free(lm);
    return 0;
}

/* Validates both descriptions, builds the rigid model and every beam. */
dyn_flex_model *dyn_flex_create(const dyn_model_desc *rigid, const dyn_flex_desc *flex,
                                dyn_issue_fn issue, void *ctx)
{
    dyn_model *rm = dyn_model_create(rigid, issue, ctx);
    if (!rm) return NULL;
    dyn_flex_model *m = calloc(1, sizeof *m);
    if (!m) {
        dyn_model_free(rm);
        return NULL;
    }
    m->rigid = rm;
    m->n = rigid->n;
    dyn_model_form(rm, &m->form);
    flex_check chk = {issue, ctx, 0};
    const int G = flex->quad_points ? flex->quad_points : 24;
    if (G < 2 || G > DYN_FLEX_MAX_QUAD) {
        char msg[120];
        snprintf(msg, sizeof msg, "%d quadrature points asked, 2 to %d are possible", G,
                 DYN_FLEX_MAX_QUAD);
        flex_error(&chk, -1, "flex.quad_points", msg);
    }
    for (int i = 0; i < m->n; i++) {
        double *pe = m->pend[i];
        if (i + 1 < m->n) {
            const dyn_form_joint *c = &m->form.joint[i + 1];
            pe[0] = c->p0[0];
            pe[1] = c->p0[1] - c->doff * c->sa;
            pe[2] = c->p0[2] + c->doff * c->ca;
        } else {
            memcpy(pe, m->form.tool_p, sizeof m->form.tool_p);
        }
        check_link(&chk, i, &flex->link[i], sqrt(pe[0] * pe[0] + pe[1] * pe[1] + pe[2] * pe[2]));
    }
    if (chk.errors) {
        dyn_flex_free(m);
        return NULL;
    }
    int next = m->n;
    for (int i = 0; i < m->n; i++) {
        build_beam(&m->beam[i], &flex->link[i], G, &next);
        if (m->beam[i].G) beam_axes(m->pend[i], m->beam[i].C);
    }
    m->nx = next;
    if (has_payload_on_flex_tip(m, rigid) && move_payload_to_tip(m, rigid) != 0) {
        dyn_flex_free(m);
        return NULL;
    }
    return m;
}

/* Frees the model and the rigid model it owns (NULL is fine). */
void dyn_flex_free(dyn_flex_model *m)
{
    if (!m) return;
    dyn_model_free(m->rigid);
    free(m);
}

/* Accessors of the model (see flex.h). */
int dyn_flex_nx(const dyn_flex_model *m)
{
    return m->nx;
}
int dyn_flex_dof(const dyn_flex_model *m)
{
    return m->n;
}
const dyn_model *dyn_flex_rigid(const dyn_flex_model *m)
{
    return m->rigid;
}

int dyn_flex_mode_index(const dyn_flex_model *m, int link, int dir)
{
    return m->beam[link].off[dir];
}

double dyn_flex_tip_shape(const dyn_flex_model *m, int link, int dir, int k)
{
    return dir == 2 ? m->beam[link].PL[k] : m->beam[link].DL[k];
}

double dyn_flex_mode_omega(const dyn_flex_model *m, int link, int dir, int k, double *modal_mass)
{
    const flex_beam *b = &m->beam[link];
    if (modal_mass) *modal_mass = b->mm[dir][k];
    return sqrt(b->K[dir][k] / b->mm[dir][k]);
}

/* Workspace: every frame's partial velocity columns and the scratch of one nx-sized solve. */
dyn_flex_data *dyn_flex_data_create(const dyn_flex_model *m)
{
    const int nx = m->nx, n = m->n;
    dyn_flex_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    const size_t cols = 6 * (size_t)nx;
    const size_t total = (2 * (size_t)n + 1) * cols + 2 * cols + (size_t)nx * nx + 3 * nx;
    d->buf = calloc(total, sizeof(double));
    if (!d->buf) {
        free(d);
        return NULL;
    }
    d->nx = nx;
    double *p = d->buf;
    for (int i = 0; i < n; i++) {
        d->fj[i].Om = p, p += 3 * nx;
        d->fj[i].V = p, p += 3 * nx;
        d->ft[i].Om = p, p += 3 * nx;
        d->ft[i].V = p, p += 3 * nx;
    }
    d->tool.Om = p, p += 3 * nx;
    d->tool.V = p, p += 3 * nx;
    d->Om_e = p, p += 3 * nx;
    d->V_e = p, p += 3 * nx;
    d->P_e = p, p += 3 * nx;
    d->L_e = p, p += 3 * nx;
    d->Mx = p, p += (size_t)nx * nx;
    d->r1 = p, p += nx;
    d->r2 = p, p += nx;
    d->r3 = p;
    return d;
}

/* Frees a workspace (NULL is fine). */
void dyn_flex_data_free(dyn_flex_data *d)
{
    if (!d) return;
    free(d->buf);
    free(d);
}
