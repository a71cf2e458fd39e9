/*
 * reload.h — loading the configuration again (SIGHUP, the socket's "reload"): the file is
 * parsed and validated here, off the real-time path, the report and the outcome logged, and
 * the live keys handed to the host (ctl_reload), which switches them between two ticks. Every
 * request gets its own answer, however many come at once (they are applied one after the
 * other). Also the command-line overrides that must survive a reload. Main thread only.
 */
#ifndef ARMD_RELOAD_H
#define ARMD_RELOAD_H

#include "config/config.h"
#include "daemon/control.h"

typedef struct {
    const char *config_path;
    const char *socket_override, *port_override; /* NULL: none */
    const char *default_socket; /* when neither the file nor an override names one */
    ctl *c;                     /* set once the controller exists */
} reloader;

/* Applies the command-line overrides (port, socket) to a configuration just loaded. */
void reload_apply_overrides(const reloader *r, armd_config *cfg);
/* Logs every line of a configuration report at its priority, then its summary. */
void reload_log_report(const cfg_report *rep, const char *path);
/* Loads the file again and hands it to the host; the answer (result.changed: "" = nothing
 * changed) goes to `to` and to the log. 0, or -1 with err when refused at once (to->fn is then
 * never called). The signature of api_reload_fn (ctx: the reloader). */
int reload_request(void *ctx, const ctl_reply_to *to, ctl_error *err);

#endif
