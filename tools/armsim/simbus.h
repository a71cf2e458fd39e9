/*
 * simbus.h — the simulated arm in process, on simulated time: armsim's physics and devices
 * (dxl2 servos or an armlink board) behind a drv_link (drivers.h) that the real driver opens with
 * drv_open_link. No threads, no clocks, no sleeping: the caller's thread does everything, and the
 * same config, options, seed and calls give the same bytes and states bit for bit (armd
 * --lockstep, tests).
 *
 * Time: one simulated clock [ns] for the driver, the bus, the devices and the physics. It starts
 * at SIMBUS_START_NS (0 keeps meaning "none") and moves only when the driver reads (to the
 * arrival of the bytes it gets, or to its deadline), sleeps, or the caller calls
 * simbus_advance_to; a write moves it not.
 *
 * The bus (cfg->driver.baud, 10 bits per byte):
 *  - a request written at now goes out after the host's earlier requests and reaches the
 *    devices when its last byte is through; the physics is advanced to that moment first, then
 *    the devices take it: a Sync Read samples the state there (the last physics step ending at
 *    or before it), a Goal Current write acts from the step that holds it;
 *  - a reply arrives at max(request arrival + DRV_TURNAROUND_US, end of the previous reply) +
 *    its return delay (and --delay-us) + its bytes: replies follow one another on the half-duplex
 *    line, and each request's turnaround costs the host latency of drivers/bus_time.c. Requests
 *    and replies do not collide: a request sent while a late reply is still on the line arrives
 *    whole (a real RS-485 bus could garble both);
 *  - the devices' housekeeping (Bus Watchdog, --alert-after) runs every SIMBUS_HOUSEKEEPING_NS
 *    of simulated time, and at every request;
 *  - --drop, --corrupt-crc, --wrong-id, --delay-us, --faults-after, --silent-after,
 *    --silent-id, --alert-after act as in the armsim program, on the simulated clock; --truth is
 *    written synchronously and loses no row;
 *  - a [tool NAME] servo and its --object (gripper.h) are stepped at each request and
 *    housekeeping, like the servos' other registers.
 * Nothing is allocated after simbus_create.
 */
#ifndef ARMSIM_SIMBUS_H
#define ARMSIM_SIMBUS_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "drivers/drivers.h"
#include "tools/armsim/options.h"
#include "tools/armsim/physics.h"

#define SIMBUS_START_NS        1000000000ull /* the simulated clock at creation: 1 s */
#define SIMBUS_HOUSEKEEPING_NS 1000000ull    /* the devices' housekeeping period: 1 ms */

typedef struct simbus simbus;

/* The arm of cfg (copied) as armsim's options o (parsed by armsim_parse_options; copied, their
 * strings must outlive the bus) say, on the protocol of cfg's [driver] type. NULL with a
 * sentence in err: a config or option the in-process bus cannot take (--link, --print-model, a
 * --protocol other than the config's), or what physics_create, --truth or the device refused. */
simbus *simbus_create(const armd_config *cfg, const armsim_options *o, char *err, size_t errlen);
/* The link to open the driver on: drv_open_link(cfg, simbus_link(b), &fault). Valid until
 * simbus_free. */
const drv_link *simbus_link(simbus *b);
/* The simulated clock now [ns]. */
uint64_t simbus_now_ns(const simbus *b);
/* Runs the bus, the devices' housekeeping and the physics up to t_ns (nothing when t_ns is not
 * ahead of now) and sets the clock there. */
void simbus_advance_to(simbus *b, uint64_t t_ns);
/* The true state at the last physics step at or before now (t: simulated seconds since
 * SIMBUS_START_NS). */
void simbus_state(simbus *b, physics_state *s);

/* Hands the truth rows written so far to the file (a reader sees every row up to now). */
void simbus_flush(simbus *b);

/* Faults injected at a chosen moment (tests): */
/* The next count replies are lost (as --drop would lose them). */
void simbus_lose_replies(simbus *b, int count);
/* The devices ignore every request that reaches them before t_ns (as --silent-after would; only
 * the servo --silent-id when given). */
void simbus_silence_until(simbus *b, uint64_t t_ns);
/* What SIGUSR1 does to the armsim program: --faults-after, and --silent-after and
 * --alert-after where still ahead, start now. */
void simbus_faults_start(simbus *b);

/* Closes the truth file (a row the file refused is reported on stderr) and frees everything. */
void simbus_free(simbus *b);

#endif
