/*
 * loop_thread.c — the control thread (see loop_thread.h).
 */
#include "daemon/loop_thread.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "daemon/log.h"
#include "daemon/rt.h"

/* CLOCK_MONOTONIC now [ns]. */
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The thread's body: its own alternate signal stack (sigaltstack is per thread: a stack
 * overflow in a tick must still reach the fatal-signal handler), then ticks on absolute
 * deadlines until asked to stop, then the safe shutdown. */
static void *body(void *arg)
{
    loop_thread *t = arg;
    bool altstack = rt_altstack_enter() == 0;
    pthread_setname_np(pthread_self(), "armd-control"); /* for ps/top, and to find it */
    rt_prefault_stack(128 * 1024);
    if (handoff_wait_go(t->h)) {
        int64_t next = mono_ns();
        runner_begin(t->r, next);
        while (!handoff_stop_requested(t->h)) {
            next += t->period_ns;
            struct timespec ts = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
            }
            int64_t late = mono_ns() - next;
            int64_t skipped = late >= t->period_ns ? late / t->period_ns : 0;
            next += skipped * t->period_ns;
            runner_tick(t->r, next, late, (uint64_t)skipped);
        }
    }
    runner_stop(t->r);
    handoff_set_exited(t->h);
    if (altstack) rt_altstack_leave();
    return NULL;
}

int loop_thread_start(loop_thread *t, runner *r, handoff *h, int64_t period_ns,
                      const cfg_realtime *rt, char *why, size_t len)
{
    t->r = r;
    t->h = h;
    t->period_ns = period_ns;
    char w[200];
    if (rt->lock_memory && rt_lock_memory(w, sizeof w)) log_warn("%s", w);
    if (pthread_create(&t->thread, NULL, body, t) != 0) {
        snprintf(why, len, "could not start the control thread");
        return -1;
    }
    t->started = true;
    if (rt_set_fifo(t->thread, rt->priority, w, sizeof w)) log_warn("%s", w);
    if (rt_pin_cpu(t->thread, rt->cpu, w, sizeof w)) log_warn("%s", w);
    handoff_go(h);
    return 0;
}

/* Waits until the thread has exited (handoff_exited) or CLOCK_MONOTONIC reaches deadline [ns],
 * polling every millisecond; true when it has exited. */
static bool wait_exited(const loop_thread *t, int64_t deadline)
{
    while (!handoff_exited(t->h) && mono_ns() < deadline) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return handoff_exited(t->h);
}

/* Joins the thread if it ends before CLOCK_MONOTONIC reaches deadline [ns] (pthread_tryjoin_np
 * every millisecond: a wall-clock step changes nothing); false when it is still running. */
static bool join_by(loop_thread *t, int64_t deadline)
{
    for (;;) {
        if (pthread_tryjoin_np(t->thread, NULL) == 0) return true;
        if (mono_ns() >= deadline) return false;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

loop_thread_end loop_thread_stop(loop_thread *t, double seconds, double join_seconds)
{
    if (!t->started) return LOOP_THREAD_STOPPED;
    t->started = false;
    handoff_raise_stop(t->h);
    bool clean = wait_exited(t, mono_ns() + (int64_t)(seconds * 1e9));
    if (!clean) pthread_cancel(t->thread);
    if (!join_by(t, mono_ns() + (int64_t)(join_seconds * 1e9))) return LOOP_THREAD_STUCK;
    return clean || handoff_exited(t->h) ? LOOP_THREAD_STOPPED : LOOP_THREAD_CANCELLED;
}
