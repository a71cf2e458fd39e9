/*
 * rt.c — SCHED_FIFO, mlockall and CPU affinity for the control thread (see rt.h).
 */
#include "daemon/rt.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int rt_set_fifo(pthread_t t, int priority, char *why, size_t len)
{
    if (priority <= 0) return 0;
    struct sched_param sp = {.sched_priority = priority};
    int rc = pthread_setschedparam(t, SCHED_FIFO, &sp);
    if (rc) {
        snprintf(why, len,
                 "could not set SCHED_FIFO priority %d (%s); the control thread runs with normal "
                 "scheduling",
                 priority, strerror(rc));
        return -1;
    }
    return 0;
}

int rt_pin_cpu(pthread_t t, int cpu, char *why, size_t len)
{
    if (cpu < 0) return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int rc = pthread_setaffinity_np(t, sizeof set, &set);
    if (rc) {
        snprintf(why, len, "could not pin the control thread to CPU %d (%s); it runs unpinned", cpu,
                 strerror(rc));
        return -1;
    }
    return 0;
}

int rt_lock_memory(char *why, size_t len)
{
    if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
        snprintf(why, len, "could not lock memory (mlockall: %s); page faults may delay ticks",
                 strerror(errno));
        return -1;
    }
    return 0;
}

void rt_prefault_stack(size_t size)
{
    unsigned char buf[size];
    memset(buf, 0, size);
    __asm__ volatile("" : : "r"(buf) : "memory"); /* keep the writes */
}
