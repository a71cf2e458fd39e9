/*
 * runner.c — one tick with its I/O (see runner.h). Runs on the loop's thread; no allocation,
 * locks or logs; blocks only in the driver's reads and writes, each with its deadline.
 */
#include "daemon/runner.h"

#include <stdlib.h>

struct runner {
    loop *L;
    drv *d;
    handoff *h;
    double period; /* [s] */
    int64_t t0_ns; /* control time 0 on the driver's clock */
    loop_in in;    /* carries the driver's results from one tick into the next */
    loop_out out;
};

runner *runner_create(loop *L, drv *d, handoff *h, double period)
{
    runner *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->L = L;
    r->d = d;
    r->h = h;
    r->period = period;
    return r;
}

void runner_free(runner *r)
{
    free(r);
}

void runner_begin(runner *r, int64_t t0_ns)
{
    r->t0_ns = t0_ns;
    handoff_set_t0(r->h, t0_ns);
}

/* The driver's part of a tick's output: the tool's goal and the torque (one transaction), then
 * the servos; the results for the next tick's input. */
static void output(runner *r)
{
    loop_in *in = &r->in;
    const loop_out *out = &r->out;
    in->wrote = out->write;
    if (out->tool_set) drv_tool_set(r->d, &out->tool_goal); /* goes with the next write */
    if (out->write) in->write_rc = drv_write(r->d, out->tau, &in->write_fault);
    in->switched = out->servos == LOOP_SERVOS_ON;
    drv_fault f;
    if (out->servos == LOOP_SERVOS_OFF) drv_enable(r->d, false, &f);
    if (in->switched) in->servo_rc = drv_enable(r->d, true, &in->servo_fault);
}

void runner_tick(runner *r, int64_t deadline_ns, int64_t late_ns, uint64_t skipped)
{
    loop_in *in = &r->in;
    handoff_time(r->h, HANDOFF_LATE, late_ns);
    handoff_take(r->h, in);
    if (in->estop) { /* torque off before anything else; the step reports it */
        double zero[CFG_MAX_JOINTS] = {0};
        drv_fault f;
        drv_write(r->d, zero, &f);
        drv_enable(r->d, false, &f);
    }
    in->t = (double)(deadline_ns - r->t0_ns) * 1e-9;
    in->dt = r->period * (double)(1 + skipped);
    in->skipped = skipped;
    in->late = (double)late_ns * 1e-9;
    in->t0_ns = r->t0_ns;
    int64_t t0 = (int64_t)drv_now_ns(r->d);
    in->read_rc = drv_read(r->d, &in->ds, &in->read_fault);
    int64_t t1 = (int64_t)drv_now_ns(r->d);
    handoff_time(r->h, HANDOFF_READ, t1 - t0);
    in->now_ns = t1;
    loop_step(r->L, in, &r->out);
    int64_t t2 = (int64_t)drv_now_ns(r->d);
    handoff_time(r->h, HANDOFF_COMPUTE, t2 - t1);
    output(r);
    handoff_time(r->h, HANDOFF_WRITE, (int64_t)drv_now_ns(r->d) - t2);
    if (r->out.reset_timing) handoff_reset_timing(r->h);
    handoff_publish(r->h, &r->out);
}

void runner_stop(runner *r)
{
    loop_stop(r->L, &r->out);
    drv_fault f;
    drv_write(r->d, r->out.tau, &f);
    drv_enable(r->d, false, &f);
    handoff_publish_last(r->h, &r->out);
}
