/*
 * telemetry.c — fans the control thread's samples and events out to subscribed clients:
 * "telemetry" notifications (time [s], mono and wall clock stamps, q, qd, tau, tau_meas, q_des,
 * qd_des, ext, state) decimated from the loop rate, and "state", "fault", "trajectory_done",
 * "collision" events (time, mono, wall) to every subscriber. Main thread (the transport's
 * periodic hook drains); it owns its ring cursors and buffers and the subscriptions, and sends
 * through the transport (api.c). Samples are read only while someone subscribes (the payload
 * procedure reads its own).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/api_internal.h"

int api_telemetry_start(api_server *s)
{
    s->samples_cap = 256;
    s->samples = calloc((size_t)s->samples_cap, sizeof *s->samples);
    s->events_cap = 64;
    s->events = calloc((size_t)s->events_cap, sizeof *s->events);
    return s->samples && s->events ? 0 : -1;
}

void api_telemetry_stop(api_server *s)
{
    free(s->samples);
    free(s->events);
    s->samples = NULL;
    s->events = NULL;
}

double api_telemetry_subscribe(api_client *cl, double rate_hz)
{
    api_server *s = cl->srv;
    if (rate_hz <= 0) {
        if (cl->subscribed) s->n_subscribers--;
        cl->subscribed = false;
        return 0;
    }
    double loop_hz = ctl_config(s->c)->rate_hz;
    if (!(rate_hz <= loop_hz)) rate_hz = loop_hz; /* NaN too */
    if (rate_hz < 1) rate_hz = 1;                 /* a decimation of 0 would divide by 0 */
    double d = floor(loop_hz / rate_hz + 0.5);
    cl->decimation = d < 1 ? 1 : (unsigned)d;
    cl->window = UINT64_MAX; /* the next sample is sent */
    if (!cl->subscribed) {
        if (s->n_subscribers == 0) { /* the first one: the stream starts at the next sample */
            s->sample_cursor = 0;
            ctl_samples_read(s->c, &s->sample_cursor, s->samples, 0);
        }
        s->n_subscribers++;
    }
    cl->subscribed = true;
    return loop_hz / cl->decimation;
}

void api_clock_stamps(ctl *c, double t, double *mono, double *wall)
{
    if (ctl_simulated(c)) { /* lockstep: one clock, the simulated one */
        *mono = *wall = ctl_mono_of(c, t);
        return;
    }
    struct timespec m, w;
    clock_gettime(CLOCK_MONOTONIC, &m);
    clock_gettime(CLOCK_REALTIME, &w);
    *mono = ctl_mono_of(c, t);
    double now_m = (double)m.tv_sec + (double)m.tv_nsec * 1e-9;
    double now_w = (double)w.tv_sec + (double)w.tv_nsec * 1e-9;
    *wall = now_w - (now_m - *mono);
}

/* The notifications' method names: the sample's, then one per event type. */
#define NOTE_TELEMETRY "telemetry"
static const char *const event_names[] = {[CTL_EV_STATE] = "state",
                                          [CTL_EV_FAULT] = "fault",
                                          [CTL_EV_TRAJECTORY_DONE] = "trajectory_done",
                                          [CTL_EV_COLLISION] = "collision"};
#define N_EVENT_NAMES (sizeof event_names / sizeof event_names[0])

/* Notification i's method name: the sample's, then the events' (NULL past the last). */
const char *api_notification_name(size_t i)
{
    if (i == 0) return NOTE_TELEMETRY;
    return i - 1 < N_EVENT_NAMES ? event_names[i - 1] : NULL;
}

/* Appends "SEP\"key\":[v0,v1,...]" to buf at *o (SEP "," or "" for an object's first member);
 * values with 9 significant digits, non-finite ones null. */
static void put_member(char *buf, size_t cap, size_t *o, const char *sep, const char *key,
                       const double *v, int n)
{
    if (*o >= cap) return;
    *o += (size_t)snprintf(buf + *o, cap - *o, "%s\"%s\":[", sep, key);
    for (int i = 0; i < n && *o < cap; i++) {
        if (isfinite(v[i]))
            *o += (size_t)snprintf(buf + *o, cap - *o, "%s%.9g", i ? "," : "", v[i]);
        else
            *o += (size_t)snprintf(buf + *o, cap - *o, "%snull", i ? "," : "");
    }
    if (*o < cap) *o += (size_t)snprintf(buf + *o, cap - *o, "]");
}

