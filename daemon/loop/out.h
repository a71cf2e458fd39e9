/*
 * out.h — daemon/loop/ private: what a tick puts out (loop_out), appended by the loop's modules:
 * events, answers to commands, objects handed back to the host. A full array is counted, never
 * overrun. Control thread only.
 */
#ifndef ARMD_LOOP_OUT_H
#define ARMD_LOOP_OUT_H

#include "daemon/loop/tick.h"

/* Starts a tick's output at control time t [s]: nothing to write, no servo switching, no
 * replies or events. */
void out_begin(loop_out *o, double t);
/* Appends an event of type at the tick's time (its state is filled when the tick publishes);
 * text from fmt (NULL = ""). The event is returned for extra fields (NULL when none fit). */
ctl_event *out_event(loop_out *o, ctl_event_type type, uint32_t traj_id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Answers command seq: rc 0, or -1 with err (NULL: no text). */
void out_answer(loop_out *o, uint64_t seq, int rc, const ctl_error *err);
/* Answers tool command seq with its result. */
void out_answer_tool(loop_out *o, uint64_t seq, const ctl_tool_result *res);
/* Answers command seq with an error of code and a formatted message. */
void out_refuse(loop_out *o, uint64_t seq, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Hands a plan back to the host (it may reuse it). */
void out_return_plan(loop_out *o, traj_plan *p);
/* Hands settings and/or dynamics back with the answer to seq (0: without one). */
void out_return(loop_out *o, uint64_t seq, const loop_settings *s, loop_dyn *d);

#endif
