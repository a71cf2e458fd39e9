/*
 * lockstep.c — the loop stepped on armsim's simulated clock (see lockstep.h). Main thread only.
 */
#include "daemon/lockstep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armsim/options.h"

#define MAX_SIM_ARGS 64

struct lockstep {
    armd_config cfg;
    armsim_options opt;
    char *argv[MAX_SIM_ARGS + 4]; /* the options' strings (they must outlive the bus) */
    simbus *bus;
    drv *driver; /* until ctl_create takes it */
    ctl *c;
    int64_t period_ns;
    int64_t next_ns;     /* the last tick's deadline (the simulated clock) */
    int64_t t0_ns;       /* control time 0 */
    int64_t stall_ns;    /* the next tick wakes this late */
    physics_state truth; /* the true state at the last tick's deadline */
};

/* Copies armsim's options for the parser and the bus (strings kept until lockstep_free). */
static int copy_args(lockstep *ls, const char *config_path, int argc, char *const *argv, char *err,
                     size_t len)
{
    if (argc > MAX_SIM_ARGS) {
        snprintf(err, len, "--lockstep: %d simulator options, at most %d", argc, MAX_SIM_ARGS);
        return -1;
    }
    const char *head[3] = {"armd --lockstep", "-c", config_path};
    for (int i = 0; i < 3; i++) ls->argv[i] = strdup(head[i]);
    for (int i = 0; i < argc; i++) ls->argv[3 + i] = strdup(argv[i]);
    for (int i = 0; i < 3 + argc; i++)
        if (!ls->argv[i]) {
            snprintf(err, len, "out of memory");
            return -1;
        }
    return 0;
}

lockstep *lockstep_open(const armd_config *cfg, const char *config_path, int argc,
                        char *const *argv, char *err, size_t len)
{
    lockstep *ls = calloc(1, sizeof *ls);
    if (!ls) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    ls->cfg = *cfg;
    ls->period_ns = (int64_t)llround(1e9 / cfg->rate_hz);
    if (copy_args(ls, config_path, argc, argv, err, len) != 0) goto fail;
    char *msg = NULL;
    size_t msg_len = 0;
    FILE *f = open_memstream(&msg, &msg_len);
    int rc = f ? armsim_parse_options(3 + argc, ls->argv, &ls->opt, f) : -1;
    if (f) fclose(f);
    if (rc != 0) {
        snprintf(err, len, "--lockstep: %s",
                 rc > 0          ? "the simulator's options are armsim's (armsim --help)"
                 : msg && msg[0] ? msg
                                 : "bad simulator options");
        free(msg);
        goto fail;
    }
    free(msg);
    ls->bus = simbus_create(&ls->cfg, &ls->opt, err, len);
    if (!ls->bus) goto fail;
    drv_fault fault = {DRV_OK, -1, ""};
    ls->driver = drv_open_link(&ls->cfg, simbus_link(ls->bus), &fault);
    if (!ls->driver || drv_probe(ls->driver, &fault) != 0) {
        snprintf(err, len, "the simulated arm: %s", fault.message);
        goto fail;
    }
    return ls;
fail:
    lockstep_free(ls);
    return NULL;
}

drv *lockstep_driver(lockstep *ls)
{
    drv *d = ls->driver;
    ls->driver = NULL; /* the controller owns it from here */
    return d;
}

/* A caller waiting for an answer steps the loop (ctl_start_stepped's step). */
static void step(void *ctx)
{
    lockstep_tick(ctx);
}

int lockstep_start(lockstep *ls, ctl *c, ctl_error *err)
{
    ls->c = c;
    ls->t0_ns = ls->next_ns = (int64_t)simbus_now_ns(ls->bus);
    if (ctl_start_stepped(c, ls->t0_ns, step, ls, err) != 0) return -1;
    lockstep_tick(ls); /* a first state, as the control thread's start waits for */
    return 0;
}

/* As the real-time thread (loop_thread.c): the next deadline, the wake-up (late by an injected
 * stall, or because the last tick's bus time ran past it), whole periods missed skipped. */
void lockstep_tick(lockstep *ls)
{
    ls->next_ns += ls->period_ns;
    simbus_advance_to(ls->bus, (uint64_t)ls->next_ns);
    simbus_state(ls->bus, &ls->truth);
    simbus_advance_to(ls->bus, (uint64_t)(ls->next_ns + ls->stall_ns));
    ls->stall_ns = 0;
    int64_t late = (int64_t)simbus_now_ns(ls->bus) - ls->next_ns;
    if (late < 0) late = 0;
    int64_t skipped = late >= ls->period_ns ? late / ls->period_ns : 0;
    ls->next_ns += skipped * ls->period_ns;
    ctl_tick(ls->c, ls->next_ns, late, (uint64_t)skipped);
}

void lockstep_run_until(lockstep *ls, double t)
{
    while (lockstep_time(ls) < t) lockstep_tick(ls);
}

double lockstep_time(const lockstep *ls)
{
    return (double)(ls->next_ns - ls->t0_ns) * 1e-9;
}

void lockstep_truth(const lockstep *ls, physics_state *out)
{
    *out = ls->truth;
}

void lockstep_flush(lockstep *ls)
{
    simbus_flush(ls->bus);
}

void lockstep_stall(lockstep *ls, double seconds)
{
    ls->stall_ns = (int64_t)llround(seconds * 1e9);
}

simbus *lockstep_bus(lockstep *ls)
{
    return ls->bus;
}

void lockstep_free(lockstep *ls)
{
    if (!ls) return;
    if (ls->driver) drv_close(ls->driver);
    simbus_free(ls->bus);
    for (int i = 0; i < MAX_SIM_ARGS + 4; i++) free(ls->argv[i]);
    free(ls);
}
