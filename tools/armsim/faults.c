/*
 * faults.c — seeded fault injection (splitmix64): the decisions of faults.h, on the devices'
 * thread and clock.
 */
#include "tools/armsim/faults.h"

#include <math.h>

/* splitmix64: next 64-bit value of the stream. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void faults_init(armsim_faults *f, const armsim_options *o, uint64_t start_ns)
{
    *f = (armsim_faults){0};
    f->drop = o->drop;
    f->corrupt_crc = o->corrupt_crc;
    f->wrong_id = o->wrong_id;
    f->delay_us = o->delay_us;
    f->faults_after = o->faults_after;
    f->silent_after = o->silent_after;
    f->alert_after = o->alert_after;
    f->silent_id = o->silent_id;
    f->start_ns = start_ns;
    f->rng = o->seed * 0x2545F4914F6CDD1Dull + 1;
    f->rng_noise = o->seed * 0x9E3779B97F4A7C15ull + 7;
}

double faults_uniform(armsim_faults *f)
{
    return (double)(splitmix64(&f->rng) >> 11) * 0x1p-53;
}

double faults_gauss(armsim_faults *f)
{
    double u1 = ((double)(splitmix64(&f->rng_noise) >> 11) + 1.0) * 0x1p-53; /* (0, 1] */
    double u2 = (double)(splitmix64(&f->rng_noise) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Seconds elapsed since start. */
static double elapsed(const armsim_faults *f, uint64_t now_ns)
{
    return (double)(now_ns - f->start_ns) * 1e-9;
}

/* The silence (of the line, or of servo --silent-id) is on at now_ns. */
static bool silence_on(const armsim_faults *f, uint64_t now_ns)
{
    if (now_ns < f->silent_until_ns) return true;
    return f->silent_after >= 0.0 && elapsed(f, now_ns) >= f->silent_after;
}

bool faults_silent(armsim_faults *f, uint64_t now_ns)
{
    return f->silent_id < 0 && silence_on(f, now_ns);
}

bool faults_id_silent(armsim_faults *f, int id, uint64_t now_ns)
{
    return f->silent_id >= 0 && id == f->silent_id && silence_on(f, now_ns);
}

bool faults_alert_due(armsim_faults *f, uint64_t now_ns)
{
    if (f->alert_fired || f->alert_after < 0.0 || elapsed(f, now_ns) < f->alert_after) return false;
    f->alert_fired = true;
    return true;
}

void faults_start_now(armsim_faults *f, uint64_t now_ns)
{
    double t = elapsed(f, now_ns);
    f->faults_after = t;
    if (f->silent_after > t) f->silent_after = t;
    if (f->alert_after > t) f->alert_after = t;
}

void faults_arm(armsim_faults *f, uint64_t now_ns)
{
    f->armed = elapsed(f, now_ns) >= f->faults_after;
}

long faults_delay_us(const armsim_faults *f)
{
    return f->armed ? f->delay_us : 0;
}

/* Sets the replies still to lose (faults_drop_reply takes them first). */
void faults_lose_replies(armsim_faults *f, int count)
{
    f->lose = count > 0 ? count : 0;
}

/* Sets the end of the silence faults_silent honours [ns]. */
void faults_silence_until(armsim_faults *f, uint64_t t_ns)
{
    f->silent_until_ns = t_ns;
}

bool faults_drop_reply(armsim_faults *f)
{
    if (f->lose > 0) {
        f->lose--;
        f->n_dropped++;
        return true;
    }
    if (!f->armed || f->drop <= 0.0 || faults_uniform(f) >= f->drop) return false;
    f->n_dropped++;
    return true;
}

bool faults_corrupt_reply(armsim_faults *f)
{
    if (!f->armed || f->corrupt_crc <= 0.0 || faults_uniform(f) >= f->corrupt_crc) return false;
    f->n_corrupted++;
    return true;
}

bool faults_wrong_id_reply(armsim_faults *f)
{
    if (!f->armed || f->wrong_id <= 0.0 || faults_uniform(f) >= f->wrong_id) return false;
    f->n_wrong_id++;
    return true;
}