/* Appends ",\"key\":[v0,v1,...]" to buf at *o. */
static void put_vector(char *buf, size_t cap, size_t *o, const char *key, const double *v, int n)
{
    put_member(buf, cap, o, ",", key, v, n);
}

/* ,"tool":{"opening","speed","force","current","moving","stalled"}: the tool servo's reading
 * (non-finite: null). */
static void put_tool(char *buf, size_t cap, size_t *o, const ctl_tool_status *t)
{
    const double v[4] = {t->opening, t->speed, t->force, t->current};
    const char *key[4] = {"opening", "speed", "force", "current"};
    if (*o < cap) *o += (size_t)snprintf(buf + *o, cap - *o, ",\"tool\":{");
    for (int i = 0; i < 4 && *o < cap; i++) {
        if (isfinite(v[i]))
            *o += (size_t)snprintf(buf + *o, cap - *o, "%s\"%s\":%.9g", i ? "," : "", key[i], v[i]);
        else
            *o += (size_t)snprintf(buf + *o, cap - *o, "%s\"%s\":null", i ? "," : "", key[i]);
    }
    if (*o < cap)
        *o += (size_t)snprintf(buf + *o, cap - *o, ",\"moving\":%s,\"stalled\":%s}",
                               t->moving ? "true" : "false", t->stalled ? "true" : "false");
}

/* ,"pose":{"position":[x,y,z],"orientation":[w,x,y,z]}: the tool frame (CTL_POSE). */
static void put_pose(char *buf, size_t cap, size_t *o, const double pose[CTL_POSE])
{
    if (*o < cap) *o += (size_t)snprintf(buf + *o, cap - *o, ",\"pose\":{");
    put_member(buf, cap, o, "", "position", pose, 3);
    put_vector(buf, cap, o, "orientation", pose + 3, 4);
    if (*o < cap) *o += (size_t)snprintf(buf + *o, cap - *o, "}");
}

/* ,"wrench":{"force":[fx,fy,fz],"torque":[mx,my,mz]}: the wrench at the tool (CTL_WRENCH). */
static void put_wrench(char *buf, size_t cap, size_t *o, const double w[CTL_WRENCH])
{
    if (*o < cap) *o += (size_t)snprintf(buf + *o, cap - *o, ",\"wrench\":{");
    put_member(buf, cap, o, "", "force", w, 3);
    put_vector(buf, cap, o, "torque", w + 3, 3);
    if (*o < cap) *o += (size_t)snprintf(buf + *o, cap - *o, "}");
}

/* Formats one telemetry notification line; returns its length (0 if it did not fit). */
static size_t format_sample(ctl *c, const ctl_sample *sm, int n, char *buf, size_t cap)
{
    double mono, wall;
    api_clock_stamps(c, sm->time, &mono, &wall);
    size_t o = (size_t)snprintf(buf, cap,
                                "{\"method\":\"%s\",\"params\":{\"tick\":%llu,\"time\":%.6f,"
                                "\"mono\":%.6f,\"wall\":%.6f,\"state\":\"%s\"",
                                NOTE_TELEMETRY, (unsigned long long)sm->tick, sm->time, mono, wall,
                                ctl_state_name(sm->state));
    put_vector(buf, cap, &o, "q", sm->q, n);
    put_vector(buf, cap, &o, "qd", sm->qd, n);
    put_vector(buf, cap, &o, "tau", sm->tau, n);
    put_vector(buf, cap, &o, "tau_meas", sm->tau_meas, n);
    put_vector(buf, cap, &o, "q_des", sm->q_des, n);
    put_vector(buf, cap, &o, "qd_des", sm->qd_des, n);
    put_vector(buf, cap, &o, "ext", sm->ext, n);
    put_pose(buf, cap, &o, sm->pose);
    put_wrench(buf, cap, &o, sm->wrench);
    if (sm->tool.present) put_tool(buf, cap, &o, &sm->tool);
    if (o + 4 >= cap) return 0;
    o += (size_t)snprintf(buf + o, cap - o, "}}\n");
    return o;
}

