/*
 * api_internal.h — what the socket API's files share: the client and server structs and each
 * file's functions, grouped under per-file dividers from the bottom of the stack up. Everything
 * here runs on the main thread (the libev loop), except api_parse.c's thread.
 *
 * Files, one job each, each calling only the files listed before it (and the control side,
 * control.h); a lower file reaches a higher one only through the hooks api_open installs:
 *   api_json.c     the text of a JSON value: one line, reals in their shortest exact form
 *   api_parse.c    the parser thread: long request lines parsed, their trees freed, off the
 *                  main thread (its one other thread; all else here is the main thread's)
 *   api.c          the transport: listening socket, accepting, reading, bounded output,
 *                  dropping slow, idle or vanished clients, the restricted connections
 *                  beyond max_clients (evicting the oldest); calls the
 *                  api_hooks for input, flushed output and the periodic drain
 *   api_params.c   checking a request's params, the reply target a method hands to its
 *                  command (api_reply_to), the JSON forms of numbers and vectors
 *   telemetry.c    samples and events out to subscribers (its own telemetry cursor)
 *   api_payload.c  the payload methods; payload.estimate starts the payload procedure
 *                  (payload_est.c, payload_est.h: control.h only, no socket) with the
 *                  client's reply target
 *   api_record.c   the recording methods (record.start, record.fetch, record.stop): the
 *                  server's one recording (recorder.h: no socket), its owner and the drain
 *                  that feeds it at the loop rate from its own telemetry cursor
 *   api_methods.c  parsing a request line, the method table, the methods, the replies
 *   api_sched.c    the server put together (api_open, api_close: the transport with its hooks,
 *                  telemetry, the payload procedure) and which client's requests run when: a
 *                  few lines per client per loop iteration, one command waiting for its answer
 *                  per client, the reply target for each request, answers (ctl_poll) back to
 *                  the waiting client
 */
#ifndef ARMD_API_INTERNAL_H
#define ARMD_API_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "daemon/api.h"

#define API_LINES_PER_TURN 8 /* requests run per client per loop iteration */
/* a client whose unsent output is above this gets no more requests run until it reads */
#define API_OUTPUT_THROTTLE (256 * 1024)
/* Connections beyond max_clients are restricted (api.c): each is served for its first request
 * line only, and only for estop, status or disable, then closed once the reply is out. */
#define API_RESTRICTED_MAX  32   /* most restricted connections at once (the oldest is evicted) */
#define API_RESTRICTED_S    1.0  /* [s] one without a complete line this long is closed */
#define API_RESTRICTED_LINE 4096 /* [bytes] longest request line on a restricted connection */

struct api_client;
struct api_server;
/* Builds a command's result from its answer (NULL: out of memory). */
typedef json_t *(*api_build_fn)(struct api_client *cl, const ctl_result *res);

/* A request whose reply waits for its command's answer (the client's next request waits for
 * it, so replies keep the order of the requests). api_sched.c's; api_dispatch fills it. */
typedef struct {
    json_t *id;         /* the request's id, a reference (NULL: no reply wanted) */
    api_build_fn build; /* its result from the answer (NULL: {}) */
    char what[96];      /* what to log once it succeeded ("" = nothing) */
} api_wait;

typedef struct api_client {
    struct api_server *srv;
    unsigned id; /* connection number, for the log */
    int fd;
    ev_io rio, wio;
    char *in;
    size_t in_len, in_cap; /* received, not yet run: in[0 .. in_len) */
    char *out;
    size_t out_off, out_len, out_cap; /* unsent bytes are out[out_off .. out_len) */
    bool eof;                         /* the peer sent everything it will */
    bool closing;                     /* stop reading; close once the output is flushed */
    bool dead;                        /* closed; freed by api_reap() unless waiting */
    bool restricted; /* beyond max_clients: one request, estop, status or disable */
    bool served;     /* restricted: its request has run; closed once answered */
    /* CLOCK_MONOTONIC times [s] (api_mono_now: a wall clock step moves no deadline) */
    double connected;    /* accepted */
    double out_progress; /* the output queue last moved (or started) */
    double last_input;   /* the last complete request line arrived (or the connect) */
    bool subscribed;     /* telemetry.c's: gets telemetry and events ... */
    unsigned decimation; /* ... one sample per decimation loop periods ... */
    uint64_t window;     /* ... the last window of them that got its sample */
    bool waiting;        /* api_sched.c's: a command's answer, or its request line's parse, is owed
                          * (the transport keeps the client) */
    api_wait wait;
    struct api_client *next;
} api_client;

