/*
 * reload.c — loading the configuration again (see reload.h). Main thread only.
 */
#include "daemon/reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/log.h"

/* One request's own answer: where it goes. */
typedef struct {
    ctl_reply_to to;
} reload_req;

void reload_apply_overrides(const reloader *r, armd_config *cfg)
{
    if (r->port_override)
        snprintf(cfg->driver.port, sizeof cfg->driver.port, "%s", r->port_override);
    if (r->socket_override)
        snprintf(cfg->socket.path, sizeof cfg->socket.path, "%s", r->socket_override);
    if (!cfg->socket.path[0] && r->default_socket)
        snprintf(cfg->socket.path, sizeof cfg->socket.path, "%s", r->default_socket);
}

void reload_log_report(const cfg_report *rep, const char *path)
{
    for (int i = 0; i < rep->n_lines; i++)
        log_msg(strstr(rep->lines[i], ": warning: ") ? LOG_PRIO_WARNING : LOG_PRIO_ERR, "%s",
                rep->lines[i]);
    log_msg(rep->n_errors ? LOG_PRIO_ERR : LOG_PRIO_INFO, "%d errors, %d warnings in %s",
            rep->n_errors, rep->n_warnings, path);
}

/* The host's answer to one reload: logged, then passed on to that request's caller. */
static void reload_done(void *ctx, int rc, const ctl_error *err, const ctl_result *res)
{
    reload_req *q = ctx;
    if (rc == 0)
        log_notice("reload: %s", res->changed[0] ? res->changed : "nothing changed");
    else
        log_err("reload refused: %s", err->message);
    if (q->to.fn) q->to.fn(q->to.ctx, rc, err, res);
    free(q);
}

int reload_request(void *ctx, const ctl_reply_to *to, ctl_error *err)
{
    reloader *r = ctx;
    armd_config *cand = calloc(1, sizeof *cand);
    reload_req *q = malloc(sizeof *q);
    if (!cand || !q) {
        free(cand);
        free(q);
        ctl_error_set(err, "internal", "out of memory");
        return -1;
    }
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(r->config_path, cand, &rep);
    if (rep.n_lines || errors) reload_log_report(&rep, r->config_path);
    int rc = -1;
    if (errors) {
        const char *first = "?"; /* the first error, not a warning before it */
        for (int i = rep.n_lines - 1; i >= 0; i--)
            if (!strstr(rep.lines[i], ": warning: ")) first = rep.lines[i];
        ctl_error_set(err, "invalid_config",
                      "%d errors in %s (first: %.150s); kept the running configuration", errors,
                      r->config_path, first);
    } else {
        reload_apply_overrides(r, cand);
        q->to = *to;
        ctl_reply_to mine = {reload_done, q};
        rc = ctl_reload(r->c, cand, NULL, 0, &mine, err);
    }
    if (rc) {
        log_err("reload refused: %s", err->message);
        free(q);
    }
    cfg_report_free(&rep);
    free(cand);
    return rc;
}
