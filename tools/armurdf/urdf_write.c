/*
 * urdf_write.c — the imported chain as armd INI text: a header comment (source, chain, links
 * left out, tool frame, keys still to add), then one [joint NAME] section per chain joint with
 * the keys of the URDF kinematic form (armd.conf(5), [joint NAME]). Values are written in the
 * shortest form that reads back as the same double; comment lines stay under the loader's
 * 196-character line limit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armurdf/urdf_internal.h"

#define SHOW_LEN 44

/* A name for a comment: control characters as '?', at most 40 characters (longer ones are cut
 * to 37 and "..."). */
static const char *show(const char *name, char buf[SHOW_LEN])
{
    size_t n = strlen(name), k = 0;
    for (; k < n && k < (n > 40 ? 37 : 40); k++)
        buf[k] = (unsigned char)name[k] < 0x20 || name[k] == 0x7f ? '?' : name[k];
    if (n > 40) memcpy(buf + k, "...", 3), k += 3;
    buf[k] = 0;
    return buf;
}

/* "key = v0 v1 ...": n values. */
static void put(FILE *f, const char *key, const double *v, int n)
{
    char b[URDF_NUM_LEN];
    fprintf(f, "%s =", key);
    for (int k = 0; k < n; k++) fprintf(f, " %s", urdf_num(v[k], b));
    fputc('\n', f);
}

/* One lumped link as a comment line: its mass and how it is attached. */
static void put_lumped(FILE *f, const urdf_robot *r, const urdf_lumped *l)
{
    char bl[SHOW_LEN], bj[SHOW_LEN];
    const urdf_link *lk = &r->link[l->link];
    char bm[URDF_NUM_LEN], bv[URDF_NUM_LEN];
    fprintf(f, ";   link '%s' %s kg", show(lk->name, bl),
            urdf_num(lk->has_inertial ? lk->mass : 0.0, bm));
    if (l->joint < 0) {
        fputc('\n', f);
        return;
    }
    const urdf_joint *j = &r->joint[l->joint];
    fprintf(f, ", %s joint '%s'", urdf_type_name(j->type), show(j->name, bj));
    if (l->how == URDF_BY_FIXED || l->how == URDF_NOT_MOVING) {
        fputc('\n', f);
        return;
    }
    static const char *const from[] = {"", "", "default", "--at", "its <mimic> rule"};
    fprintf(f, " at %s %s (%s)\n", urdf_num(l->value, bv), j->type == URDF_PRISMATIC ? "m" : "rad",
            from[l->how]);
}

/* The header: where the sections come from and what they leave to the user. */
static void put_header(FILE *f, const urdf_robot *r, const urdf_arm *arm)
{
    char b1[SHOW_LEN], b2[SHOW_LEN], b3[SHOW_LEN];
    const char *base = strrchr(r->file, '/') ? strrchr(r->file, '/') + 1 : r->file;
    fprintf(f, "; [joint NAME] sections written by armurdf from %s (robot '%s').\n", show(base, b1),
            show(r->name, b2));
    fprintf(f, "; Chain: link '%s' (base) to link '%s' (tip), %d moving joint%s.\n",
            show(r->link[arm->base].name, b1), show(r->link[arm->tip].name, b3), arm->n,
            arm->n == 1 ? "" : "s");
    fprintf(f, "; URDF kinematic form, SI units: origin_xyz/origin_rpy place the joint frame in "
               "the previous link\n; frame, axis is in the joint frame; com and inertia (about "
               "the COM) are in the link frame.\n");
    fprintf(f, "; Fixed to the base, so not in the model:\n");
    for (int i = 0; i < arm->n_lumped && arm->lumped[i].how == URDF_NOT_MOVING; i++)
        put_lumped(f, r, &arm->lumped[i]);
    char bx[URDF_NUM_LEN], by[URDF_NUM_LEN], bz[URDF_NUM_LEN];
    const urdf_origin *t = &arm->tool;
    fprintf(f, "; The tip link '%s' in the last link frame, for [arm]:\n",
            show(r->link[arm->tip].name, b1));
    fprintf(f, ";   tool_xyz = %s %s %s\n", urdf_num(t->xyz[0], bx), urdf_num(t->xyz[1], by),
            urdf_num(t->xyz[2], bz));
    fprintf(f, ";   tool_rpy = %s %s %s\n", urdf_num(t->rpy[0], bx), urdf_num(t->rpy[1], by),
            urdf_num(t->rpy[2], bz));
    fprintf(f, "; Still to add: [arm] and [driver], and in each joint the keys a URDF does not "
               "give\n; (acceleration, kp, kd, id, torque_per_amp), here or in a drop-in "
               "(armd.conf(5); README: Bring up your own arm).\n");
}

