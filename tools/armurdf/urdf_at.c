/* urdf_at.c — --at JOINT=VALUE, and the position [rad | m] of each moving side-branch joint
 * while its links are lumped: the --at value, else its <mimic> rule q = multiplier q_m + offset
 * applied to the mimicked joint's position, else 0. Every position lies within its limits. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armurdf/urdf_internal.h"

int urdf_at_parse(char *arg, urdf_at *out, urdf_error *err)
{
    char *eq = strrchr(arg, '='), *end;
    if (!eq || eq == arg)
        return urdf_fail_opt(err, "--at %.100s: expected JOINT=VALUE (rad or m)", arg);
    errno = 0;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !isfinite(v))
        return urdf_fail_opt(err, "--at %.100s: '%.40s' is not a finite number", arg, eq + 1);
    *eq = 0;
    out->joint = arg;
    out->value = v;
    return 0;
}

/* The --at entry for joint j, or -1. */
static int at_entry(const urdf_positions *p, int j)
{
    for (int i = 0; i < p->opt->n_at; i++)
        if (strcmp(p->opt->at[i].joint, p->r->joint[j].name) == 0) return i;
    return -1;
}

/* Refuses a position outside the joint's <limit> (revolute and prismatic joints). */
static int check_range(const urdf_positions *p, int j, double v, const char *from, urdf_error *err)
{
    const urdf_joint *jt = &p->r->joint[j];
    if (jt->type == URDF_CONTINUOUS || !jt->has_limit || (v >= jt->lower && v <= jt->upper))
        return 0;
    char bv[URDF_NUM_LEN], lo[URDF_NUM_LEN], hi[URDF_NUM_LEN];
    return urdf_fail(err, p->r->file, jt->limit_line,
                     "<joint name=\"%.100s\"> <limit>: position %s %s (%s) is outside the "
                     "limits [%s, %s]; choose another with --at",
                     jt->name, urdf_num(v, bv), jt->type == URDF_PRISMATIC ? "m" : "rad", from,
                     urdf_num(jt->lower, lo), urdf_num(jt->upper, hi));
}

int urdf_at_check(const urdf_positions *p, urdf_error *err)
{
    const urdf_robot *r = p->r;
    for (int i = 0; i < p->opt->n_at; i++) {
        const urdf_at *a = &p->opt->at[i];
        int j = urdf_find_joint(r, a->joint);
        if (j < 0)
            return urdf_fail_opt(err, "--at %.100s: %s has no joint of that name", a->joint,
                                 r->file);
        const urdf_joint *jt = &r->joint[j];
        if (!urdf_moves(jt->type))
            return urdf_fail_opt(err, "--at %.100s: a %s joint has no position", a->joint,
                                 urdf_type_name(jt->type));
        if (p->on_chain[j])
            return urdf_fail_opt(err,
                                 "--at %.100s: the joint is on the chain that armd drives; --at "
                                 "places the joints of side branches, which are lumped",
                                 a->joint);
        if (jt->mimic)
            return urdf_fail_opt(err,
                                 "--at %.100s: the joint follows '%.100s' (<mimic>, line %d); "
                                 "give --at %.100s=VALUE",
                                 a->joint, jt->mimic, jt->mimic_line, jt->mimic);
        for (int k = 0; k < i; k++)
            if (strcmp(p->opt->at[k].joint, a->joint) == 0)
                return urdf_fail_opt(err, "--at %.100s: given twice", a->joint);
        if (check_range(p, j, a->value, "--at", err)) return -1;
    }
    return 0;
}

int urdf_position(const urdf_positions *p, int j, double *value, urdf_lump_how *how,
                  urdf_error *err)
{
    const urdf_robot *r = p->r;
    /* follow the mimic rules to a joint without one: q_j = mult q_k + add */
    double mult = 1, add = 0;
    int k = j;
    for (int steps = 0; r->joint[k].mimic; steps++) {
        const urdf_joint *m = &r->joint[k];
        int t = urdf_find_joint(r, m->mimic);
        if (t < 0)
            return urdf_fail(err, r->file, m->mimic_line,
                             "<joint name=\"%.100s\"> <mimic>: no joint named '%.100s'", m->name,
                             m->mimic);
        if (p->on_chain[t])
            return urdf_fail(err, r->file, m->mimic_line,
                             "<joint name=\"%.100s\"> <mimic>: follows the chain joint '%.100s', "
                             "so it moves with the arm and cannot be lumped at one position",
                             m->name, m->mimic);
        if (!urdf_moves(r->joint[t].type) || steps >= r->n_joints)
            return urdf_fail(err, r->file, m->mimic_line,
                             "<joint name=\"%.100s\"> <mimic>: '%.100s' is %s", m->name, m->mimic,
                             steps >= r->n_joints ? "part of a loop of mimic rules"
                                                  : "not a moving joint");
        add += mult * m->offset;
        mult *= m->multiplier;
        k = t;
    }
    int a = at_entry(p, k);
    if (a >= 0) p->used[a] = true;
    double v = mult * (a >= 0 ? p->opt->at[a].value : 0.0) + add;
    *how = k != j ? URDF_BY_MIMIC : a >= 0 ? URDF_BY_AT : URDF_BY_DEFAULT;
    if (!isfinite(v))
        return urdf_fail(err, r->file, r->joint[j].mimic_line,
                         "<joint name=\"%.100s\"> <mimic>: the rule gives a position that is not "
                         "finite",
                         r->joint[j].name);
    *value = v;
    static const char *const from[] = {"", "", "the default", "--at", "its <mimic> rule"};
    return check_range(p, j, v, from[*how], err);
}
