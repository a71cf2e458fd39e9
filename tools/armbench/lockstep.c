/*
 * lockstep.c — armbench --lockstep: how fast lockstep simulation runs (armd --lockstep: the real
 * loop, host and driver stepped against armsim's arm in process, daemon/lockstep.h). tools/demo's
 * move (7 s, every joint) plus 1 s of holding on an example arm from its ready pose, on the
 * simulated clock, against the wall clock and the process's CPU time; without a truth file, and
 * with one (every 10th physics step, as the lockstep tests write it). The median of 3 runs each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/control.h"
#include "daemon/lockstep.h"
#include "dynamics/dynamics.h"
#include "tests/daemon/demo_move.h"
#include "tools/armbench/bench.h"

#define RUNS     3
#define TARGET_X 20.0 /* the demo move at >= 20 x real time */

/* now on clock id [s]. */
static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One run: simulated seconds per wall second (and per CPU second into *cpu_x); -1 on failure
 * (said on stderr). truth: a --truth file (NULL: none). */
static double one_run(const char *ini, const char *q0, const char *truth, double *cpu_x)
{
    armd_config *cfg = calloc(1, sizeof *cfg);
    cfg_report rep;
    cfg_report_init(&rep);
    int nerr = cfg ? cfg_load(ini, cfg, &rep) : 1;
    cfg_report_free(&rep);
    if (nerr) {
        fprintf(stderr, "armbench: %s: configuration errors\n", ini);
        free(cfg);
        return -1;
    }
    char *argv[8] = {"--q0", (char *)q0};
    int argc = 2;
    if (truth) {
        argv[argc++] = "--truth", argv[argc++] = (char *)truth;
        argv[argc++] = "--truth-decimate", argv[argc++] = "10";
    }
    char err[512];
    double x = -1;
    lockstep *ls = lockstep_open(cfg, ini, argc, argv, err, sizeof err);
    dyn_model *m = ls ? dyn_model_create(&cfg->model, NULL, NULL) : NULL;
    ctl_error e = {"", ""};
    ctl *c = m ? ctl_create(cfg, m, lockstep_driver(ls), &e) : NULL;
    if (!c || lockstep_start(ls, c, &e) || ctl_enable(c, NULL, &e)) {
        fprintf(stderr, "armbench: lockstep on %s: %s%s\n", ini, ls ? "" : err, e.message);
        if (!c) dyn_model_free(m);
        goto out;
    }
    ctl_status st;
    ctl_status_get(c, &st);
    ctl_waypoint w[DEMO_POINTS];
    int np = demo_move(cfg, st.q_des, w);
    double t0 = lockstep_time(ls), wall0 = clock_s(CLOCK_MONOTONIC);
    double cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    double duration;
    if (ctl_trajectory(c, w, np, false, NULL, &duration, NULL, &e)) {
        fprintf(stderr, "armbench: the demo move on %s: %s\n", ini, e.message);
        goto out;
    }
    lockstep_run_until(ls, t0 + duration + 1.0);
    double sim = lockstep_time(ls) - t0;
    x = sim / (clock_s(CLOCK_MONOTONIC) - wall0);
    *cpu_x = sim / (clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
out:
    ctl_free(c);
    lockstep_free(ls);
    free(cfg);
    return x;
}

/* The median of v[0..RUNS). */
static double median(double *v)
{
    for (int i = 1; i < RUNS; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    return v[RUNS / 2];
}

int bench_lockstep(const char *examples)
{
    char ini[4096], truth[64];
    snprintf(ini, sizeof ini, "%s/puma560.ini", examples);
    snprintf(truth, sizeof truth, "/tmp/armbench-truth-%d.csv", (int)getpid());
    printf("lockstep: tools/demo's move (7 s) + 1 s holding, PUMA 560 at 1 kHz (dxl2 at 4 Mbps),\n"
           "physics at 10 kHz; simulated s per wall s (per CPU s), %d runs, median\n",
           RUNS);
    double worst = INFINITY;
    for (int k = 0; k < 2; k++) {
        double x[RUNS], cx[RUNS];
        for (int r = 0; r < RUNS; r++)
            if ((x[r] = one_run(ini, "0,1.5708,-1.5708,0,0,0", k ? truth : NULL, &cx[r])) < 0)
                return -1;
        double mx = median(x), mc = median(cx);
        printf("  %-30s %6.1f x   (%5.1f x CPU)\n",
               k ? "with --truth (every 10th step)" : "without a truth file", mx, mc);
        if (k == 0) worst = mx;
    }
    remove(truth);
    printf("target: the demo move at >= %.0f x real time: %s\n", TARGET_X,
           worst >= TARGET_X ? "met" : "NOT met");
    return 0;
}
