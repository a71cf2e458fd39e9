/*
 * cfg_internal.h — shared state of the INI loader (config/ only).
 *
 * Loading has three steps: cfg_ini.c reads the main file and its drop-ins into a flat list of
 * sections and entries (inih does the key = value syntax; our reader counts lines, rejects
 * over-long and malformed lines, and normalises section headers); cfg_arm.c, cfg_joint.c and
 * cfg_tool.c apply the schema to the entries; every message is collected with its (file, line)
 * and sorted into the cfg_report at the end.
 *
 * Module map, one job each:
 *   cfg_ini.c      the reader: files, drop-ins, section headers, key lines
 *   cfg_value.c    typed getters (numbers, pi, lists, enums) with exact messages
 *   cfg_arm.c      [arm] [driver] [socket] [realtime] [safety] [trajectory]; the key tables
 *                  and the unknown-key pass
 *   cfg_joint.c    [joint NAME] and the cross-section checks
 *   cfg_flex.c     the joints' flex_* keys
 *   cfg_tool.c     [tool NAME]: the gripper servo
 *   cfg_feasible.c the gains' and the payload's feasibility (feasible.c)
 *   cfg_compare.c  what a reload changes
 *   cfg_report.c   messages; cfg_suggest.c "did you mean"; cfg_load.c defaults and the order
 */
#ifndef ARMD_CFG_INTERNAL_H
#define ARMD_CFG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"

#define CFG_LINE_MAX   196       /* longest accepted line (inih: INI_MAX_LINE 200 - 3 - 1) */
#define CFG_FILE_MAX   (1 << 20) /* largest accepted file [bytes] */
#define CFG_MAX_TOKENS CFG_MAX_JOINTS
/* Dynamixel Goal Current: 2 bytes signed, 2.69 mA per unit (ROBOTIS e-Manual, X series) */
#define CFG_DXL_MAX_AMPS (32767 * 2.69e-3)

/* One "key = value" line; later drop-ins replace value, file and line. */
typedef struct {
    char *section; /* normalised: "arm", "joint j2", ... */
    char *key;
    char *value;
    int file, line;
    bool used; /* consumed by the schema (unused entries are unknown keys) */
} cfg_entry;

/* One section header, first occurrence per (file, name). */
typedef struct {
    char *name;
    int file, line;
    bool known; /* a section the schema reads (messages about its keys are wanted) */
} cfg_section;

typedef struct {
    int file, line, seq;
    bool is_error;
    char *text;
} cfg_msg;

typedef struct {
    char **files; /* files[0] is the main file */
    int n_files;
    cfg_entry *e;
    int n_e, cap_e;
    cfg_section *s;
    int n_s, cap_s;
    cfg_msg *m;
    int n_m, cap_m;
    int n_errors, n_warnings;
    bool oom;
    /* reader state for the file being parsed */
    const char *src;
    size_t pos, len;
    int cur_file, lineno;
    const char *cur_section; /* normalised name, NULL outside or in a rejected section */
    bool seen_header;        /* a "[...]" line (valid or not) came before in this file */
} cfg_ctx;

/* units of a joint's quantities, by joint type */
typedef struct {
    const char *pos, *vel, *acc, *force, *damping, *force_rate;
} cfg_units;

