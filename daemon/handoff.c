/*
 * handoff.c — the state the host and the loop's thread share (see handoff.h), on the lock-free
 * mailbox, seqlock and rings of lockfree.h.
 */
#include "daemon/handoff.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon/lockfree.h"
#include "daemon/ticktime.h"

#define N_COMMANDS 64 /* command mailbox: the host's outstanding answers fit */
#define N_REPLIES  256
#define N_BACKLOG  LOOP_MAX_REPLIES /* replies waiting for room in the mailbox (loop's side) */

_Static_assert(N_COMMANDS <= LOOP_MAX_CMDS, "a tick takes every command queued");

struct handoff {
    lf_mailbox commands, replies;
    int notify_fd;
    _Atomic int estop, stall, stop, go, exited;
    char stall_reason[160]; /* written before stall is raised, read after it is taken */
    lf_seqlock status;
    lf_ring samples, events;
    tt_hist timing[4];
    _Atomic uint64_t ticks;
    _Atomic int64_t t0_ns;
    /* the loop's side only: replies that found the mailbox full */
    loop_reply backlog[N_BACKLOG];
    int n_backlog;
};

handoff *handoff_create(void)
{
    handoff *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    bool ok = h->notify_fd >= 0;
    ok = ok && lf_mailbox_init(&h->commands, sizeof(loop_cmd), N_COMMANDS) == 0;
    ok = ok && lf_mailbox_init(&h->replies, sizeof(loop_reply), N_REPLIES) == 0;
    ok = ok && lf_seqlock_init(&h->status, sizeof(ctl_pub)) == 0;
    ok = ok && lf_ring_init(&h->samples, sizeof(ctl_sample), HANDOFF_SAMPLES) == 0;
    ok = ok && lf_ring_init(&h->events, sizeof(ctl_event), HANDOFF_EVENTS) == 0;
    for (int i = 0; i < 4; i++) tt_reset(&h->timing[i]);
    if (!ok) {
        handoff_free(h);
        return NULL;
    }
    return h;
}

void handoff_free(handoff *h)
{
    if (!h) return;
    lf_mailbox_free(&h->commands);
    lf_mailbox_free(&h->replies);
    lf_seqlock_free(&h->status);
    lf_ring_free(&h->samples);
    lf_ring_free(&h->events);
    if (h->notify_fd >= 0) close(h->notify_fd);
    free(h);
}

/* ------------------------------------------------------------------------------ host side */

bool handoff_send(handoff *h, const loop_cmd *c)
{
    return lf_mailbox_push(&h->commands, c);
}

int handoff_replies(handoff *h, loop_reply *out, int max)
{
    uint64_t count;
    ssize_t r = read(h->notify_fd, &count, sizeof count); /* re-arms the eventfd */
    (void)r;
    int k = 0;
    while (k < max && lf_mailbox_pop(&h->replies, &out[k])) k++;
    return k;
}

int handoff_notify_fd(const handoff *h)
{
    return h->notify_fd;
}

void handoff_raise_estop(handoff *h)
{
    atomic_store_explicit(&h->estop, 1, memory_order_release);
}

void handoff_raise_stall(handoff *h, const char *reason)
{
    if (atomic_load_explicit(&h->stall, memory_order_acquire)) return;
    snprintf(h->stall_reason, sizeof h->stall_reason, "%s", reason);
    atomic_store_explicit(&h->stall, 1, memory_order_release);
}

void handoff_raise_stop(handoff *h)
{
    atomic_store_explicit(&h->stop, 1, memory_order_release);
}

void handoff_go(handoff *h)
{
    atomic_store_explicit(&h->go, 1, memory_order_release);
}

bool handoff_status(handoff *h, ctl_pub *out)
{
    if (lf_seqlock_read(&h->status, out)) return true;
    memset(out, 0, sizeof *out);
    return false;
}

int handoff_samples(handoff *h, uint64_t *cursor, ctl_sample *out, int max)
{
    return lf_ring_read(&h->samples, cursor, out, max, NULL);
}

int handoff_events(handoff *h, uint64_t *cursor, ctl_event *out, int max)
{
    return lf_ring_read(&h->events, cursor, out, max, NULL);
}

