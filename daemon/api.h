/*
 * api.h — armd's socket API: a UNIX stream socket served on the main thread's libev loop.
 *
 * Framing: one JSON object per line (UTF-8, '\n'), in and out. Requests
 * {"id": any, "method": "name", "params": {...}} get {"id", "result"} or
 * {"id", "error": {"code", "message"}}; a request without "id" gets no reply. Notifications
 * ("telemetry", "state", "fault", "trajectory_done", "collision") carry no id. armd-api(7)
 * documents every method and notification. Bad input gets an error reply and the connection
 * stays open; a line over API_MAX_LINE bytes gets an error and is closed.
 * The loop never waits on the control thread: a command's reply goes out when the control
 * thread has answered (a tick or two later), and that client's next request waits for it.
 * Each client gets a few requests run per loop iteration, so one that floods cannot hold the
 * others (or the signals, timers and watchdog) up. Connections beyond max_clients are
 * restricted (api_internal.h API_RESTRICTED_*): one request, estop, status or disable, then
 * closed; the oldest is evicted for a new one, so a new connection's estop always runs.
 * Output is buffered per client up to API_MAX_OUTPUT bytes with non-blocking writes; a client
 * that does not read (output stuck for stall_timeout, or over API_MAX_OUTPUT) is dropped, and
 * so is one that says nothing for idle_timeout without being subscribed. Nothing here ever
 * waits on a client.
 *
 * Main thread only. The server is a stack of files (api_internal.h lists them): the transport
 * (api.c) at the bottom, telemetry, the methods, and the scheduler (api_sched.c) at the top,
 * which also puts it together: api_open and api_close are there. payload.estimate runs as a
 * procedure of its own (payload_est.h) that the server owns.
 */
#ifndef ARMD_API_H
#define ARMD_API_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#include "daemon/control.h"
#include "daemon/trajectory.h"

#define API_MAX_LINE   (1024 * 1024)     /* longest accepted request line [bytes] */
#define API_MAX_OUTPUT (4 * 1024 * 1024) /* most unsent output per client before dropping it */
#define API_MAX_POINTS TRAJ_MAX_POINTS   /* most waypoints in one trajectory request */

/* Reload hook (the same path as SIGHUP): loads the file again and hands what may change live
 * to the control thread (ctl_reload); the answer (result.changed: "" = nothing changed) goes
 * to `to`. 0, or -1 with err when refused at once (to->fn is then never called). */
typedef int (*api_reload_fn)(void *ctx, const ctl_reply_to *to, ctl_error *err);

/* Lockstep's hook (armd --lockstep): simulated time advances by seconds [s] (in a paused
 * lockstep, these ticks run now); the answer, once it has, goes to `to`. 0, or -1 with err. */
typedef int (*api_sim_run_fn)(void *ctx, double seconds, const ctl_reply_to *to, ctl_error *err);

typedef struct {
    const char *path;     /* socket path */
    unsigned mode;        /* file mode of the socket, e.g. 0660 */
    const char *group;    /* group owning the socket, "" = leave as created */
    int max_clients;      /* connections beyond it are restricted (see above) */
    double stall_timeout; /* [s] a client whose unsent output made no progress this long is
                             dropped (as is one with API_MAX_OUTPUT unsent) */
    double idle_timeout;  /* [s] a client that neither sends a request line nor subscribes
                             this long is dropped (CLOCK_MONOTONIC) */
    const char *version;
    api_reload_fn reload;
    void *reload_ctx;
    api_sim_run_fn sim_run; /* NULL: not a lockstep armd ("sim.run" is refused) */
    void *sim_ctx;
} api_options;

typedef struct api_server api_server;

/* Creates the listening socket (a stale socket file is replaced; a live one is an error) and
 * starts serving on loop. NULL with err filled on failure. */
api_server *api_open(struct ev_loop *loop, ctl *c, const api_options *opt, char *err,
                     size_t err_len);
/* True when a server answers on path (another armd is running there). armd checks it before
 * touching the arm, so that a second instance never disturbs servos another one drives. */
bool api_socket_in_use(const char *path);
/* Closes every client and the listening socket and unlinks the socket file. */
void api_close(api_server *s);
int api_client_count(const api_server *s);
/* Delivers the loop's answers and the telemetry and events now (what the periodic drain does):
 * lockstep calls it after each run of ticks, so that no sample is overwritten unread. */
void api_pump(api_server *s);
/* The most output queued for any subscribed client and not yet sent [bytes]: lockstep holds
 * simulated time while a subscriber is behind, so that it loses nothing. */
size_t api_backlog(const api_server *s);

#endif
