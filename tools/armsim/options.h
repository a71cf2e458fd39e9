/*
 * options.h — armsim's command line, parsed into plain values (no side effects): the armsim
 * program's, and the same options given to a host that runs the arm in process (armd
 * --lockstep [ARMSIM OPTIONS], simbus.h).
 */
#ifndef ARMSIM_OPTIONS_H
#define ARMSIM_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"

typedef enum { PROTO_FROM_CONFIG = -1, PROTO_DXL2 = 0, PROTO_ARMLINK = 1 } armsim_protocol;

#define ARMSIM_MAX_PUSHES 8 /* --push options at most */

/* --push T,JOINT,TORQUE,DURATION: an external joint torque over a window of simulated time. */
typedef struct {
    double t;        /* start, simulated time since start [s] */
    int joint;       /* 0-based joint index (the option takes 1-based, config order) */
    double torque;   /* [N m | N for a prismatic joint], added to the motor torque */
    double duration; /* [s], > 0 */
} armsim_push;

/* --tool-force T,FX,FY,FZ,DURATION: a force on the tool point, base frame, over a window. */
typedef struct {
    double t;        /* start, simulated time since start [s] */
    double f[3];     /* [N], base frame, at the tool frame origin */
    double duration; /* [s], > 0 */
} armsim_tool_force;

/* --wall AXIS,POSITION,STIFFNESS: a one-sided spring on the tool point, base frame. */
typedef struct {
    bool on;
    int axis;         /* 0 = x, 1 = y, 2 = z of the base frame */
    int side;         /* +1: the wall is where p[axis] > position; -1: where p[axis] < position */
    double position;  /* [m] */
    double stiffness; /* [N/m], > 0 */
} armsim_wall;

/* --object WIDTH,STIFFNESS: an object between the tool servo's fingers (gripper.h). */
typedef struct {
    bool on;
    double width;     /* its width across the fingers [m], > 0 */
    double stiffness; /* it pushes back with stiffness * (width - opening) [N/m], > 0 */
} armsim_object;

typedef struct {
    const char *config_path; /* -c: the INI armd uses */
    const char *link_path;   /* --link: symlink made to the pty slave (the program only) */
    const char *truth_path;  /* --truth: ground-truth CSV, NULL = none */
    const char *model_path;  /* --model: INI whose arm model is simulated instead */
    armsim_protocol protocol;
    double rate_hz;            /* physics steps per second */
    double noise_counts;       /* encoder noise standard deviation [counts] */
    double mass_scale;         /* link masses and inertias x K */
    bool perturb_on;           /* --perturb: every link's parameters changed ... */
    uint64_t perturb_seed;     /* ... reproducibly from this seed (perturb.h) */
    bool print_model;          /* --print-model: print the arm simulated as INI keys, exit */
    bool payload_on;           /* --payload: a point mass held by the tool */
    double payload[4];         /* its mass [kg] and position in the tool frame [m] */
    double friction_smoothing; /* [rad/s], 0 = automatic */
    int n_q0;                  /* entries in q0 (0 = default: 0 clamped into the limits) */
    double q0[CFG_MAX_JOINTS]; /* initial joint positions [rad|m] */
    bool no_gravity;
    bool brake;             /* --brake: joints held while every joint's torque is off */
    int truth_decimate;     /* log every Nth step */
    double drop;            /* fraction of replies dropped */
    double corrupt_crc;     /* fraction of replies with a corrupted CRC */
    double wrong_id;        /* fraction of replies sent with a wrong device ID */
    long delay_us;          /* extra delay before every reply [us] */
    double faults_after;    /* --drop/--corrupt-crc/--wrong-id/--delay-us act only after [s] */
    double silent_after;    /* stop answering after this many seconds, < 0 = never */
    int silent_id;          /* dxl2 servo ID that alone goes silent, -1 = the whole line */
    double alert_after;     /* raise a hardware alert after this many seconds, < 0 = never */
    int alert_id;           /* servo ID for the alert, -1 = the first configured ID */
    uint64_t seed;          /* random seed for noise and fault injection */
    int model_number;       /* dxl2 model number the servos report */
    double current_limit_a; /* every servo's Current Limit [A]; < 0 = sized for the config */
    bool quiet;             /* no statistics line on exit */
    int n_push;             /* entries in push */
    armsim_push push[ARMSIM_MAX_PUSHES];
    int n_tool_force; /* entries in tool_force (up to ARMSIM_MAX_PUSHES) */
    armsim_tool_force tool_force[ARMSIM_MAX_PUSHES];
    armsim_wall wall;
    armsim_object object;
} armsim_options;

/* Fills *o from argv[1..argc) (argv[0] is a program name, skipped) with the defaults for what is
 * not given; checks every value, not whether the options a use needs are there (the armsim
 * program: armsim_check_program_options; a host running the arm in process supplies the
 * config itself and refuses --link: simbus_create). Prints nothing on success. Returns 0,
 * 1 when --help was printed (to stdout), -1 on a usage error (the message names the option and
 * the problem and is printed to err). The strings in *o point into argv. */
int armsim_parse_options(int argc, char **argv, armsim_options *o, FILE *err);
/* The armsim program's needs: -c, and --link unless --print-model. 0, or -1 with a message on
 * err. */
int armsim_check_program_options(const armsim_options *o, FILE *err);
void armsim_print_usage(FILE *out);

#endif
