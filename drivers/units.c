/*
 * units.c — device units <-> joint-side SI for servo k of joint j (config/config.h fields):
 *
 *   shaft = counts * 2 pi / counts_per_rev                      [rad of the servo shaft]
 *   q     = direction * (shaft - zero_offset) / gear_ratio      [rad | m]
 *   tau_k = direction * torque_per_amp * amps                   [N m | N], servo k's share
 *   amps  = direction * tau / (n_ids * torque_per_amp)          (twins share tau equally)
 *   qd    = direction * (rpm * 2 pi / 60) / gear_ratio          [rad/s | m/s]
 *
 * Revolute joints: gear_ratio = servo shaft turns per joint turn (dimensionless).
 * Prismatic joints: the same formulas with gear_ratio read as servo shaft radians per metre of
 * travel (e.g. a 10 mm-lead screw: 2 pi / 0.010 = 628.3 rad/m), and torque_per_amp as N per A
 * at the joint. direction is +1 or -1, so dividing by it equals multiplying by it.
 */
#include "drivers/drivers.h"

#include <math.h>

#define TWO_PI (2.0 * M_PI)

double units_counts_to_q(const cfg_joint *j, int k, int32_t counts)
{
    double shaft = (double)counts * TWO_PI / j->counts_per_rev;
    return j->direction[k] * (shaft - j->zero_offset[k]) / j->gear_ratio;
}

/* Inverse of units_counts_to_q, rounded to the nearest count and saturated to int32. */
int32_t units_q_to_counts(const cfg_joint *j, int k, double q)
{
    double shaft = j->direction[k] * q * j->gear_ratio + j->zero_offset[k];
    double counts = nearbyint(shaft * j->counts_per_rev / TWO_PI);
    if (!(counts > (double)INT32_MIN)) return INT32_MIN; /* also NaN */
    if (counts > (double)INT32_MAX) return INT32_MAX;
    return (int32_t)counts;
}

double units_tau_to_amps(const cfg_joint *j, int k, double tau)
{
    int n = j->n_ids > 0 ? j->n_ids : 1;
    return j->direction[k] * tau / (n * j->torque_per_amp);
}

/* Servo k's contribution to the joint torque; the joint torque is the sum over its servos. */
double units_amps_to_tau(const cfg_joint *j, int k, double amps)
{
    return j->direction[k] * j->torque_per_amp * amps;
}

double units_rpm_to_qd(const cfg_joint *j, int k, double rpm)
{
    return j->direction[k] * (rpm * TWO_PI / 60.0) / j->gear_ratio;
}

double units_qd_to_rpm(const cfg_joint *j, int k, double qd)
{
    return j->direction[k] * qd * j->gear_ratio * 60.0 / TWO_PI;
}

/* The tool servo ([tool NAME], cfg_tool):
 *   shaft   = counts * 2 pi / counts_per_rev
 *   opening = opening_at_zero + m_per_rad * (shaft - zero_offset)       [m]
 *   force   = -torque_per_amp * amps / m_per_rad                        [N], > 0 closing
 * (the motor's torque turned into a force on the fingers' opening by the virtual work
 * torque * d(shaft) = -force * d(opening)). */
double units_counts_to_opening(const cfg_tool *t, int32_t counts)
{
    double shaft = (double)counts * TWO_PI / t->counts_per_rev;
    return t->opening_at_zero + t->m_per_rad * (shaft - t->zero_offset);
}

/* Inverse of units_counts_to_opening, rounded and saturated to int32. */
int32_t units_opening_to_counts(const cfg_tool *t, double opening)
{
    double shaft = (opening - t->opening_at_zero) / t->m_per_rad + t->zero_offset;
    double counts = nearbyint(shaft * t->counts_per_rev / TWO_PI);
    if (!(counts > (double)INT32_MIN)) return INT32_MIN; /* also NaN */
    if (counts > (double)INT32_MAX) return INT32_MAX;
    return (int32_t)counts;
}

double units_rpm_to_opening_speed(const cfg_tool *t, double rpm)
{
    return t->m_per_rad * rpm * TWO_PI / 60.0;
}

double units_amps_to_force(const cfg_tool *t, double amps)
{
    return -t->torque_per_amp * amps / t->m_per_rad;
}

double units_force_to_amps(const cfg_tool *t, double force)
{
    return -force * t->m_per_rad / t->torque_per_amp;
}
