/*
 * answers.c — the answers owed to the host's callers (see host.h): a command sent
 * through the hand-off and answered by the loop's reply, or answered here; timeouts; the queued
 * settings changes, sent one at a time; ctl_poll() delivering the answers to the callers'
 * reply_to; the waiting form for callers that passed none. Main thread only; nothing waits
 * except host_reply_finish() for callers that asked to.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/host/host.h"

#define REPLY_BATCH 64

ctl_pending *host_pending_new(ctl *c, const ctl_reply_to *to, host_done_fn done, ctl_error *err)
{
    for (int i = 0; i < CTL_MAX_PENDING; i++) {
        ctl_pending *p = &c->pending[i];
        if (p->used) continue;
        memset(p, 0, sizeof *p);
        p->used = true;
        p->to = *to;
        p->done = done;
        p->plan = -1;
        return p;
    }
    ctl_error_set(err, "busy", "%d commands are waiting for their answers already",
                  CTL_MAX_PENDING);
    return NULL;
}

/* Frees a change and what it carries. */
static void change_free(settings_change *ch)
{
    if (!ch) return;
    free(ch->cand);
    free(ch);
}

void host_pending_drop(ctl_pending *p)
{
    change_free(p->change);
    p->change = NULL;
    p->used = false;
}

int host_pending_send(ctl *c, ctl_pending *p, loop_cmd *m, ctl_error *err)
{
    if (c->mode != HOST_THREAD && c->mode != HOST_STEPPED) {
        ctl_error_set(err, "not_running", "the control loop is not running");
        host_pending_drop(p);
        return -1;
    }
    m->seq = ++c->cmd_seq;
    if (!handoff_send(c->h, m)) {
        c->cmd_seq--;
        ctl_error_set(err, "busy", "the control loop is not taking commands (mailbox full)");
        host_pending_drop(p);
        return -1;
    }
    p->seq = m->seq;
    p->deadline_ns = host_mono_ns() + (int64_t)(CTL_ACK_TIMEOUT_S * 1e9);
    return 0;
}

void host_pending_answer(ctl_pending *p, int rc, const ctl_error *err)
{
    p->answered = true;
    p->rc = rc;
    if (rc && err) p->err = *err;
}

/* The queued change to send next (the oldest), or NULL. */
static ctl_pending *next_change(ctl *c)
{
    ctl_pending *best = NULL;
    for (int i = 0; i < CTL_MAX_PENDING; i++) {
        ctl_pending *p = &c->pending[i];
        if (p->used && p->change && !p->seq && !p->answered && (!best || p->order < best->order))
            best = p;
    }
    return best;
}

/* Sends queued changes, oldest first, while none is in the loop: each is built on top of what
 * the loop runs now; one that changes nothing, or is refused here, is answered at once. */
static void send_changes(ctl *c)
{
    ctl_pending *p;
    while (!c->inflight.seq && (p = next_change(c))) {
        ctl_error err = {"", ""};
        settings_change *ch = p->change;
        if (host_change_build(c, ch, p->res.changed, sizeof p->res.changed, &err) != 0) {
            host_pending_answer(p, -1, &err);
            continue;
        }
        if (!c->inflight.set && !c->inflight.dyn) { /* a reload that changes nothing */
            host_change_clear(c);
            host_pending_answer(p, 0, NULL);
            continue;
        }
        loop_cmd m = {.type = LOOP_SETTINGS, .settings = c->inflight.set, .dyn = c->inflight.dyn};
        m.seq = ++c->cmd_seq;
        if (!handoff_send(c->h, &m)) {
            c->cmd_seq--;
            host_change_clear(c);
            ctl_error_set(&err, "busy", "the control loop is not taking commands (mailbox full)");
            host_pending_answer(p, -1, &err);
            continue;
        }
        c->inflight.seq = m.seq;
        p->seq = m.seq;
        p->deadline_ns = host_mono_ns() + (int64_t)(CTL_ACK_TIMEOUT_S * 1e9);
        c->inflight.deadline_ns = p->deadline_ns;
    }
}

void host_pending_change(ctl *c, ctl_pending *p, settings_change *ch)
{
    p->change = ch;
    p->order = ++c->change_order;
    send_changes(c);
}

int ctl_notify_fd(ctl *c)
{
    return handoff_notify_fd(c->h);
}

