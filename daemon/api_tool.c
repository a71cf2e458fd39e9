/*
 * api_tool.c — the socket API's tool methods (tool.move, tool.grasp, tool.release, tool.stop;
 * armd-api(7)) and the tool's part of status, info and telemetry: params read here, checked
 * against [tool NAME] by the host (ctl_tool) and answered by the loop when the command ends.
 * Main thread.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "daemon/api_internal.h"

/* The reply of a tool command: {outcome, opening, force}. */
static json_t *build_tool(api_client *cl, const ctl_result *res)
{
    (void)cl;
    return json_pack("{s:s, s:o, s:o}", "outcome", ctl_tool_outcome_name(res->tool.outcome),
                     "opening", api_json_number(res->tool.opening), "force",
                     api_json_number(res->tool.force));
}

/* params.key as a number into *out when present (finite, > 0 where positive); 0 = absent. */
static int opt_number(json_t *params, const char *key, bool positive, double *out, api_err *e)
{
    json_t *v = json_object_get(params, key);
    if (!v || json_is_null(v)) return 0;
    char where[48];
    snprintf(where, sizeof where, "params.%s", key);
    if (api_get_number(v, where, out, e)) return -1;
    if (positive && !(*out > 0)) return api_fail(e, "invalid_params", "%s: must be > 0", where);
    if (!positive && !(*out >= 0)) return api_fail(e, "invalid_params", "%s: must be >= 0", where);
    return 0;
}

/* One tool command from its params (keys: the ones it takes); "what" names it in the log. */
static int tool_method(api_ctx *x, json_t *params, ctl_tool_kind kind, const char *const *keys,
                       const char *target, const char *what, api_err *e)
{
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    ctl_tool_cmd k = {.kind = kind, .eps_inner = -1, .eps_outer = -1};
    if (target) {
        json_t *v = json_object_get(params, target);
        char where[32];
        snprintf(where, sizeof where, "params.%s", target);
        if (!v) return api_fail(e, "invalid_params", "%s: missing", where);
        if (api_get_number(v, where, &k.opening, e)) return API_ERROR;
    }
    if (opt_number(params, "speed", true, &k.speed, e) ||
        opt_number(params, "force", true, &k.force, e) ||
        opt_number(params, "epsilon_inner", false, &k.eps_inner, e) ||
        opt_number(params, "epsilon_outer", false, &k.eps_outer, e))
        return API_ERROR;
    ctl_error ce = {{0}, {0}};
    if (ctl_tool(x->c, &k, api_reply_to(x, build_tool, what), &ce) != 0)
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}

int api_m_tool_move(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"opening", "speed", NULL};
    return tool_method(x, params, CTL_TOOL_MOVE, keys, "opening", "tool.move", e);
}

int api_m_tool_grasp(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"width",         "force",         "speed",
                                       "epsilon_inner", "epsilon_outer", NULL};
    return tool_method(x, params, CTL_TOOL_GRASP, keys, "width", "tool.grasp", e);
}

int api_m_tool_release(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const char *const keys[] = {"speed", NULL};
    return tool_method(x, params, CTL_TOOL_RELEASE, keys, NULL, "tool.release", e);
}

int api_m_tool_stop(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    return tool_method(x, params, CTL_TOOL_IDLE, api_no_keys, NULL, NULL, e);
}

json_t *api_tool_status_json(const armd_config *cfg, const ctl_tool_status *t)
{
    if (!cfg->tool.present) return json_null();
    json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:b, s:b, s:s, s:b}", "name", cfg->tool.name,
                          "opening", api_json_number(t->opening), "speed",
                          api_json_number(t->speed), "force", api_json_number(t->force), "current",
                          api_json_number(t->current), "moving", t->moving, "stalled", t->stalled,
                          "command", ctl_tool_kind_name(t->command), "grasped", t->grasped);
    if (j) {
        json_object_set_new(j, "lower", api_json_number(cfg->tool.lower));
        json_object_set_new(j, "upper", api_json_number(cfg->tool.upper));
        json_object_set_new(j, "tolerance", api_json_number(cfg->tool.tolerance));
    }
    return j;
}

json_t *api_tool_info_json(const armd_config *cfg)
{
    const cfg_tool *t = &cfg->tool;
    if (!t->present) return json_null();
    return json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "name", t->name, "id", t->id,
                     "lower", api_json_number(t->lower), "upper", api_json_number(t->upper),
                     "velocity", api_json_number(t->velocity), "max_force",
                     api_json_number(t->max_force), "force", api_json_number(t->force), "speed",
                     api_json_number(t->speed));
}
