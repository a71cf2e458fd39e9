/*
 * urdf.h — the only way into armurdf's importer: a URDF file as robots publish it becomes the
 * serial chain armd drives, written as the [joint NAME] sections of an armd INI in the URDF
 * kinematic form (origin_xyz, origin_rpy, axis).
 *
 * Units: SI as in URDF (m, rad, kg, kg m^2, N, N m, s).
 * Frames (URDF and dynamics/dynamics.h agree): the frame of link L is the frame of the joint
 * that has L as its child. A joint's <origin xyz rpy> places its frame in the parent link
 * frame (translation, then fixed-axis roll-pitch-yaw R = Rz(yaw) Ry(pitch) Rx(roll)); the joint
 * then moves about/along its <axis>, given in its own frame. A link's <inertial> <origin> places
 * the centre of mass and the axes of <inertia> in the link frame.
 * What the importer produces for chain joint i: the joint frame in the link frame of chain joint
 * i-1 (the base link frame for i = 0), the unit axis, and the rigid body that moves with joint i
 * (its link plus every link fixed to it or lumped into it): mass, COM in the link frame, and
 * inertia about the COM in link-frame axes.
 *
 * Errors are values: each function that can fail fills a urdf_error with one line,
 * "FILE:LINE: <element name=\"x\">: message" (or "armurdf: --option: message"), and returns -1.
 */
#ifndef ARMD_URDF_H
#define ARMD_URDF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define URDF_MAX_CHAIN 64         /* armd drives at most 64 joints (DYN_MAX_DOF) */
#define URDF_MAX_BYTES (64 << 20) /* larger files are refused */

typedef struct {
    char msg[1024];
} urdf_error;

typedef enum {
    URDF_FIXED = 0,
    URDF_REVOLUTE,
    URDF_CONTINUOUS,
    URDF_PRISMATIC,
    URDF_FLOATING,
    URDF_PLANAR
} urdf_joint_type;

/* A frame placed in another: translation [m], then fixed-axis roll-pitch-yaw [rad]. */
typedef struct {
    double xyz[3], rpy[3];
} urdf_origin;

/* <link> as written in the file. */
typedef struct {
    char *name;
    int line; /* of <link> */
    bool has_inertial;
    int inertial_line;
    urdf_origin com;   /* <inertial><origin>: the COM frame in the link frame */
    double mass;       /* kg, >= 0 */
    double inertia[6]; /* ixx ixy ixz iyy iyz izz about the COM, COM-frame axes [kg m^2] */
    int parent_joint;  /* the joint whose child this link is, -1 = a root (urdf_parse fills) */
    int first_child;   /* the first joint whose parent this link is, -1 = a leaf */
} urdf_link;

/* <joint> as written in the file. */
typedef struct {
    char *name;
    int line; /* of <joint> */
    urdf_joint_type type;
    char *parent_name, *child_name; /* <parent link>, <child link> */
    int parent_line, child_line;
    int parent, child;  /* link indices (urdf_parse resolves them) */
    int next_sibling;   /* the next joint with the same parent link, -1 = none */
    urdf_origin origin; /* the joint frame in the parent link frame */
    double axis[3];     /* as written (default 1 0 0); not normalised */
    int axis_line;
    bool has_limit;
    int limit_line;
    bool has_lower, has_upper, has_effort, has_velocity;
    double lower, upper; /* rad | m (URDF default 0) */
    double effort;       /* N m | N */
    double velocity;     /* rad/s | m/s */
    bool has_damping, has_friction;
    int dynamics_line;
    double damping;  /* N m s/rad | N s/m */
    double friction; /* Coulomb friction N m | N */
    char *mimic;     /* <mimic joint>, NULL = none */
    int mimic_line;
    double multiplier, offset; /* q = multiplier q_mimicked + offset (defaults 1, 0) */
} urdf_joint;

/* A parsed URDF: links and joints in file order, the tree resolved. */
typedef struct {
    char *file; /* the name used in messages */
    char *name; /* <robot name> */
    int n_links, n_joints;
    urdf_link *link;
    urdf_joint *joint;
    int *link_by_name, *joint_by_name; /* indices sorted by name (for lookups) */
} urdf_robot;

