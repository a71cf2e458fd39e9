/*
 * sense.c — the sample intake of a tick (see sense.h). Control thread only.
 */
#include "daemon/loop/sense.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void sense_init(sense *s, int n, int64_t now_ns)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    sf_read_ok(&s->reads, now_ns);
    sf_read_ok(&s->writes, now_ns);
}

/* Velocity [rad/s|m/s]: the device's, or the position differentiated over the time between the
 * two states dt through a first-order low-pass qd += alpha (raw - qd), alpha = dt / (dt + 1 /
 * (2 pi f)), f = velocity_filter_hz (0: unfiltered). Takes the read position as the present. */
static void estimate_velocity(sense *s, const law_params *p, const drv_state *ds, int64_t stamp,
                              double period)
{
    bool first = s->t_state_ns == 0;
    double dt = first ? period : (double)(stamp - s->t_state_ns) * 1e-9;
    if (!(dt > 0)) dt = period;
    s->sample_dt = dt;
    if (p->velocity_source == VELOCITY_DEVICE && ds->has_velocity) {
        for (int j = 0; j < s->n; j++) s->qd[j] = ds->qd[j];
    } else {
        double alpha = 1;
        if (p->velocity_filter_hz > 0) alpha = dt / (dt + 1 / (2 * M_PI * p->velocity_filter_hz));
        for (int j = 0; j < s->n; j++) {
            double raw = first ? 0 : (ds->q[j] - s->q_prev[j]) / dt;
            s->qd[j] += alpha * (raw - s->qd[j]);
        }
    }
    for (int j = 0; j < s->n; j++) {
        s->q[j] = s->q_prev[j] = ds->q[j];
        s->tau_meas[j] = ds->tau[j];
    }
    s->t_state_ns = stamp;
}

bool sense_take_read(sense *s, const law_params *p, const loop_in *in, double period, char *why,
                     size_t len)
{
    int64_t now = in->now_ns;
    s->fresh = in->read_rc == 0;
    if (s->fresh) {
        if (s->in_gap) {
            int64_t gap = now - s->reads.last_ok_ns;
            if (gap > s->longest_gap_ns) s->longest_gap_ns = gap;
            s->in_gap = false;
        }
        sf_read_ok(&s->reads, now);
        int64_t stamp = in->ds.host_time_ns ? (int64_t)in->ds.host_time_ns : now;
        estimate_velocity(s, p, &in->ds, stamp, period);
        return false;
    }
    s->failed_reads++;
    if (!s->in_gap) {
        s->in_gap = true;
        s->read_gaps++;
    }
    const drv_fault *f = &in->read_fault;
    if (f->status == DRV_EALERT || f->status == DRV_EDEVICE) {
        if (f->device_id >= 0)
            snprintf(why, len, "device alert from device %d: %s", f->device_id, f->message);
        else
            snprintf(why, len, "device alert: %s", f->message);
        return true;
    }
    if (!sf_read_failed(&s->reads, p, now)) return false;
    snprintf(why, len, "%d consecutive failed reads, no state for %.1f ms (last: %s: %s)",
             s->reads.consecutive, (double)(now - s->reads.last_ok_ns) * 1e-6,
             drv_status_name(f->status), f->message);
    return true;
}

bool sense_take_write(sense *s, const law_params *p, const loop_in *in, bool counts, char *why,
                      size_t len)
{
    if (in->write_rc == 0) {
        sf_read_ok(&s->writes, in->now_ns);
        return false;
    }
    if (!counts) return false;
    s->failed_writes++;
    const drv_fault *f = &in->write_fault;
    if (f->status == DRV_EALERT || f->status == DRV_EDEVICE) {
        snprintf(why, len, "device alert on write: %s", f->message);
        return true;
    }
    if (!sf_read_failed(&s->writes, p, in->now_ns)) return false;
    snprintf(why, len, "%d consecutive failed writes over %.1f ms (last: %s: %s)",
             s->writes.consecutive, (double)(in->now_ns - s->writes.last_ok_ns) * 1e-6,
             drv_status_name(f->status), f->message);
    return true;
}

void sense_forgive(sense *s, int64_t now_ns)
{
    sf_read_ok(&s->reads, now_ns);
    sf_read_ok(&s->writes, now_ns);
}

bool sense_exhausted(const sense *s, const law_params *p, int64_t now_ns)
{
    return sf_reads_exhausted(&s->reads, p, now_ns);
}
