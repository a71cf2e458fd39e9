/* urdf_gen.c — random URDF trees (parameters from tests/dynamics' arm_random), their URDF text,
 * and the oracle's un-merged serial chain with 4x4 pseudo-inertias (tests/dynamics/lagrange). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/armurdf/urdf_gen.h"
#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/lagrange.h"
#include "tests/dynamics/mat4.h"

/* Random physical parameters: arm_random's joints give origins, axes, friction and inertials. */
static dyn_model_desc params;

/* A random integer 0..n-1. */
static int pick(int n)
{
    return (int)rng_uniform(0, n - 1e-9);
}

/* Adds a joint of type ty under link parent; its child link gets arm_random's inertial k. */
static int add_joint(gen_tree *t, int parent, urdf_joint_type ty, bool on_path, bool lumped)
{
    int k = t->n_joints++;
    gen_joint *j = &t->j[k];
    const dyn_joint_desc *p = &params.joint[k];
    memset(j, 0, sizeof *j);
    j->parent = parent;
    j->type = ty;
    j->on_path = on_path;
    j->lumped = lumped;
    j->mimic = -1;
    double scale = rng_uniform(0.3, 3); /* URDF axes need not be unit vectors */
    for (int i = 0; i < 3; i++) {
        j->xyz[i] = p->origin_xyz[i];
        j->rpy[i] = p->origin_rpy[i];
        j->axis[i] = p->axis[i] * scale;
    }
    bool prism = ty == URDF_PRISMATIC;
    j->lower = prism ? -1 : -3;
    j->upper = prism ? 1 : 3;
    j->damping = p->viscous;
    j->friction = p->coulomb_pos;
    gen_link *l = &t->l[k + 1];
    /* the links of moving path joints always have mass; others sometimes none */
    l->has_inertial = (on_path && ty != URDF_FIXED) || rng_uniform(0, 1) < 0.85;
    l->mass = p->mass;
    for (int i = 0; i < 3; i++) {
        l->xyz[i] = p->com[i];
        l->rpy[i] = rng_uniform(-3, 3);
    }
    memcpy(l->I, p->inertia, sizeof l->I);
    return k;
}

/* A moving type at random. */
static urdf_joint_type moving_type(void)
{
    static const urdf_joint_type m[3] = {URDF_REVOLUTE, URDF_CONTINUOUS, URDF_PRISMATIC};
    return m[pick(3)];
}

/* Room for optional joints: the 8 moving ones at most always fit. */
static bool room(const gen_tree *t)
{
    return t->n_joints < GEN_MAX - 10;
}

/* 1..3 joints hanging from link from (and from each other), none on the path. */
static void add_side_branch(gen_tree *t, int from, bool lumped)
{
    int first_link = t->n_joints + 1, ns = 1 + pick(3);
    for (int s = 0; s < ns && room(t); s++) {
        int parent = s == 0 || rng_uniform(0, 1) < 0.4 ? from : first_link + pick(s);
        urdf_joint_type ty = rng_uniform(0, 1) < 0.3 ? URDF_FIXED : moving_type();
        if (!lumped && rng_uniform(0, 1) < 0.3) ty = URDF_FLOATING; /* never imported */
        int k = add_joint(t, parent, ty, false, lumped);
        gen_joint *j = &t->j[k];
        if (!lumped || !urdf_moves(ty)) continue;
        /* mimic an earlier lumped moving joint that is no mimic itself, or an --at position */
        int cand[GEN_MAX], nc = 0;
        for (int i = 0; i < k; i++)
            if (t->j[i].lumped && !t->j[i].on_path && urdf_moves(t->j[i].type) && t->j[i].mimic < 0)
                cand[nc++] = i;
        if (nc && rng_uniform(0, 1) < 0.4) {
            j->mimic = cand[pick(nc)];
            j->mult = rng_uniform(-2, 2);
            j->off = rng_uniform(-0.2, 0.2);
        } else if (rng_uniform(0, 1) < 0.6) {
            j->at_given = true;
            j->at = rng_uniform(-0.3, 0.3);
        }
    }
}

