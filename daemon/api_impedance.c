/*
 * api_impedance.c — the socket API's impedance.get and impedance.set (armd-api(7)): the
 * cartesian_impedance law's spring and damper, read and replaced between two ticks like the
 * gains (ctl_impedance_set checks them). Main thread.
 */
#include <stdio.h>
#include <string.h>

#include "daemon/api_internal.h"

/* {translational_stiffness[3], rotational_stiffness[3], damping_ratio[6], guide_damping[2],
 * controller}: the block in use. */
static json_t *impedance_json(ctl *c)
{
    cfg_impedance m;
    ctl_impedance_get(c, &m);
    ctl_status st;
    ctl_status_get(c, &st);
    return json_pack(
        "{s:o, s:o, s:o, s:o, s:s}", "translational_stiffness", api_json_vector(m.stiffness, 3),
        "rotational_stiffness", api_json_vector(m.stiffness + 3, 3), "damping_ratio",
        api_json_vector(m.damping_ratio, 6), "guide_damping", api_json_vector(m.guide_damping, 2),
        "controller", cfg_controller_name(st.controller));
}

static json_t *build_impedance(api_client *cl, const ctl_result *res)
{
    (void)res;
    return impedance_json(cl->srv->c);
}

int api_m_impedance_get(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    if (api_check_keys(params, api_no_keys, "params", e)) return API_ERROR;
    *result = impedance_json(x->c);
    return API_DONE;
}

/* impedance.set {translational_stiffness?, rotational_stiffness?, damping_ratio?,
 * guide_damping?}: each one number for all its axes or one per axis (guide_damping: two), within
 * the config loader's bounds; what is not given stays. */
int api_m_impedance_set(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    (void)result;
    static const struct {
        const char *key;
        int n, at; /* values, and where they go in the block below */
        bool scalar;
        double max;
    } k[] = {{"translational_stiffness", 3, 0, true, CTL_STIFFNESS_MAX},
             {"rotational_stiffness", 3, 3, true, CTL_ROT_STIFFNESS_MAX},
             {"damping_ratio", 6, 6, true, CTL_DAMPING_RATIO_MAX},
             {"guide_damping", 2, 12, false, CTL_GUIDE_DAMPING_MAX}};
    static const char *const keys[] = {"translational_stiffness", "rotational_stiffness",
                                       "damping_ratio", "guide_damping", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    cfg_impedance m;
    ctl_impedance_get(x->c, &m);
    double v[14];
    memcpy(v, m.stiffness, sizeof m.stiffness);
    memcpy(v + 6, m.damping_ratio, sizeof m.damping_ratio);
    memcpy(v + 12, m.guide_damping, sizeof m.guide_damping);
    int given = 0;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        json_t *j = json_object_get(params, k[i].key);
        if (!j) continue;
        char where[48];
        snprintf(where, sizeof where, "params.%s", k[i].key);
        double *out = v + k[i].at;
        if (api_get_vector(j, where, k[i].n, k[i].scalar, out, e)) return API_ERROR;
        for (int a = 0; a < k[i].n; a++)
            if (!(out[a] >= 0 && out[a] <= k[i].max))
                return api_fail(e, "invalid_params", "%s[%d]: %g is outside [0, %g]", where, a,
                                out[a], k[i].max);
        given++;
    }
    if (!given)
        return api_fail(e, "invalid_params",
                        "params: give at least one of translational_stiffness, "
                        "rotational_stiffness, damping_ratio, guide_damping");
    memcpy(m.stiffness, v, sizeof m.stiffness);
    memcpy(m.damping_ratio, v + 6, sizeof m.damping_ratio);
    memcpy(m.guide_damping, v + 12, sizeof m.guide_damping);
    ctl_error ce = {{0}, {0}};
    if (ctl_impedance_set(x->c, &m, api_reply_to(x, build_impedance, "impedance.set"), &ce))
        return api_fail_ctl(e, &ce);
    return API_PENDING;
}
