/*
 * ident_run.h — what `armctl identify` (identify.c), its recording (ident_record.c) and its
 * writers (ident_report.c) share: the command line, a recorded run, the run made ready for the
 * fit and the validation figures.
 * Units: SI, joint side; times in armd's clock [s].
 */
#ifndef ARMCTL_IDENT_RUN_H
#define ARMCTL_IDENT_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "config/config.h"
#include "tools/armctl/client.h"
#include "tools/armctl/ident_excite.h"
#include "tools/armctl/ident_fit.h"

#define ID_PREFIX     "armctl: identify: "
#define ID_DECIMATE   4  /* every 4th sample into the fit */
#define ID_PLOT_DECIM 10 /* every 10th validation sample into the plot's data */

/* The command line. */
typedef struct {
    const char *config, *out, *report;
    double period, swing, cutoff;
    int periods, harmonics, candidates;
    unsigned long long seed;
} id_options;

/* One recorded run: the samples (t, q, qd, tau per joint) and how it ended. */
typedef struct {
    int n;
    long len, cap;
    double *t, *mono;     /* armd's control time; CLOCK_MONOTONIC [s] */
    double *q, *qd, *tau; /* len x n, row per sample; tau: tau_meas, else the commanded tau */
    bool measured;        /* every tau is tau_meas (the servos' report) */
    json_int_t first_id, last_id;
    double t_from, t_end, duration;
    bool closed;
    long lost; /* samples armd's ring lost before its recorder read them */
    char failure[400];
} id_rec;

/* A run made ready for the fit: filtered q, qd, tau and qdd in place of the raw ones, and
 * use[i] set for the samples away from every stretch's ends. */
typedef struct {
    double *qdd;
    unsigned char *use;
    long gaps, used;     /* where the samples are not one period apart; the samples use marks */
    unsigned char *near; /* [i * n + j]: joint j's velocity reverses within the filter's reach */
} id_ready;

/* The validation figures: RMS error per joint and over all (in % of the torque's RMS) of the
 * torques pi predicts. */
typedef struct {
    double rms[DYN_MAX_DOF], tau_rms[DYN_MAX_DOF], percent;
    long samples;
} id_validation;

/* Runs e periods times and records it into r (ident_record.c, through armd's recorder): 0, or 1
 * (reported; a motion armd would go on running is cancelled). */
int ident_run_motion(armctl_conn *c, const ident_excitation *e, int periods, const char *what,
                     id_rec *r);
/* Frees r's samples and zeroes it. */
void ident_rec_free(id_rec *r);

/* The recorded samples as they came (before filtering), appended to out: motion name, armd's
 * time, CLOCK_MONOTONIC, then q, qd, tau per joint. */
void ident_write_samples(FILE *out, const char *what, const id_rec *r);

/* The INI fragment at path ("-": stdout): one [joint NAME] section per joint with the identified
 * dynamics keys of pi; 0, or 1 (reported). */
int ident_write_ini(const char *path, const armd_config *cfg, const double *pi,
                    const id_validation *v, const id_validation *v0);

/* The report: the motion and the torque fitted (measured: the servos' tau_meas, else the
 * commanded tau), the base parameters with their standard deviations, the validation table. */
void ident_write_report(FILE *f, const armd_config *cfg, const ident_result *res,
                        const id_validation *v, const id_validation *v0, double cond,
                        const id_options *o, double seconds, bool measured);

/* The plot: measured and predicted validation torques per joint, PREFIX.dat, PREFIX.gp and
 * (when gnuplot runs) PREFIX.png. */
void ident_write_plot(const char *prefix, ident_fit *f, const double *pi, const id_rec *r,
                      const id_ready *rd, const armd_config *cfg);

#endif
