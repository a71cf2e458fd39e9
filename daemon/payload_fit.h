/*
 * payload_fit.h — the mass and centre of mass of an unknown tool payload from the torques that
 * move the arm (payload.estimate). Pure computation on the arm's model; no I/O.
 *
 * A rigid payload's joint torques are linear in theta = (m, m c, I_o): its mass, first moment
 * (c its centre in the tool frame) and inertia about the tool origin (6 entries). tau_p =
 * Y(q, qd, qdd) theta, the columns of Y from the
 * Newton-Euler recursion strobed with unit payloads (the device seeds 000 and 001 use for the
 * mass matrix). Each sample gives, for every joint that moves, Y theta = tau - RNEA(q, qd, qdd;
 * unloaded model, friction at the measured velocity): the model's own terms taken out, what is
 * left is the payload. Joints slower than v_min are left out: at rest, friction holds an unknown
 * share of the load (stiction), which would bias a static fit by up to the Coulomb torque.
 * theta is the least-squares solution over the rows: all ten unknowns when the motion shows the
 * inertia (well conditioned), else m and m c with I_o that of a point mass at the centre found
 * (iterated). The fit is robust: rows more than 5 robust standard deviations (1.4826 x the
 * median absolute residual) off it are left out and the rest fitted again, until that set
 * settles, so a few bad samples (a host stall between a state read and a torque write) do not
 * pull it.
 */
#ifndef ARMD_PAYLOAD_FIT_H
#define ARMD_PAYLOAD_FIT_H

#include <stddef.h>

#include "config/config.h"
#include "dynamics/dynamics.h"

#define PAYLOAD_FIT_MAX_POSES 32

typedef struct {
    double mass;         /* [kg] */
    double com[3];       /* tool frame [m]; 0 unless com_known */
    double sd_mass;      /* formal standard deviation [kg] (samples taken as independent) */
    double sd_com[3];    /* [m] (first-order propagation from theta's covariance) */
    double residual_rms; /* torque the fit leaves unexplained, RMS over the rows kept [N m|N] */
    double cond;         /* condition number of the column-scaled regressor */
    long rows;           /* equations used (moving joint x sample) */
    long rows_left_out;  /* equations the robust refit left out (far off the fit) */
    int com_known;       /* 0 when the mass is not above 3 sd_mass: no centre to place */
    int inertia_known;   /* the motion showed the inertia too (well conditioned): inertia[] */
    double inertia[6];   /* about the centre, tool axes (ixx ixy ixz iyy iyz izz) [kg m^2] */
} payload_fit_result;

typedef struct payload_acc payload_acc;

/* An empty fit for the arm without payload (its own payload is ignored); joints slower than
 * v_min [rad/s|m/s] are left out of each sample. NULL when the model cannot be built or memory
 * is short. Allocates; not for the control thread. */
payload_acc *payload_acc_create(const dyn_model_desc *unloaded, double v_min);
void payload_acc_free(payload_acc *a);
/* Adds one sample: measured q [rad|m], qd [rad/s|m/s], the measured acceleration qdd
 * [rad/s^2|m/s^2] and the torque applied tau [N m|N]. Returns the rows added (the joints that
 * moved); non-finite values add nothing (and so does a failed allocation: the rows are kept for
 * the robust refit, ~90 bytes each, growing by doubling; main loop only). */
int payload_acc_add(payload_acc *a, const double *q, const double *qd, const double *qdd,
                    const double *tau);
/* Solves the fit so far: 0, or -1 with why (too few rows, a motion that does not tell the mass
 * and the centre's coordinates apart). */
int payload_acc_solve(const payload_acc *a, payload_fit_result *out, char *why, size_t why_len);

/* The RMS [N m|N] of the torque the payload p (mass, centre and inertia about it, tool frame)
 * leaves unexplained over a's equations, all of them: a held-out set's check of a fit (and of
 * the payload in use). *rows gets their count (NULL: not wanted); NaN without equations. */
double payload_acc_rms(const payload_acc *a, const dyn_payload *p, long *rows);
/* Appends b's equations to a's (the held-out set into the fit's, once it checked the fit): 0, or
 * -1 when memory is short (a unchanged). */
int payload_acc_absorb(payload_acc *a, const payload_acc *b);

/* The default poses around q0 (config joint order) into poses[0..7]: q0, then the last four
 * joints (on a 6-axis arm the elbow and the wrist) turned one to three at a time by 0.5 rad (or
 * 40 % of a joint's range), towards the side with room: the wrist turns the payload against
 * gravity (its centre), the elbow changes its lever (its mass). Returns the number of poses
 * (8). */
int payload_default_poses(const armd_config *cfg, const double *q0, double poses[][CFG_MAX_JOINTS]);

#endif
