/*
 * out.c — appending to a tick's output (see out.h). Control thread only.
 */
#include "daemon/loop/out.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void out_begin(loop_out *o, double t)
{
    o->write = false;
    o->servos = LOOP_SERVOS_KEEP;
    o->reset_timing = false;
    o->tool_set = false;
    o->n_replies = 0;
    o->n_events = 0;
    o->events_lost = 0;
    o->sample.time = t;
}

ctl_event *out_event(loop_out *o, ctl_event_type type, uint32_t traj_id, const char *fmt, ...)
{
    if (o->n_events >= LOOP_MAX_EVENTS) {
        o->events_lost++;
        return NULL;
    }
    ctl_event *e = &o->events[o->n_events++];
    e->seq = 0;
    e->time = o->sample.time;
    e->type = type;
    e->traj_id = traj_id;
    e->joint = -1;
    e->text[0] = 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->text, sizeof e->text, fmt, ap);
        va_end(ap);
    }
    return e;
}

/* The next free reply, zeroed (NULL when the array is full: cannot happen with at most
 * LOOP_MAX_CMDS commands a tick, each answered once, and a bounded number of objects). */
static loop_reply *next_reply(loop_out *o)
{
    if (o->n_replies >= LOOP_MAX_REPLIES) return NULL;
    loop_reply *r = &o->replies[o->n_replies++];
    memset(r, 0, sizeof *r);
    return r;
}

void out_answer(loop_out *o, uint64_t seq, int rc, const ctl_error *err)
{
    loop_reply *r = next_reply(o);
    if (!r) return;
    r->seq = seq;
    r->rc = rc;
    if (rc && err) r->err = *err;
}

void out_answer_tool(loop_out *o, uint64_t seq, const ctl_tool_result *res)
{
    loop_reply *r = next_reply(o);
    if (!r) return;
    r->seq = seq;
    r->tool = *res;
}

void out_refuse(loop_out *o, uint64_t seq, const char *code, const char *fmt, ...)
{
    ctl_error e;
    char msg[sizeof e.message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ctl_error_set(&e, code, "%s", msg);
    out_answer(o, seq, -1, &e);
}

void out_return_plan(loop_out *o, traj_plan *p)
{
    loop_reply *r = p ? next_reply(o) : NULL;
    if (r) r->plan = p;
}

void out_return(loop_out *o, uint64_t seq, const loop_settings *s, loop_dyn *d)
{
    /* with its answer when there is one in this tick's replies */
    for (int i = o->n_replies - 1; seq && i >= 0; i--) {
        if (o->replies[i].seq != seq) continue;
        o->replies[i].settings = s;
        o->replies[i].dyn = d;
        return;
    }
    loop_reply *r = (s || d) ? next_reply(o) : NULL;
    if (!r) return;
    r->settings = s;
    r->dyn = d;
}
