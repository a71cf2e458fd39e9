/*
 * request.c — armctl's method calls (errors printed the same way everywhere), the arm
 * description every table needs, and the argument helpers the commands share.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armctl/armctl.h"

/* Calls a method; prints "armctl: METHOD: code: message" and returns NULL on failure. */
json_t *call(armctl_conn *c, const char *method, json_t *params)
{
    char err[1024];
    json_t *r = conn_call(c, method, params, err, sizeof err);
    if (r) return r;
    if (conn_error(c)) /* not connected: not the method's failure */
        fprintf(stderr, "armctl: %s\n", err);
    else
        fprintf(stderr, "armctl: %s: %s\n", method, err);
    return r;
}

/* Joint names and types (for units) and the loop rate from the "info" method. */
int get_info(armctl_conn *c, arm_info *a, json_t **info_out)
{
    json_t *info = call(c, "info", NULL);
    if (!info) return -1;
    json_t *names = json_object_get(info, "joints"), *types = json_object_get(info, "types");
    a->n = (int)json_array_size(names);
    if (a->n > ARMCTL_MAX_JOINTS) a->n = ARMCTL_MAX_JOINTS;
    for (int i = 0; i < a->n; i++) {
        snprintf(a->name[i], sizeof a->name[i], "%s",
                 json_string_value(json_array_get(names, (size_t)i)));
        const char *t = json_string_value(json_array_get(types, (size_t)i));
        a->prismatic[i] = t && strcmp(t, "prismatic") == 0;
    }
    a->rate_hz = num(json_object_get(info, "rate_hz"));
    a->has_tool = json_is_object(json_object_get(info, "tool"));
    if (info_out)
        *info_out = info;
    else
        json_decref(info);
    return 0;
}

const char *usage_command;

/* Prints the usage error and returns exit status 2. */
int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "armctl: ");
    fprintf(stderr, fmt, arg);
    if (usage_command)
        fprintf(stderr, "\n(armctl %s --help for usage)\n", usage_command);
    else
        fprintf(stderr, "\n(armctl --help for usage)\n");
    return 2;
}

/* armd's states (daemon/safety.c) and the step each needs before a command that needs the arm
 * holding: safety.c's transitions are disabled -enable-> holding, fault|estop -reset->
 * disabled, moving -(trajectory done or cancel)-> holding. */
static const struct {
    const char *state, *advice;
} states[] = {
    {"disabled", "enable it (armctl enable)"},
    {"holding", NULL},
    {"moving", "let the trajectory end (armctl wait done) or stop it (armctl cancel)"},
    {"fault", "reset it, then enable it (armctl reset, then armctl enable)"},
    {"estop", "reset it, then enable it (armctl reset, then armctl enable)"},
};
#define N_STATES (int)(sizeof states / sizeof states[0])

const char state_names_text[] = "disabled | holding | moving | fault | estop";

const char *state_advice(const char *state)
{
    for (int k = 0; state && k < N_STATES; k++)
        if (strcmp(state, states[k].state) == 0) return states[k].advice;
    return NULL;
}

bool is_state_name(const char *name)
{
    for (int k = 0; k < N_STATES; k++)
        if (strcmp(name, states[k].state) == 0) return true;
    return false;
}

/* Parses s completely as a finite double. */
bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}
