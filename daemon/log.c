/*
 * log.c — stderr logging with syslog priority prefixes (see log.h).
 */
#include "daemon/log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int max_priority = LOG_PRIO_INFO;

void log_set_max_priority(int max_prio)
{
    max_priority = max_prio;
}

/* Formats the message and writes it with "<prio>" before every line, in a single write(2) so
 * lines from one message never interleave with other output. */
void log_vmsg(int prio, const char *fmt, va_list ap)
{
    if (prio > max_priority) return;
    char text[2048];
    vsnprintf(text, sizeof text, fmt, ap);
    char out[4096];
    size_t o = 0;
    const char *p = text;
    while (*p && o + 8 < sizeof out) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        int w = snprintf(out + o, sizeof out - o, "<%d>%.*s\n", prio, (int)len, p);
        if (w < 0) break;
        o += (size_t)w;
        if (o >= sizeof out) {
            o = sizeof out - 1;
            out[o - 1] = '\n';
            break;
        }
        p += len;
        if (*p == '\n') p++;
    }
    if (o == 0) o = (size_t)snprintf(out, sizeof out, "<%d>\n", prio);
    ssize_t r = write(STDERR_FILENO, out, o);
    (void)r;
}

void log_msg(int prio, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vmsg(prio, fmt, ap);
    va_end(ap);
}
