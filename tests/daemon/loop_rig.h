/*
 * loop_rig.h — a test rig for the control loop (daemon/loop/loop.h): the loop stepped by plain
 * calls, one loop_step per tick, with crafted samples, commands and driver results: no thread,
 * no clock, no driver. The "arm" is the sample the test writes: it stands where the test puts
 * it, or (following) where the loop wanted it a tick ago. Used by test_loop.c and
 * test_loop_tool.c.
 */
#ifndef ARMD_TESTS_LOOP_RIG_H
#define ARMD_TESTS_LOOP_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/loop/loop.h"

typedef struct {
    armd_config cfg;
    loop_settings set, set2;
    loop_dyn dyn;
    loop *L;
    loop_in in;
    loop_out out;
    double period;
    int64_t now;  /* the "driver clock" [ns] */
    uint64_t seq; /* commands sent */
    bool follow;  /* the arm goes where the loop wanted it a tick ago */
    double q[CFG_MAX_JOINTS];
    double qd[CFG_MAX_JOINTS];   /* the velocity the device reports (velocity_source = device) */
    int fail_reads, fail_writes; /* the next ticks whose read / write fails */
    bool servos_refuse;
    drv_tool_state tool;       /* the tool servo's reading the sample carries */
    void (*device)(double dt); /* called before each sample (a test's device), NULL: none */
    /* what came out, over all ticks */
    int n_ev;
    ctl_event ev[256];
    int n_rep;
    loop_reply rep[256];
    int plans_back;
} rig;

extern rig *R;
extern const char *rig_config_path; /* the INI every rig_open loads */

/* Loads the config (with the test's changes applied by edit), builds settings, dynamics and a
 * loop. */
void rig_open(void (*edit)(armd_config *));
/* cmocka teardown: frees the rig. */
int rig_close(void **state);
/* Queues a command for the next tick; returns its seq. */
uint64_t cmd(loop_cmd c);
/* One tick: the sample (a failure while fail_reads lasts), the loop, then the "driver" taking
 * the output (its results go into the next tick's input). */
void tick(void);
void ticks(int k);
ctl_state state(void);
/* The answer to command seq so far: 1 = ok, -1 = refused (code into *code), 0 = none yet. */
int answer(uint64_t seq, const char **code, const char **message);
/* Number of answers to seq (each command is answered exactly once). */
int answers(uint64_t seq);
/* The reply answering seq, NULL if none yet. */
const loop_reply *reply_to(uint64_t seq);
/* The last event of type, or NULL. */
const ctl_event *last_event(ctl_event_type type);
/* Enables the arm standing at R->q (asserts it worked). */
void enable(void);

#endif