void gen_random(gen_tree *t, int n_moving)
{
    memset(t, 0, sizeof *t);
    arm_random(&params, GEN_MAX, DYN_URDF, 0, 1);
    memcpy(t->gravity, params.gravity, sizeof t->gravity);
    t->l[0] = (gen_link){true, rng_uniform(0.5, 5), {0.1, 0, 0}, {0, 0, 0}, {1, 0, 0, 1, 0, 1}};
    int cur = 0;
    for (int f = pick(3); f > 0; f--) cur = add_joint(t, cur, URDF_FIXED, true, false) + 1;
    if (rng_uniform(0, 1) < 0.5) add_side_branch(t, cur, false);
    for (int i = 0; i < n_moving; i++) {
        cur = add_joint(t, cur, moving_type(), true, true) + 1;
        if (rng_uniform(0, 1) < 0.5) add_side_branch(t, cur, true);
        for (int f = rng_uniform(0, 1) < 0.4 ? 1 + pick(2) : 0; f > 0 && room(t); f--) {
            cur = add_joint(t, cur, URDF_FIXED, true, true) + 1;
            if (rng_uniform(0, 1) < 0.3) add_side_branch(t, cur, true);
        }
    }
    t->tip = cur;
    for (int k = 0; k < t->n_joints; k++)
        if (t->j[k].on_path) t->path[t->n_path++] = k;
    t->n_moving = n_moving;
    for (int l = 0; l <= t->n_joints; l++) {
        bool leaf = true;
        for (int k = 0; k < t->n_joints; k++) leaf = leaf && t->j[k].parent != l;
        t->n_leaves += leaf;
    }
}

/* Appends formatted text to a growing buffer. */
typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (w >= 0 && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap * 2 + (size_t)w + 1;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
}

/* <link> with its <inertial> (if any) and a <visual> that must be ignored. */
static void add_link(sbuf *b, const gen_tree *t, int l)
{
    const gen_link *k = &t->l[l];
    add(b, "  <link name=\"l%d\">\n    <visual><origin xyz=\"9 9 9\"/></visual>\n", l);
    if (k->has_inertial)
        add(b,
            "    <inertial>\n      <origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>\n"
            "      <mass value=\"%.17g\"/>\n      <inertia ixx=\"%.17g\" ixy=\"%.17g\" "
            "ixz=\"%.17g\" iyy=\"%.17g\" iyz=\"%.17g\" izz=\"%.17g\"/>\n    </inertial>\n",
            k->xyz[0], k->xyz[1], k->xyz[2], k->rpy[0], k->rpy[1], k->rpy[2], k->mass, k->I[0],
            k->I[1], k->I[2], k->I[3], k->I[4], k->I[5]);
    add(b, "  </link>\n");
}

/* <joint> with origin, and for moving joints axis, limit, dynamics and mimic. */
static void add_joint_text(sbuf *b, const gen_tree *t, int k)
{
    static const char *const types[] = {"fixed",     "revolute", "continuous",
                                        "prismatic", "floating", "planar"};
    const gen_joint *j = &t->j[k];
    add(b, "  <joint name=\"j%d\" type=\"%s\">\n    <parent link=\"l%d\"/>\n", k, types[j->type],
        j->parent);
    add(b,
        "    <child link=\"l%d\"/>\n    <origin xyz=\"%.17g %.17g %.17g\" "
        "rpy=\"%.17g %.17g %.17g\"/>\n",
        k + 1, j->xyz[0], j->xyz[1], j->xyz[2], j->rpy[0], j->rpy[1], j->rpy[2]);
    if (!urdf_moves(j->type)) {
        add(b, "  </joint>\n");
        return;
    }
    add(b, "    <axis xyz=\"%.17g %.17g %.17g\"/>\n", j->axis[0], j->axis[1], j->axis[2]);
    add(b, "    <limit lower=\"%.17g\" upper=\"%.17g\" effort=\"100\" velocity=\"5\"/>\n", j->lower,
        j->upper);
    add(b, "    <dynamics damping=\"%.17g\" friction=\"%.17g\"/>\n", j->damping, j->friction);
    if (j->mimic >= 0)
        add(b, "    <mimic joint=\"j%d\" multiplier=\"%.17g\" offset=\"%.17g\"/>\n", j->mimic,
            j->mult, j->off);
    add(b, "  </joint>\n");
}

char *gen_urdf(const gen_tree *t)
{
    sbuf b = {malloc(4096), 0, 4096};
    if (!b.s) abort();
    add(&b, "<?xml version=\"1.0\"?>\n<robot name=\"random\">\n  <material name=\"m\"/>\n");
    int order[2 * GEN_MAX + 1], n = 0;
    for (int i = 0; i <= t->n_joints; i++) order[n++] = i;              /* links */
    for (int i = 0; i < t->n_joints; i++) order[n++] = GEN_MAX + 1 + i; /* joints */
    for (int i = n - 1; i > 0; i--) {
        int k = pick(i + 1), x = order[i];
        order[i] = order[k];
        order[k] = x;
    }
    for (int i = 0; i < n; i++)
        if (order[i] <= GEN_MAX)
            add_link(&b, t, order[i]);
        else
            add_joint_text(&b, t, order[i] - GEN_MAX - 1);
    add(&b, "  <transmission name=\"t\"><joint name=\"j0\"/></transmission>\n</robot>\n");
    return b.s;
}

