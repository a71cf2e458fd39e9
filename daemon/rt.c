/*
 * rt.c — SCHED_FIFO, mlockall and CPU affinity for the control thread (see rt.h).
 */
#include "daemon/rt.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALTSTACK_MIN (64 * 1024) /* bytes; more than SIGSTKSZ, the handlers' calls are small */

static _Thread_local void *altstack_base; /* this thread's alternate stack (mmap) */
static _Thread_local size_t altstack_size;

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

int rt_altstack_enter(void)
{
    if (altstack_base) return 0;
    long page = sysconf(_SC_PAGESIZE);
    size_t size = (size_t)ALTSTACK_MIN;
    if ((size_t)SIGSTKSZ > size) size = (size_t)SIGSTKSZ;
    if (page > 0) size = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    stack_t ss = {.ss_sp = p, .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) < 0) {
        int e = errno;
        munmap(p, size);
        errno = e;
        return -1;
    }
    altstack_base = p;
    altstack_size = size;
    return 0;
}

void rt_altstack_leave(void)
{
    if (!altstack_base) return;
    stack_t ss = {.ss_flags = SS_DISABLE};
    if (sigaltstack(&ss, NULL) == 0) munmap(altstack_base, altstack_size);
    altstack_base = NULL;
}
