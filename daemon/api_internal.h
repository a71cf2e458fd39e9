/*
 * api_internal.h — what the socket API's files share: the client and server structs, output
 * queueing, and the method table (api_methods.c) and telemetry fan-out (telemetry.c).
 */
#ifndef ARMD_API_INTERNAL_H
#define ARMD_API_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "daemon/api.h"

typedef struct api_client {
    struct api_server *srv;
    unsigned id; /* connection number, for the log */
    int fd;
    ev_io rio, wio;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_off, out_len, out_cap; /* unsent bytes are out[out_off .. out_len) */
    bool closing;                     /* stop reading; close once the output is flushed */
    bool dead;                        /* closed; freed by api_reap() */
    bool subscribed;
    ev_tstamp out_progress; /* loop time the output queue last moved (or started) */
    ev_tstamp last_input;   /* loop time of the last bytes received (or the connect) */
    unsigned decimation;    /* telemetry every decimation-th tick */
    struct api_client *next;
} api_client;

struct api_server {
    struct ev_loop *loop;
    ctl *c;
    int fd;
    ev_io accept_io;
    ev_timer drain;
    char path[108];
    int max_clients, n_clients, n_subscribers;
    double stall_timeout, idle_timeout; /* [s], see api_options */
    unsigned next_client_id;
    api_client *clients;
    char version[32];
    api_reload_fn reload;
    void *reload_ctx;
    uint64_t sample_cursor, event_cursor;
    ctl_sample *samples;
    int samples_cap;
    ctl_event *events;
    int events_cap;
};

/* An error for the reply: code word and message. */
typedef struct {
    char code[32];
    char message[512];
} api_err;

/* Queues bytes for the client (dropping it when its queue is over API_MAX_OUTPUT). */
void api_client_send(api_client *cl, const char *data, size_t len);
/* Queues one JSON value as a line. Takes no reference. */
void api_client_send_json(api_client *cl, json_t *msg);
/* Closes the client now (freed later by api_reap). */
void api_client_drop(api_client *cl, const char *why);

/* Runs one request line for a client and queues the reply (if any). */
void api_dispatch(api_client *cl, const char *line, size_t len);

/* Telemetry and events: drains the control thread's rings and fans them out to subscribers. */
void api_telemetry_drain(struct api_server *s);
/* Marks a client (un)subscribed; rate_hz <= 0 unsubscribes. Returns the effective rate. */
double api_telemetry_subscribe(api_client *cl, double rate_hz);

/* JSON helpers (api_methods.c). A vector of n doubles; non-finite values become null. */
json_t *api_json_vector(const double *v, int n);
json_t *api_json_number(double x);

#endif