/* cfg_report.c */
void cfg_msg_add(cfg_ctx *c, int file, int line, bool is_error, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* "file:line: [section] key: message" (key may be NULL: "[section]: message") */
void cfg_err(cfg_ctx *c, int file, int line, const char *section, const char *key, const char *fmt,
             ...) __attribute__((format(printf, 6, 7)));
void cfg_warn(cfg_ctx *c, int file, int line, const char *section, const char *key, const char *fmt,
              ...) __attribute__((format(printf, 6, 7)));
void cfg_msgs_to_report(cfg_ctx *c, cfg_report *rep);
void cfg_ctx_free(cfg_ctx *c);

/* cfg_ini.c */
int cfg_ctx_add_file(cfg_ctx *c, const char *name);
void cfg_parse_text(cfg_ctx *c, int file, const char *text, size_t len);
int cfg_parse_path(cfg_ctx *c, const char *path); /* -1 when the file cannot be read */
void cfg_parse_dropins(cfg_ctx *c, const char *main_path);
const cfg_section *cfg_section_find(const cfg_ctx *c, const char *name);
cfg_entry *cfg_entry_find(cfg_ctx *c, const char *section, const char *key);
/* an arm or joint name (also names the socket): 1..63 of [A-Za-z0-9_.-] */
bool cfg_valid_name(const char *s);

/* cfg_suggest.c: the known name closest to word, or NULL if none is close */
const char *cfg_suggest(const char *word, const char *const *known);

/* cfg_value.c: typed getters. Each marks the entry used, reports wrong type / range / count
 * with the entry's file and line, and leaves *out at its default when absent or wrong.
 * Required keys that are absent are reported at the section header. Return true when the key
 * was present and valid. */
typedef struct {
    double lo, hi;
    bool lo_open, hi_open;
} cfg_range;
#define CFG_ANY ((cfg_range){-1e300, 1e300, false, false})
bool cfg_parse_number(const char *tok, double *out);
int cfg_tokens(const char *value, char tok[][64], int max); /* -1 if more than max */
void cfg_missing(cfg_ctx *c, const char *section, const char *key);
bool cfg_get_num(cfg_ctx *c, const char *sec, const char *key, bool required, cfg_range r,
                 const char *unit, double *out);
bool cfg_get_int(cfg_ctx *c, const char *sec, const char *key, bool required, long lo, long hi,
                 const char *unit, int *out);
bool cfg_get_bool(cfg_ctx *c, const char *sec, const char *key, bool *out);
bool cfg_get_str(cfg_ctx *c, const char *sec, const char *key, bool required, char *out,
                 size_t size);
bool cfg_get_enum(cfg_ctx *c, const char *sec, const char *key, bool required,
                  const char *const *names, int *out);
bool cfg_get_vec(cfg_ctx *c, const char *sec, const char *key, bool required, int n, cfg_range r,
                 const char *unit, double *out);
/* one number or n numbers; returns the count given (0 when absent or wrong) */
int cfg_get_list(cfg_ctx *c, const char *sec, const char *key, int n, const char *what, cfg_range r,
                 const char *unit, double *out);
void cfg_range_error(cfg_ctx *c, const cfg_entry *e, const char *tok, cfg_range r,
                     const char *unit);

/* cfg_arm.c / cfg_joint.c: the schema */
void cfg_apply_arm(cfg_ctx *c, armd_config *cfg);
void cfg_apply_joints(cfg_ctx *c, armd_config *cfg);
void cfg_check_unknown_keys(cfg_ctx *c);
void cfg_validate_model(cfg_ctx *c, armd_config *cfg);
/* cfg_tool.c: the [tool NAME] section (after the joints: its ID is checked against theirs) */
extern const char *const cfg_tool_keys[];
/* cfg_impedance.c: the [impedance] section */
extern const char *const cfg_impedance_keys[];
void cfg_apply_impedance(cfg_ctx *c, armd_config *cfg);
void cfg_apply_tool(cfg_ctx *c, armd_config *cfg);
/* cfg_feasible.c: gains within the sampled loop's stability bounds, ki with i_limit, the payload
 * within max_payload and the torque limits (feasible.h) */
void cfg_validate_feasible(cfg_ctx *c, armd_config *cfg);
/* cfg_flex.c: the flex_* keys of joint i, and the beams checked against the arm */
void cfg_apply_flex(cfg_ctx *c, const char *sec, armd_config *cfg, int i);
void cfg_validate_flex(cfg_ctx *c, armd_config *cfg);

#endif
