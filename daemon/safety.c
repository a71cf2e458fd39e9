/*
 * safety.c — state transitions and fault checks (see safety.h).
 */
#include "daemon/safety.h"

#include <math.h>
#include <stdio.h>

const char *sf_state_name(sf_state s)
{
    switch (s) {
    case SF_DISABLED:
        return "disabled";
    case SF_HOLDING:
        return "holding";
    case SF_MOVING:
        return "moving";
    case SF_FAULT:
        return "fault";
    case SF_ESTOP:
        return "estop";
    }
    return "unknown";
}

/* "disabled", "holding", "moving", "in fault", "in estop" (after "the arm is"). */
static const char *phrase(sf_state s)
{
    return s == SF_FAULT ? "in fault" : s == SF_ESTOP ? "in estop" : sf_state_name(s);
}

/* Writes the refusal for a command that needs an enabled arm. */
static bool refuse(char *why, size_t len, const char *fmt, const char *a, const char *b)
{
    if (why) snprintf(why, len, fmt, a, b);
    return false;
}

bool sf_command_allowed(sf_state s, sf_cmd cmd, const char *fault_reason, sf_state *next, char *why,
                        size_t len)
{
    const char *fr = fault_reason && fault_reason[0] ? fault_reason : "no reason recorded";
    bool stopped = s == SF_FAULT || s == SF_ESTOP;
    bool enabled = s == SF_HOLDING || s == SF_MOVING;
    *next = s;
    switch (cmd) {
    case SF_CMD_ESTOP:
        *next = SF_ESTOP;
        return true;
    case SF_CMD_DISABLE:
        if (!stopped) *next = SF_DISABLED; /* fault/estop: torque is already off */
        return true;
    case SF_CMD_RESET:
        if (enabled)
            return refuse(why, len, "the arm is %s%s; there is nothing to reset", sf_state_name(s),
                          "");
        *next = SF_DISABLED;
        return true;
    case SF_CMD_ENABLE:
        if (s == SF_FAULT)
            return refuse(why, len, "the arm is in fault (%s)%s; reset it first", fr, "");
        if (s == SF_ESTOP)
            return refuse(why, len, "the arm is in estop%s%s; reset it first", "", "");
        if (s == SF_DISABLED) *next = SF_HOLDING;
        return true;
    case SF_CMD_HOLD:
    case SF_CMD_CANCEL:
    case SF_CMD_TRAJECTORY:
        /* fault and estop leave by reset (to disabled), disabled by enable */
        if (s == SF_FAULT)
            return refuse(why, len, "the arm is in fault (%s)%s; reset and enable it first", fr,
                          "");
        if (s == SF_ESTOP)
            return refuse(why, len, "the arm is in estop%s%s; reset and enable it first", "", "");
        if (!enabled) return refuse(why, len, "the arm is %s%s; enable it first", phrase(s), "");
        /* hold and cancel while moving: moving (a controlled stop) until the arm is at rest */
        if (cmd == SF_CMD_TRAJECTORY) *next = SF_MOVING;
        return true;
    case SF_CMD_CONTROLLER:
        if (s == SF_DISABLED || s == SF_HOLDING) return true;
        if (s == SF_MOVING)
            return refuse(why, len,
                          "the arm is moving; the control law can change only while disabled or "
                          "holding: let the trajectory end%s%s or cancel it first",
                          "", "");
        return refuse(why, len,
                      "the arm is %s%s; the control law can change only while disabled or "
                      "holding: reset it first",
                      phrase(s), "");
    }
    return refuse(why, len, "unknown command%s%s", "", "");
}

/* True when joint j's position q [rad or m] is not finite or outside [lower - fe, upper + fe]
 * (fe = the joint's following_error, 0 when off), with the reason naming the joint. The
 * band lets an arm run to a limit under a tracking error, and lets one that rests on its hard
 * stop just past a soft limit be enabled. */
static bool position_outside(const law_params *p, int j, double q, char *reason, size_t len)
{
    double m = p->following_error[j] > 0 ? p->following_error[j] : 0;
    if (isfinite(q) && q >= p->lower[j] - m && q <= p->upper[j] + m) return false;
    snprintf(reason, len, "joint %s: position %.4g outside limits [%.4g, %.4g]", p->name[j], q,
             p->lower[j], p->upper[j]);
    return true;
}

bool sf_check_position(const law_params *p, const double *q, char *reason, size_t len)
{
    for (int j = 0; j < p->n; j++)
        if (position_outside(p, j, q[j], reason, len)) return true;
    return false;
}

bool sf_check_velocity(const law_params *p, const double *qd, char *reason, size_t len)
{
    for (int j = 0; j < p->n; j++) {
        if (!isfinite(qd[j]) ||
            (p->velocity[j] > 0 && fabs(qd[j]) > SF_VELOCITY_MARGIN * p->velocity[j])) {
            snprintf(reason, len, "joint %s: velocity %.4g over the limit %.4g", p->name[j], qd[j],
                     p->velocity[j]);
            return true;
        }
    }
    return false;
}

bool sf_check_tick(const law_params *p, const double *q, const double *qd, const double *q_des,
                   char *reason, size_t len)
{
    if (sf_check_position(p, q, reason, len)) return true;
    if (sf_check_velocity(p, qd, reason, len)) return true;
    for (int j = 0; j < p->n; j++) {
        double e = q_des[j] - q[j];
        if (p->following_error[j] > 0 && fabs(e) > p->following_error[j]) {
            snprintf(reason, len, "joint %s: following error %.4g over the limit %.4g", p->name[j],
                     e, p->following_error[j]);
            return true;
        }
    }
    return false;
}

bool sf_reads_exhausted(const sf_reads *r, const law_params *p, int64_t now_ns)
{
    int max = p->safety.max_failed_reads > 0 ? p->safety.max_failed_reads : 1;
    double gap_ms = (double)(now_ns - r->last_ok_ns) * 1e-6;
    return r->consecutive >= max && !(gap_ms < p->safety.max_read_gap_ms);
}

bool sf_read_failed(sf_reads *r, const law_params *p, int64_t now_ns)
{
    r->consecutive++;
    return sf_reads_exhausted(r, p, now_ns);
}

void sf_read_ok(sf_reads *r, int64_t now_ns)
{
    r->consecutive = 0;
    r->last_ok_ns = now_ns;
}

bool sf_damp_done(const law_params *p, const double *qd, double elapsed)
{
    if (elapsed >= p->safety.damp_timeout) return true;
    for (int j = 0; j < p->n; j++)
        if (!(fabs(qd[j]) < p->safety.damp_stop_velocity)) return false;
    return true;
}
