/*
 * truth.h — the ground-truth CSV, one line per physics step (or every Nth) under the header
 * "t,q1..qn,qd1..qdn,tau1..taun,ext1..extn,wall_force,tool_x,tool_y,tool_z,mono":
 *   t           true time [s] since start, at the end of the step;
 *   q, qd       true joint state after the step [rad|m, rad/s|m/s];
 *   tau         the motor torque applied during the step [N m|N];
 *   ext         the external joint torque that acted during the step [N m|N]: the --push
 *               torques plus the --wall's J^T F (RK4-weighted mean of its stage values); same
 *               sign as tau (the environment's torque on the arm); 0 without contact;
 *   wall_force  |F| of the --wall on the tool point [N], the same mean; 0 outside the wall or
 *               without one;
 *   tool_x, tool_y, tool_z  the tool point after the step, base frame [m];
 *   mono        the CLOCK_MONOTONIC time [s] the row's t stands for (armsim's start + t): the
 *               clock of armd's `mono`, so the two join without fitting an offset; in process
 *               (simbus.h) the simulated clock's, which a driver on the bus also uses.
 * A flexible arm (a link with flex_modes) adds, after mono, its modal coordinates, named
 * "JOINT_yK", "JOINT_zK", "JOINT_xK" (link of joint JOINT, bending along y_b / z_b [m at the
 * tip: the shapes are normalised to |D_k(L)| = 2, so the tip moves 2 x this] or torsion [rad],
 * mode K from 1), then defl_x, defl_y, defl_z: the tool point of the flexible arm minus that of
 * the rigid arm at the same joint positions, base frame [m]. A rigid arm's file is unchanged.
 * The first row (t = 0) is the initial state, with tau = 0, no push, and the wall at q0.
 * Readers should find columns by their header names: columns may be added at the end.
 *
 * Two ways of writing (truth_mode):
 *  - TRUTH_WRITER_THREAD (the armsim program, real time): the physics thread pushes records into
 *    a lock-free single-producer ring and a writer thread drains it to the file, so file I/O
 *    never blocks the physics step; a record that finds the ring full is lost (counted);
 *  - TRUTH_SYNCHRONOUS (in process, simulated time): each record is written to the file's buffer
 *    as it is pushed, on the pushing thread; none is lost, time simply waits for the disk.
 */
#ifndef ARMSIM_TRUTH_H
#define ARMSIM_TRUTH_H

#include <stddef.h>
#include <stdint.h>

typedef struct truth_log truth_log;

typedef enum { TRUTH_WRITER_THREAD, TRUTH_SYNCHRONOUS } truth_mode;

/* Creates PATH (truncating), writes the header (extra_header: ",name,..." of the n_extra
 * columns after mono, or NULL with n_extra 0) and, for TRUTH_WRITER_THREAD, starts the writer
 * thread. NULL with err on failure. */
truth_log *truth_open(const char *path, int n, int decimate, const char *extra_header, int n_extra,
                      truth_mode mode, char *err, size_t errlen);
/* Records one row (every decimate-th call), the columns above (time = t, mono: the clock of
 * t [s]; q, qd, tau, ext: n entries each; tool: the tool pose of dyn_fk, row-major [R | p];
 * extra: n_extra values or NULL when n_extra is 0). TRUTH_WRITER_THREAD: queues it, never
 * blocks, counts it as lost when the ring is full. TRUTH_SYNCHRONOUS: writes it (buffered); a
 * row the file refused counts as lost. Allocates nothing. */
void truth_push(truth_log *t, double time, double mono, const double *q, const double *qd,
                const double *tau, const double *ext, double wall_force, const double *tool,
                const double *extra);
/* TRUTH_SYNCHRONOUS: hands the rows written so far to the file (fflush), so that a reader of
 * the file sees every row up to now. Nothing for the writer thread's mode. */
void truth_flush(truth_log *t);
/* Drains the ring, flushes, closes the file and joins the writer. Returns records lost (for
 * TRUTH_SYNCHRONOUS: rows the file refused, also at the final flush). */
uint64_t truth_close(truth_log *t);

#endif