/* Limits, friction, and the keys still missing, of chain joint c. */
static void put_limits(FILE *f, const urdf_joint *j)
{
    static const double wide[2] = {-1e4, 1e4};
    const char *unit = j->type == URDF_PRISMATIC ? "m" : "rad";
    if (j->type == URDF_CONTINUOUS) {
        fprintf(f, "; continuous: no position limit; +-10000 %s is the widest range armd takes\n",
                unit);
        put(f, "lower", &wide[0], 1);
        put(f, "upper", &wide[1], 1);
    } else {
        put(f, "lower", &j->lower, 1);
        put(f, "upper", &j->upper, 1);
    }
    if (j->has_velocity) put(f, "velocity", &j->velocity, 1);
    if (j->has_effort && urdf_effort_placeholder(j->effort))
        fprintf(f, "; torque: the URDF's effort limit is a placeholder, not the actuator's: "
                   "write the servo's\n; stall torque from its data sheet (or less)\n");
    if (j->has_effort) put(f, "torque", &j->effort, 1);
    if (j->has_damping) put(f, "viscous", &j->damping, 1);
    if (j->has_friction) put(f, "coulomb", &j->friction, 1);
    if (!j->has_velocity || !j->has_effort)
        fprintf(f, "; no %s in the URDF: add %s\n",
                !j->has_velocity && !j->has_effort ? "velocity and torque"
                : !j->has_velocity                 ? "velocity"
                                                   : "torque",
                !j->has_velocity && !j->has_effort ? "them" : "it");
}

/* One [joint NAME] section. */
static void put_joint(FILE *f, const urdf_robot *r, const urdf_arm *arm, const urdf_chain_joint *c)
{
    char b1[SHOW_LEN];
    const urdf_joint *j = &r->joint[c->joint];
    fprintf(f, "\n[joint %s]\n", j->name);
    fprintf(f, "; <joint type=\"%s\"> at line %d, child link '%s'\n", urdf_type_name(j->type),
            j->line, show(r->link[j->child].name, b1));
    fprintf(f, "type = %s\n", j->type == URDF_PRISMATIC ? "prismatic" : "revolute");
    if (c->composed)
        fprintf(f, "; origin: composed with the fixed joints since the previous moving joint\n");
    put(f, "origin_xyz", c->origin.xyz, 3);
    put(f, "origin_rpy", c->origin.rpy, 3);
    if (memcmp(c->axis, j->axis, sizeof c->axis) != 0) {
        char bx[URDF_NUM_LEN], by[URDF_NUM_LEN], bz[URDF_NUM_LEN];
        fprintf(f, "; axis: normalised from %s %s %s\n", urdf_num(j->axis[0], bx),
                urdf_num(j->axis[1], by), urdf_num(j->axis[2], bz));
    }
    put(f, "axis", c->axis, 3);
    if (c->n_lumped > 1) {
        fprintf(f, "; mass, com, inertia: these %d links as one rigid body:\n", c->n_lumped);
        for (int i = 0; i < c->n_lumped; i++) put_lumped(f, r, &arm->lumped[c->first_lumped + i]);
    }
    put(f, "mass", &c->mass, 1);
    put(f, "com", c->com, 3);
    put(f, "inertia", c->inertia, 6);
    put_limits(f, j);
}

bool urdf_effort_placeholder(double effort)
{
    if (effort == 0) return true;
    for (double p = 1e3; p <= 1e12; p *= 10)
        if (effort == p) return true;
    return false;
}

int urdf_warn_placeholders(FILE *err, const urdf_robot *r, const urdf_arm *arm)
{
    int n = 0;
    for (int i = 0; i < arm->n; i++) {
        const urdf_joint *j = &r->joint[arm->j[i].joint];
        if (!j->has_effort || !urdf_effort_placeholder(j->effort)) continue;
        char b[URDF_NUM_LEN];
        fprintf(err,
                "%s:%d: warning: joint '%.100s': <limit effort=\"%s\"> is a placeholder, not "
                "the actuator's limit; set torque in [joint %.100s] to the servo's stall %s "
                "from its data sheet [%s] (or less)\n",
                r->file, j->limit_line, j->name, urdf_num(j->effort, b), j->name,
                j->type == URDF_PRISMATIC ? "force" : "torque",
                j->type == URDF_PRISMATIC ? "N" : "N m");
        n++;
    }
    return n;
}

int urdf_write_ini(FILE *out, const urdf_robot *r, const urdf_arm *arm)
{
    put_header(out, r, arm);
    for (int i = 0; i < arm->n; i++) put_joint(out, r, arm, &arm->j[i]);
    return ferror(out) ? -1 : 0;
}
