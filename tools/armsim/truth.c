/*
 * truth.c — ground-truth logger: SPSC ring (C11 atomics) filled by the physics thread, drained
 * by a writer thread into a buffered FILE (TRUTH_WRITER_THREAD); or each row formatted into the
 * FILE's buffer by the pushing thread itself (TRUTH_SYNCHRONOUS).
 */
#include "tools/armsim/truth.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRUTH_RING 65536 /* records; a power of two */

struct truth_log {
    FILE *f;
    int n, n_extra, decimate, count;
    size_t rec;   /* doubles per record: 1 + 4n + 5 (t, q, qd, tau, ext, wall_force, tool, mono)
                     + n_extra (a flexible arm's modal coordinates and tool deflection) */
    double *ring; /* TRUTH_SYNCHRONOUS: one record, formatted at once */
    bool sync;    /* TRUTH_SYNCHRONOUS: no ring, no thread */
    _Atomic uint64_t head, tail; /* head: next slot to write, tail: next slot to read */
    _Atomic bool stop;
    _Atomic uint64_t lost;
    pthread_t thread;
};

/* Writes record r as one line; false when the file refused it. */
static bool write_row(truth_log *t, const double *r)
{
    int bad = fprintf(t->f, "%.7f", r[0]) < 0;
    const size_t mono = 5 + 4 * (size_t)t->n;
    for (size_t i = 1; i < mono; i++) bad |= fprintf(t->f, ",%.10g", r[i]) < 0;
    bad |= fprintf(t->f, ",%.9f", r[mono]) < 0; /* mono: ns over days of uptime */
    for (size_t i = mono + 1; i < t->rec; i++) bad |= fprintf(t->f, ",%.10g", r[i]) < 0;
    bad |= fputc('\n', t->f) == EOF;
    return !bad;
}

/* Writes every queued record to the file. */
static void drain(truth_log *t)
{
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    while (tail != head) {
        (void)write_row(t, t->ring + (tail & (TRUTH_RING - 1)) * t->rec);
        tail++;
        atomic_store_explicit(&t->tail, tail, memory_order_release);
    }
}

/* Writer thread: drains every 2 ms until told to stop, then once more. */
static void *writer(void *arg)
{
    truth_log *t = arg;
    const struct timespec nap = {0, 2000000};
    while (!atomic_load(&t->stop)) {
        drain(t);
        nanosleep(&nap, NULL);
    }
    drain(t);
    return NULL;
}

/* Opens the file, writes the header, starts the writer (unless mode is TRUTH_SYNCHRONOUS). */
truth_log *truth_open(const char *path, int n, int decimate, const char *extra_header, int n_extra,
                      truth_mode mode, char *err, size_t errlen)
{
    truth_log *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->n = n;
    t->decimate = decimate > 0 ? decimate : 1;
    t->n_extra = n_extra > 0 ? n_extra : 0;
    t->rec = 6 + 4 * (size_t)n + (size_t)t->n_extra;
    t->sync = mode == TRUTH_SYNCHRONOUS;
    t->ring = malloc((t->sync ? 1 : TRUTH_RING) * t->rec * sizeof(double));
    t->f = fopen(path, "w");
    if (!t->ring || !t->f) {
        snprintf(err, errlen, "--truth %s: %s", path, t->ring ? strerror(errno) : "out of memory");
        if (t->f) fclose(t->f);
        free(t->ring);
        free(t);
        return NULL;
    }
    setvbuf(t->f, NULL, _IOFBF, 1 << 20);
    fputs("t", t->f);
    for (int i = 1; i <= n; i++) fprintf(t->f, ",q%d", i);
    for (int i = 1; i <= n; i++) fprintf(t->f, ",qd%d", i);
    for (int i = 1; i <= n; i++) fprintf(t->f, ",tau%d", i);
    for (int i = 1; i <= n; i++) fprintf(t->f, ",ext%d", i);
    fputs(",wall_force,tool_x,tool_y,tool_z,mono", t->f);
    if (t->n_extra && extra_header) fputs(extra_header, t->f);
    fputc('\n', t->f);
    if (!t->sync && pthread_create(&t->thread, NULL, writer, t) != 0) {
        snprintf(err, errlen, "--truth: cannot start the writer thread");
        fclose(t->f);
        free(t->ring);
        free(t);
        return NULL;
    }
    return t;
}

/* Takes one row (see truth.h): into the ring, or straight into the file. */
void truth_push(truth_log *t, double time, double mono, const double *q, const double *qd,
                const double *tau, const double *ext, double wall_force, const double *tool,
                const double *extra)
{
    if (!t) return;
    if (t->count++ % t->decimate != 0) return;
    uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
    if (!t->sync && head - tail >= TRUTH_RING) {
        atomic_fetch_add(&t->lost, 1);
        return;
    }
    double *r = t->sync ? t->ring : t->ring + (head & (TRUTH_RING - 1)) * t->rec;
    r[0] = time;
    memcpy(r + 1, q, (size_t)t->n * sizeof(double));
    memcpy(r + 1 + t->n, qd, (size_t)t->n * sizeof(double));
    memcpy(r + 1 + 2 * t->n, tau, (size_t)t->n * sizeof(double));
    memcpy(r + 1 + 3 * t->n, ext, (size_t)t->n * sizeof(double));
    r[1 + 4 * t->n] = wall_force;
    for (int i = 0; i < 3; i++) r[2 + 4 * t->n + i] = tool[4 * i + 3];
    r[5 + 4 * t->n] = mono;
    if (t->n_extra) memcpy(r + 6 + 4 * t->n, extra, (size_t)t->n_extra * sizeof(double));
    if (t->sync) {
        if (!write_row(t, r)) atomic_fetch_add(&t->lost, 1);
        return;
    }
    atomic_store_explicit(&t->head, head + 1, memory_order_release);
}

void truth_flush(truth_log *t)
{
    if (t && t->sync && fflush(t->f) != 0) atomic_fetch_add(&t->lost, 1);
}

/* Stops the writer after its last drain, closes the file; the records lost. */
uint64_t truth_close(truth_log *t)
{
    if (!t) return 0;
    if (!t->sync) {
        atomic_store(&t->stop, true);
        pthread_join(t->thread, NULL);
    }
    bool flushed = fclose(t->f) == 0;
    uint64_t lost = atomic_load(&t->lost);
    if (t->sync && !flushed && lost == 0) lost = 1; /* the buffer's last rows, at least one */
    free(t->ring);
    free(t);
    return lost;
}
