/*
 * urdf_merge.c — the chain armd drives, from the path between base and tip.
 *
 * Walking the path from the base, a fixed joint composes its origin into a running transform
 * A (the pose of the present link in the last chain link frame); a moving joint becomes chain
 * joint i with origin A * origin (so fixed joints vanish from the kinematics) and starts a new
 * body with A = identity. Every link rigidly attached to chain link i — its own link, links
 * behind fixed joints, and side branches (links off the path, e.g. gripper fingers) with their
 * moving joints held at the positions of urdf_at.c — is placed in link frame i and merged into
 * one rigid body (urdf_body_combine: total mass, COM, parallel-axis inertia about the COM).
 * Links before the first moving joint never move: they are recorded, not modelled. The tip's
 * pose in the last link frame is the tool frame.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armurdf/urdf_internal.h"

typedef struct {
    const urdf_robot *r;
    urdf_positions pos;
    urdf_arm *arm;
    urdf_body *items; /* the bodies of the present chain link, in its frame */
    int n_items;
    int *stack_link;       /* lumping: links to visit ... */
    urdf_pose *stack_pose; /* ... and their poses in the chain link frame */
    urdf_lumped *stack_how;
} merge_ctx;

/* Is name usable as an armd joint name: 1..63 of [A-Za-z0-9_.-] (armd.conf(5), [joint NAME])? */
static bool ini_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') return false;
    return true;
}

/* The unit axis of a moving joint; refuses a zero axis. */
static int joint_axis(const urdf_robot *r, const urdf_joint *j, double u[3], urdf_error *err)
{
    if (urdf_unit(j->axis, u) == 0) return 0;
    return urdf_fail(err, r->file, j->axis_line ? j->axis_line : j->line,
                     "<joint name=\"%.100s\"> <axis>: xyz is zero: a %s joint needs a direction",
                     j->name, urdf_type_name(j->type));
}

/* Refuses a joint type armd cannot represent, on the chain or in a lumped branch. */
static int representable(const urdf_robot *r, const urdf_joint *j, bool chain, urdf_error *err)
{
    if (j->type != URDF_FLOATING && j->type != URDF_PLANAR) return 0;
    return urdf_fail(err, r->file, j->line,
                     "<joint name=\"%.100s\">: a %s joint (%s degrees of freedom) cannot be %s: "
                     "armd models revolute, continuous and prismatic joints",
                     j->name, urdf_type_name(j->type), j->type == URDF_FLOATING ? "six" : "three",
                     chain ? "a joint of the chain" : "lumped into a link");
}

/* Puts the child link of side-branch joint c on the lumping stack at slot: its pose in the
 * present frame t * origin * motion(position), and how it is attached. */
static int place_child(merge_ctx *m, int c, const urdf_pose *t, bool moving, int slot,
                       urdf_error *err)
{
    const urdf_robot *r = m->r;
    const urdf_joint *j = &r->joint[c];
    urdf_lumped next = {j->child, c, URDF_BY_FIXED, 0};
    urdf_pose o, mv, om;
    urdf_pose_identity(&m->stack_pose[slot]);
    if (moving) {
        if (representable(r, j, false, err)) return -1;
        urdf_pose_from_origin(&j->origin, &o);
        urdf_pose_identity(&mv);
        if (urdf_moves(j->type)) {
            double u[3];
            if (joint_axis(r, j, u, err) || urdf_position(&m->pos, c, &next.value, &next.how, err))
                return -1;
            urdf_pose_motion(u, j->type == URDF_PRISMATIC, next.value, &mv);
        }
        urdf_pose_compose(&o, &mv, &om);
        urdf_pose_compose(t, &om, &m->stack_pose[slot]);
    }
    m->stack_link[slot] = j->child;
    m->stack_how[slot] = next;
    return 0;
}

/* Adds link l (pose t in the present frame) and everything hanging from it off the path:
 * into the present chain body (moving), or only into the record (before the first joint). */
