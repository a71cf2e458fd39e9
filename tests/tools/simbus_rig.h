/*
 * simbus_rig.h — the driver on armsim's in-process bus for test_simbus*.c: a config loaded, the
 * bus made with armsim options, the real driver opened on its link, probed, enabled; and the
 * figures the tests compare with (bus time of bytes, the torque the devices apply). Test thread
 * only; failures end the test (cmocka).
 */
#ifndef TESTS_TOOLS_SIMBUS_RIG_H
#define TESTS_TOOLS_SIMBUS_RIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/drivers.h"
#include "tools/armsim/simbus.h"

#define TICK_NS 1000000ull /* the control tick: 1 ms */

/* The arm under test: its config (the driver's and the bus's), the bus and the driver. */
typedef struct {
    armd_config cfg;
    armsim_options opt;
    simbus *b;
    drv *d;
    double unit_a;   /* the protocol's current unit [A] */
    double vel_unit; /* the protocol's velocity unit [rpm] */
} rig;

/* Loads ini with the driver type forced to type; fails the test on errors. */
void rig_load(rig *r, const char *ini, cfg_driver_type type);
/* The bus with armsim options args (NULL-terminated, NULL: none; they must outlive the bus),
 * the driver opened on it and probed. */
void rig_start(rig *r, const char *const *args);
/* rig_start, torque on, and the clock moved on to the next whole tick. */
void rig_start_enabled(rig *r, const char *const *args);
/* Closes the driver and frees the bus. */
void rig_stop(rig *r);
/* The bus time of n bytes at the config's baud, 10 bits per byte [ns]. */
uint64_t rig_bytes_ns(const rig *r, size_t n);
/* The joint torque [N m|N] the devices apply when tau is written to joint j: each servo's share
 * rounded to the current unit (drv_torques_to_current), back to joint torque (armsim), summed. */
double rig_applied(const rig *r, int j, double tau);
/* Reads once a tick for `ticks` ticks, writing zero torque after each good read; read i's
 * outcome in ok[i], its request time in t_req[i] [ns]; a failed read must fail with want. */
void rig_read_ticks(rig *r, int ticks, bool *ok, uint64_t *t_req, drv_status want);

#endif