int gen_at_options(const gen_tree *t, urdf_at *at, char (*storage)[16])
{
    int n = 0;
    for (int k = 0; k < t->n_joints; k++)
        if (t->j[k].at_given) {
            snprintf(storage[n], 16, "j%d", k);
            at[n] = (urdf_at){storage[n], t->j[k].at};
            n++;
        }
    return n;
}

/* The position of lumped side joint k: --at, its mimic rule, or 0. */
static double position(const gen_tree *t, int k)
{
    const gen_joint *j = &t->j[k];
    if (j->mimic >= 0) return j->mult * position(t, j->mimic) + j->off;
    return j->at_given ? j->at : 0;
}

/* The full 4x4 transpose. */
static mat4 transpose(mat4 a)
{
    mat4 r;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++) r.m[i][k] = a.m[k][i];
    return r;
}

/* J += the pseudo-inertia of link l (pose T in the present frame) and of every link hanging from
 * it off the path, each joint at its position. */
static void add_bodies(const gen_tree *t, int l, mat4 T, mat4 *J)
{
    const gen_link *k = &t->l[l];
    if (k->has_inertial) {
        double zero[3] = {0, 0, 0};
        mat4 C = m4_mul(T, m4_rpy(k->xyz, k->rpy));
        mat4 Jl = m4_mul(C, m4_mul(lagrange_pseudo_inertia(k->mass, zero, k->I), transpose(C)));
        for (int i = 0; i < 4; i++)
            for (int c = 0; c < 4; c++) J->m[i][c] += Jl.m[i][c];
    }
    for (int c = 0; c < t->n_joints; c++) {
        const gen_joint *j = &t->j[c];
        if (j->parent != l || j->on_path) continue;
        mat4 M = m4_identity();
        if (urdf_moves(j->type)) {
            double n =
                sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
            double u[3] = {j->axis[0] / n, j->axis[1] / n, j->axis[2] / n};
            M = m4_joint(u, j->type == URDF_PRISMATIC, position(t, c), 0);
        }
        add_bodies(t, c + 1, m4_mul(T, m4_mul(m4_rpy(j->xyz, j->rpy), M)), J);
    }
}

/* Mass, COM and inertia about the COM back from a pseudo-inertia: m = J33, c = J[0..2][3] / m,
 * S = J3 - m c c^T (second moment about the COM), I = tr(S) E - S. */
static void from_pseudo(mat4 J, dyn_joint_desc *d)
{
    d->mass = J.m[3][3];
    double S[3][3], tr = 0;
    for (int i = 0; i < 3; i++) d->com[i] = d->mass > 0 ? J.m[i][3] / d->mass : 0;
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) S[i][k] = J.m[i][k] - d->mass * d->com[i] * d->com[k];
        tr += S[i][i];
    }
    d->inertia[0] = tr - S[0][0], d->inertia[1] = -S[0][1], d->inertia[2] = -S[0][2];
    d->inertia[3] = tr - S[1][1], d->inertia[4] = -S[1][2], d->inertia[5] = tr - S[2][2];
}

int gen_oracle(const gen_tree *t, dyn_model_desc *d, int *expanded)
{
    memset(d, 0, sizeof *d);
    memcpy(d->gravity, t->gravity, sizeof d->gravity);
    int m = 0;
    for (int p = 0; p < t->n_path; p++) {
        const gen_joint *j = &t->j[t->path[p]];
        dyn_joint_desc *o = &d->joint[d->n];
        o->form = DYN_URDF;
        o->type = j->type == URDF_PRISMATIC ? DYN_PRISMATIC : DYN_REVOLUTE;
        memcpy(o->origin_xyz, j->xyz, sizeof o->origin_xyz);
        memcpy(o->origin_rpy, j->rpy, sizeof o->origin_rpy);
        if (urdf_moves(j->type)) {
            memcpy(o->axis, j->axis, sizeof o->axis);
            o->viscous = j->damping;
            o->coulomb_pos = j->friction;
            o->coulomb_neg = -j->friction;
            expanded[m++] = d->n;
        } else {
            o->axis[2] = 1; /* held at 0: any axis */
        }
        mat4 J;
        memset(&J, 0, sizeof J);
        add_bodies(t, t->path[p] + 1, m4_identity(), &J);
        from_pseudo(J, o);
        d->n++;
    }
    return d->n;
}