bool ctl_waiting(ctl *c)
{
    for (int i = 0; i < CTL_MAX_PENDING; i++)
        if (c->pending[i].used && !c->pending[i].answered &&
            (c->pending[i].seq || c->pending[i].change))
            return true;
    return false;
}

/* One reply from the loop: an answer (the in-flight change taken or refused) and the objects
 * it hands back. */
static void take_reply(ctl *c, const loop_reply *r)
{
    if (r->seq && r->seq == c->inflight.seq) {
        if (r->rc == 0) host_change_accepted(c);
        host_change_clear(c);
    }
    for (int i = 0; r->seq && i < CTL_MAX_PENDING; i++) {
        ctl_pending *p = &c->pending[i];
        if (p->used && p->seq == r->seq && !p->answered) {
            p->res.tool = r->tool;
            host_pending_answer(p, r->rc, &r->err);
        }
    }
    host_objects_returned(c, r);
}

/* Answers that did not come within CTL_ACK_TIMEOUT_S of the command's sending: a "timeout"
 * error. So are the changes queued behind a change the loop has not answered within that time
 * (they would wait as long as the loop does: for good, were the control thread stuck); one
 * answered so is never sent. */
static void time_out(ctl *c)
{
    int64_t now = host_mono_ns();
    bool stuck = c->inflight.seq && now > c->inflight.deadline_ns;
    for (int i = 0; i < CTL_MAX_PENDING; i++) {
        ctl_pending *p = &c->pending[i];
        if (!p->used || p->answered) continue;
        ctl_error e;
        if (p->seq && now > p->deadline_ns) {
            ctl_error_set(&e, "timeout", "the control loop did not answer in time");
            host_pending_answer(p, -1, &e);
        } else if (!p->seq && p->change && stuck) {
            ctl_error_set(&e, "timeout",
                          "not applied: the control loop has not answered the settings change "
                          "before this one within %.0f ms",
                          CTL_ACK_TIMEOUT_S * 1e3);
            host_pending_answer(p, -1, &e);
        }
    }
}

void host_pending_stop(ctl *c)
{
    if (!c->h) return;
    loop_reply r[REPLY_BATCH];
    int k;
    while ((k = handoff_replies(c->h, r, REPLY_BATCH)) > 0)
        for (int i = 0; i < k; i++) take_reply(c, &r[i]);
    for (int i = 0; i < CTL_MAX_PENDING; i++) {
        ctl_pending *p = &c->pending[i];
        if (!p->used || p->answered) continue;
        ctl_error e;
        ctl_error_set(&e, "stopping",
                      "armd is stopping; the control loop stopped before it answered (the arm "
                      "is torqued off)");
        host_pending_answer(p, -1, &e);
    }
}

void ctl_poll(ctl *c)
{
    if (!c->h) return;
    loop_reply r[REPLY_BATCH];
    int k;
    while ((k = handoff_replies(c->h, r, REPLY_BATCH)) > 0)
        for (int i = 0; i < k; i++) take_reply(c, &r[i]);
    time_out(c);
    send_changes(c);
    for (int i = 0; i < CTL_MAX_PENDING; i++) {
        ctl_pending *p = &c->pending[i];
        if (!p->used || !p->answered) continue;
        ctl_pending a = *p; /* the entry is free again before anything runs */
        p->change = NULL;
        p->used = false;
        bool deliver = !a.done || a.done(c, &a); /* may send a follow-up instead */
        change_free(a.change);
        if (deliver && a.to.fn) a.to.fn(a.to.ctx, a.rc, a.rc ? &a.err : NULL, &a.res);
    }
}

/* ------------------------------------------------------------------------ waiting callers */

static void wake(void *ctx, int rc, const ctl_error *err, const ctl_result *res)
{
    host_waiter *w = ctx;
    w->done = true;
    w->rc = rc;
    if (err) w->err = *err;
    if (res) w->res = *res;
}

const ctl_reply_to *host_reply_target(const ctl_reply_to *to, host_waiter *w, ctl_reply_to *self)
{
    if (to) return to;
    memset(w, 0, sizeof *w);
    *self = (ctl_reply_to){wake, w};
    return self;
}

int host_reply_finish(ctl *c, const ctl_reply_to *to, host_waiter *w, int rc, ctl_error *err)
{
    if (to || rc) return rc;
    while (!w->done) {
        ctl_poll(c);
        if (w->done) break;
        if (c->mode == HOST_STEPPED) {
            c->step(c->step_ctx);
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    if (w->rc && err) *err = w->err;
    return w->rc;
}
