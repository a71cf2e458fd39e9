/*
 * armctl.h — what armctl's files share: the global options, method calls that print the
 * daemon's error, the arm description (from "info"), argument and JSON helpers, the
 * human-readable formatting, the notification stream, and the commands main() dispatches to.
 */
#ifndef ARMCTL_ARMCTL_H
#define ARMCTL_ARMCTL_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "tools/armctl/client.h"

#define ARMCTL_MAX_JOINTS 64

extern bool opt_json;                     /* --json: print the daemon's JSON */
extern volatile sig_atomic_t interrupted; /* SIGINT / SIGTERM seen */
extern const char *usage_command;         /* the command given, for usage errors (or NULL) */

/* ---- armctl.c: the table of commands */
typedef struct {
    const char *name;
    const char *synopsis;                              /* lines after "armctl [OPTIONS] " */
    const char *description;                           /* lines */
    int min_args, max_args;                            /* the counts main() accepts (max -1: any) */
    int (*run)(armctl_conn *c, int argc, char **argv); /* NULL: the method name, no arguments */
} armctl_command;

/* ---- request.c: calls and the arm description */
/* Joint names, which joints are prismatic (for units), the loop rate [Hz], whether the arm
 * has a tool (info's "tool": a [tool] section). */
typedef struct {
    int n;
    char name[ARMCTL_MAX_JOINTS][64];
    bool prismatic[ARMCTL_MAX_JOINTS];
    double rate_hz;
    bool has_tool;
} arm_info;

/* Calls a method; prints the daemon's error and returns NULL on failure. */
json_t *call(armctl_conn *c, const char *method, json_t *params);
/* Fills a from "info"; the info object itself goes to *info_out when that is not NULL. */
int get_info(armctl_conn *c, arm_info *a, json_t **info_out);
/* Prints "armctl: " fmt (with arg) and a pointer to the command's --help; returns exit
 * status 2. */
int usage_error(const char *fmt, const char *arg);
/* A finite number spelled out completely in s. */
bool parse_double(const char *s, double *out);
/* What an arm in state (a status state name) needs before a command that needs it holding:
 * the next armctl step(s); NULL for holding or an unknown name. */
const char *state_advice(const char *state);
/* Whether name is one of armd's states (disabled, holding, moving, fault, estop). */
bool is_state_name(const char *name);
/* The state names, separated by " | ". */
extern const char state_names_text[];

/* ---- format.c: output */
void print_json(json_t *v);
/* Runs gnuplot on the script gp (which writes png); says on stderr, after prefix, where the
 * plot is, or that gnuplot did not run and where the data dat and the script stay. */
void run_gnuplot(const char *prefix, const char *gp, const char *png, const char *dat);
/* The value of a JSON number, NaN for anything else. */
double num(json_t *v);
/* obj[key][i] as a number (NaN if absent). */
double vec_at(json_t *obj, const char *key, int i);
/* The joint table (q, q_des, error, qd, tau with units) of a status or telemetry object. */
void print_joint_table(const arm_info *a, json_t *s, FILE *out);
/* The tool's line (opening [mm], speed [mm/s], force [N]) of a telemetry object that has one. */
void print_tool_line(json_t *s, FILE *out);
/* The tool pose's line (position [mm], quaternion w x y z) of a status or telemetry object. */
void print_pose_line(json_t *s, FILE *out);
/* The wrench line (status or telemetry "wrench"), when it is known. */
void print_wrench_line(json_t *s, FILE *out);
/* One line per event notification (state, fault, trajectory_done). */
void print_event(json_t *m, FILE *out);
/* A command's result (consumed): the JSON with --json, else human(a, r); returns 0. */
int print_result(const arm_info *a, json_t *r, void (*human)(const arm_info *a, json_t *r));
/* The human-readable forms of results (a may be NULL where joints are not shown). */
void print_status(const arm_info *a, json_t *s);
void print_info(const arm_info *a, json_t *info);
void print_gains(const arm_info *a, json_t *r);
void print_impedance(const arm_info *a, json_t *r);
void print_trajectory(const arm_info *a, json_t *r);
void print_controller(const arm_info *a, json_t *r);

/* ---- stream.c: the notification stream (watch, record, collision calibrate) */
/* Subscribes to telemetry at rate_hz [Hz] (events always come): the rate armd uses [Hz], or 0
 * on failure (reported). */
double subscribe(armctl_conn *c, double rate_hz);
/* Handles one notification (method may be NULL); false ends the stream. */
typedef bool (*on_message)(json_t *m, const char *method, void *ctx);
/* Feeds notifications to fn until it declines more or Ctrl-C (0), or the daemon closes the
 * connection (1, reported). */
int stream(armctl_conn *c, on_message fn, void *ctx);

/* ---- commands.c, stream.c, calibrate.c, tool.c: one function per command, returning the
 * exit status */
int cmd_status(armctl_conn *c, int argc, char **argv);
int cmd_info(armctl_conn *c, int argc, char **argv);
int cmd_pose(armctl_conn *c, int argc, char **argv);
int cmd_simple(armctl_conn *c, const char *method);
int cmd_move(armctl_conn *c, int argc, char **argv);
/* move-linear X Y Z [--to] [--frame base|tool] [--speed V] [--acceleration A] (linear.c) */
int cmd_move_linear(armctl_conn *c, int argc, char **argv);
int cmd_send(armctl_conn *c, int argc, char **argv);
int cmd_gains(armctl_conn *c, int argc, char **argv);
int cmd_controller(armctl_conn *c, int argc, char **argv);
int cmd_impedance(armctl_conn *c, int argc, char **argv);
int cmd_wait(armctl_conn *c, int argc, char **argv);
int cmd_watch(armctl_conn *c, int argc, char **argv);
int cmd_record(armctl_conn *c, int argc, char **argv);
/* collision calibrate FILE [--runs N] [--factor F] [--floor T] (calibrate.c) */
int cmd_collision(armctl_conn *c, int argc, char **argv);
/* payload [show] | set MASS [X Y Z] [--inertia I6] | clear | estimate [--apply] .. (payload.c) */
int cmd_payload(armctl_conn *c, int argc, char **argv);
/* identify [--config FILE] [--out FILE] [--report PREFIX] [--period S] [--periods N]
 * [--harmonics L] [--swing RAD] [--cutoff HZ] [--candidates N] [--seed N] (identify.c) */
int cmd_identify(armctl_conn *c, int argc, char **argv);
/* resonance JOINT [--step RAD] [--seconds S] [--fmin HZ] [--fmax HZ] [--out FILE.csv]
 * (resonance_cmd.c) */
int cmd_resonance(armctl_conn *c, int argc, char **argv);
/* tool [status] | move OPENING [--speed V] | grasp WIDTH [--force N] [--speed V]
 * [--epsilon-inner E] [--epsilon-outer E] | release [--speed V] | stop (tool.c) */
int cmd_tool(armctl_conn *c, int argc, char **argv);

#endif
