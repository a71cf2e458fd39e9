/*
 * fake_port.c — the scripted serial transport (see fake_port.h): drivers/serial.h on a virtual
 * clock, reads fed from the fuzz input, writes handed to a device model.
 */
#include "tests/drivers/fake_port.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/serial.h"

enum { OP_SILENCE, OP_RAW, OP_REPLY, OP_DELAY, OP_IO_ERROR, OP_WRITE_FAIL };

struct serial_port {
    fake_port *fp;
    bool silenced; /* serial_silence(): writes refused from then on */
};

static fake_port *current; /* the port of this run (fake_port_begin) */

void (*fake_port_recorder)(const uint8_t *b, size_t n);

uint8_t fz_u8(fz_in *in)
{
    return in->pos < in->n ? in->p[in->pos++] : 0;
}

bool fz_more(const fz_in *in)
{
    return in->pos < in->n;
}

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz property violated: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

void fake_port_begin(fake_port *fp, const uint8_t *script, size_t n, int baud, fake_port_device dev)
{
    memset(fp, 0, offsetof(fake_port, pending));
    fp->script = (fz_in){script, n, 0};
    fp->dev = dev;
    fp->baud = baud > 0 ? baud : 1;
    fp->max_wait_ns = UINT64_MAX;
    fp->overrun_ns = UINT64_MAX / 2;
    fp->now_ns = 1000000000u; /* any start; the drivers only use differences */
    current = fp;
}

/* Time on the wire of n bytes at the port's baud rate [ns]. */
static uint64_t wire_ns(const fake_port *fp, size_t n)
{
    return (uint64_t)n * 10u * 1000000000u / (uint64_t)fp->baud;
}

/* The port's state, after checking it is open. */
static fake_port *port_of(serial_port *p, const char *what)
{
    if (!p || !p->fp || p->fp != current) fz_fail("%s on a port that is not open", what);
    return p->fp;
}

uint64_t serial_now_ns(const serial_port *p)
{
    (void)p;
    return current ? current->now_ns : 0;
}

void serial_sleep_ns(serial_port *p, uint64_t ns)
{
    port_of(p, "sleep")->now_ns += ns;
}

serial_port *serial_open_link(const drv_link *link, char *err, size_t errlen)
{
    (void)link;
    snprintf(err, errlen, "the fake port has no link");
    return NULL;
}

serial_port *serial_open(const char *path, int baud, char *err, size_t errlen)
{
    if (!current || current->opens != current->closes) {
        snprintf(err, errlen, "%s: fake port already open", path);
        return NULL;
    }
    serial_port *p = malloc(sizeof *p); /* a leak shows under LeakSanitizer */
    if (!p) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    (void)baud;
    p->fp = current;
    p->silenced = false;
    current->opens++;
    return p;
}

void serial_close(serial_port *p)
{
    if (!p) return;
    fake_port *fp = port_of(p, "close");
    fp->closes++;
    p->fp = NULL;
    free(p);
}

int serial_fd(const serial_port *p)
{
    (void)p;
    return -1;
}

void serial_flush(serial_port *p)
{
    fake_port *fp = port_of(p, "flush");
    fp->pend_len = fp->pend_pos = 0;
}

void serial_flush_input(serial_port *p)
{
    serial_flush(p);
}

void serial_silence(serial_port *p)
{
    p->silenced = true;
}

int serial_write(serial_port *p, const uint8_t *data, size_t n, uint64_t deadline_ns)
{
    fake_port *fp = port_of(p, "write");
    if (p->silenced) {
        errno = EPIPE;
        return -1;
    }
    fp->writes++;
    fp->tx_start_ns = fp->now_ns;
    fp->tx_deadline_ns = 0;
    fp->tx_chunk_ns = 0;
    bool lost = fp->write_fails;
    if (fp->dev.written) fp->dev.written(fp->dev.ctx, data, n, lost);
    if (lost) {
        fp->write_fails = false;
        if (fp->write_errno == ETIMEDOUT && deadline_ns > fp->now_ns) fp->now_ns = deadline_ns;
        errno = fp->write_errno;
        return -1;
    }
    return 0;
}

