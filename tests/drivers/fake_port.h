/*
 * fake_port.h — a scripted serial transport for fuzzing the drivers: it implements every
 * function of drivers/serial.h (so the real driver code links against it instead of
 * drivers/serial.c) on a virtual CLOCK_MONOTONIC, and feeds the driver's reads from a script
 * (the fuzz input). Single-threaded, one port at a time.
 *
 * Time: the clock only moves when the script says so. A read that the script answers with
 * "nothing" returns 0 at once and sets the clock to the read's deadline, so every timeout
 * passes instantly; delivered bytes advance the clock by their time on the wire (10 bits per
 * byte at the port's baud), as a line that really carries them would.
 *
 * Script: a sequence of operations, each one byte (low 3 bits) and its arguments:
 *   0 SILENCE      nothing arrives before the deadline: the read times out
 *   1 RAW n        n (next byte) raw bytes arrive
 *   2,6,7 REPLY    the device model (fake_port_device.reply) answers the last request; its
 *                  mutations and data are taken from the script too
 *   3 DELAY t      nothing for t * 10 us (next byte); a read whose deadline passes meanwhile
 *                  times out, the next operation is then the next read's
 *   4 IO_ERROR     the read fails (-1, errno EIO), as an unplugged adapter
 *   5 WRITE_FAIL e the next write fails: e even -> ETIMEDOUT, odd -> EIO
 * When the script is used up, every read times out.
 *
 * Checks made here (abort() on violation, which the fuzzer reports as a crash):
 *  - reads and writes only on an open port; the port is closed exactly once;
 *  - every deadline passed to a read lies within fake_port.max_wait_ns of the last write
 *    (a transaction's deadline is bounded by the configured timeout and bus time);
 *  - a read is never started later than the wire time of the largest chunk delivered in the
 *    transaction plus fake_port.overrun_ns past its latest deadline: a transaction ends at
 *    its deadline even while bytes keep arriving (one read that began in time may still take
 *    what is there).
 */
#ifndef ARMD_TESTS_FAKE_PORT_H
#define ARMD_TESTS_FAKE_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fuzz input as a cursor: bytes are taken from the front; past the end every byte is 0. */
typedef struct {
    const uint8_t *p;
    size_t n, pos;
} fz_in;

/* The next input byte (0 when the input is used up). */
uint8_t fz_u8(fz_in *in);
/* Whether input is left. */
bool fz_more(const fz_in *in);

/* Reports a violated property on stderr and aborts (the fuzzer's crash). */
void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The device side the fake port talks to (one protocol), all optional. */
typedef struct {
    void *ctx;
    /* Sees every request the driver writes (n bytes, one call per serial_write); lost: the
     * write failed (WRITE_FAIL), the device never received it. */
    void (*written)(void *ctx, const uint8_t *b, size_t n, bool lost);
    /* Builds the device's reply to the last request into out (cap bytes), mutations and data
     * taken from in; returns its length (0: the device says nothing). */
    size_t (*reply)(void *ctx, fz_in *in, uint8_t *out, size_t cap);
    /* Sees every byte delivered to the driver, in order. */
    void (*delivered)(void *ctx, const uint8_t *b, size_t n);
} fake_port_device;

typedef struct {
    fz_in script;
    fake_port_device dev;
    int baud;             /* bus time of delivered bytes: 10 bits per byte */
    uint64_t max_wait_ns; /* longest allowed read deadline after a write [ns] */
    uint64_t overrun_ns;  /* slack past a transaction's deadline and last chunk [ns] */

    /* state, read by the fuzz targets */
    uint64_t now_ns;           /* the virtual clock */
    int opens, closes;         /* serial_open / serial_close calls */
    uint64_t writes, reads;    /* serial_write / serial_read calls */
    uint64_t tx_start_ns;      /* clock at the last write */
    uint64_t tx_deadline_ns;   /* latest read deadline since the last write */
    uint64_t tx_chunk_ns;      /* wire time of the largest chunk read since the last write */
    bool write_fails;          /* WRITE_FAIL pending */
    int write_errno;           /* its errno */
    size_t pend_len, pend_pos; /* bytes of a REPLY / RAW not yet read: pending[pos..len) */
    uint8_t pending[8192];     /* last: fake_port_begin does not clear it */
} fake_port;

/* When set, sees the bytes of every RAW and REPLY operation as they arrive, in order
 * (gen_drv_corpus records device model replies as raw transcripts with it). */
extern void (*fake_port_recorder)(const uint8_t *b, size_t n);

/* Starts a run: the port that the next serial_open returns, reset to the given script. */
void fake_port_begin(fake_port *fp, const uint8_t *script, size_t n, int baud,
                     fake_port_device dev);

#endif
