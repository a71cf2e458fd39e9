/*
 * log.h — armd's log: one line per message on stderr, prefixed with the syslog priority
 * ("<3>" error ... "<7>" debug) so journald keeps the levels. Main thread only: never call it
 * from the control tick.
 */
#ifndef ARMD_LOG_H
#define ARMD_LOG_H

#include <stdarg.h>

enum {
    LOG_PRIO_ERR = 3,
    LOG_PRIO_WARNING = 4,
    LOG_PRIO_NOTICE = 5,
    LOG_PRIO_INFO = 6,
    LOG_PRIO_DEBUG = 7
};

/* Messages with a priority above max_prio (numerically) are dropped; default LOG_PRIO_INFO. */
void log_set_max_priority(int max_prio);
/* Writes "<prio>text\n" to stderr in one write (a multi-line text gets the prefix per line). */
void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int prio, const char *fmt, va_list ap);

#define log_err(...)    log_msg(LOG_PRIO_ERR, __VA_ARGS__)
#define log_warn(...)   log_msg(LOG_PRIO_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_PRIO_NOTICE, __VA_ARGS__)
#define log_info(...)   log_msg(LOG_PRIO_INFO, __VA_ARGS__)
#define log_debug(...)  log_msg(LOG_PRIO_DEBUG, __VA_ARGS__)

#endif
