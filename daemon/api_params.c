/*
 * api_params.c — what the method files share (see api_internal.h): checking a request's params
 * (the error every check fills, unknown members, finite numbers, joint vectors), the reply
 * target a method hands to its command, the JSON forms of numbers and vectors in replies. Main
 * thread; calls no other API file.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon/api_internal.h"

const char *const api_no_keys[] = {NULL};

const ctl_reply_to *api_reply_to(api_ctx *x, api_build_fn build, const char *what)
{
    x->wait.build = build;
    snprintf(x->wait.what, sizeof x->wait.what, "%s", what ? what : "");
    return &x->reply;
}

/* Fills an error and returns -1. */
int api_fail(api_err *e, const char *code, const char *fmt, ...)
{
    snprintf(e->code, sizeof e->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* Copies a control-thread error. */
int api_fail_ctl(api_err *e, const ctl_error *ce)
{
    return api_fail(e, ce->code[0] ? ce->code : "failed", "%s",
                    ce->message[0] ? ce->message : "command failed");
}

json_t *api_json_number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *api_json_stamp(double t)
{
    return api_json_number(round(t * 1e6) * 1e-6);
}

json_t *api_json_vector(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, api_json_number(v[i]));
    return a;
}

const char *api_json_type_word(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* Rejects members of obj not in allowed (NULL-terminated); where names the object. */
int api_check_keys(json_t *obj, const char *const *allowed, const char *where, api_err *e)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        bool ok = false;
        for (int i = 0; allowed[i]; i++) ok = ok || strcmp(key, allowed[i]) == 0;
        if (!ok) {
            char list[256] = "";
            for (int i = 0; allowed[i]; i++) {
                strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, allowed[i], sizeof list - strlen(list) - 1);
            }
            return api_fail(e, "invalid_params", "%s: unknown member '%s' (expected: %s)", where,
                            key, allowed[0] ? list : "none");
        }
    }
    return 0;
}

/* A finite number. */
int api_get_number(json_t *v, const char *where, double *out, api_err *e)
{
    if (!json_is_number(v))
        return api_fail(e, "invalid_params", "%s: expected a number, got %s", where,
                        api_json_type_word(v));
    double x = json_number_value(v);
    if (!isfinite(x)) return api_fail(e, "invalid_params", "%s: not a finite number", where);
    *out = x;
    return 0;
}

/* An array of exactly n finite numbers; with allow_scalar a single number fills all n. */
int api_get_vector(json_t *v, const char *where, int n, bool allow_scalar, double *out, api_err *e)
{
    if (allow_scalar && json_is_number(v)) {
        double x;
        if (api_get_number(v, where, &x, e)) return -1;
        for (int i = 0; i < n; i++) out[i] = x;
        return 0;
    }
    if (!json_is_array(v))
        return api_fail(e, "invalid_params", "%s: expected %san array of %d numbers, got %s", where,
                        allow_scalar ? "a number or " : "", n, api_json_type_word(v));
    if ((int)json_array_size(v) != n)
        return api_fail(e, "invalid_params", "%s: expected %d values (one per joint), got %zu",
                        where, n, json_array_size(v));
    for (int i = 0; i < n; i++) {
        json_t *x = json_array_get(v, (size_t)i);
        out[i] = json_is_number(x) ? json_number_value(x) : NAN;
        if (isfinite(out[i])) continue;
        char w[128]; /* named only when wrong: a trajectory has up to 8192 x 3 of them */
        snprintf(w, sizeof w, "%s[%d]", where, i);
        return api_get_number(x, w, &out[i], e);
    }
    return 0;
}

double api_loop_period(api_ctx *x)
{
    return 1.0 / ctl_config(x->c)->rate_hz;
}
