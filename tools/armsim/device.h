/*
 * device.h — what the simulated devices (dxl2 servos, armlink board) share: the environment
 * they act in and the reply path with fault injection. A device runs on one thread, the one that
 * feeds it (the armsim program's serving loop, or the in-process bus's caller); its times are
 * that thread's clock [ns] (CLOCK_MONOTONIC, or the simulated clock), the physics' clock too.
 */
#ifndef ARMSIM_DEVICE_H
#define ARMSIM_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "tools/armsim/faults.h"
#include "tools/armsim/options.h"
#include "tools/armsim/physics.h"

/* Where a device's replies go: the line after its return delay. */
typedef struct {
    void *ctx;
    /* Puts one complete reply of n bytes on the line delay_us [us] after the request (or after
     * the previous reply of the same request); the pty waits that long, then writes; the
     * in-process bus queues it to arrive then. */
    void (*send)(void *ctx, const uint8_t *buf, size_t n, long delay_us);
} device_out;

typedef struct {
    const armd_config *cfg;
    const armsim_options *opt;
    physics *phys;
    armsim_faults *faults;
    device_out out;
} device_env;

/* A simulated device on the line: bytes in, replies out through device_reply(). */
typedef struct {
    void *self;
    /* Consumes bytes received at now_ns, answering complete requests. */
    void (*feed)(void *self, const uint8_t *data, size_t n, uint64_t now_ns);
    /* Periodic housekeeping (watchdogs, scheduled alerts), at least every 10 ms. */
    void (*tick)(void *self, uint64_t now_ns);
    void (*destroy)(void *self);
    char summary[64]; /* for the ready line, e.g. "dxl2, 6 servos" */
} sim_device;

/* Sends one reply through env->out after delay_us (the device's return delay) plus --delay-us,
 * unless --drop swallows it. When --corrupt-crc picks it, the byte at crc_pos is inverted
 * first. */
void device_reply(const device_env *env, uint8_t *buf, size_t n, size_t crc_pos, long delay_us);

int dxl2_device_create(const device_env *env, sim_device *out, char *err, size_t errlen);
int armlink_device_create(const device_env *env, sim_device *out, char *err, size_t errlen);

#endif
