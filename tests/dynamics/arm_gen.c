/* arm_gen.c — random arms for the tests and standard-DH -> modified DH / URDF converters. */
#include <math.h>
#include <string.h>

#include "tests/dynamics/arm_gen.h"
#include "tests/dynamics/mat4.h"

static unsigned long long rng_state = 88172645463325252ull;

void rng_seed(unsigned long long s)
{
    rng_state = s ? s : 88172645463325252ull;
}

double rng_uniform(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* A rigid body's inertia about its COM: R diag(s2+s3, s1+s3, s1+s2) R^T (always physical). */
static void random_inertia(double I[6], double scale)
{
    double s[3] = {rng_uniform(0.01, 1) * scale, rng_uniform(0.01, 1) * scale,
                   rng_uniform(0.01, 1) * scale};
    double lam[3] = {s[1] + s[2], s[0] + s[2], s[0] + s[1]};
    double z[3] = {0, 0, 0},
           rpy[3] = {rng_uniform(-3, 3), rng_uniform(-1.5, 1.5), rng_uniform(-3, 3)};
    mat4 R = m4_rpy(z, rpy);
    double F[3][3];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            F[i][k] = 0;
            for (int j = 0; j < 3; j++) F[i][k] += R.m[i][j] * lam[j] * R.m[k][j];
        }
    I[0] = F[0][0], I[1] = F[0][1], I[2] = F[0][2], I[3] = F[1][1], I[4] = F[1][2], I[5] = F[2][2];
}

void arm_random(dyn_model_desc *d, int n, int form, double p_prismatic, int all_extras)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    for (int i = 0; i < n; i++) {
        dyn_joint_desc *j = &d->joint[i];
        j->type = rng_uniform(0, 1) < p_prismatic ? DYN_PRISMATIC : DYN_REVOLUTE;
        j->form = form >= 0 ? (dyn_kin_form)form : (dyn_kin_form)(int)rng_uniform(0, 2.999);
        j->a = rng_uniform(-0.5, 0.5);
        j->alpha = rng_uniform(-3, 3);
        j->d = rng_uniform(-0.5, 0.5);
        j->theta = rng_uniform(-3, 3);
        for (int k = 0; k < 3; k++) {
            j->origin_xyz[k] = rng_uniform(-0.5, 0.5);
            j->origin_rpy[k] = rng_uniform(-3, 3);
            j->axis[k] = rng_uniform(-1, 1);
            j->com[k] = rng_uniform(-0.3, 0.3);
        }
        double nn =
            sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
        for (int k = 0; k < 3; k++) j->axis[k] /= nn;
        j->mass = rng_uniform(0.5, 5);
        random_inertia(j->inertia, 0.05);
        if (all_extras) {
            j->armature = rng_uniform(0, 0.5);
            j->viscous = rng_uniform(0, 1);
            j->coulomb_pos = rng_uniform(0, 1);
            j->coulomb_neg = -rng_uniform(0, 1);
        }
    }
    double g = 9.81, th = rng_uniform(0, 3.1), ph = rng_uniform(-3.1, 3.1);
    d->gravity[0] = g * sin(th) * cos(ph);
    d->gravity[1] = g * sin(th) * sin(ph);
    d->gravity[2] = g * cos(th);
    if (all_extras) {
        for (int k = 0; k < 3; k++) {
            d->tool_xyz[k] = rng_uniform(-0.2, 0.2);
            d->tool_rpy[k] = rng_uniform(-3, 3);
            d->payload.com[k] = rng_uniform(-0.1, 0.1);
        }
        d->payload.mass = rng_uniform(0.1, 2);
        random_inertia(d->payload.inertia, 0.01);
    }
}

/* Pieces of a standard DH joint: M_i = L_{i-1} pre Jz(q + off), L_i = M_i C. */
static mat4 std_pre_off(const dyn_joint_desc *j)
{
    return j->type == DYN_PRISMATIC ? m4_mul(m4_rz(j->theta), m4_trans(0, 0, j->d))
                                    : m4_mul(m4_trans(0, 0, j->d), m4_rz(j->theta));
}

static mat4 std_link(const dyn_joint_desc *j)
{
    return m4_mul(m4_trans(j->a, 0, 0), m4_rx(j->alpha));
}

void arm_convert(const dyn_model_desc *std, int to_form, dyn_model_desc *out)
{
    *out = *std;
    const int n = std->n;
    mat4 S[DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        double z[3] = {0, 0, 0};
        double rpy[3] = {rng_uniform(-3, 3), rng_uniform(-1.5, 1.5), rng_uniform(-3, 3)};
        S[i] = to_form == DYN_URDF ? m4_rpy(z, rpy) : m4_identity();
    }
    for (int i = 0; i < n; i++) {
        const dyn_joint_desc *js = &std->joint[i];
        dyn_joint_desc *jo = &out->joint[i];
        jo->form = (dyn_kin_form)to_form;
        mat4 C = std_link(js);
        /* the new link frame expressed in the standard link frame's moving frame M_i: S_i */
        mat4 link_in_new = m4_mul(m4_rot_transpose(S[i]), C); /* std link frame in new frame */
        m4_inertia_to(link_in_new, js->com, js->inertia, jo->com, jo->inertia);
        if (to_form == DYN_DH_MODIFIED) {
            jo->a = i > 0 ? std->joint[i - 1].a : 0.0;
            jo->alpha = i > 0 ? std->joint[i - 1].alpha : 0.0;
        } else {
            mat4 parent = i > 0 ? m4_mul(m4_rot_transpose(S[i - 1]), std_link(&std->joint[i - 1]))
                                : m4_identity();
            mat4 o = m4_mul(parent, m4_mul(std_pre_off(js), S[i]));
            m4_to_rpy(o, jo->origin_xyz, jo->origin_rpy);
            for (int k = 0; k < 3; k++) jo->axis[k] = S[i].m[2][k]; /* S^T z */
        }
    }
    mat4 last = m4_mul(m4_rot_transpose(S[n - 1]), std_link(&std->joint[n - 1]));
    mat4 tool = m4_mul(last, m4_rpy(std->tool_xyz, std->tool_rpy));
    m4_to_rpy(tool, out->tool_xyz, out->tool_rpy);
}
