/*
 * serial.h — drivers/-private byte transport, two kinds of port behind one interface:
 *  - a serial port on libserialport: open by path (symlinks to pseudo-terminals work), 8N1, no
 *    flow control, low latency where the device supports it, flushed on open; reads and writes
 *    against a CLOCK_MONOTONIC deadline in nanoseconds (ppoll on the port's descriptor,
 *    microsecond resolution);
 *  - a caller's drv_link (drivers.h): every call forwarded to it, on the link's clock.
 * Every deadline is on the port's own clock (serial_now_ns). No allocation after open.
 */
#ifndef ARMD_DRIVERS_SERIAL_H
#define ARMD_DRIVERS_SERIAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "drivers/drivers.h"

typedef struct serial_port serial_port;

/* The port's clock now [ns]: CLOCK_MONOTONIC for a serial port, the link's clock for a link. */
uint64_t serial_now_ns(const serial_port *p);
/* Lets ns pass on the port's clock (nanosleep; a link's sleep_ns). Where the driver pauses,
 * it pauses here, so that a link's clock moves instead of the thread sleeping. */
void serial_sleep_ns(serial_port *p, uint64_t ns);

/* Opens path at baud 8N1 without flow control. NULL with a message in err on failure; errno is
 * then EBUSY when another process holds the port (flock / TIOCEXCL). */
serial_port *serial_open(const char *path, int baud, char *err, size_t errlen);
/* A port forwarding to link (copied; link->ctx must outlive the port). NULL with a message in
 * err when a callback is missing. */
serial_port *serial_open_link(const drv_link *link, char *err, size_t errlen);
void serial_close(serial_port *p);

/* Writes all n bytes before deadline_ns: 0, or -1 with errno ETIMEDOUT / an I/O error. */
int serial_write(serial_port *p, const uint8_t *data, size_t n, uint64_t deadline_ns);
/* Waits until at least one byte is available or the deadline passes, then reads what is there
 * (up to cap). After the deadline the buffer is checked once more: bytes that arrived while
 * the caller was descheduled count. Returns bytes read (> 0), 0 on timeout, -1 on an I/O error
 * (port gone). */
ssize_t serial_read(serial_port *p, uint8_t *buf, size_t cap, uint64_t deadline_ns);
/* Discards unread input and unsent output (at open only; a link: its unread input). */
void serial_flush(serial_port *p);
/* Discards unread input only (before a request: a stale reply must not answer it). Output is
 * never flushed in operation: it would cut the previous request (e.g. a Sync Write) short. */
void serial_flush_input(serial_port *p);
/* The underlying descriptor (tests, and the fatal-signal torque off); -1 for a link. */
int serial_fd(const serial_port *p);
/* From here on serial_write() sends nothing (fails with EPIPE): the bus stays quiet for a last
 * frame written straight to the descriptor. Async-signal-safe (one lock-free atomic store). */
void serial_silence(serial_port *p);

#endif