void handoff_timing(handoff *h, handoff_timer which, ctl_timing *out)
{
    tt_hist *t = &h->timing[which];
    out->p50_us = tt_quantile_us(t, 0.5);
    out->p99_us = tt_quantile_us(t, 0.99);
    out->max_us = tt_max_us(t);
}

uint64_t handoff_ticks(handoff *h)
{
    return atomic_load_explicit(&h->ticks, memory_order_acquire);
}

int64_t handoff_t0(handoff *h)
{
    return atomic_load_explicit(&h->t0_ns, memory_order_acquire);
}

bool handoff_exited(handoff *h)
{
    return atomic_load_explicit(&h->exited, memory_order_acquire);
}

/* ------------------------------------------------------------------------------ loop side */

bool handoff_wait_go(handoff *h)
{
    while (!atomic_load_explicit(&h->go, memory_order_acquire)) {
        if (handoff_stop_requested(h)) return false;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return true;
}

bool handoff_stop_requested(handoff *h)
{
    return atomic_load_explicit(&h->stop, memory_order_acquire);
}

void handoff_take(handoff *h, loop_in *in)
{
    in->estop = atomic_exchange_explicit(&h->estop, 0, memory_order_acquire);
    in->stall = atomic_load_explicit(&h->stall, memory_order_acquire);
    if (in->stall) {
        snprintf(in->stall_reason, sizeof in->stall_reason, "%s", h->stall_reason);
        atomic_store_explicit(&h->stall, 0, memory_order_release);
    }
    in->n_cmds = 0;
    while (in->n_cmds < LOOP_MAX_CMDS && lf_mailbox_pop(&h->commands, &in->cmds[in->n_cmds]))
        in->n_cmds++;
}

/* Pushes the backlog, then the tick's replies (what does not fit joins the backlog); wakes
 * the host when something went out: a non-blocking eventfd write (EAGAIN only while it is
 * readable already). */
static void send_replies(handoff *h, const loop_out *out)
{
    int sent = 0, k = 0;
    while (k < h->n_backlog && lf_mailbox_push(&h->replies, &h->backlog[k])) k++;
    sent += k;
    memmove(h->backlog, h->backlog + k, sizeof h->backlog[0] * (size_t)(h->n_backlog - k));
    h->n_backlog -= k;
    for (int i = 0; i < out->n_replies; i++) {
        if (h->n_backlog == 0 && lf_mailbox_push(&h->replies, &out->replies[i]))
            sent++;
        else if (h->n_backlog < N_BACKLOG)
            h->backlog[h->n_backlog++] = out->replies[i];
    }
    if (sent) {
        uint64_t one = 1;
        ssize_t w = write(h->notify_fd, &one, sizeof one);
        (void)w;
    }
}

/* Status, events and replies; the events numbered as the ring counts them. */
static void publish_common(handoff *h, const loop_out *out)
{
    lf_seqlock_write(&h->status, &out->pub);
    for (int i = 0; i < out->n_events; i++) {
        ctl_event e = out->events[i];
        e.seq = lf_ring_head(&h->events) + 1;
        lf_ring_push(&h->events, &e);
    }
    send_replies(h, out);
}

void handoff_publish(handoff *h, const loop_out *out)
{
    lf_ring_push(&h->samples, &out->sample);
    publish_common(h, out);
    atomic_fetch_add_explicit(&h->ticks, 1, memory_order_release);
}

void handoff_publish_last(handoff *h, const loop_out *out)
{
    publish_common(h, out);
}

void handoff_time(handoff *h, handoff_timer which, int64_t ns)
{
    tt_add(&h->timing[which], ns);
}

void handoff_reset_timing(handoff *h)
{
    for (int i = 0; i < 4; i++) tt_reset(&h->timing[i]);
}

void handoff_set_t0(handoff *h, int64_t t0_ns)
{
    atomic_store_explicit(&h->t0_ns, t0_ns, memory_order_release);
}

void handoff_set_exited(handoff *h)
{
    atomic_store_explicit(&h->exited, 1, memory_order_release);
}
