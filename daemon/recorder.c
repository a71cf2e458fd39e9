/*
 * recorder.c — a bounded recording of the control thread's samples (see recorder.h): one
 * allocation at the start, headers and the kept fields in flat arrays.
 */
#include "daemon/recorder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[REC_N_FIELDS] = {"q",     "qd",     "tau", "tau_meas",
                                                      "q_des", "qd_des", "ext"};

struct recorder {
    int n;                  /* joints */
    unsigned fields;        /* bit 1 << rec_field per kept field */
    int nf;                 /* kept fields */
    int slot[REC_N_FIELDS]; /* the field's place among the kept ones (-1: not kept) */
    double duration;        /* [s] */
    long cap, len;
    rec_head *head;        /* cap headers */
    double *val;           /* cap x nf x n values: sample i, kept field s, joint j */
    uint64_t last_tick;    /* the last tick stored (0: none yet) */
    uint64_t lost;         /* samples lost, all told */
    uint32_t pending_lost; /* lost since the last sample stored */
    const char *end;       /* NULL while recording */
};

const char *recorder_field_name(rec_field f)
{
    return f >= 0 && f < REC_N_FIELDS ? field_names[f] : "?";
}

int recorder_field_of(const char *name)
{
    for (int f = 0; f < REC_N_FIELDS; f++)
        if (strcmp(field_names[f], name) == 0) return f;
    return -1;
}

recorder *recorder_create(int n, double rate_hz, double duration, unsigned fields, char *why,
                          size_t why_len)
{
    if (!(duration > 0 && duration <= RECORDER_MAX_S)) {
        snprintf(why, why_len, "duration %g s is outside (0, %g] s", duration, RECORDER_MAX_S);
        return NULL;
    }
    int nf = 0;
    for (int f = 0; f < REC_N_FIELDS; f++) nf += (fields >> f) & 1;
    double per = (double)sizeof(rec_head) + (double)nf * n * sizeof(double); /* bytes/sample */
    double cap = ceil(duration * rate_hz) + 1;
    if (!(cap * per <= RECORDER_MAX_BYTES)) {
        snprintf(why, why_len,
                 "%g s at %g Hz is %.0f samples of %.0f bytes (%.1f MiB); a recording holds at "
                 "most %.0f MiB: %.0f s with these fields (fewer fields, or a shorter one)",
                 duration, rate_hz, cap, per, cap * per / 1048576.0, RECORDER_MAX_BYTES / 1048576.0,
                 floor((RECORDER_MAX_BYTES / per - 1) / rate_hz));
        return NULL;
    }
    recorder *r = calloc(1, sizeof *r);
    if (r) {
        r->cap = (long)cap;
        r->head = calloc((size_t)r->cap, sizeof *r->head);
        r->val = calloc((size_t)r->cap * (size_t)(nf ? nf : 1) * (size_t)n, sizeof(double));
    }
    if (!r || !r->head || !r->val) {
        recorder_free(r);
        snprintf(why, why_len, "out of memory for %.0f samples (%.1f MiB)", cap,
                 cap * per / 1048576.0);
        return NULL;
    }
    r->n = n;
    r->fields = fields;
    r->nf = nf;
    r->duration = duration;
    for (int f = 0, s = 0; f < REC_N_FIELDS; f++) r->slot[f] = (fields >> f) & 1 ? s++ : -1;
    return r;
}

void recorder_free(recorder *r)
{
    if (!r) return;
    free(r->head);
    free(r->val);
    free(r);
}

/* The sample's vector for field f. */
static const double *sample_field(const ctl_sample *s, rec_field f)
{
    switch (f) {
    case REC_Q:
        return s->q;
    case REC_QD:
        return s->qd;
    case REC_TAU:
        return s->tau;
    case REC_TAU_MEAS:
        return s->tau_meas;
    case REC_Q_DES:
        return s->q_des;
    case REC_QD_DES:
        return s->qd_des;
    default:
        return s->ext;
    }
}

int recorder_add(recorder *r, const ctl_sample *s, int k)
{
    int stored = 0;
    for (int i = 0; i < k && !r->end; i++) {
        if (r->last_tick != 0 && s[i].tick <= r->last_tick) continue; /* seen */
        if (r->last_tick != 0 && s[i].tick > r->last_tick + 1) {
            uint64_t gap = s[i].tick - r->last_tick - 1;
            r->lost += gap;
            r->pending_lost =
                gap > UINT32_MAX - r->pending_lost ? UINT32_MAX : r->pending_lost + (uint32_t)gap;
        }
        r->last_tick = s[i].tick;
        if (r->len > 0 && s[i].time > r->head[0].time + r->duration) {
            r->end = "duration";
            break;
        }
        rec_head *h = &r->head[r->len];
        h->tick = s[i].tick;
        h->time = s[i].time;
        h->state = s[i].state;
        h->lost_before = r->pending_lost;
        r->pending_lost = 0;
        double *v = r->val + (size_t)r->len * (size_t)r->nf * (size_t)r->n;
        for (int f = 0; f < REC_N_FIELDS; f++)
            if (r->slot[f] >= 0)
                memcpy(v + r->slot[f] * r->n, sample_field(&s[i], (rec_field)f),
                       sizeof(double) * (size_t)r->n);
        r->len++;
        stored++;
        if (r->len == r->cap) r->end = "full";
    }
    return stored;
}

void recorder_stop(recorder *r)
{
    if (!r->end) r->end = "stopped";
}

const char *recorder_end(const recorder *r)
{
    return r->end;
}

long recorder_count(const recorder *r)
{
    return r->len;
}

long recorder_capacity(const recorder *r)
{
    return r->cap;
}

unsigned recorder_fields(const recorder *r)
{
    return r->fields;
}

int recorder_joints(const recorder *r)
{
    return r->n;
}

double recorder_duration(const recorder *r)
{
    return r->duration;
}

uint64_t recorder_lost(const recorder *r)
{
    return r->lost;
}

const rec_head *recorder_head(const recorder *r, long i)
{
    return &r->head[i];
}

const double *recorder_value(const recorder *r, long i, rec_field f)
{
    if (f < 0 || f >= REC_N_FIELDS || r->slot[f] < 0) return NULL;
    return r->val + ((size_t)i * (size_t)r->nf + (size_t)r->slot[f]) * (size_t)r->n;
}
