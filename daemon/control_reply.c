/*
 * control_reply.c — the answers to the main thread's commands (control.h): the table of
 * outstanding answers, sending a command through the mailbox, ctl_poll() delivering the
 * control thread's acknowledgements (or a timeout) to the caller's reply_to, and the waiting
 * form used when a caller passes no reply_to. Main thread only; nothing here waits except
 * ctl_reply_finish() for callers that asked to wait.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/control_internal.h"

/* A free entry for an answer of the given kind to `to`, or NULL with err "busy". */
ctl_pending *ctl_pending_new(ctl *c, done_kind kind, const ctl_reply_to *to, ctl_error *err)
{
    for (int i = 0; i < CTL_MAX_PENDING; i++) {
        ctl_pending *p = &c->pending[i];
        if (p->used) continue;
        free(p->cand);
        memset(p, 0, sizeof *p);
        p->used = true;
        p->kind = kind;
        p->to = *to;
        p->slot = -1;
        return p;
    }
    ctl_set_err(err, "busy", "%d commands are waiting for the control thread already",
                CTL_MAX_PENDING);
    return NULL;
}

/* Gives an entry back unanswered (the command was refused before it was sent). */
void ctl_pending_drop(ctl_pending *p)
{
    free(p->cand);
    p->cand = NULL;
    p->used = false;
}

/* Sends m for entry p; its answer is the control thread's acknowledgement. -1 with err (and p
 * dropped) when no control thread runs or the mailbox is full. */
int ctl_pending_send(ctl *c, ctl_pending *p, ctl_cmd *m, ctl_error *err)
{
    if (!ctl_thread_running(c)) {
        ctl_set_err(err, "not_running", "the control thread is not running");
        ctl_pending_drop(p);
        return -1;
    }
    m->seq = ++c->cmd_seq;
    if (!hf_mailbox_push(&c->cmds, m)) {
        c->cmd_seq--;
        ctl_set_err(err, "busy", "the control thread is not taking commands (mailbox full)");
        ctl_pending_drop(p);
        return -1;
    }
    p->seq = m->seq;
    p->deadline_ns = ctl_mono_ns() + (int64_t)(CTL_ACK_TIMEOUT_S * 1e9);
    return 0;
}

/* Answers entry p now, without the control thread (delivered by the next ctl_poll). */
void ctl_pending_answer(ctl_pending *p, int rc, const ctl_error *err)
{
    p->seq = 0;
    p->rc = rc;
    if (rc && err) p->err = *err;
}

int ctl_notify_fd(ctl *c)
{
    return c->notify_fd;
}

/* Takes entry i's answer if it is in (acknowledged, timed out, or answered directly) into
 * *out and frees the entry; false while it is still outstanding. */
static bool take_answer(ctl *c, int i, uint64_t acked, int64_t now, ctl_pending *out)
{
    ctl_pending *p = &c->pending[i];
    if (!p->used) return false;
    if (p->seq) {
        if (acked >= p->seq) {
            const ctl_ack *a = &c->acks[p->seq % N_ACKS];
            p->rc = a->rc;
            if (a->rc) p->err = a->err;
        } else if (now > p->deadline_ns) {
            p->rc = -1;
            ctl_set_err(&p->err, "timeout", "the control thread did not acknowledge within %.0f ms",
                        CTL_ACK_TIMEOUT_S * 1e3);
        } else {
            return false;
        }
    }
    *out = *p;
    p->cand = NULL; /* owned by *out now */
    p->used = false;
    return true;
}

void ctl_poll(ctl *c)
{
    uint64_t count;
    ssize_t r = read(c->notify_fd, &count, sizeof count); /* re-arms the eventfd */
    (void)r;
    uint64_t acked = atomic_load_explicit(&c->acked, memory_order_acquire);
    int64_t now = ctl_mono_ns();
    for (int i = 0; i < CTL_MAX_PENDING; i++) {
        ctl_pending a;
        if (!take_answer(c, i, acked, now, &a)) continue;
        bool deliver = ctl_cmd_done(c, &a); /* may send a follow-up command instead */
        free(a.cand);
        a.cand = NULL;
        if (deliver && a.to.fn) a.to.fn(a.to.ctx, a.rc, a.rc ? &a.err : NULL, &a.res);
    }
}

/* ------------------------------------------------------------------------ waiting callers */

static void wake(void *ctx, int rc, const ctl_error *err, const ctl_result *res)
{
    ctl_waiter *w = ctx;
    w->done = true;
    w->rc = rc;
    if (err) w->err = *err;
    if (res) w->res = *res;
}

const ctl_reply_to *ctl_reply_target(const ctl_reply_to *to, ctl_waiter *w, ctl_reply_to *self)
{
    if (to) return to;
    memset(w, 0, sizeof *w);
    *self = (ctl_reply_to){wake, w};
    return self;
}

int ctl_reply_finish(ctl *c, const ctl_reply_to *to, ctl_waiter *w, int rc, ctl_error *err)
{
    if (to || rc) return rc;
    while (!w->done) {
        ctl_poll(c);
        if (!w->done) ctl_nap_100us();
    }
    if (w->rc && err) *err = w->err;
    return w->rc;
}
