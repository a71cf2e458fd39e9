/*
 * api_sched.c — the top of the socket API's stack (see api_internal.h): the server put together
 * (api_open, api_close), and which client's requests run when. Main thread.
 *
 * api_open opens the transport (api.c) with this file's hooks (input, flushed output, the
 * periodic drain), starts telemetry and the parser thread and creates the payload procedure
 * (payload_est.h), which api_close ends ("armd is stopping") and frees.
 *
 * Each client gets at most API_LINES_PER_TURN requests run per loop iteration (the rest wait in
 * its input buffer, and nothing more is read from it meanwhile, so a flood fills the flooder's
 * own socket and stops there); a command waits for its answer (the control thread's, or the
 * payload procedure's) without holding the loop, and that client's next request waits for it.
 * Signals, timers, the watchdog ping and the other clients are served in between. A line over
 * API_PARSE_INLINE bytes is parsed on the parser thread (api_parse.c), the client waiting for
 * it as for an answer, and runs when it comes back (parsed_cb). Every request gets a reply
 * target back to its client (the method hands it to its command); the answer comes back here
 * and the reply goes out (api_reply).
 */
#include <stdio.h>
#include <string.h>

#include "daemon/api_internal.h"
#include "daemon/log.h"
#include "daemon/payload_est.h"

/* Unsent output bytes of the client. */
static size_t out_pending(const api_client *cl)
{
    return cl->out_len - cl->out_off;
}

/* True when the client has a complete request line it may run now. */
static bool runnable(const api_client *cl)
{
    return !cl->dead && !cl->closing && !cl->waiting && out_pending(cl) <= API_OUTPUT_THROTTLE &&
           cl->in_len > 0 && memchr(cl->in, '\n', cl->in_len) != NULL;
}

/* Makes the work watcher run the clients with requests at the next loop iteration (the
 * transport's flushed hook: a client held back for its unsent output may run again). */
static void sched_kick(api_server *s)
{
    if (!ev_is_active(&s->work)) ev_idle_start(s->loop, &s->work);
}

/* Runs up to API_LINES_PER_TURN of the client's complete request lines (none while it waits
 * for an answer, closes, or has too much unsent output); then reads again or schedules the
 * rest for the next loop iteration. The transport's input hook. */
static void sched_pump(api_client *cl)
{
    size_t start = 0, max_line = cl->restricted ? API_RESTRICTED_LINE : API_MAX_LINE;
    const char *too_long = cl->restricted ? "request line longer than 4 KiB on a connection "
                                            "beyond max_clients; closing"
                                          : "request line longer than 1 MiB; closing";
    for (int ran = 0; ran < API_LINES_PER_TURN && runnable(cl); ran++) {
        char *nl = memchr(cl->in + start, '\n', cl->in_len - start);
        if (!nl) break;
        size_t len = (size_t)(nl - (cl->in + start));
        if (len > max_line) {
            api_client_refuse(cl, "line_too_long", too_long);
            return;
        }
        size_t body = api_request_length(cl->in + start, len);
        if (body > API_PARSE_INLINE && !cl->restricted &&
            api_parser_submit(cl->srv->parser, cl, cl->in + start, body) == 0)
            cl->waiting = true; /* parsed on the parser thread: parsed_cb runs it */
        else
            api_sched_request(cl, cl->in + start, len);
        if (cl->restricted) { /* its one request: nothing more is read; closed once answered */
            cl->served = true;
            cl->in_len = 0;
            ev_io_stop(cl->srv->loop, &cl->rio);
            if (!cl->dead && !cl->waiting) api_client_close_when_flushed(cl);
            return;
        }
        start += len + 1;
        /* runnable() reads from in[0]: move the rest down before asking again */
        memmove(cl->in, cl->in + start, cl->in_len - start);
        cl->in_len -= start;
        start = 0;
    }
    if (cl->dead || cl->closing) return;
    bool line = cl->in_len > 0 && memchr(cl->in, '\n', cl->in_len) != NULL;
    if (line) {
        ev_io_stop(cl->srv->loop, &cl->rio); /* run these first; the peer waits meanwhile */
        if (runnable(cl)) sched_kick(cl->srv);
    } else if (cl->in_len > max_line) {
        api_client_refuse(cl, "line_too_long", too_long);
    } else if (cl->eof) {
        if (!cl->waiting) api_client_close_when_flushed(cl); /* all answered */
    } else {
        api_client_resume_reading(cl);
    }
}

/* The work watcher: a turn for every client with requests; stops once none has any. */
static void work_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)revents;
    api_server *s = w->data;
    bool more = false;
    for (api_client *cl = s->clients; cl; cl = cl->next)
        if (runnable(cl)) sched_pump(cl);
    for (api_client *cl = s->clients; cl && !more; cl = cl->next) more = runnable(cl);
    if (!more) ev_idle_stop(loop, w);
}

/* The control thread answered something: deliver it (command_done). */
static void notify_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    api_server *s = w->data;
    ctl_poll(s->c);
}

/* The answer to a client's command (the reply target of its request): its reply (the result
 * built from the answer, or the error), then its next request may run. A client dropped
 * meanwhile gets nothing; it is freed once it no longer waits. */
