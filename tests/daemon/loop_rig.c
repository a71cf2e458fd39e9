/*
 * loop_rig.c — the control loop's test rig (loop_rig.h).
 */
#include "loop_rig.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

rig *R;
const char *rig_config_path;

/* Loads the config (with the test's changes applied by edit), builds settings, dynamics and a
 * loop. */
void rig_open(void (*edit)(armd_config *))
{
    R = calloc(1, sizeof *R);
    cfg_report rep;
    cfg_report_init(&rep);
    assert_int_equal(cfg_load(rig_config_path, &R->cfg, &rep), 0);
    cfg_report_free(&rep);
    if (edit) edit(&R->cfg);
    law_params_from_config(&R->set.p, &R->cfg);
    traj_limits_from_config(&R->set.lim, &R->cfg);
    R->dyn.model = dyn_model_create(&R->cfg.model, NULL, NULL);
    assert_non_null(R->dyn.model);
    R->dyn.data = dyn_data_create(R->dyn.model);
    R->dyn.dy = (law_dyn){&dyn_general, R->dyn.model, R->dyn.data};
    R->period = 1.0 / R->cfg.rate_hz;
    R->L = loop_create(R->cfg.n_joints, R->period, &R->set, &R->dyn, R->cfg.controller);
    assert_non_null(R->L);
    R->now = 1000000000;
}

int rig_close(void **state)
{
    (void)state;
    if (!R) return 0;
    loop_free(R->L);
    dyn_data_free(R->dyn.data);
    dyn_model_free(R->dyn.model);
    free(R);
    R = NULL;
    return 0;
}

/* Queues a command for the next tick; returns its seq. */
uint64_t cmd(loop_cmd c)
{
    c.seq = ++R->seq;
    R->in.cmds[R->in.n_cmds++] = c;
    return c.seq;
}

/* One tick: the sample (a failure while fail_reads lasts), the loop, then the "driver" taking
 * the output (its results go into the next tick's input). */
void tick(void)
{
    loop_in *in = &R->in;
    int n = R->cfg.n_joints;
    R->now += (int64_t)llround(R->period * 1e9);
    in->t += R->period;
    in->dt = R->period;
    in->now_ns = R->now;
    in->t0_ns = 1000000000;
    if (R->device) R->device(R->period);
    if (R->fail_reads > 0) {
        R->fail_reads--;
        in->read_rc = -1;
        in->read_fault = (drv_fault){DRV_ETIMEOUT, 1, "test: no reply"};
    } else {
        in->read_rc = 0;
        memset(&in->ds, 0, sizeof in->ds);
        in->ds.n = n;
        if (R->follow) memcpy(R->q, R->out.pub.st.q_des, sizeof(double) * (size_t)n);
        memcpy(in->ds.q, R->q, sizeof(double) * (size_t)n);
        memcpy(in->ds.qd, R->qd, sizeof(double) * (size_t)n);
        in->ds.has_velocity = true;
        in->ds.host_time_ns = (uint64_t)R->now;
        in->ds.tool = R->tool;
    }
    loop_step(R->L, in, &R->out);
    in->n_cmds = 0;
    in->estop = in->stall = false;
    in->late = 0;
    const loop_out *o = &R->out;
    for (int i = 0; i < o->n_events && R->n_ev < 256; i++) R->ev[R->n_ev++] = o->events[i];
    for (int i = 0; i < o->n_replies && R->n_rep < 256; i++) {
        R->rep[R->n_rep++] = o->replies[i];
        if (o->replies[i].plan) R->plans_back++;
    }
    in->wrote = o->write;
    if (o->write && R->fail_writes > 0) {
        R->fail_writes--;
        in->write_rc = -1;
        in->write_fault = (drv_fault){DRV_ETIMEOUT, 1, "test: write lost"};
    } else {
        in->write_rc = 0;
    }
    in->switched = o->servos == LOOP_SERVOS_ON;
    in->servo_rc = R->servos_refuse ? -1 : 0;
    if (R->servos_refuse) in->servo_fault = (drv_fault){DRV_EDEVICE, 1, "test: refused"};
}

void ticks(int k)
{
    for (int i = 0; i < k; i++) tick();
}

ctl_state state(void)
{
    return R->out.pub.st.state;
}

/* The answer to command seq so far: 1 = ok, -1 = refused (code into *code), 0 = none yet. */
int answer(uint64_t seq, const char **code, const char **message)
{
    for (int i = 0; i < R->n_rep; i++) {
        if (R->rep[i].seq != seq) continue;
        if (code) *code = R->rep[i].err.code;
        if (message) *message = R->rep[i].err.message;
        return R->rep[i].rc == 0 ? 1 : -1;
    }
    return 0;
}

/* Number of answers to seq (each command is answered exactly once). */
int answers(uint64_t seq)
{
    int k = 0;
    for (int i = 0; i < R->n_rep; i++) k += R->rep[i].seq == seq;
    return k;
}

const loop_reply *reply_to(uint64_t seq)
{
    for (int i = 0; i < R->n_rep; i++)
        if (R->rep[i].seq == seq) return &R->rep[i];
    return NULL;
}

/* The last event of type, or NULL. */
const ctl_event *last_event(ctl_event_type type)
{
    for (int i = R->n_ev - 1; i >= 0; i--)
        if (R->ev[i].type == type) return &R->ev[i];
    return NULL;
}

/* Enables the arm standing at R->q (asserts it worked). */
void enable(void)
{
    uint64_t s = cmd((loop_cmd){.type = LOOP_ENABLE});
    ticks(2);
    assert_int_equal(answer(s, NULL, NULL), 1);
    assert_int_equal(state(), CTL_HOLDING);
}
