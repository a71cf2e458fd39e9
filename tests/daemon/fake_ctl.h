/*
 * fake_ctl.h — a fake control thread for the socket API's unit test and fuzz target (the only
 * mock of control.h; the real control thread is exercised by test_control_tick, the noalloc
 * test and the integration tests). It answers commands the way the real one does: later,
 * from ctl_poll(), through the caller's reply_to, with an eventfd to wake the loop. Held back
 * while hold_answers is set.
 *
 * It also checks what the API asks of it: every number the API hands over must be finite and
 * within the ranges the API documents (trajectory times within [one period, 3600 s] and a
 * period apart, move durations 0 or within that range, gains within the loader's bounds, a
 * known law); anything else is a bug in the API's checks and abort()s.
 */
#ifndef ARMD_TESTS_FAKE_CTL_H
#define ARMD_TESTS_FAKE_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/control.h"

typedef struct {
    ctl_reply_to to;
    int rc;
    ctl_error err;
    ctl_result res;
} fake_answer;

struct ctl {
    armd_config cfg;
    ctl_state state;
    uint64_t tick;
    int last_points;
    bool last_append;
    double last_q0[CFG_MAX_JOINTS];
    ctl_linear last_linear; /* the last move_linear handed over */
    double kp[CFG_MAX_JOINTS], kd[CFG_MAX_JOINTS], ki[CFG_MAX_JOINTS];
    cfg_impedance impedance; /* the last impedance.set handed over */
    uint64_t events;
    int stats_resets, estops, commands;
    fake_answer answers[CTL_MAX_PENDING];
    int n_answers;
    bool hold_answers;
    int notify_fd;
    dyn_payload payload;
};

extern struct ctl fake;

/* Resets the fake to a disabled arm of n joints ("a", "b", ...) at rate_hz, with a fresh
 * eventfd (closed by fake_close). */
void fake_init(int n, double rate_hz);
/* CLOCK_MONOTONIC at the fake's control time 0 [s] (ctl_mono_of) */
#define FAKE_MONO0 100000.000001
void fake_close(void);
/* Queues an answer (rc 0, or -1 with code and message) for to; wakes the loop. */
int fake_answer_later(ctl *c, const ctl_reply_to *to, int rc, const char *code, const char *msg,
                      const ctl_result *res);

#endif