static int lump(merge_ctx *m, int l, const urdf_pose *t, urdf_lumped how, bool moving,
                urdf_error *err)
{
    const urdf_robot *r = m->r;
    int top = 0;
    m->stack_link[top] = l;
    m->stack_pose[top] = *t;
    m->stack_how[top++] = how;
    while (top > 0) {
        top--;
        int k = m->stack_link[top];
        urdf_pose at = m->stack_pose[top];
        urdf_lumped rec = m->stack_how[top];
        rec.link = k;
        if (!moving) rec.how = URDF_NOT_MOVING;
        m->arm->lumped[m->arm->n_lumped++] = rec;
        if (moving) urdf_body_of_link(&r->link[k], &at, &m->items[m->n_items++]);
        /* the children go on the stack last first, so they come off in file order */
        int n_children = 0;
        for (int c = r->link[k].first_child; c >= 0; c = r->joint[c].next_sibling)
            n_children += !m->pos.on_chain[c];
        int slot = top + n_children;
        for (int c = r->link[k].first_child; c >= 0; c = r->joint[c].next_sibling) {
            if (m->pos.on_chain[c]) continue;
            if (place_child(m, c, &at, moving, --slot, err)) return -1;
        }
        top += n_children;
    }
    return 0;
}

/* The limits a chain joint needs from its <limit>: lower < upper, effort and velocity
 * (continuous joints: no position limits, the rest optional). */
static int check_limits(const urdf_robot *r, const urdf_joint *j, urdf_error *err)
{
    if (j->type == URDF_CONTINUOUS) return 0;
    if (!j->has_limit)
        return urdf_fail(err, r->file, j->line,
                         "<joint name=\"%.100s\">: a %s joint needs <limit lower upper effort "
                         "velocity>",
                         j->name, urdf_type_name(j->type));
    char lo[URDF_NUM_LEN], hi[URDF_NUM_LEN];
    if (!(j->lower < j->upper))
        return urdf_fail(err, r->file, j->limit_line,
                         "<joint name=\"%.100s\"> <limit>: lower %s is not below upper %s", j->name,
                         urdf_num(j->lower, lo), urdf_num(j->upper, hi));
    if (!j->has_effort || !j->has_velocity)
        return urdf_fail(err, r->file, j->limit_line,
                         "<joint name=\"%.100s\"> <limit>: needs effort and velocity", j->name);
    return 0;
}

/* Chain joint i from path joint j, A the fixed joints composed since the last chain link. */
static int start_chain_joint(merge_ctx *m, int ji, const urdf_pose *A, bool composed,
                             urdf_error *err)
{
    const urdf_robot *r = m->r;
    const urdf_joint *j = &r->joint[ji];
    urdf_arm *arm = m->arm;
    if (j->mimic)
        return urdf_fail(err, r->file, j->mimic_line,
                         "<joint name=\"%.100s\"> <mimic>: the joint is on the chain and follows "
                         "'%.100s'; armd drives every chain joint on its own (choose another "
                         "--tip, or remove the <mimic>)",
                         j->name, j->mimic);
    if (!ini_name(j->name))
        return urdf_fail(err, r->file, j->line,
                         "<joint name=\"%.100s\">: an armd joint name is 1 to 63 of A-Z a-z 0-9 "
                         "_ - . (rename the joint in the URDF)",
                         j->name);
    if (arm->n == URDF_MAX_CHAIN)
        return urdf_fail(err, r->file, j->line,
                         "<joint name=\"%.100s\">: more than %d moving joints between base and "
                         "tip; armd drives at most %d",
                         j->name, URDF_MAX_CHAIN, URDF_MAX_CHAIN);
    urdf_chain_joint *c = &arm->j[arm->n];
    if (check_limits(r, j, err) || joint_axis(r, j, c->axis, err)) return -1;
    c->joint = ji;
    c->composed = composed;
    if (composed) {
        urdf_pose o, t;
        urdf_pose_from_origin(&j->origin, &o);
        urdf_pose_compose(A, &o, &t);
        urdf_pose_to_origin(&t, &c->origin);
    } else {
        c->origin = j->origin; /* the numbers of the file, unchanged */
    }
    c->first_lumped = arm->n_lumped;
    arm->n++;
    m->n_items = 0;
    urdf_pose id;
    urdf_pose_identity(&id);
    return lump(m, j->child, &id, (urdf_lumped){j->child, -1, URDF_OWN, 0}, true, err);
}

