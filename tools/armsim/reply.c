/*
 * reply.c — the reply path shared by both devices: --drop and --corrupt-crc, then the bytes to
 * the line (env->out) after the return delay plus --delay-us. Device thread.
 */
#include "tools/armsim/device.h"

/* See device.h: the faults' decisions, then the output's send. */
void device_reply(const device_env *env, uint8_t *buf, size_t n, size_t crc_pos, long delay_us)
{
    if (faults_drop_reply(env->faults)) return;
    if (crc_pos < n && faults_corrupt_reply(env->faults)) buf[crc_pos] ^= 0xFF;
    env->out.send(env->out.ctx, buf, n, delay_us + faults_delay_us(env->faults));
}
