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

/* Ground truth, whatever the file's column order: rows of 2 + 4n doubles in the order
 * t, q[n], qd[n], tau[n], ext[n], wall_force (see tools/armsim/truth.h for the units). */
typedef struct {
    int n;
    size_t rows;
    double *v;
    int has_contact; /* the file had the ext1..extn and wall_force columns (else they read 0) */
} truth_table;

/* Offsets into a truth_row of the first entry of each quantity. */
#define TRUTH_T             0
#define TRUTH_Q(n)          1
#define TRUTH_QD(n)         (1 + (n))
#define TRUTH_TAU(n)        (1 + 2 * (n))
#define TRUTH_EXT(n)        (1 + 3 * (n))
#define TRUTH_WALL_FORCE(n) (1 + 4 * (n))

/* Reads a truth CSV written by armsim, finding the columns by their header names (t, q1..qn,
 * qd1..qdn, tau1..taun required; ext1..extn, wall_force optional; unknown columns ignored).
 * 0, or -1 (missing or repeated column, a row that is not all numbers). */
int truth_load(const char *path, int n, truth_table *t);
static inline const double *truth_row(const truth_table *t, size_t i)
{
    return t->v + i * (size_t)(2 + 4 * t->n);
}
void truth_free(truth_table *t);

/* Sleeps s seconds. */
void sim_sleep(double s);
/* CLOCK_MONOTONIC now [s]. */
double sim_elapsed(void);

#endif