/* The merged body of the present chain joint. */
static void finish_chain_joint(merge_ctx *m)
{
    if (m->arm->n == 0) return;
    urdf_chain_joint *c = &m->arm->j[m->arm->n - 1];
    urdf_body b;
    urdf_body_combine(m->items, m->n_items, &b);
    c->mass = b.m;
    memcpy(c->com, b.c, sizeof c->com);
    memcpy(c->inertia, b.I, sizeof c->inertia);
    c->n_lumped = m->arm->n_lumped - c->first_lumped;
}

/* Walks the path: fixed joints composed and merged, moving joints become chain joints. */
static int walk_path(merge_ctx *m, const urdf_path *path, urdf_error *err)
{
    const urdf_robot *r = m->r;
    urdf_pose A;
    urdf_pose_identity(&A);
    bool composed = false;
    if (lump(m, path->base, &A, (urdf_lumped){path->base, -1, URDF_NOT_MOVING, 0}, false, err))
        return -1;
    for (int k = 0; k < path->n; k++) {
        int ji = path->joint[k];
        const urdf_joint *j = &r->joint[ji];
        if (representable(r, j, true, err)) return -1;
        if (urdf_moves(j->type)) {
            finish_chain_joint(m);
            if (start_chain_joint(m, ji, &A, composed, err)) return -1;
            urdf_pose_identity(&A);
            composed = false;
            continue;
        }
        urdf_pose o, t;
        urdf_pose_from_origin(&j->origin, &o);
        urdf_pose_compose(&A, &o, &t);
        A = t;
        composed = true;
        if (lump(m, j->child, &A, (urdf_lumped){j->child, ji, URDF_BY_FIXED, 0}, m->arm->n > 0,
                 err))
            return -1;
    }
    finish_chain_joint(m);
    urdf_pose_to_origin(&A, &m->arm->tool);
    if (m->arm->n == 0)
        return urdf_fail_opt(err,
                             "%s: no moving joint between the base '%.100s' and the tip "
                             "'%.100s'",
                             r->file, r->link[path->base].name, r->link[path->tip].name);
    for (int i = 0; i < m->pos.opt->n_at; i++)
        if (!m->pos.used[i])
            return urdf_fail_opt(err,
                                 "--at %.100s: no lumped link depends on this joint (it is not in "
                                 "a side branch of the moving chain)",
                                 m->pos.opt->at[i].joint);
    return 0;
}

void urdf_arm_free(urdf_arm *arm)
{
    free(arm->lumped);
    arm->lumped = NULL;
}

int urdf_import(const urdf_robot *r, const urdf_options *opt, urdf_arm *arm, urdf_error *err)
{
    memset(arm, 0, sizeof *arm);
    urdf_path path;
    if (urdf_chain_find(r, opt, &path, err)) return -1;
    arm->base = path.base;
    arm->tip = path.tip;
    size_t nl = (size_t)r->n_links, nj = (size_t)(r->n_joints > 0 ? r->n_joints : 1);
    bool *on_chain = calloc(nj, sizeof *on_chain);
    bool *used = calloc((size_t)(opt->n_at > 0 ? opt->n_at : 1), sizeof *used);
    merge_ctx m = {.r = r, .arm = arm};
    m.items = malloc(nl * sizeof *m.items);
    m.stack_link = malloc(nl * sizeof *m.stack_link);
    m.stack_pose = malloc(nl * sizeof *m.stack_pose);
    m.stack_how = malloc(nl * sizeof *m.stack_how);
    arm->lumped = malloc(nl * sizeof *arm->lumped);
    int rc = -1;
    if (!on_chain || !used || !m.items || !m.stack_link || !m.stack_pose || !m.stack_how ||
        !arm->lumped) {
        urdf_fail_opt(err, "out of memory");
        goto out;
    }
    for (int k = 0; k < path.n; k++) on_chain[path.joint[k]] = true;
    m.pos = (urdf_positions){r, opt, on_chain, used};
    rc = urdf_at_check(&m.pos, err) || walk_path(&m, &path, err) ? -1 : 0;
out:
    if (rc) urdf_arm_free(arm);
    free(path.joint);
    free(on_chain);
    free(used);
    free(m.items);
    free(m.stack_link);
    free(m.stack_pose);
    free(m.stack_how);
    return rc;
}
