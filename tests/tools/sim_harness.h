/*
 * sim_harness.h — runs a real armsim process for the integration tests: a private temporary
 * directory with the link and the truth file, the ready line awaited, the process always
 * stopped; plus the truth CSV reader and config loading for the driver side.
 */
#ifndef TESTS_TOOLS_SIM_HARNESS_H
#define TESTS_TOOLS_SIM_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include "config/config.h"

typedef struct {
    pid_t pid;
    char dir[256];   /* private temporary directory */
    char link[300];  /* dir/tty: the pty symlink */
    char truth[300]; /* dir/truth.csv */
    int out_fd;      /* armsim's stdout */
} sim_proc;

/* Path of the armsim executable (env ARMSIM) and of a data file (env ARMSIM_TEST_DATA). */
const char *sim_armsim_path(void);
/* Starts "armsim -c ini --link dir/tty --truth dir/truth.csv extra..." (extra NULL-terminated,
 * may be NULL) and waits up to 15 s for its ready line. 0, or -1 (child killed). */
int sim_start(sim_proc *s, const char *ini, const char *const *extra);
/* SIGTERM, wait (SIGKILL after 10 s); returns the exit status (or -1), idempotent. */
int sim_stop(sim_proc *s);
/* Removes the truth file, the link and the directory. */
void sim_cleanup(sim_proc *s);
/* Stops and cleans up every simulator still running (test teardown after a failed assertion);
 * returns 0 for use as a cmocka teardown. */
int sim_teardown(void **state);

/* The config as armd would load it, with the port pointed at the simulator's link and the
 * driver type forced (type < 0: keep the file's). Aborts the test on errors. */
armd_config *sim_load_config(const char *ini, const char *link, int type);

/* Ground truth: rows of 1 + 3n doubles (t, q, qd, tau). */
typedef struct {
    int n;
    size_t rows;
    double *v;
} truth_table;

/* Reads a truth CSV written by armsim (header checked). 0, or -1. */
int truth_load(const char *path, int n, truth_table *t);
static inline const double *truth_row(const truth_table *t, size_t i)
{
    return t->v + i * (size_t)(1 + 3 * t->n);
}
void truth_free(truth_table *t);

/* Sleeps s seconds. */
void sim_sleep(double s);
/* CLOCK_MONOTONIC now [s]. */
double sim_elapsed(void);

#endif
