/*
 * config.h — the only way into armd's configuration: the INI file (inih) that describes the
 * arm, its limits, gains, driver and daemon settings, validated into plain structs.
 *
 * Every quantity here is SI and joint-side (rad, m, s, N m, N m s/rad, ...); device units exist
 * only as the device-mapping fields (counts_per_rev, gear_ratio, ...) that drivers/ consumes.
 * The schema and every key's unit, default, range and reload behaviour are documented in
 * armd.conf(5) (config/armd.conf.5.md), which tests/config/test_conf_page.py checks against
 * cfg_section_names and cfg_known_keys.
 */
#ifndef ARMD_CONFIG_H
#define ARMD_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "dynamics/dynamics.h"
#include "dynamics/flex.h"

#define CFG_MAX_JOINTS DYN_MAX_DOF
#define CFG_MAX_IDS    4 /* servos per joint (mirrored twins are common) */
#define CFG_NAME_MAX   64
#define CFG_PATH_MAX   256

typedef enum {
    CTRL_COMPUTED_TORQUE = 0,
    CTRL_PD_GRAVITY = 1,
    CTRL_GRAVITY_COMP = 2,
    CTRL_CARTESIAN_IMPEDANCE = 3
} cfg_controller;
typedef enum { DRIVER_DXL2 = 0, DRIVER_ARMLINK = 1 } cfg_driver_type;
typedef enum { ON_FAULT_TORQUE_OFF = 0, ON_FAULT_DAMP = 1 } cfg_on_fault;
typedef enum { VELOCITY_DEVICE = 0, VELOCITY_DIFFERENTIATE = 1 } cfg_velocity_source;
/* The velocity whose sign the controller's Coulomb friction term takes. */
typedef enum { COULOMB_DESIRED = 0, COULOMB_MEASURED = 1 } cfg_coulomb_velocity;
/* The velocity the controller's viscous friction term is fed forward at. */
typedef enum { VISCOUS_MEASURED = 0, VISCOUS_DESIRED = 1 } cfg_viscous_velocity;
typedef enum { COLLISION_OFF = 0, COLLISION_DETECT = 1, COLLISION_REACT = 2 } cfg_collision;
typedef enum {
    REACT_STOP = 0,    /* trajectory cancelled, hold the present position */
    REACT_DAMP = 1,    /* the damping stop (a fault: reset, then enable) */
    REACT_RETRACT = 2, /* trajectory cancelled, back along the executed path, then hold */
    REACT_FLOAT = 3    /* trajectory cancelled, damped gravity compensation (hand-guiding) */
} cfg_collision_reaction;
/* [trajectory] shaper: the input shaper every trajectory is convolved with (daemon/shaper.h) */
typedef enum { SHAPE_NONE = 0, SHAPE_ZV = 1, SHAPE_ZVD = 2, SHAPE_EI = 3 } cfg_shaper;

/* Per-joint settings that are not part of the dynamics model. */
typedef struct {
    char name[CFG_NAME_MAX]; /* from the section header [joint NAME] */
    /* limits: position [rad|m], velocity [rad/s|m/s], acceleration [rad/s^2|m/s^2], torque
     * [N m|N] (symmetric, |tau| <= torque) */
    double lower, upper, velocity, acceleration, torque;
    /* gains: kp [1/s^2], kd [1/s], ki [1/s^3] for computed_torque (they shape the error
     * dynamics); for pd_gravity the same keys are read as N m/rad, N m s/rad, N m/(rad s).
     * i_limit bounds the integral of the position error [rad s]. */
    double kp, kd, ki, i_limit;
    double following_error;   /* fault threshold |q_des - q| [rad|m] */
    double damping;           /* damping-stop gain D [N m s/rad] */
    double torque_rate_limit; /* max |d tau/dt| [N m/s], 0 = none */
    /* collision detection: |r| > collision_threshold + collision_band |qd| is a collision,
     * r the momentum observer's external torque [N m|N]; band [N m s/rad|N s/m] */
    double collision_threshold, collision_band;
    /* device mapping (drivers/ only) */
    int n_ids;
    int id[CFG_MAX_IDS];             /* servo / channel IDs driving this joint */
    int direction[CFG_MAX_IDS];      /* +1 / -1 per servo (mirrored twin: opposite signs) */
    double zero_offset[CFG_MAX_IDS]; /* servo shaft angle [rad] at which the joint is at 0:
                                        q = direction * (shaft - zero_offset) / gear_ratio */
    double counts_per_rev;           /* encoder counts per servo shaft revolution */
    double gear_ratio;               /* servo shaft turns per joint turn (1 = direct drive) */
    double torque_per_amp;           /* N m per A at the joint, per servo */
} cfg_joint;