/* Builds the notification for one control event. */
static json_t *event_json(const ctl_event *ev, const armd_config *cfg)
{
    if ((size_t)ev->type >= N_EVENT_NAMES) return NULL;
    const char *name = event_names[ev->type];
    switch (ev->type) {
    case CTL_EV_STATE:
        return json_pack("{s:s, s:{s:f, s:s}}", "method", name, "params", "time", ev->time, "state",
                         ctl_state_name(ev->state));
    case CTL_EV_FAULT:
        return json_pack("{s:s, s:{s:f, s:s, s:s}}", "method", name, "params", "time", ev->time,
                         "reason", ev->text, "state", ctl_state_name(ev->state));
    case CTL_EV_TRAJECTORY_DONE:
        return json_pack("{s:s, s:{s:f, s:I, s:s}}", "method", name, "params", "time", ev->time,
                         "id", (json_int_t)ev->traj_id, "result", ev->text);
    case CTL_EV_COLLISION: {
        json_t *ext = json_array();
        for (int j = 0; j < cfg->n_joints; j++)
            json_array_append_new(ext, api_json_number(ev->ext[j]));
        bool known = ev->joint >= 0 && ev->joint < cfg->n_joints;
        return json_pack("{s:s, s:{s:f, s:s, s:o, s:s, s:s}}", "method", name, "params", "time",
                         ev->time, "joint",
                         known             ? cfg->joint[ev->joint].name
                         : ev->joint == -1 ? "tool"
                                           : "?",
                         "external_torque", ext, "reaction", ev->text, "state",
                         ctl_state_name(ev->state));
    }
    }
    return NULL;
}

void api_telemetry_drain(api_server *s)
{
    /* events: always consumed so a new subscriber does not get old ones. The cursor starts at
     * the ring's first record (1), not at 0 ("from the moment of the first read"): the first
     * drain can come after the first events (an enable right after start), which 0 would skip */
    if (s->event_cursor == 0) s->event_cursor = 1;
    for (;;) {
        int k = ctl_events_read(s->c, &s->event_cursor, s->events, s->events_cap);
        for (int i = 0; i < k && s->n_subscribers > 0; i++) {
            json_t *msg = event_json(&s->events[i], ctl_config(s->c));
            if (!msg) continue;
            double mono, wall;
            api_clock_stamps(s->c, s->events[i].time, &mono, &wall);
            json_t *params = json_object_get(msg, "params");
            json_object_set_new(params, "mono", api_json_stamp(mono));
            json_object_set_new(params, "wall", api_json_stamp(wall));
            for (api_client *cl = s->clients; cl; cl = cl->next)
                if (cl->subscribed && !cl->dead) api_client_send_json(cl, msg);
            json_decref(msg);
        }
        if (k < s->events_cap) break;
    }
    if (s->n_subscribers == 0) return;
    int n = ctl_config(s->c)->n_joints;
    double loop_hz = ctl_config(s->c)->rate_hz;
    static char line[24 * 1024];
    for (;;) {
        int k = ctl_samples_read(s->c, &s->sample_cursor, s->samples, s->samples_cap);
        for (int i = 0; i < k; i++) {
            const ctl_sample *sm = &s->samples[i];
            size_t len = 0;
            /* the loop period this sample is in: a client gets the first sample of each window
             * of `decimation` periods, whatever periods a late tick skipped */
            uint64_t period = (uint64_t)llround(sm->time * loop_hz);
            for (api_client *cl = s->clients; cl; cl = cl->next) {
                if (!cl->subscribed || cl->dead) continue;
                uint64_t w = period / cl->decimation;
                if (w == cl->window) continue;
                cl->window = w;
                if (len == 0) len = format_sample(s->c, sm, n, line, sizeof line);
                if (len) api_client_send(cl, line, len);
            }
        }
        if (k < s->samples_cap) break;
    }
}
