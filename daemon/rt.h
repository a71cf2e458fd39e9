/*
 * rt.h — real-time setup for the control thread: SCHED_FIFO priority, memory locking, CPU
 * pinning. Each returns 0, or -1 with why (a sentence for one warning); the caller runs on.
 * Also the per-thread alternate signal stack the fatal-signal handler runs on (fatal.c).
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
/* Gives the calling thread its own alternate signal stack (mmap, not malloc; sigaltstack is per
 * thread), so a handler with SA_ONSTACK runs even after a stack overflow. 0, or -1 (errno). */
int rt_altstack_enter(void);
/* Removes and frees the calling thread's alternate stack (at the end of the thread's body). */
void rt_altstack_leave(void);

#endif