/* What the transport calls above itself (installed by api_open). */
typedef struct {
    void (*input)(api_client *cl);          /* new input or its end: run what is complete */
    void (*flushed)(struct api_server *s);  /* a client's output queue emptied */
    void (*periodic)(struct api_server *s); /* every API_DRAIN_S, before the idle checks */
    void (*dropped)(api_client *cl);        /* a client is closed: forget what it had above */
} api_hooks;

struct api_server {
    struct ev_loop *loop;
    ctl *c;
    /* the transport (api.c) */
    int fd;
    ev_io accept_io;
    ev_timer drain;
    api_hooks hooks;
    char path[108];
    int max_clients, n_clients; /* n_clients: open connections within max_clients */
    int n_restricted;           /* open restricted ones (beyond it), at most API_RESTRICTED_MAX */
    double stall_timeout, idle_timeout; /* [s], see api_options */
    unsigned next_client_id;
    api_client *clients;
    /* the scheduler (api_sched.c) */
    ev_io notify_io;           /* the control thread answered something: ctl_poll */
    ev_idle work;              /* clients have requests to run: a few each per loop iteration */
    struct api_parser *parser; /* long request lines (api_parse.c) */
    /* telemetry (telemetry.c) */
    int n_subscribers;
    uint64_t sample_cursor, event_cursor;
    ctl_sample *samples;
    int samples_cap;
    ctl_event *events;
    int events_cap;
    /* the methods (api_methods.c) */
    char version[32];
    api_reload_fn reload;
    void *reload_ctx;
    api_sim_run_fn sim_run;
    void *sim_ctx;
    /* the payload procedure (payload_est.h): made by api_open, started by payload.estimate
     * (api_payload.c), ended and freed by api_close */
    struct payload_est *est;
    /* the recording (api_record.c): NULL, or the one its owner started and fetches */
    struct recorder *rec;
    api_client *rec_owner;
    uint64_t rec_cursor;  /* its telemetry cursor (ctl_samples_read) */
    ctl_sample *rec_read; /* RECORD_READ samples: the drain's buffer */
};

/* An error for the reply: code word and message. */
typedef struct {
    char code[32];
    char message[512];
} api_err;

/* ----------------------------------------------------------------------- api_json.c */
/* The text of v as one compact line ending in '\n' (its length in *len, without the
 * terminating 0), each real in the fewest digits (15 to 17) that read back as the same double.
 * Malloc'd; NULL when memory is short. */
char *api_json_line(const json_t *v, size_t *len);

/* ----------------------------------------------------------------------- api_parse.c */
/* A request line longer than this [bytes] is parsed on the parser thread (parsing costs some
 * 40 ns a byte: the main thread stays free for the other clients and every estop). */
#define API_PARSE_INLINE (16 * 1024)
typedef struct api_parser api_parser;
/* A line parsed, back on the main thread: req its tree (NULL: malformed, *je says where), now
 * the callee's (api_parser_release frees it). */
typedef void (*api_parsed_fn)(void *ctx, json_t *req, const json_error_t *je);
/* Starts the parser thread; done gets each parsed line, one per loop iteration. NULL when
 * memory or threads are short. */
api_parser *api_parser_start(struct ev_loop *loop, api_parsed_fn done);
/* Parses a copy of line (len bytes) for ctx; done(ctx, ...) follows. 0, or -1 when memory is
 * short or the thread has ended (nothing was queued: parse it on the main thread). */
int api_parser_submit(api_parser *p, void *ctx, const char *line, size_t len);
/* Frees a tree (json_decref) on the parser thread. */
void api_parser_release(api_parser *p, json_t *tree);
/* Ends the thread once it has parsed every line queued, then hands each one not yet
 * delivered to done (so every request gets its answer); frees the parser. */
void api_parser_stop(api_parser *p);

/* ---------------------------------------------------------------------------- api.c */
/* Creates the listening socket (see api_open) and starts accepting; the server's other parts
 * are left zero for api_open to fill. NULL with err on failure. */
