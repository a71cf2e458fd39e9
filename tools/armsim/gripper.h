/*
 * gripper.h — the fingers of the tool servo ([tool NAME], a gripper on a Dynamixel X-series servo
 * in current-based position control, Operating Mode 5) as seen from outside the servo, and the
 * object of --object between them. dxl2_device.c turns the servo's registers into a command and
 * the state back into Present Position / Velocity / Current; nothing here knows the bus.
 *
 * Coordinate: the opening x [m] (config/config.h cfg_tool: opening = opening_at_zero + m_per_rad
 * (shaft - zero_offset)). Forces act on the opening [N]; the motor's is f_motor, > 0 opening the
 * fingers (the squeezing force of the contract is -f_motor; the motor current is
 * amps = f_motor m_per_rad / torque_per_amp, drivers/units.c).
 *
 * The model (quasi-static: the fingers have no mass, the gearbox no backlash):
 *  - while driving (torque on, mode 5, no error, Goal Current > 0, bus watchdog not expired),
 *    the servo's profile generator moves a reference r toward the goal at the profile speed;
 *    a new goal starts it from the fingers' present opening;
 *  - the position loop pushes the fingers toward r with f_motor = kp (r - x), saturated at the
 *    Goal Current's force (ROBOTIS e-Manual, XM430-W350, Operating Mode 5: "controls both
 *    position and current ... the current is limited by Goal Current");
 *  - the object of width W and stiffness K pushes back with K (W - x) while x < W; the fingers
 *    rest where the forces cancel: x = r without contact, x = (kp r + K W) / (kp + K) in
 *    contact below saturation, x = W - F / K when the motor presses with its whole force F;
 *    they meet at x = 0 (a goal below it presses them together);
 *  - the fingers move toward that rest opening at most at the motor's top speed (Velocity
 *    Limit), so a change of force is not a jump;
 *  - not driving, the fingers stay where they are (the 353:1 gearbox holds them), with no force.
 * The gripper does not affect the arm's dynamics: its mass stays lumped in the last link.
 *
 * Time: the device's clock [ns] (the armsim program's CLOCK_MONOTONIC, or the simulated clock
 * in process); the model is stepped to each request's and each housekeeping's time. One thread
 * (the device's).
 */
#ifndef ARMSIM_GRIPPER_H
#define ARMSIM_GRIPPER_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "tools/armsim/options.h"

/* The position loop's stiffness on the servo shaft [N m/rad]: XM430-W350 at its factory Position
 * P Gain (84) = 800, KPP = 800 / 128 (e-Manual, "Position PID Gain"), reaches the full PWM (885)
 * at 885 / 6.25 = 142 counts = 0.217 rad of error, where the motor gives its stall torque of
 * 4.1 N m (12 V): 4.1 / 0.217 = 19 N m/rad. On the opening it is this / m_per_rad^2 [N/m]
 * (21,000 N/m for the OpenManipulator-X's m_per_rad = -0.030). */
#define GRIPPER_SHAFT_STIFFNESS 19.0

/* What the servo is told, in SI on the opening. */
typedef struct {
    bool active;        /* torque on in mode 5, no hardware error, no bus watchdog error */
    double goal;        /* Goal Position as an opening [m] */
    double speed;       /* the profile's speed of the opening [m/s] (0: does not move) */
    double max_speed;   /* the motor's top speed (Velocity Limit) on the opening [m/s] */
    double force;       /* Goal Current (clamped to Current Limit) as a force [N], >= 0 */
    uint64_t expiry_ns; /* Bus Watchdog: not driving from then on [ns], 0 = never */
} gripper_cmd;

typedef struct {
    /* the model, fixed by gripper_init */
    double kp;        /* position loop stiffness on the opening [N/m] */
    bool object;      /* --object given */
    double width;     /* the object's width [m] */
    double stiffness; /* the object's stiffness [N/m] */
    /* the command (gripper_command) */
    gripper_cmd cmd;
    /* the state */
    bool started;   /* t_ns set by a first gripper_advance_to */
    bool driving;   /* the motor drove over the last step */
    uint64_t t_ns;  /* the state's time [ns] */
    double ref;     /* the profile's reference opening [m] */
    double x;       /* the opening [m] */
    double rate;    /* dx/dt over the last step [m/s] */
    double f_motor; /* the motor's force on the opening, > 0 opening [N] */
} gripper;

/* At rest at opening x0 [m], not driving; the object of o (--object) between the fingers. The
 * tool's m_per_rad [m/rad] sets kp from GRIPPER_SHAFT_STIFFNESS. */
void gripper_init(gripper *g, const cfg_tool *tool, const armsim_options *o, double x0);
/* Holds command c from the state's time on; new_goal: c's goal was (re)written, the profile
 * starts from the present opening. Step to the command's time first (gripper_advance_to). */
void gripper_command(gripper *g, const gripper_cmd *c, bool new_goal);
/* Steps the fingers to t_ns [ns] (nothing when not ahead; the first call only sets the time),
 * ending the drive exactly at the command's watchdog expiry. */
void gripper_advance_to(gripper *g, uint64_t t_ns);
/* The motor's closing force [N] (the contract's force: > 0 squeezing): -f_motor. */
double gripper_closing_force(const gripper *g);

#endif