typedef struct {
    cfg_driver_type type;
    char port[CFG_PATH_MAX];
    int baud;
    int timeout_us; /* per-transaction reply deadline */
    int retries;    /* extra attempts per read before it counts as failed */
    /* dxl2 */
    int return_delay_us;
    int bus_watchdog_ms; /* 0 = off */
    bool fast_sync_read;
    /* armlink */
    int device_watchdog_ms; /* 0 = off */
    /* a watchdog off (bus_watchdog_ms / device_watchdog_ms = 0) is refused unless this says so
     * on purpose: a silent bus then leaves the last torque applied */
    bool allow_no_watchdog;
} cfg_driver;

typedef struct {
    char path[108]; /* sun_path limit */
    unsigned mode;  /* octal in the file */
    char group[CFG_NAME_MAX];
    int max_clients;
    double stall_timeout; /* drop a client whose unsent output made no progress this long [s] */
    double idle_timeout;  /* drop a client that neither sends nor subscribes this long [s] */
} cfg_socket;

typedef struct {
    int priority; /* SCHED_FIFO 1..99, 0 = normal scheduling */
    int cpu;      /* -1 = no pinning */
    bool lock_memory;
} cfg_realtime;

typedef struct {
    int max_failed_reads; /* consecutive failed reads (or writes) tolerated ... */
    int max_read_gap_ms;  /* ... and for how long without a good one [ms]: fault past both */
    cfg_on_fault on_fault;
    double damp_stop_velocity; /* |qd| below which the damping stop turns torque off [rad/s] */
    double damp_timeout;       /* longest damping stop before torque off [s] */
    cfg_collision collision;   /* momentum observer: off, events only, or events + reaction */
    cfg_collision_reaction collision_reaction;
    double collision_filter;  /* observer gain K_O [1/s]: r follows the external torque with a
                                 first-order lag of time constant 1/K_O */
    double max_tool_force;    /* [N]: a collision when the estimated force at the tool exceeds it
                                 (the observer's external torques through (J^T)+); 0 = off */
    double collision_retract; /* retract: the length of executed path to go back along, in
                                 joint space (sqrt of the sum of squared joint moves) [rad|m] */
} cfg_safety;

typedef struct {
    double goal_tolerance; /* done when every |q - q_goal| below it [rad|m] ... */
    double settle_time;    /* ... for this long [s] */
    double path_tolerance; /* abort + hold when |q_des - q| exceeds it while moving [rad|m] */
    cfg_shaper shaper;     /* input shaper for every trajectory (none: the path as given) ... */
    double shaper_freq;    /* ... designed for the mode at this frequency [Hz] ... */
    double shaper_damping; /* ... with this damping ratio [1] */
    /* move_linear's tool limits when a request gives none: along the line, of the slerp */
    double linear_speed, linear_acceleration;   /* [m/s, m/s^2] */
    double angular_speed, angular_acceleration; /* [rad/s, rad/s^2] */
} cfg_trajectory;

/* [tool NAME]: a servo on the arm's bus that armd drives but that is not a joint of the
 * dynamic chain (a gripper): Dynamixel current-based position control (Operating Mode 5). Its
 * opening [m] is opening_at_zero + m_per_rad * (shaft - zero_offset), shaft the servo's shaft
 * angle [rad] (counts * 2 pi / counts_per_rev). The fingers' mass stays lumped in the last link
 * (armd.conf(5) says why it need not follow the opening). Driver dxl2 only; one tool. */
typedef struct {
    bool present;            /* a [tool NAME] section was given */
    char name[CFG_NAME_MAX]; /* from the section header */
    int id;                  /* the servo's Dynamixel ID (not one of the joints') */
    double zero_offset;      /* shaft angle at which the opening is opening_at_zero [rad] */
    double opening_at_zero;  /* [m] */
    double m_per_rad;        /* opening change per rad of the shaft [m/rad], signed, != 0 */
    double counts_per_rev;   /* encoder counts per shaft revolution (4096) */
    double lower, upper;     /* the stroke: smallest and largest opening commanded [m] */
    double speed;            /* default opening speed of a move, grasp or release [m/s] ... */
    double velocity;         /* ... and the largest one accepted [m/s] */
    double force;            /* default grasp force [N] ... */
    double max_force;        /* ... and the largest (the servo's Goal Current clamp) [N] */
    double torque_per_amp;   /* the servo's torque per amp [N m/A]; force = torque / |m_per_rad| */
    double tolerance;        /* a move reached its target within this [m] */
    double epsilon;          /* a grasp's default epsilon, inner and outer [m] */
    double timeout;          /* a tool command not done after this is answered "timeout" [s] */
} cfg_tool;

/* [impedance]: the cartesian_impedance law's spring and damper at the tool frame origin, per
 * base-frame axis x, y, z, then rotation about x, y, z (daemon/impedance.c). */
typedef struct {
    double stiffness[6];     /* [N/m] x 3 (translational_stiffness), [N m/rad] x 3 (rotational) */
    double damping_ratio[6]; /* of each axis against the task inertia Lambda_ii [1] */
    double guide_damping[2]; /* a free axis's (stiffness 0) damper: [N s/m], [N m s/rad] */
} cfg_impedance;

