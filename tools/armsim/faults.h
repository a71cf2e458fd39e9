/*
 * faults.h — fault injection decisions, deterministic for a given --seed, and the random
 * numbers for encoder noise. Used only by the device thread (not thread-safe): the armsim
 * program's serving loop, or the in-process bus's caller. Times are on the devices' clock
 * (CLOCK_MONOTONIC, or the simulated clock in process) [ns].
 */
#ifndef ARMSIM_FAULTS_H
#define ARMSIM_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/armsim/options.h"

typedef struct {
    double drop, corrupt_crc, wrong_id; /* probabilities per reply */
    long delay_us;
    double silent_after, alert_after; /* [s], < 0 = never */
    int silent_id;                    /* --silent-id: the silence is this servo's alone; -1 */
    double faults_after;              /* per-reply faults act from then on [s] */
    bool armed;                       /* per-reply faults active (set by faults_arm) */
    uint64_t start_ns;                /* the clock at start */
    int lose;                         /* replies still to lose at once (faults_lose_replies) */
    uint64_t silent_until_ns;         /* requests ignored before this (faults_silence_until) */
    uint64_t rng;                     /* splitmix64 state */
    uint64_t rng_noise;
    bool alert_fired;
    /* counters */
    uint64_t n_dropped, n_corrupted, n_wrong_id, n_silenced;
} armsim_faults;

void faults_init(armsim_faults *f, const armsim_options *o, uint64_t start_ns);
/* Uniform in [0, 1) from the fault stream. */
double faults_uniform(armsim_faults *f);
/* Standard normal from the noise stream (Box-Muller). */
double faults_gauss(armsim_faults *f);
/* The device has gone silent at time now (ignores every request): --silent-after, SIGUSR1 or
 * faults_silence_until, unless --silent-id gives the silence to one servo. */
bool faults_silent(armsim_faults *f, uint64_t now_ns);
/* The dxl2 servo id alone has gone silent at time now (--silent-id: the same silence, for that
 * servo only; it neither hears nor answers, the others carry on). */
bool faults_id_silent(armsim_faults *f, int id, uint64_t now_ns);
/* True exactly once, at the first call at or after --alert-after. */
bool faults_alert_due(armsim_faults *f, uint64_t now_ns);
/* Moves --faults-after, and --silent-after and --alert-after where given and still ahead, to
 * now (SIGUSR1: a test starts the faults once its arm is ready). */
void faults_start_now(armsim_faults *f, uint64_t now_ns);
/* The next count replies are lost, whatever --faults-after says (a test's chosen moment). */
void faults_lose_replies(armsim_faults *f, int count);
/* The devices (the servo --silent-id alone, when given) ignore every request until t_ns (a
 * test's chosen moment). */
void faults_silence_until(armsim_faults *f, uint64_t t_ns);
/* Arms the per-reply faults once --faults-after has passed; call before each request. */
void faults_arm(armsim_faults *f, uint64_t now_ns);
/* Extra reply delay now in force [us]. */
long faults_delay_us(const armsim_faults *f);
/* Per-reply decisions (each draws one random number when its fraction is > 0). */
bool faults_drop_reply(armsim_faults *f);
bool faults_corrupt_reply(armsim_faults *f);
bool faults_wrong_id_reply(armsim_faults *f);

#endif
