/*
 * rt.h — real-time setup for the control thread: SCHED_FIFO priority, memory locking, CPU
 * pinning. Each returns 0, or -1 with why (a sentence for one warning); the caller runs on.
 */
#ifndef ARMD_RT_H
#define ARMD_RT_H

#include <pthread.h>
#include <stddef.h>

int rt_set_fifo(pthread_t t, int priority, char *why, size_t len);
int rt_pin_cpu(pthread_t t, int cpu, char *why, size_t len);
int rt_lock_memory(char *why, size_t len);
/* Touches size bytes of the calling thread's stack so page faults happen now, not in a tick. */
void rt_prefault_stack(size_t size);

#endif
