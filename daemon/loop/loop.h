/*
 * loop.h — armd's control loop as a step function, and what it exchanges with the host (the
 * main thread): the only way into daemon/loop/.
 *
 * One tick is loop_step(L, in, out): a plain call with the tick's time, the sample the driver
 * read and the commands the host sent, which returns the torque to write, the servo switching,
 * the answers to the commands and what to publish. Nothing in daemon/loop/ reads a clock,
 * sleeps, allocates, locks, logs or touches the driver: the real-time thread (loop_thread.c)
 * and lockstep simulation (lockstep.c) do the driver's I/O around each step (runner.c); tests
 * call it with crafted samples.
 *
 * The tick, in loop.c, top to bottom:
 *   sample -> commands -> desired state -> observer -> guarded torque -> tool -> publish
 * and the modules it runs, each the only writer of its own state (state.h puts them together):
 *   sense.c     the sample: position, velocity estimate, read gaps, failed reads and writes
 *   commands.c  the host's commands, checked against the state machine and answered
 *   motion.c    hold / follow a plan / stop / retract: the desired state; every trajectory's end
 *   retract.c   the executed path and the way back along it (motion's)
 *   observer.c  the collision observer and the reactions to a collision
 *   guard.c     disabled / enabling / enabled / fault / estop, the fault reaction, damping stop
 *   torque.c    the control law in use, its integral, the float, the torque limits
 *   tool.c      the tool servo's commands: goals out, how each ends
 *   out.c       what a tick puts out: events, replies, objects handed back
 * What a tick exchanges (its input and output, the commands and replies) is tick.h.
 *
 * Ownership: struct loop belongs to the thread that steps it (after loop_create on the main
 * thread, nothing else touches it until loop_free). What the host hands over (loop_settings,
 * loop_dyn, traj_plan) is the loop's from the command that carries it until a reply hands it
 * back; the loop never writes settings or a model (the workspace dyn_data is its scratch).
 * Units: SI, joint side; vectors in config joint order.
 */
#ifndef ARMD_LOOP_H
#define ARMD_LOOP_H

#include "daemon/loop/tick.h"

/* A loop for n joints at the given period [s], disabled, with the settings, dynamics and law
 * it starts with (handed over: the host gets them back in replies once replaced). Main thread,
 * before the loop's thread runs. NULL when out of memory. */
loop *loop_create(int n, double period, const loop_settings *settings, loop_dyn *dyn,
                  cfg_controller law);
void loop_free(loop *L);
/* The tool servo the loop drives ([tool NAME]; cfg->present false: none). Main thread, before
 * the loop's thread runs. */
void loop_set_tool(loop *L, const cfg_tool *cfg);

/* One tick (see the top of this file). */
void loop_step(loop *L, const loop_in *in, loop_out *out);

/* The safe shutdown, as the loop's last step: every trajectory ends ("cancelled: stopping"),
 * zero torque is written and the servos are switched off, the state becomes disabled (fault and
 * estop stay). */
void loop_stop(loop *L, loop_out *out);

#endif