struct api_server *api_transport_open(struct ev_loop *loop, const api_options *opt,
                                      const api_hooks *hooks, char *err, size_t err_len);
/* Writes what it can to every client (calling no hook any more), closes and frees them all,
 * stops the listening socket and the drain timer, unlinks the socket file and frees the server.
 * Whatever a client waited for must be released first (api_close does). */
void api_transport_close(struct api_server *s);
/* CLOCK_MONOTONIC now [s]: what the API's deadlines (idle, stall, restricted) are measured on;
 * libev's ev_now() follows the wall clock. */
double api_mono_now(void);
/* Queues bytes for the client (dropping it when its queue is over API_MAX_OUTPUT). */
void api_client_send(api_client *cl, const char *data, size_t len);
/* Queues one JSON value as a line. Takes no reference. */
void api_client_send_json(api_client *cl, json_t *msg);
/* Closes the client now (freed later by api_reap, once no answer is outstanding). */
void api_client_drop(api_client *cl, const char *why);
/* Stops reading from the client and closes it once its output is flushed. */
void api_client_close_when_flushed(api_client *cl);
/* Replies with an error that is not tied to a request id, then closes once flushed. */
void api_client_refuse(api_client *cl, const char *code, const char *message);
/* Reads from the client again (its input has room and nothing blocks it). */
void api_client_resume_reading(api_client *cl);

/* ----------------------------------------------------------------------- api_params.c */
/* What a method gets: the client, its server, the control thread, the number of joints, and
 * the scheduler's reply target for a command's answer (take it with api_reply_to). */
typedef struct {
    api_client *cl;
    struct api_server *srv;
    ctl *c;
    int n; /* joints */
    ctl_reply_to reply;
    api_wait wait; /* build and what: set by api_reply_to */
} api_ctx;
typedef int (*api_method_fn)(api_ctx *x, json_t *params, json_t **result, api_err *e);
/* A method's outcome: a result now, an error now, or the answer later (waiting). */
enum { API_ERROR = -1, API_DONE = 0, API_PENDING = 1 };
/* Where the method's command sends its answer (the method then returns API_PENDING): back to
 * the client, whose reply `build` makes (NULL: {}); what names the command in the log once it
 * succeeded (NULL: nothing). */
