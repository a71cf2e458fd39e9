/* form.c — the model's internal form for code generators, and its hash (dynamics.h). */
#include <string.h>

#include "dynamics/dyn_internal.h"

#define FORM_VERSION 1.0 /* hashed first: raised when the internal form's meaning changes */

/* One joint of the internal form (dyn_internal.h) in the public layout. */
static void form_joint(const dyn_model *m, int i, dyn_form_joint *out)
{
    const dyn_joint *jt = &m->j[i];
    out->type = m->type[i];
    out->ca = jt->ca;
    out->sa = jt->sa;
    memcpy(out->p0, jt->p0, sizeof out->p0);
    out->toff = jt->toff;
    out->doff = jt->doff;
    out->mass = jt->body.m;
    memcpy(out->h, jt->body.h, sizeof out->h);
    memcpy(out->I, jt->body.I, sizeof out->I);
    out->armature = jt->armature;
    out->viscous = jt->viscous;
    out->coulomb_pos = jt->coulomb_pos;
    out->coulomb_neg = jt->coulomb_neg;
}

void dyn_model_form(const dyn_model *m, dyn_form *out)
{
    memset(out, 0, sizeof *out);
    out->n = m->n;
    for (int i = 0; i < m->n; i++) form_joint(m, i, &out->joint[i]);
    memcpy(out->base_R, m->base.R, sizeof out->base_R);
    memcpy(out->gravity_b, m->gravity_b, sizeof out->gravity_b);
    memcpy(out->tool_R, m->tool.R, sizeof out->tool_R);
    memcpy(out->tool_p, m->tool.p, sizeof out->tool_p);
    out->friction_smoothing = m->friction_smoothing;
}

/* FNV-1a over the 8 bytes of x, least significant first (-0 hashed as 0). */
static unsigned long long hash_num(unsigned long long h, double x)
{
    unsigned long long bits;
    if (x == 0.0) x = 0.0;
    memcpy(&bits, &x, sizeof bits);
    for (int k = 0; k < 8; k++) {
        h ^= (bits >> (8 * k)) & 0xffu;
        h *= 0x100000001b3ull;
    }
    return h;
}

static unsigned long long hash_nums(unsigned long long h, const double *x, int k)
{
    for (int i = 0; i < k; i++) h = hash_num(h, x[i]);
    return h;
}

/* Every number of dyn_form in field order, one joint at a time (no n-sized temporary). */
unsigned long long dyn_model_hash(const dyn_model *m)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    h = hash_num(h, FORM_VERSION);
    h = hash_num(h, m->n);
    for (int i = 0; i < m->n; i++) {
        dyn_form_joint j;
        form_joint(m, i, &j);
        const double head[] = {j.type,  j.ca,   j.sa,   j.p0[0], j.p0[1],
                               j.p0[2], j.toff, j.doff, j.mass};
        const double tail[] = {j.armature, j.viscous, j.coulomb_pos, j.coulomb_neg};
        h = hash_nums(h, head, sizeof head / sizeof head[0]);
        h = hash_nums(h, j.h, 3);
        h = hash_nums(h, j.I, 6);
        h = hash_nums(h, tail, sizeof tail / sizeof tail[0]);
    }
    h = hash_nums(h, m->base.R, 9);
    h = hash_nums(h, m->gravity_b, 3);
    h = hash_nums(h, m->tool.R, 9);
    h = hash_nums(h, m->tool.p, 3);
    return hash_num(h, m->friction_smoothing);
}
