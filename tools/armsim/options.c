/*
 * options.c — parses armsim's command line (getopt_long) with range checks on every value, for
 * the armsim program and for a host program that runs the arm in process (simbus.h). Prints
 * only on --help (the usage, to stdout) and on errors (to err).
 */
#include "tools/armsim/options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/dxl2_codec.h"

#define DXL2_CURRENT_LIMIT_MAX_RAW 32767 /* Goal Current is 16-bit signed */

enum {
    OPT_LINK = 256,
    OPT_PROTOCOL,
    OPT_TRUTH,
    OPT_TRUTH_DECIMATE,
    OPT_MODEL,
    OPT_MASS_SCALE,
    OPT_PAYLOAD,
    OPT_PERTURB,
    OPT_PRINT_MODEL,
    OPT_RATE,
    OPT_NOISE,
    OPT_Q0,
    OPT_NO_GRAVITY,
    OPT_FRICTION_SMOOTHING,
    OPT_DROP,
    OPT_CORRUPT,
    OPT_WRONG_ID,
    OPT_DELAY,
    OPT_FAULTS_AFTER,
    OPT_SILENT,
    OPT_ALERT,
    OPT_ALERT_ID,
    OPT_SEED,
    OPT_MODEL_NUMBER,
    OPT_CURRENT_LIMIT,
    OPT_QUIET,
    OPT_PUSH,
    OPT_WALL,
    OPT_TOOL_FORCE,
    OPT_OBJECT,
    OPT_SILENT_ID,
    OPT_BRAKE
};

