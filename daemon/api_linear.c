/*
 * api_linear.c — the socket API's move_linear (armd-api(7)): params read here, the line
 * planned and checked by the host (ctl_move_linear), answered like a trajectory ({id,
 * duration}). Main thread.
 */
#include <stdio.h>
#include <string.h>

#include "daemon/api_internal.h"

/* params.key, a number above 0 when present, into *out (0 when absent). */
static int positive(json_t *params, const char *key, double *out, api_err *e)
{
    json_t *v = json_object_get(params, key);
    if (!v || json_is_null(v)) return 0;
    char where[40];
    snprintf(where, sizeof where, "params.%s", key);
    if (api_get_number(v, where, out, e)) return -1;
    if (!(*out > 0)) return api_fail(e, "invalid_params", "%s: must be above 0", where);
    return 0;
}

/* params.key, one of two words, into *second (true for b). */
static int choice(json_t *params, const char *key, const char *a, const char *b, bool *second,
                  api_err *e)
{
    json_t *v = json_object_get(params, key);
    *second = false;
    if (!v) return 0;
    if (json_is_string(v) && strcmp(json_string_value(v), a) == 0) return 0;
    if (json_is_string(v) && strcmp(json_string_value(v), b) == 0) return *second = true, 0;
    return api_fail(e, "invalid_params", "params.%s: expected \"%s\" or \"%s\"", key, a, b);
}

/* move_linear {position | offset, orientation?, frame?, speed?, acceleration?, mode?}
 * -> {id, duration}. */
int api_m_move_linear(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"position", "orientation",  "offset", "frame",
                                       "speed",    "acceleration", "mode",   NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    ctl_linear r = {0};
    json_t *pos = json_object_get(params, "position"), *off = json_object_get(params, "offset");
    json_t *ori = json_object_get(params, "orientation");
    if (!pos == !off)
        return api_fail(e, "invalid_params",
                        "params: give one of position (the goal [x, y, z] in m, base frame) and "
                        "offset ([dx, dy, dz] in m from where the move starts)");
    r.relative = off != NULL;
    if (api_get_vector(pos ? pos : off, pos ? "params.position" : "params.offset", 3, false, r.xyz,
                       e))
        return API_ERROR;
    if (ori) {
        if (!pos)
            return api_fail(e, "invalid_params",
                            "params.orientation: goes with params.position, not with an offset");
        if (api_get_vector(ori, "params.orientation", 4, false, r.quat, e)) return API_ERROR;
        r.has_orientation = true;
    }
    bool tool, append;
    if (choice(params, "frame", "base", "tool", &tool, e) ||
        choice(params, "mode", "replace", "append", &append, e))
        return API_ERROR;
    if (tool && !off)
        return api_fail(e, "invalid_params",
                        "params.frame: \"tool\" is for an offset; a position is in the base frame");
    r.frame = tool ? CTL_FRAME_TOOL : CTL_FRAME_BASE;
    r.append = append;
    if (positive(params, "speed", &r.speed, e) ||
        positive(params, "acceleration", &r.acceleration, e))
        return API_ERROR;
    char what[96];
    snprintf(what, sizeof what, "move_linear (%s %.4g %.4g %.4g m%s)", off ? "offset" : "to",
             r.xyz[0], r.xyz[1], r.xyz[2], tool ? ", tool frame" : "");
    ctl_error ce = {{0}, {0}};
    if (ctl_move_linear(x->c, &r, NULL, NULL, api_reply_to(x, api_build_traj, what), &ce) != 0)
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}
