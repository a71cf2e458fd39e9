/*
 * physical.c — what a settings change asks of the arm, checked before it is handed to the loop
 * (config/feasible.h): every joint's gains within the sampled loop's stability bounds and ki
 * only with i_limit; while the arm moves, no change of the law's character; the payload within
 * [arm] max_payload and, with the arm's own gravity, within every joint's torque limit at the
 * present measured pose and over the joint ranges. Main thread only.
 */
#include <stdio.h>

#include "config/feasible.h"
#include "daemon/host/host.h"

int host_change_feasible(ctl *c, const settings_change *ch, const law_params *next,
                         const dyn_payload *payload, ctl_error *err)
{
    const armd_config *cfg = ch->kind == CHANGE_RELOAD ? ch->cand : &c->cfg;
    char why[240];
    ctl_status st;
    ctl_status_get(c, &st);
    if (next) {
        const law_params *now = &c->set->p;
        for (int j = 0; j < c->n; j++) {
            const char *nm = next->name[j];
            if (feas_gains_stable(nm, next->kp[j], next->kd[j], 1 / cfg->rate_hz, why,
                                  sizeof why) ||
                feas_integral(nm, next->ki[j], next->i_limit[j], why, sizeof why)) {
                ctl_error_set(err, "invalid_params", "%s", why);
                return -1;
            }
            const double a[3] = {now->kp[j], now->kd[j], now->ki[j]},
                         b[3] = {next->kp[j], next->kd[j], next->ki[j]};
            if (st.state == CTL_MOVING && feas_gain_character(nm, a, b, why, sizeof why)) {
                ctl_error_set(err, "bad_state",
                              "%s: refused while the arm is moving (change it while holding or "
                              "disabled)",
                              why);
                return -1;
            }
        }
    }
    if (ch->kind == CHANGE_PAYLOAD || (ch->kind == CHANGE_RELOAD && payload->mass > 0)) {
        if (feas_payload(cfg, payload, st.q, why, sizeof why)) {
            ctl_error_set(err, "infeasible", "%s", why);
            return -1;
        }
    }
    return 0;
}
