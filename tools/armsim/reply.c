/*
 * reply.c — the reply path shared by both devices: return delay, --delay-us, --drop and
 * --corrupt-crc, then the bytes onto the pty.
 */
#include "tools/armsim/device.h"
#include "tools/armsim/simclock.h"

void device_reply(const device_env *env, uint8_t *buf, size_t n, size_t crc_pos, long delay_us)
{
    if (faults_drop_reply(env->faults)) return;
    if (crc_pos < n && faults_corrupt_reply(env->faults)) buf[crc_pos] ^= 0xFF;
    armsim_sleep_us(delay_us + faults_delay_us(env->faults));
    pty_write_all(env->pty, buf, n);
}