const ctl_reply_to *api_reply_to(api_ctx *x, api_build_fn build, const char *what);
/* Fills *e (code, printf-style message) and returns -1 (API_ERROR). */
int api_fail(api_err *e, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copies a control-thread error into *e; returns -1. */
int api_fail_ctl(api_err *e, const ctl_error *ce);
/* "a number", "an array", ... for messages. */
const char *api_json_type_word(const json_t *v);
/* Rejects members of obj not in allowed (NULL-terminated; api_no_keys: none); where names obj. */
int api_check_keys(json_t *obj, const char *const *allowed, const char *where, api_err *e);
extern const char *const api_no_keys[];
/* A finite number. */
int api_get_number(json_t *v, const char *where, double *out, api_err *e);
/* An array of exactly n finite numbers; with allow_scalar a single number fills all n. */
int api_get_vector(json_t *v, const char *where, int n, bool allow_scalar, double *out, api_err *e);
/* The loop period [s]: the shortest waypoint spacing and move duration. */
double api_loop_period(api_ctx *x);
/* JSON forms: a vector of n doubles; non-finite values become null. */
json_t *api_json_vector(const double *v, int n);
json_t *api_json_number(double x);
/* A timestamp [s] rounded to the microsecond (non-finite: null): printed whole by
 * api_json_line, e.g. a wall clock's 1764294000.123456. */
json_t *api_json_stamp(double t);

/* ------------------------------------------------------------------------- telemetry.c */
/* Allocates telemetry's buffers (0, or -1 when memory is short); _stop frees them. */
int api_telemetry_start(struct api_server *s);
void api_telemetry_stop(struct api_server *s);
/* Drains the control thread's rings and fans samples and events out to the subscribers. */
void api_telemetry_drain(struct api_server *s);
/* Marks a client (un)subscribed; rate_hz <= 0 unsubscribes, else it is clamped to [1, the loop
 * rate]. Returns the effective rate (the loop rate over an integer decimation). */
double api_telemetry_subscribe(api_client *cl, double rate_hz);
/* The method name of notification i: "telemetry", then each event type's (see event_json),
 * NULL past the last: what armd-api(7) is checked against. */
const char *api_notification_name(size_t i);
/* The clocks of control time t [s]: *mono its CLOCK_MONOTONIC time [s], *wall its
 * CLOCK_REALTIME time [s since the epoch] (the realtime clock's present offset from the
 * monotonic one applied: a clock step moves later stamps, never the monotonic ones). In
 * lockstep both are the simulated clock (deterministic telemetry). */
void api_clock_stamps(ctl *c, double t, double *mono, double *wall);

/* ---------------------------------------------------------------------- api_payload.c */
/* payload.get, payload.set, payload.estimate (see armd-api(7)). */
int api_m_payload_get(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_payload_set(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_payload_estimate(api_ctx *x, json_t *params, json_t **result, api_err *e);

/* ----------------------------------------------------------------------- api_linear.c */
/* move_linear (see armd-api(7)); its answer is a trajectory's, built by api_methods.c. */
int api_m_move_linear(api_ctx *x, json_t *params, json_t **result, api_err *e);
/* api_impedance.c */
int api_m_impedance_get(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_impedance_set(api_ctx *x, json_t *params, json_t **result, api_err *e);
json_t *api_build_traj(api_client *cl, const ctl_result *res);

/* ------------------------------------------------------------------------- api_tool.c */
/* tool.move, tool.grasp, tool.release, tool.stop (see armd-api(7)). */
int api_m_tool_move(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_tool_grasp(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_tool_release(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_tool_stop(api_ctx *x, json_t *params, json_t **result, api_err *e);
/* The tool in status ({name, opening, speed, force, current, moving, stalled, command, grasped,
 * lower, upper, tolerance}) and in info ({name, id, lower, upper, velocity, max_force, force,
 * speed}); null without a tool. */
json_t *api_tool_status_json(const armd_config *cfg, const ctl_tool_status *t);
json_t *api_tool_info_json(const armd_config *cfg);

/* ----------------------------------------------------------------------- api_record.c */
/* record.start, record.fetch, record.stop (see armd-api(7)). */
int api_m_record_start(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_record_fetch(api_ctx *x, json_t *params, json_t **result, api_err *e);
int api_m_record_stop(api_ctx *x, json_t *params, json_t **result, api_err *e);
/* Copies the samples published since the last drain into the recording (none running:
 * nothing); the periodic hook's, every API_DRAIN_S. */
void api_record_drain(struct api_server *s);
/* A closed client's recording is freed. */
void api_record_dropped(api_client *cl);
/* Frees the recording (api_close). */
void api_record_close(struct api_server *s);

/* ----------------------------------------------------------------------- api_methods.c */
/* The length of a request line without its trailing blanks (and '\r'); 0 for a blank one. */
size_t api_request_length(const char *line, size_t len);
/* Runs one request line for a client: replies now, or (API_PENDING) leaves in *w what the
 * reply waits for, the command's answer going to reply (the scheduler's). Returns the method's
 * outcome (API_ERROR for a line that is no valid request, 0 for a blank one). */
int api_dispatch(api_client *cl, const char *line, size_t len, const ctl_reply_to *reply,
                 api_wait *w);
/* The same for a line parsed already: req its tree (NULL: malformed, je says where), which the
 * caller frees afterwards (a reference to its id is kept while the reply waits). */
int api_dispatch_parsed(api_client *cl, json_t *req, const json_error_t *je,
                        const ctl_reply_to *reply, api_wait *w);
/* The name of the method table's entry i (NULL past its end) and, in *restricted_ok (unless
 * NULL), whether a restricted connection may call it: what armd-api(7) is checked against. */
const char *api_method_name(size_t i, bool *restricted_ok);
/* Sends {"id", "result"} or {"id", "error"} for a finished request (id NULL: no reply). */
void api_reply(api_client *cl, json_t *id, int rc, json_t *result, const api_err *e);

/* ------------------------------------------------------------------------- api_sched.c */
/* Runs one request line for the client (api_dispatch with a reply target back to it); a
 * command's reply, and the client's next request, wait for its answer. api_open and api_close
 * (api.h) are here too. */
void api_sched_request(api_client *cl, const char *line, size_t len);

#endif