/* Parses a finite double in [lo, hi]; 0 on success. */
static int parse_double(const char *opt, const char *s, double lo, double hi, double *out,
                        FILE *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v)) {
        fprintf(err, "armsim: --%s: '%s' is not a number\n", opt, s);
        return -1;
    }
    if (v < lo || v > hi) {
        fprintf(err, "armsim: --%s: %g is outside [%g, %g]\n", opt, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses an integer in [lo, hi]; 0 on success. */
static int parse_long(const char *opt, const char *s, long lo, long hi, long *out, FILE *err)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (errno || end == s || *end != '\0') {
        fprintf(err, "armsim: --%s: '%s' is not an integer\n", opt, s);
        return -1;
    }
    if (v < lo || v > hi) {
        fprintf(err, "armsim: --%s: %ld is outside [%ld, %ld]\n", opt, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses one field of a list option ("--push: TORQUE ...") as a finite double in [lo, hi];
 * 0 on success. */
static int parse_field(const char *opt, const char *field, const char *s, double lo, double hi,
                       double *out, FILE *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v)) {
        fprintf(err, "armsim: --%s: %s '%s' is not a finite number\n", opt, field, s);
        return -1;
    }
    if (v < lo || v > hi) {
        fprintf(err, "armsim: --%s: %s %g is outside [%g, %g]\n", opt, field, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Splits a copy of s at every comma (empty fields kept) into at most max fields; returns the
 * number of fields, or -1 when there are more than max or s does not fit buf. */
static int split_fields(const char *s, char *buf, size_t len, char **field, int max)
{
    if (strlen(s) >= len) return -1;
    strcpy(buf, s);
    int n = 0;
    for (char *p = buf;; p++) {
        if (n == max) return -1;
        field[n++] = p;
        p = strchr(p, ',');
        if (!p) return n;
        *p = '\0';
    }
}

/* Parses "T,JOINT,TORQUE,DURATION" into the next entry of o->push. JOINT is checked against
 * CFG_MAX_JOINTS here and against the arm's joints when the physics is built. */
static int parse_push(const char *s, armsim_options *o, FILE *err)
{
    char buf[256], *f[4];
    if (o->n_push == ARMSIM_MAX_PUSHES) {
        fprintf(err, "armsim: --push: more than %d pushes\n", ARMSIM_MAX_PUSHES);
        return -1;
    }
    if (split_fields(s, buf, sizeof buf, f, 4) != 4) {
        fprintf(err, "armsim: --push: '%s' is not T,JOINT,TORQUE,DURATION\n", s);
        return -1;
    }
    armsim_push *p = &o->push[o->n_push];
    double joint;
    if (parse_field("push", "T", f[0], 0.0, 1e9, &p->t, err) ||
        parse_field("push", "JOINT", f[1], 1, CFG_MAX_JOINTS, &joint, err) ||
        parse_field("push", "TORQUE", f[2], -1e6, 1e6, &p->torque, err) ||
        parse_field("push", "DURATION", f[3], 0.0, 1e9, &p->duration, err))
        return -1;
    if (joint != floor(joint)) {
        fprintf(err, "armsim: --push: JOINT %g is not a whole joint number\n", joint);
        return -1;
    }
    if (p->duration <= 0.0) {
        fprintf(err, "armsim: --push: DURATION %g must be more than 0 s\n", p->duration);
        return -1;
    }
    p->joint = (int)joint - 1;
    o->n_push++;
    return 0;
}

/* Parses "T,FX,FY,FZ,DURATION" into the next entry of o->tool_force. */
static int parse_tool_force(const char *s, armsim_options *o, FILE *err)
{
    char buf[256], *f[5];
    if (o->n_tool_force == ARMSIM_MAX_PUSHES) {
        fprintf(err, "armsim: --tool-force: more than %d tool forces\n", ARMSIM_MAX_PUSHES);
        return -1;
    }
    if (split_fields(s, buf, sizeof buf, f, 5) != 5) {
        fprintf(err, "armsim: --tool-force: '%s' is not T,FX,FY,FZ,DURATION\n", s);
        return -1;
    }
    armsim_tool_force *t = &o->tool_force[o->n_tool_force];
    if (parse_field("tool-force", "T", f[0], 0.0, 1e9, &t->t, err) ||
        parse_field("tool-force", "FX", f[1], -1e6, 1e6, &t->f[0], err) ||
        parse_field("tool-force", "FY", f[2], -1e6, 1e6, &t->f[1], err) ||
        parse_field("tool-force", "FZ", f[3], -1e6, 1e6, &t->f[2], err) ||
        parse_field("tool-force", "DURATION", f[4], 0.0, 1e9, &t->duration, err))
        return -1;
    if (t->duration <= 0.0) {
        fprintf(err, "armsim: --tool-force: DURATION %g must be more than 0 s\n", t->duration);
        return -1;
    }
    o->n_tool_force++;
    return 0;
}

/* Parses "AXIS,POSITION,STIFFNESS" into o->wall. */
static int parse_wall(const char *s, armsim_options *o, FILE *err)
{
    static const struct {
        const char *name;
        int axis, side;
    } axes[] = {{"x", 0, 1},  {"y", 1, 1},   {"z", 2, 1},   {"+x", 0, 1}, {"+y", 1, 1},
                {"+z", 2, 1}, {"-x", 0, -1}, {"-y", 1, -1}, {"-z", 2, -1}};
    char buf[256], *f[3];
    if (o->wall.on) {
        fprintf(err, "armsim: --wall: given twice (one wall at most)\n");
        return -1;
    }
    if (split_fields(s, buf, sizeof buf, f, 3) != 3) {
        fprintf(err, "armsim: --wall: '%s' is not AXIS,POSITION,STIFFNESS\n", s);
        return -1;
    }
    armsim_wall *w = &o->wall;
    w->axis = -1;
    for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++)
        if (!strcmp(f[0], axes[i].name)) {
            w->axis = axes[i].axis;
            w->side = axes[i].side;
        }
    if (w->axis < 0) {
        fprintf(err, "armsim: --wall: AXIS '%s' is none of x, y, z, -x, -y, -z\n", f[0]);
        return -1;
    }
    if (parse_field("wall", "POSITION", f[1], -1e3, 1e3, &w->position, err) ||
        parse_field("wall", "STIFFNESS", f[2], 0.0, 1e7, &w->stiffness, err))
        return -1;
    if (w->stiffness <= 0.0) {
        fprintf(err, "armsim: --wall: STIFFNESS %g must be more than 0 N/m\n", w->stiffness);
        return -1;
    }
    w->on = true;
    return 0;
}

/* Parses "WIDTH,STIFFNESS" into o->object: WIDTH in (0, 10] m, STIFFNESS in (0, 1e12] N/m. */
static int parse_object(const char *s, armsim_options *o, FILE *err)
{
    char buf[256], *f[2];
    if (o->object.on) {
        fprintf(err, "armsim: --object: given twice (one object at most)\n");
        return -1;
    }
    if (split_fields(s, buf, sizeof buf, f, 2) != 2) {
        fprintf(err, "armsim: --object: '%s' is not WIDTH,STIFFNESS\n", s);
        return -1;
    }
    armsim_object *b = &o->object;
    if (parse_field("object", "WIDTH", f[0], 0.0, 10.0, &b->width, err) ||
        parse_field("object", "STIFFNESS", f[1], 0.0, 1e12, &b->stiffness, err))
        return -1;
    if (b->width <= 0.0) {
        fprintf(err, "armsim: --object: WIDTH %g must be more than 0 m\n", b->width);
        return -1;
    }
    if (b->stiffness <= 0.0) {
        fprintf(err, "armsim: --object: STIFFNESS %g must be more than 0 N/m\n", b->stiffness);
        return -1;
    }
    b->on = true;
    return 0;
}

/* Parses "M,X,Y,Z" into o->payload: mass in [0, 10000] kg (the config's bound), position
 * within 100 m. */
static int parse_payload(const char *s, armsim_options *o, FILE *err)
{
    char buf[256], *f[4];
    if (split_fields(s, buf, sizeof buf, f, 4) != 4) {
        fprintf(err, "armsim: --payload: '%s' is not M,X,Y,Z\n", s);
        return -1;
    }
    static const char *const what[] = {"M", "X", "Y", "Z"};
    for (int i = 0; i < 4; i++)
        if (parse_field("payload", what[i], f[i], i ? -100.0 : 0.0, i ? 100.0 : 10000.0,
                        &o->payload[i], err))
            return -1;
    o->payload_on = true;
    return 0;
}

/* Parses "Q1,Q2,..." into o->q0. */
static int parse_q0(const char *s, armsim_options *o, FILE *err)
{
    char buf[4096];
    if (strlen(s) >= sizeof buf) {
        fprintf(err, "armsim: --q0: list too long\n");
        return -1;
    }
    strcpy(buf, s);
    o->n_q0 = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->n_q0 >= CFG_MAX_JOINTS) {
            fprintf(err, "armsim: --q0: more than %d values\n", CFG_MAX_JOINTS);
            return -1;
        }
        if (parse_double("q0", tok, -1e6, 1e6, &o->q0[o->n_q0], err)) return -1;
        o->n_q0++;
    }
    if (o->n_q0 == 0) {
        fprintf(err, "armsim: --q0: no values\n");
        return -1;
    }
    return 0;
}

/* See options.h. */
int armsim_parse_options(int argc, char **argv, armsim_options *o, FILE *err)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {"link", required_argument, NULL, OPT_LINK},
        {"protocol", required_argument, NULL, OPT_PROTOCOL},
        {"truth", required_argument, NULL, OPT_TRUTH},
        {"truth-decimate", required_argument, NULL, OPT_TRUTH_DECIMATE},
        {"model", required_argument, NULL, OPT_MODEL},
        {"mass-scale", required_argument, NULL, OPT_MASS_SCALE},
        {"payload", required_argument, NULL, OPT_PAYLOAD},
        {"perturb", required_argument, NULL, OPT_PERTURB},
        {"print-model", no_argument, NULL, OPT_PRINT_MODEL},
        {"rate", required_argument, NULL, OPT_RATE},
        {"noise", required_argument, NULL, OPT_NOISE},
        {"q0", required_argument, NULL, OPT_Q0},
        {"no-gravity", no_argument, NULL, OPT_NO_GRAVITY},
        {"brake", no_argument, NULL, OPT_BRAKE},
        {"friction-smoothing", required_argument, NULL, OPT_FRICTION_SMOOTHING},
        {"drop", required_argument, NULL, OPT_DROP},
        {"corrupt-crc", required_argument, NULL, OPT_CORRUPT},
        {"wrong-id", required_argument, NULL, OPT_WRONG_ID},
        {"delay-us", required_argument, NULL, OPT_DELAY},
        {"faults-after", required_argument, NULL, OPT_FAULTS_AFTER},
        {"silent-after", required_argument, NULL, OPT_SILENT},
        {"alert-after", required_argument, NULL, OPT_ALERT},
        {"alert-id", required_argument, NULL, OPT_ALERT_ID},
        {"seed", required_argument, NULL, OPT_SEED},
        {"model-number", required_argument, NULL, OPT_MODEL_NUMBER},
        {"current-limit", required_argument, NULL, OPT_CURRENT_LIMIT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"push", required_argument, NULL, OPT_PUSH},
        {"wall", required_argument, NULL, OPT_WALL},
        {"tool-force", required_argument, NULL, OPT_TOOL_FORCE},
        {"object", required_argument, NULL, OPT_OBJECT},
        {"silent-id", required_argument, NULL, OPT_SILENT_ID},
        {NULL, 0, NULL, 0}};

    memset(o, 0, sizeof *o);
    o->protocol = PROTO_FROM_CONFIG;
    o->rate_hz = 10000.0;
    o->mass_scale = 1.0;
    o->truth_decimate = 1;
    o->silent_after = -1.0;
    o->alert_after = -1.0;
    o->alert_id = -1;
    o->silent_id = -1;
    o->seed = 1;
    o->model_number = DXL2_MODEL_XM430_W350;
    o->current_limit_a = -1.0;

    optind = 0; /* 0, not 1: glibc starts afresh even after a host program's own getopt */
    opterr = 0;
    int c;
    long l = 0;
    while ((c = getopt_long(argc, argv, ":c:h", longopts, NULL)) != -1) {
        const char *name = "";
        for (const struct option *p = longopts; p->name; p++)
            if (p->val == c) name = p->name;
        int rc = 0;
        switch (c) {
        case 'c':
            o->config_path = optarg;
            break;
        case 'h':
            armsim_print_usage(stdout);
            return 1;
        case OPT_LINK:
            o->link_path = optarg;
            break;
        case OPT_PROTOCOL:
            if (!strcmp(optarg, "dxl2"))
                o->protocol = PROTO_DXL2;
            else if (!strcmp(optarg, "armlink"))
                o->protocol = PROTO_ARMLINK;
            else {
                fprintf(err, "armsim: --protocol: '%s' is neither dxl2 nor armlink\n", optarg);
                rc = -1;
            }
            break;
        case OPT_TRUTH:
            o->truth_path = optarg;
            break;
        case OPT_TRUTH_DECIMATE:
            rc = parse_long(name, optarg, 1, 1000000, &l, err);
            o->truth_decimate = (int)l;
            break;
        case OPT_MODEL:
            o->model_path = optarg;
            break;
        case OPT_MASS_SCALE:
            rc = parse_double(name, optarg, 1e-3, 1e3, &o->mass_scale, err);
            break;
        case OPT_RATE:
            rc = parse_double(name, optarg, 100.0, 1e6, &o->rate_hz, err);
            break;
        case OPT_NOISE:
            rc = parse_double(name, optarg, 0.0, 1e6, &o->noise_counts, err);
            break;
        case OPT_Q0:
            rc = parse_q0(optarg, o, err);
            break;
        case OPT_NO_GRAVITY:
            o->no_gravity = true;
            break;
        case OPT_BRAKE:
            o->brake = true;
            break;
        case OPT_FRICTION_SMOOTHING:
            rc = parse_double(name, optarg, 1e-9, 1e3, &o->friction_smoothing, err);
            break;
        case OPT_DROP:
            rc = parse_double(name, optarg, 0.0, 1.0, &o->drop, err);
            break;
        case OPT_CORRUPT:
            rc = parse_double(name, optarg, 0.0, 1.0, &o->corrupt_crc, err);
            break;
        case OPT_WRONG_ID:
            rc = parse_double(name, optarg, 0.0, 1.0, &o->wrong_id, err);
            break;
        case OPT_DELAY:
            rc = parse_long(name, optarg, 0, 10000000, &l, err);
            o->delay_us = l;
            break;
        case OPT_FAULTS_AFTER:
            rc = parse_double(name, optarg, 0.0, 1e9, &o->faults_after, err);
            break;
        case OPT_SILENT:
            rc = parse_double(name, optarg, 0.0, 1e9, &o->silent_after, err);
            break;
        case OPT_ALERT:
            rc = parse_double(name, optarg, 0.0, 1e9, &o->alert_after, err);
            break;
        case OPT_ALERT_ID:
            rc = parse_long(name, optarg, 0, 255, &l, err);
            o->alert_id = (int)l;
            break;
        case OPT_SEED:
            rc = parse_long(name, optarg, 0, 0x7fffffffL, &l, err);
            o->seed = (uint64_t)l;
            break;
        case OPT_MODEL_NUMBER:
            rc = parse_long(name, optarg, 0, 65535, &l, err);
            o->model_number = (int)l;
            break;
        case OPT_CURRENT_LIMIT:
            rc = parse_double(name, optarg, 0.0, DXL2_CURRENT_LIMIT_MAX_RAW * DXL2_CURRENT_UNIT_A,
                              &o->current_limit_a, err);
            break;
        case OPT_QUIET:
            o->quiet = true;
            break;
        case OPT_PUSH:
            rc = parse_push(optarg, o, err);
            break;
        case OPT_WALL:
            rc = parse_wall(optarg, o, err);
            break;
        case OPT_TOOL_FORCE:
            rc = parse_tool_force(optarg, o, err);
            break;
        case OPT_OBJECT:
            rc = parse_object(optarg, o, err);
            break;
        case OPT_SILENT_ID:
            rc = parse_long(name, optarg, 0, DXL2_MAX_ID, &l, err);
            o->silent_id = (int)l;
            break;
        case OPT_PAYLOAD:
            rc = parse_payload(optarg, o, err);
            break;
        case OPT_PRINT_MODEL:
            o->print_model = true;
            break;
        case OPT_PERTURB:
            rc = parse_long(name, optarg, 0, 0x7fffffffL, &l, err);
            o->perturb_on = true;
            o->perturb_seed = (uint64_t)l;
            break;
        case ':':
            fprintf(err, "armsim: %s needs a value\n", argv[optind - 1]);
            rc = -1;
            break;
        default:
            fprintf(err, "armsim: unknown option '%s' (see --help)\n", argv[optind - 1]);
            rc = -1;
            break;
        }
        if (rc) return -1;
    }
    if (optind < argc) {
        fprintf(err, "armsim: unexpected argument '%s' (see --help)\n", argv[optind]);
        return -1;
    }
    return 0;
}

/* The armsim program's required options. */
int armsim_check_program_options(const armsim_options *o, FILE *err)
{
    if (!o->config_path) {
        fprintf(err, "armsim: -c CONFIG is required (see --help)\n");
        return -1;
    }
    if (!o->link_path && !o->print_model) {
        fprintf(err, "armsim: --link PATH is required (see --help)\n");
        return -1;
    }
    return 0;
}