/* Appends up to n bytes to the pending input (what does not fit is lost, as in a full
 * kernel buffer). */
static void arrive(fake_port *fp, const uint8_t *b, size_t n)
{
    size_t room = sizeof fp->pending - fp->pend_len;
    if (n > room) n = room;
    if (fake_port_recorder && n) fake_port_recorder(b, n);
    memcpy(fp->pending + fp->pend_len, b, n);
    fp->pend_len += n;
}

/* A read that times out: the clock jumps to the deadline. */
static ssize_t time_out(fake_port *fp, uint64_t deadline_ns)
{
    if (deadline_ns > fp->now_ns) fp->now_ns = deadline_ns;
    return 0;
}

/* Checks a read's deadline against the transaction it belongs to (see fake_port.h). */
static void check_deadline(fake_port *fp, uint64_t deadline_ns)
{
    if (deadline_ns > fp->tx_start_ns && deadline_ns - fp->tx_start_ns > fp->max_wait_ns)
        fz_fail("read deadline %llu ns after the request, at most %llu allowed",
                (unsigned long long)(deadline_ns - fp->tx_start_ns),
                (unsigned long long)fp->max_wait_ns);
    if (deadline_ns > fp->tx_deadline_ns) fp->tx_deadline_ns = deadline_ns;
    uint64_t late = fp->now_ns > fp->tx_deadline_ns ? fp->now_ns - fp->tx_deadline_ns : 0;
    if (late > fp->tx_chunk_ns + fp->overrun_ns)
        fz_fail("still reading %llu ns after the transaction's deadline (%llu ns after the "
                "request): the transaction does not end at its deadline",
                (unsigned long long)late, (unsigned long long)(fp->now_ns - fp->tx_start_ns));
}

ssize_t serial_read(serial_port *p, uint8_t *buf, size_t cap, uint64_t deadline_ns)
{
    fake_port *fp = port_of(p, "read");
    fp->reads++;
    check_deadline(fp, deadline_ns);
    static uint8_t reply[sizeof fp->pending];
    for (;;) {
        if (fp->pend_pos < fp->pend_len) {
            size_t n = fp->pend_len - fp->pend_pos;
            if (n > cap) n = cap;
            memcpy(buf, fp->pending + fp->pend_pos, n);
            fp->pend_pos += n;
            if (fp->pend_pos == fp->pend_len) fp->pend_len = fp->pend_pos = 0;
            uint64_t t = wire_ns(fp, n);
            fp->now_ns += t;
            if (t > fp->tx_chunk_ns) fp->tx_chunk_ns = t;
            if (fp->dev.delivered) fp->dev.delivered(fp->dev.ctx, buf, n);
            return (ssize_t)n;
        }
        fz_in *s = &fp->script;
        if (!fz_more(s)) return time_out(fp, deadline_ns);
        switch (fz_u8(s) & 7) {
        case OP_SILENCE:
            return time_out(fp, deadline_ns);
        case OP_RAW: {
            size_t n = fz_u8(s);
            if (n > s->n - s->pos) n = s->n - s->pos;
            arrive(fp, s->p + s->pos, n);
            s->pos += n;
            break;
        }
        case OP_DELAY: {
            uint64_t t = (uint64_t)fz_u8(s) * 10000u;
            if (fp->now_ns + t >= deadline_ns) return time_out(fp, deadline_ns);
            fp->now_ns += t;
            break;
        }
        case OP_IO_ERROR:
            errno = EIO;
            return -1;
        case OP_WRITE_FAIL:
            fp->write_fails = true;
            fp->write_errno = fz_u8(s) & 1 ? EIO : ETIMEDOUT;
            break;
        default: /* OP_REPLY and the two spare codes: the device answers */
            if (fp->dev.reply)
                arrive(fp, reply, fp->dev.reply(fp->dev.ctx, s, reply, sizeof reply));
            break;
        }
    }
}
