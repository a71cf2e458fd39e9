/* lockstep_rig.c — the rig of lockstep_rig.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tests/daemon/lockstep_rig.h"

lockstep_rig *lockstep_rig_load(const char *ini)
{
    lockstep_rig *r = calloc(1, sizeof *r);
    assert_non_null(r);
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(ini, &r->cfg, &rep), 0);
    cfg_report_free(&rep);
    return r;
}

void lockstep_rig_start(lockstep_rig *r, const char *ini, int argc, char **argv)
{
    char err[512] = "";
    r->ls = lockstep_open(&r->cfg, ini, argc, argv, err, sizeof err);
    if (!r->ls) fail_msg("lockstep_open: %s", err);
    dyn_model *m = dyn_model_create(&r->cfg.model, NULL, NULL);
    assert_non_null(m);
    ctl_error e;
    r->c = ctl_create(&r->cfg, m, lockstep_driver(r->ls), &e);
    if (!r->c) fail_msg("ctl_create: %s", e.message);
    if (lockstep_start(r->ls, r->c, &e)) fail_msg("lockstep_start: %s", e.message);
    if (ctl_enable(r->c, NULL, &e)) fail_msg("enable: %s", e.message);
}

void lockstep_rig_free(lockstep_rig *r)
{
    if (!r) return;
    ctl_free(r->c);
    lockstep_free(r->ls);
    free(r);
}

ctl_status lockstep_rig_status(lockstep_rig *r)
{
    ctl_status st;
    ctl_status_get(r->c, &st);
    return st;
}

void lockstep_rig_run_until(lockstep_rig *r, double t)
{
    while (lockstep_time(r->ls) < t) {
        lockstep_tick(r->ls);
        ctl_poll(r->c);
    }
}
