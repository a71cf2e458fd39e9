/*
 * urdf_internal.h — armurdf's files and the helpers they share (tools/armurdf only).
 *
 * Module map, one job each:
 *   urdf_parse.c   libexpat callbacks: the XML text into urdf_robot (links, joints, lines)
 *   urdf_tree.c    names to indices, parents and children, no link with two parents; lookups
 *   urdf_chain.c   the base, the tip and the joints between them
 *   urdf_at.c      --at JOINT=VALUE and the position of every lumped side-branch joint
 *   urdf_merge.c   the chain joints: fixed joints composed, links merged and lumped
 *   urdf_math.c    rigid transforms, roll-pitch-yaw, and rigid bodies combined exactly
 *   urdf_write.c   the INI text
 *   urdf_error.c   the one-line messages, numbers as text
 *   main.c         the command line
 */
#ifndef ARMD_URDF_INTERNAL_H
#define ARMD_URDF_INTERNAL_H

#include "tools/armurdf/urdf.h"

/* ---- urdf_error.c ---- */

/* Fills e with "FILE:LINE: " and the formatted message; returns -1. */
int urdf_fail(urdf_error *e, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Fills e with "armurdf: " and the formatted message (command-line errors); returns -1. */
int urdf_fail_opt(urdf_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define URDF_NUM_LEN 32
/* The shortest text (%.Ng, N <= 17) that strtod reads back as exactly v; returns buf. */
const char *urdf_num(double v, char buf[URDF_NUM_LEN]);
/* The type as written in a URDF ("revolute", ...). */
const char *urdf_type_name(urdf_joint_type t);

/* ---- urdf_tree.c ---- */

/* Resolves link names to indices and builds parent and child links; refuses duplicate names,
 * a missing link, a joint that is its own parent, a link with two parents. */
int urdf_tree_resolve(urdf_robot *r, urdf_error *err);

/* ---- urdf_chain.c ---- */

/* The chain from base to tip: the joints in order, fixed ones included. */
typedef struct {
    int base, tip;
    int n;      /* joints on the path */
    int *joint; /* n joint indices, base to tip (allocated; free) */
} urdf_path;

/* Picks base (opt->base or the only root) and tip (opt->tip or the only leaf below the base)
 * and the joints between them. */
int urdf_chain_find(const urdf_robot *r, const urdf_options *opt, urdf_path *path, urdf_error *err);

/* ---- urdf_at.c ---- */

/* Positions of the side-branch joints being lumped. */
typedef struct {
    const urdf_robot *r;
    const urdf_options *opt;
    const bool *on_chain; /* per joint: on the path from base to tip */
    bool *used;           /* per --at entry: some lumped joint depends on it */
} urdf_positions;

/* Checks every --at entry names a moving joint, off the chain, not a mimic, given once and
 * within its limits. */
int urdf_at_check(const urdf_positions *p, urdf_error *err);
/* The position of side-branch joint j: its --at value, its mimic rule, or 0; within its limits.
 * *how tells which. */
int urdf_position(const urdf_positions *p, int j, double *value, urdf_lump_how *how,
                  urdf_error *err);

/* ---- urdf_math.c ---- */

/* A rigid transform: the frame's axes R (3x3 row-major) and origin p in the outer frame. */
typedef struct {
    double R[9], p[3];
} urdf_pose;

/* One rigid body in some frame: mass [kg], COM [m], inertia about the COM [kg m^2]. */
typedef struct {
    double m, c[3], I[6];
} urdf_body;

void urdf_pose_identity(urdf_pose *t);
/* T = Trans(xyz) Rz(yaw) Ry(pitch) Rx(roll). */
void urdf_pose_from_origin(const urdf_origin *o, urdf_pose *t);
/* out = a b: frame b (given in a) in a's outer frame. */
void urdf_pose_compose(const urdf_pose *a, const urdf_pose *b, urdf_pose *out);
/* The motion of a joint with unit axis u by value: rotation about u (Rodrigues) or translation
 * along u. */
void urdf_pose_motion(const double u[3], bool prismatic, double value, urdf_pose *t);
/* Roll-pitch-yaw and translation that give t (the inverse of urdf_pose_from_origin). */
void urdf_pose_to_origin(const urdf_pose *t, urdf_origin *o);
/* u = a / |a|, scaled first so that no square underflows; -1 when a is zero. */
int urdf_unit(const double a[3], double u[3]);
/* A link's <inertial> in the frame where its link frame has pose t. */
void urdf_body_of_link(const urdf_link *l, const urdf_pose *t, urdf_body *out);
/* The n bodies (one frame) as one: total mass, mass-weighted COM, and the parallel-axis sum
 * I = sum (I_k + m_k (|d_k|^2 E - d_k d_k^T)), d_k = c_k - c. With no mass: COM 0, I = sum I_k. */
void urdf_body_combine(const urdf_body *b, int n, urdf_body *out);

#endif
