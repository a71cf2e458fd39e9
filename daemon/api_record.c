/*
 * api_record.c — the socket API's recording methods (armd-api(7)): record.start,
 * record.fetch, record.stop. The recording itself is recorder.h's; this file owns the one
 * recording of the server, its owner (the client that started it: only it fetches and stops
 * it, and its disconnect frees it), the telemetry cursor that feeds it and the drain the
 * transport's periodic hook runs (every API_DRAIN_S), so the recording keeps the loop's rate
 * whatever the owner reads meanwhile. Main thread.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_internal.h"
#include "daemon/recorder.h"

#define RECORD_READ     64   /* samples per ctl_samples_read */
#define RECORD_PAGE     500  /* record.fetch's default page [samples] */
#define RECORD_PAGE_MAX 2000 /* and its largest */

/* The default fields: what the arm did and what it was told. */
#define RECORD_DEFAULT_FIELDS                                                                      \
    ((1u << REC_Q) | (1u << REC_QD) | (1u << REC_TAU) | (1u << REC_TAU_MEAS) | (1u << REC_Q_DES) | \
     (1u << REC_QD_DES))

/* Frees the server's recording (none: nothing). */
static void record_free(api_server *s)
{
    recorder_free(s->rec);
    free(s->rec_read);
    s->rec = NULL;
    s->rec_read = NULL;
    s->rec_owner = NULL;
}

void api_record_drain(api_server *s)
{
    if (!s->rec || recorder_end(s->rec)) return;
    for (;;) {
        int k = ctl_samples_read(s->c, &s->rec_cursor, s->rec_read, RECORD_READ);
        recorder_add(s->rec, s->rec_read, k);
        if (k < RECORD_READ || recorder_end(s->rec)) return;
    }
}

void api_record_dropped(api_client *cl)
{
    if (cl->srv->rec_owner == cl) record_free(cl->srv);
}

void api_record_close(api_server *s)
{
    record_free(s);
}

/* The recording, when cl owns one; else NULL with the error. */
static recorder *owned(api_ctx *x, api_err *e)
{
    if (x->srv->rec && x->srv->rec_owner == x->cl) return x->srv->rec;
    api_fail(e, "no_recording", "this connection has no recording: record.start first");
    return NULL;
}

/* {samples, capacity, duration, lost, done, end, rate_hz, fields}: where the recording is. */
static json_t *record_state(api_ctx *x, const recorder *r)
{
    json_t *fields = json_array();
    for (int f = 0; f < REC_N_FIELDS; f++)
        if ((recorder_fields(r) >> f) & 1)
            json_array_append_new(fields, json_string(recorder_field_name((rec_field)f)));
    const char *end = recorder_end(r);
    return json_pack("{s:I, s:I, s:f, s:I, s:b, s:s?, s:f, s:o}", "samples",
                     (json_int_t)recorder_count(r), "capacity", (json_int_t)recorder_capacity(r),
                     "duration", recorder_duration(r), "lost", (json_int_t)recorder_lost(r), "done",
                     end != NULL, "end", end, "rate_hz", ctl_config(x->c)->rate_hz, "fields",
                     fields);
}

/* record.start {duration, fields?} -> the state (record_state): records every sample from the
 * next one on, for duration [s] of control time, the fields named (default: q, qd, tau,
 * tau_meas, q_des, qd_des). Replaces this connection's last recording; refused while another
 * connection owns one. */
int api_m_record_start(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"duration", "fields", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    api_server *s = x->srv;
    if (s->rec && s->rec_owner != x->cl)
        return api_fail(e, "busy",
                        "client %u owns the recording (until it disconnects or record.stop "
                        "{\"discard\": true})",
                        s->rec_owner->id);
    json_t *jd = json_object_get(params, "duration");
    double duration;
    if (!jd) return api_fail(e, "invalid_params", "params.duration: missing (seconds)");
    if (api_get_number(jd, "params.duration", &duration, e)) return API_ERROR;
    unsigned fields = RECORD_DEFAULT_FIELDS;
    json_t *jf = json_object_get(params, "fields");
    if (jf) {
        if (!json_is_array(jf) || json_array_size(jf) == 0)
            return api_fail(e, "invalid_params",
                            "params.fields: expected a non-empty array of names, got %s",
                            api_json_type_word(jf));
        fields = 0;
        for (size_t i = 0; i < json_array_size(jf); i++) {
            const char *name = json_string_value(json_array_get(jf, i));
            int f = name ? recorder_field_of(name) : -1;
            if (f < 0)
                return api_fail(e, "invalid_params",
                                "params.fields[%zu]: not one of q, qd, tau, tau_meas, q_des, "
                                "qd_des, ext",
                                i);
            fields |= 1u << f;
        }
    }
    char why[256];
    recorder *r =
        recorder_create(x->n, ctl_config(x->c)->rate_hz, duration, fields, why, sizeof why);
    if (!r) return api_fail(e, "invalid_params", "params.duration: %s", why);
    ctl_sample *read = malloc(RECORD_READ * sizeof *read);
    if (!read) {
        recorder_free(r);
        return api_fail(e, "internal", "out of memory");
    }
    record_free(s);
    s->rec = r;
    s->rec_read = read;
    s->rec_owner = x->cl;
    s->rec_cursor = 0; /* a read from cursor 0 starts at the samples published from now on */
    ctl_samples_read(x->c, &s->rec_cursor, read, 0);
    *result = record_state(x, r);
    return API_DONE;
}