/* --at JOINT=VALUE: the position of a side-branch joint while it is lumped. */
typedef struct {
    const char *joint;
    double value; /* rad | m */
} urdf_at;

typedef struct {
    const char *base, *tip; /* link names, NULL = the root / the only leaf */
    const urdf_at *at;
    int n_at;
} urdf_options;

/* How a link entered a chain body (or was left out as not moving). */
typedef enum {
    URDF_OWN = 0,    /* the chain joint's child link */
    URDF_BY_FIXED,   /* fixed to it: a fixed joint on the chain or in a side branch */
    URDF_BY_DEFAULT, /* through a moving side-branch joint at its default position 0 */
    URDF_BY_AT,      /* through a moving side-branch joint at the --at position */
    URDF_BY_MIMIC,   /* through a mimic joint at the position its rule gives */
    URDF_NOT_MOVING  /* before the first chain joint: fixed to the base, not in the model */
} urdf_lump_how;

/* One link merged into a chain body, for the INI comments. */
typedef struct {
    int link;
    int joint; /* the joint that attaches it (-1 for the chain joint's own link or the base) */
    urdf_lump_how how;
    double value; /* that joint's position [rad | m] (moving side-branch joints) */
} urdf_lumped;

/* One joint of the chain as armd describes it (URDF kinematic form). */
typedef struct {
    int joint;                       /* index in urdf_robot.joint */
    urdf_origin origin;              /* the joint frame in the previous chain link frame */
    bool composed;                   /* origin includes fixed joints before this one */
    double axis[3];                  /* unit */
    double mass, com[3], inertia[6]; /* the rigid body moving with this joint, link frame */
    int first_lumped, n_lumped;      /* its links in urdf_arm.lumped */
} urdf_chain_joint;

/* The imported arm. */
typedef struct {
    int base, tip; /* link indices */
    int n;         /* chain joints */
    urdf_chain_joint j[URDF_MAX_CHAIN];
    urdf_origin tool; /* the tip link frame in the last chain link frame */
    urdf_lumped *lumped;
    int n_lumped; /* entries; the URDF_NOT_MOVING ones first */
} urdf_arm;

/* A joint that moves (revolute, continuous or prismatic). */
bool urdf_moves(urdf_joint_type t);

/* Parses URDF text (len bytes) named file in messages: libexpat, element line numbers, every
 * number finite, names free of control characters, the tree resolved (each joint's links
 * exist, no link with two parents). Ignores visual, collision, material, transmission, gazebo
 * and every other element. Returns 0 and *out (free with urdf_free), or -1 and err. */
int urdf_parse(const char *text, size_t len, const char *file, urdf_robot **out, urdf_error *err);
void urdf_free(urdf_robot *r);

/* Lookups by exact name; -1 when absent. */
int urdf_find_link(const urdf_robot *r, const char *name);
int urdf_find_joint(const urdf_robot *r, const char *name);

/* Parses one --at argument "JOINT=VALUE" (VALUE a finite number); the name points into arg. */
int urdf_at_parse(char *arg, urdf_at *out, urdf_error *err);

/* Picks the chain (base to tip), merges fixed links, lumps side branches at their positions.
 * Returns 0 and fills *arm (free with urdf_arm_free), or -1 and err. */
int urdf_import(const urdf_robot *r, const urdf_options *opt, urdf_arm *arm, urdf_error *err);
void urdf_arm_free(urdf_arm *arm);

/* Writes the [joint NAME] sections with comments; every number in the shortest form that reads
 * back as the same double. Returns 0, or -1 on a write error. */
int urdf_write_ini(FILE *out, const urdf_robot *r, const urdf_arm *arm);

/* An effort limit that is a stand-in rather than an actuator's rating: 0 or a power of ten from
 * 1000 up (effort="1000.0" in the ROS URDF tutorial's R2D2, github.com/ros/urdf_tutorial
 * urdf/06-flexible.urdf; effort="1000" in ROBOTIS's OpenManipulator-X URDF). */
bool urdf_effort_placeholder(double effort);

/* One line on err per chain joint whose effort limit is a placeholder, naming the joint and
 * what to write instead; returns how many. */
int urdf_warn_placeholders(FILE *err, const urdf_robot *r, const urdf_arm *arm);

#endif