typedef struct {
    char source[CFG_PATH_MAX]; /* main file loaded */
    char name[CFG_NAME_MAX];   /* [arm] name */
    double rate_hz;
    double max_payload; /* [arm] the rated payload [kg] (maker's data sheet), 0 = not given */
    cfg_controller controller;
    cfg_velocity_source velocity_source;
    double velocity_filter_hz; /* low-pass for differentiated velocity, 0 = none */
    /* computed torque's Coulomb friction: at the desired velocity (blended to the measured one
     * where the two agree in sign), smoothed over |v| < coulomb_width [rad/s|m/s]; or at the
     * measured velocity with the model's friction_smoothing */
    cfg_coulomb_velocity coulomb_velocity;
    double coulomb_width;
    /* computed torque's viscous friction: viscous x the measured velocity (a feedback that
     * cancels the arm's own damper) or x the desired one (a feed-forward: the arm's damper
     * stays in the loop, so a viscous value that is too high cannot undamp it) */
    cfg_viscous_velocity viscous_velocity;
    cfg_driver driver;
    cfg_socket socket;
    cfg_realtime realtime;
    cfg_safety safety;
    cfg_trajectory trajectory;
    cfg_impedance impedance;
    int n_joints;
    cfg_joint joint[CFG_MAX_JOINTS];
    cfg_tool tool;        /* [tool NAME], present or not */
    dyn_model_desc model; /* kinematics + dynamics (+ gravity, tool, payload) */
    /* flexible links ([joint NAME] flex_* keys, restart-only): simulated by armsim only; armd
     * controls with the rigid model above. flexible: some link has a mode. */
    bool flexible;
    dyn_flex_desc flex;
} armd_config;

/* Messages from loading: each line is "file:line: [section] key: message" (errors) or
 * "file:line: [section] key: warning: message". */
typedef struct {
    int n_errors, n_warnings;
    int n_lines, cap;
    char **lines;
    char file[CFG_PATH_MAX]; /* the main file, for the summary line (added by config/) */
} cfg_report;

void cfg_report_init(cfg_report *r);
void cfg_report_free(cfg_report *r);
/* Prints every line then a one-line summary ("FILE: N errors, N warnings"). */
void cfg_report_print(const cfg_report *r, FILE *out);

/* Loads and validates PATH and its drop-in directory (PATH without ".ini" + ".d/", every "*.ini"
 * there, in lexical order, keys override the main file). Fills *cfg (defaults for absent optional
 * keys). Returns the number of errors (0 = usable). Never exits, never crashes on any input. */
int cfg_load(const char *path, armd_config *cfg, cfg_report *rep);
/* A file beside a configuration: path without a final ".ini", then suffix: ".d" is the drop-in
 * folder, CFG_DYNAMICS_SUFFIX the arm's generated dynamics (armgen --shared). Returns 0, or -1
 * (out empty) when it does not fit in len. */
#define CFG_DYNAMICS_SUFFIX ".dyn.so"
int cfg_sibling_path(const char *path, const char *suffix, char *out, size_t len);

/* The same from a string (tests, fuzzing); name is used in messages as the file name. */
int cfg_load_string(const char *text, const char *name, armd_config *cfg, cfg_report *rep);

/* What a reload would do. restart_keys lists keys whose change needs a restart (joint count,
 * kinematics, masses, driver, port, ...), changed lists keys that can switch live (gains,
 * limits, safety thresholds, ...). Each is a comma-separated list like
 * "[joint shoulder] kp, [safety] max_failed_reads". Returns 1 if any restart key changed. */
/* The arm without its beams, for dynamics/flex.h: each flexible link's mass, com and inertia
 * (the whole link, beam included, as armd's rigid model uses them) minus its beam taken as a
 * uniform rigid rod of flex_mass from the joint to the next joint (polar flex_polar x length).
 * 0, or -1 with err (standard DH, flex_mass above the link's mass). */
int cfg_flex_rigid_parts(const armd_config *cfg, dyn_model_desc *out, char *err, size_t len);

int cfg_compare(const armd_config *running, const armd_config *candidate, char *changed,
                size_t changed_len, char *restart_keys, size_t restart_len);

const char *cfg_controller_name(cfg_controller c);
int cfg_controller_parse(const char *name, cfg_controller *out); /* 0 ok, -1 unknown */
/* The sections the loader reads, NULL-terminated; "joint NAME" stands for every [joint NAME],
 * "tool NAME" for the [tool NAME] section. */
extern const char *const cfg_section_names[];
/* The keys a section accepts, NULL-terminated ("joint x" or "joint NAME": a joint's; "tool x"
 * or "tool NAME": the tool's), or NULL
 * for a section the loader does not know. */
const char *const *cfg_known_keys(const char *section);
/* The [arm] controller values by cfg_controller, NULL-terminated. */
extern const char *const cfg_controller_names[];
/* The [safety] collision_reaction values by cfg_collision_reaction, NULL-terminated. */
extern const char *const cfg_collision_reaction_names[];
/* The [trajectory] shaper values by cfg_shaper, NULL-terminated. */
extern const char *const cfg_shaper_names[];

#endif