/* One sample as JSON: {index, tick, time, mono, state, lost_before?, <fields>}. */
static json_t *sample_json(api_ctx *x, const recorder *r, long i)
{
    const rec_head *h = recorder_head(r, i);
    double mono, wall;
    api_clock_stamps(x->c, h->time, &mono, &wall);
    json_t *o =
        json_pack("{s:I, s:I, s:f, s:f, s:s}", "index", (json_int_t)i, "tick", (json_int_t)h->tick,
                  "time", h->time, "mono", mono, "state", ctl_state_name(h->state));
    if (!o) return NULL;
    if (h->lost_before) json_object_set_new(o, "lost_before", json_integer(h->lost_before));
    for (int f = 0; f < REC_N_FIELDS; f++) {
        const double *v = recorder_value(r, i, (rec_field)f);
        if (v) json_object_set_new(o, recorder_field_name((rec_field)f), api_json_vector(v, x->n));
    }
    return o;
}

/* record.fetch {from?, max?} -> the state plus {from, records: [...]}: the samples from index
 * from (default 0), at most max (default RECORD_PAGE, up to RECORD_PAGE_MAX), oldest first,
 * while recording or after. */
int api_m_record_fetch(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"from", "max", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    recorder *r = owned(x, e);
    if (!r) return API_ERROR;
    api_record_drain(x->srv); /* up to now */
    double from = 0, max = RECORD_PAGE;
    json_t *jf = json_object_get(params, "from"), *jm = json_object_get(params, "max");
    if (jf && api_get_number(jf, "params.from", &from, e)) return API_ERROR;
    if (jm && api_get_number(jm, "params.max", &max, e)) return API_ERROR;
    if (!(from >= 0 && from == floor(from)))
        return api_fail(e, "invalid_params", "params.from: %g is not a sample index (>= 0)", from);
    if (!(max >= 1 && max <= RECORD_PAGE_MAX && max == floor(max)))
        return api_fail(e, "invalid_params", "params.max: %g is not a whole number in [1, %d]", max,
                        RECORD_PAGE_MAX);
    long n = recorder_count(r), i0 = from < (double)n ? (long)from : n;
    long i1 = i0 + (long)max < n ? i0 + (long)max : n;
    json_t *records = json_array();
    for (long i = i0; i < i1 && records; i++) {
        json_t *o = sample_json(x, r, i);
        if (!o || json_array_append_new(records, o) != 0) {
            json_decref(records);
            records = NULL;
        }
    }
    json_t *st = record_state(x, r);
    if (!records || !st) {
        json_decref(records);
        json_decref(st);
        return api_fail(e, "internal", "out of memory");
    }
    json_object_set_new(st, "from", json_integer(i0));
    json_object_set_new(st, "records", records);
    *result = st;
    return API_DONE;
}

/* record.stop {discard?} -> the state: ends this connection's recording (the samples stay for
 * record.fetch); with discard true frees it (-> {}). */
int api_m_record_stop(api_ctx *x, json_t *params, json_t **result, api_err *e)
{
    static const char *const keys[] = {"discard", NULL};
    if (api_check_keys(params, keys, "params", e)) return API_ERROR;
    json_t *jd = json_object_get(params, "discard");
    if (jd && !json_is_boolean(jd))
        return api_fail(e, "invalid_params", "params.discard: expected a boolean, got %s",
                        api_json_type_word(jd));
    recorder *r = owned(x, e);
    if (!r) return API_ERROR;
    api_record_drain(x->srv);
    recorder_stop(r);
    if (jd && json_is_true(jd)) {
        record_free(x->srv);
        *result = json_object();
    } else {
        *result = record_state(x, r);
    }
    return API_DONE;
}