static void command_done(void *ctx, int rc, const ctl_error *err, const ctl_result *res)
{
    api_client *cl = ctx;
    json_t *id = cl->wait.id;
    cl->wait.id = NULL;
    cl->waiting = false;
    if (!cl->dead) {
        api_err e = {{0}, {0}};
        json_t *result = NULL;
        if (rc == 0) {
            if (cl->wait.what[0]) log_info("api: client %u: %s", cl->id, cl->wait.what);
            result = cl->wait.build ? cl->wait.build(cl, res) : json_object();
            if (!result) {
                rc = -1;
                snprintf(e.code, sizeof e.code, "internal");
                snprintf(e.message, sizeof e.message, "could not build the reply");
            }
        } else {
            snprintf(e.code, sizeof e.code, "%s", err && err->code[0] ? err->code : "failed");
            snprintf(e.message, sizeof e.message, "%s",
                     err && err->message[0] ? err->message : "command failed");
        }
        api_reply(cl, id, rc, result, &e);
        json_decref(result);
        if (cl->restricted) { /* its one request is answered */
            api_client_close_when_flushed(cl);
        } else {
            sched_kick(cl->srv);
            if (!runnable(cl) && !cl->dead) sched_pump(cl); /* read again, or close at EOF */
        }
    }
    json_decref(id);
}

/* Runs a request parsed on the parser thread (api_parse.c), as api_sched_request runs a line,
 * then frees its tree there. Its client waited for it; one dropped meanwhile gets nothing. */
static void parsed_cb(void *ctx, json_t *req, const json_error_t *je)
{
    api_client *cl = ctx;
    cl->waiting = false;
    if (!cl->dead) {
        ctl_reply_to to = {command_done, cl};
        api_wait w = {NULL, NULL, ""};
        if (api_dispatch_parsed(cl, req, je, &to, &w) == API_PENDING) {
            cl->wait = w;
            cl->waiting = true;
        }
    }
    api_parser_release(cl->srv->parser, req);
    if (!cl->dead && !cl->waiting) {
        sched_kick(cl->srv);
        if (!runnable(cl)) sched_pump(cl); /* read again, or close at EOF */
    }
}

void api_sched_request(api_client *cl, const char *line, size_t len)
{
    ctl_reply_to to = {command_done, cl};
    api_wait w = {NULL, NULL, ""};
    if (api_dispatch(cl, line, len, &to, &w) == API_PENDING) {
        cl->wait = w;
        cl->waiting = true;
    }
}

/* The transport's periodic hook: answers that came in without a wake-up (and timeouts), then
 * telemetry and events out. */
static void sched_periodic(api_server *s)
{
    ctl_poll(s->c);
    api_record_drain(s); /* first: its own cursor, at most a few ticks behind the ring */
    api_telemetry_drain(s);
}

/* The transport's dropped hook: a closed client's subscription and recording end. */
static void sched_dropped(api_client *cl)
{
    api_telemetry_subscribe(cl, 0);
    api_record_dropped(cl);
}

api_server *api_open(struct ev_loop *loop, ctl *c, const api_options *opt, char *err,
                     size_t err_len)
{
    static const api_hooks hooks = {sched_pump, sched_kick, sched_periodic, sched_dropped};
    api_server *s = api_transport_open(loop, opt, &hooks, err, err_len);
    if (!s) return NULL;
    s->c = c;
    snprintf(s->version, sizeof s->version, "%s", opt->version ? opt->version : "");
    s->reload = opt->reload;
    s->reload_ctx = opt->reload_ctx;
    s->sim_run = opt->sim_run;
    s->sim_ctx = opt->sim_ctx;
    s->est = payload_est_create(loop, c);
    s->parser = api_parser_start(loop, parsed_cb);
    if (api_telemetry_start(s) != 0 || !s->est || !s->parser) {
        api_parser_stop(s->parser);
        payload_est_free(s->est);
        api_telemetry_stop(s);
        api_transport_close(s);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    ev_idle_init(&s->work, work_cb);
    s->work.data = s;
    ev_io_init(&s->notify_io, notify_cb, ctl_notify_fd(c), EV_READ);
    s->notify_io.data = s;
    ev_io_start(loop, &s->notify_io);
    return s;
}

void api_close(api_server *s)
{
    if (!s) return;
    payload_est_abort(s->est, "armd is stopping (the arm holds where it is until then)");
    ctl_poll(s->c); /* the answers owed (a stopped control loop's are "stopping" errors) */
    api_parser_stop(s->parser); /* the lines it had not given back run now (parsed_cb) */
    s->parser = NULL;
    for (api_client *cl = s->clients; cl; cl = cl->next) {
        if (!cl->waiting) continue;
        /* an answer that will never come now: the request still gets one, then the close */
        log_warn("api: client %u: no answer came before the stop; replying 'stopping'", cl->id);
        ctl_error e;
        ctl_error_set(&e, "stopping", "armd is stopping before this request was answered");
        command_done(cl, -1, &e, NULL);
    }
    ev_idle_stop(s->loop, &s->work); /* after the answers, which may have started it */
    ev_io_stop(s->loop, &s->notify_io);
    payload_est_free(s->est);
    api_record_close(s);
    api_telemetry_stop(s);
    api_transport_close(s);
}

void api_pump(api_server *s)
{
    sched_periodic(s);
}

size_t api_backlog(const api_server *s)
{
    size_t most = 0;
    for (const api_client *cl = s->clients; cl; cl = cl->next)
        if (cl->subscribed && !cl->dead && out_pending(cl) > most) most = out_pending(cl);
    return most;
}
