/*
 * drivers.h — the only way into armd's device layer: the serial transport, the device
 * protocols (dxl2 = Dynamixel Protocol 2.0, armlink = armd's own, see drivers/README.md) and all
 * conversion between device units and joint-side SI units.
 *
 * Two audiences:
 *  - the daemon uses the driver interface (drv_*): open, probe, enable, read, write, close;
 *  - armsim and tests use the packet codecs (dxl2_*, alk_*) and the unit conversion (units_*)
 *    to play the device side of the same bytes.
 *
 * drv_read() and drv_write() are real-time safe: no allocation, no locks, no logging; they
 * block only in poll() on the serial descriptor with a deadline of timeout_us (or, on a
 * drv_link, in the link's read).
 *
 * Clock: every deadline and time stamp of a driver is on its port's clock (drv_now_ns):
 * CLOCK_MONOTONIC for a serial port, the link's own clock for a drv_link.
 */
#ifndef ARMD_DRIVERS_H
#define ARMD_DRIVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"

/* ---------------------------------------------------------------- faults (values, not crashes) */
typedef enum {
    DRV_OK = 0,
    DRV_ETIMEOUT, /* no (complete) reply before the deadline */
    DRV_ECRC,     /* checksum mismatch */
    DRV_EID,      /* reply from an unexpected device ID */
    DRV_ELENGTH,  /* reply of unexpected length / malformed frame */
    DRV_EDEVICE,  /* device reported an error (status error byte / flags) */
    DRV_EALERT,   /* device hardware alert (Dynamixel alert bit, armlink fault flag) */
    DRV_EIO,      /* the port itself failed (unplugged, closed) */
    DRV_EPROBE,   /* a device is missing or is not what the config says */
    DRV_ECONFIG,  /* the configuration cannot be driven (e.g. unsupported baud) */
    DRV_EBUSY     /* the port is held by another process (a running armd: flock + TIOCEXCL) */
} drv_status;

typedef struct {
    drv_status status;
    int device_id; /* servo / board ID concerned, -1 if none */
    char message[160];
} drv_fault;

typedef struct {
    uint64_t reads, writes;
    uint64_t timeouts, crc_errors, id_errors, length_errors, device_errors, alerts, io_errors;
    uint64_t retries;
    uint64_t stale_replies; /* late replies to earlier requests, discarded (armlink) */
} drv_counters;

const char *drv_status_name(drv_status s); /* "timeout", "crc", ... */

/* ---------------------------------------------------------------------------- joint state */
/* The tool servo ([tool NAME]) as read with the joints, in SI units: opening [m], its rate
 * [m/s], the squeezing force [N] (> 0 closing on an object, from the motor current) and the
 * current itself [A]. present: a tool is configured (the rest is 0 otherwise). */
typedef struct {
    bool present;
    double opening, speed, force, current;
} drv_tool_state;

/* A goal for the tool servo: the opening to go to [m] at speed [m/s] (the servo's Profile
 * Velocity), pressing with at most force [N] (its Goal Current). */
typedef struct {
    double opening, speed, force;
} drv_tool_goal;

typedef struct {
    int n;
    double q[CFG_MAX_JOINTS];   /* joint position [rad|m] */
    double qd[CFG_MAX_JOINTS];  /* joint velocity [rad/s|m/s], valid when has_velocity */
    double tau[CFG_MAX_JOINTS]; /* measured joint torque from motor current [N m|N] */
    bool has_velocity;
    uint64_t host_time_ns;   /* when the reply was complete [ns, drv_now_ns's clock] */
    uint64_t device_time_us; /* device timestamp if the protocol has one, else 0 */
    drv_tool_state tool;     /* the tool servo, read in the same transaction */
} drv_state;

/* -------------------------------------------------------------------- driver interface */
typedef struct drv drv;

/* Opens cfg->driver.port (8N1, no flow control, low latency, flushed) and builds the torque-off
 * frame for drv_torque_off_async. No bus traffic yet. DRV_EBUSY when another process (a
 * running armd) holds the port. */
drv *drv_open(const armd_config *cfg, drv_fault *fault);
/* Identifies every device and checks it matches the config; puts servos in torque (current)
 * mode with torque off and applies return delay / watchdog settings. Waits at least
 * DRV_PROBE_TIMEOUT_US per reply, with at least DRV_PROBE_RETRIES retries (not real-time). */
int drv_probe(drv *d, drv_fault *fault);
/* Torque on or off for every device. Torque on waits at least DRV_ENABLE_TIMEOUT_US per reply
 * (with the configured retries), torque off the configured timeout. */
int drv_enable(drv *d, bool on, drv_fault *fault);
/* One state read (with cfg retries). 0 = ok, else -1 with *fault filled. */
int drv_read(drv *d, drv_state *out, drv_fault *fault);
/* Writes joint torques [N m|N] (split over twin servos, converted to device units). */
int drv_write(drv *d, const double *tau, drv_fault *fault);
/* A new goal for the tool servo, sent with the next drv_write in the same transaction (dxl2:
 * a Bulk Write carries the joints' Goal Current and the tool's goal block instead of the Sync
 * Write; no extra transaction). The opening is clamped to the stroke, speed to (0, velocity],
 * force to [0, max_force]; non-finite values are refused (-1, nothing queued). Real-time safe.
 * -1 too when no tool is configured. */
int drv_tool_set(drv *d, const drv_tool_goal *goal);
const drv_counters *drv_counters_get(const drv *d);
void drv_close(drv *d);

/* A byte link the driver can run its protocol over instead of a serial port (armd --lockstep:
 * an in-process simulated bus, tools/armsim/simbus.h). Called only from the thread that uses
 * the driver. Times are the link's own clock [ns], which the driver then uses for every
 * deadline and time stamp (drv_now_ns, drv_state.host_time_ns). */
typedef struct {
    void *ctx;
    const char *name; /* the link in fault messages, e.g. "simulated bus" (NULL: "link") */
    /* the link's clock now [ns] */
    uint64_t (*now_ns)(void *ctx);
    /* queues all n bytes for sending at now: 0, or -1 with errno set */
    int (*write)(void *ctx, const uint8_t *data, size_t n);
    /* bytes received by deadline_ns, at most cap: the clock advances to the arrival of the
     * bytes returned, or to the deadline when none arrive (then 0); -1 (errno set) on a link
     * error. A deadline already passed returns what has arrived, or 0, at once. */
    ssize_t (*read)(void *ctx, uint8_t *buf, size_t cap, uint64_t deadline_ns);
    /* discards the bytes received and not read yet (those still on the way are kept) */
    void (*flush_input)(void *ctx);
    /* lets ns pass: where the driver pauses (a serial port would nanosleep) */
    void (*sleep_ns)(void *ctx, uint64_t ns);
} drv_link;

/* drv_open over a link instead of cfg->driver.port: the same checks, frames and protocol; the
 * link is copied (its ctx must outlive the driver). drv_torque_off_async does nothing on it
 * (there is no descriptor). DRV_ECONFIG when a callback is missing. */
drv *drv_open_link(const armd_config *cfg, const drv_link *link, drv_fault *fault);
/* The clock of the driver's port or link [ns]: CLOCK_MONOTONIC for a serial port. */
uint64_t drv_now_ns(const drv *d);

/* ------------------------------------------------------------------------------ torque off */
/* Torque off on every configured device without a probe and without touching any other
 * setting (`armd --torque-off`, e.g. after armd was killed): dxl2 first sends one Sync Write of
 * Torque Enable (address 64) = 0 to every ID, then writes Torque Enable = 0 to each servo in
 * turn and waits for its status reply (a reply with the alert bit counts: the write was taken);
 * armlink sends DISABLE and waits for the acknowledgement. Each device is tried
 * DRV_OFF_ATTEMPTS times with a reply deadline of timeout_us clamped into
 * [DRV_OFF_MIN_TIMEOUT_US, DRV_OFF_MAX_TIMEOUT_US], so a missing device costs at most about
 * 0.3 s. report(ctx, fault) is called for each device that did not confirm (fault->device_id:
 * the servo ID, -1 for the armlink board) and every device is still tried. Returns how many
 * did not confirm (0 = all off). */
typedef void (*drv_off_report)(void *ctx, const drv_fault *fault);
int drv_torque_off_each(drv *d, drv_off_report report, void *ctx);
#define DRV_OFF_ATTEMPTS       3
#define DRV_OFF_MIN_TIMEOUT_US 50000
#define DRV_OFF_MAX_TIMEOUT_US 100000

/* The last resort of a dying process (fatal-signal handler): writes the torque-off frame built
 * at drv_open (dxl2: Sync Write of Torque Enable (64) = 0 to every configured ID, which no servo
 * answers; armlink: DISABLE) straight to the open port's descriptor with write(2), after
 * silencing the driver's own writes (serial_silence: another thread may be mid-tick).
 * Half duplex: on an RS-485 bus the frame can collide with a reply already in flight and be
 * lost, so it is written a second time once such a reply is surely over (one tick's bus time,
 * at least DRV_OFF_GAP_MIN_NS, at most DRV_OFF_GAP_MAX_NS; nanosleep). A request another thread
 * had already passed to write(2) before the silence can still be answered during the gap; that
 * window is a few instructions wide. Async-signal-safe: only write(2), nanosleep(2) and atomic
 * stores; no allocation, no locks; errno is kept. Does nothing for NULL or a driver on a
 * drv_link. The driver is not usable afterwards. */
void drv_torque_off_async(drv *d);
#define DRV_OFF_GAP_MIN_NS 2000000L  /* 2 ms */
#define DRV_OFF_GAP_MAX_NS 50000000L /* 50 ms */

/* The largest |torque| [N m|N] joint `joint`'s servos can deliver together at the current limits
 * read at probe (INFINITY when the devices report none). Thread-safe after drv_probe. */
double drv_torque_capacity(const drv *d, int joint);

/* Estimated bus time of one control tick (one read + one write) for this config [us]:
 * 10 bits per byte at the baud rate + servo return delays + DRV_TURNAROUND_US per reply
 * turnaround (formula: drivers/bus_time.c and drivers/README.md). */
double drv_tick_bus_time_us(const armd_config *cfg);
#define DRV_PROBE_TIMEOUT_US  50000 /* probe's least reply deadline [us] */
#define DRV_PROBE_RETRIES     2     /* probe's least retries per transaction */
#define DRV_ENABLE_TIMEOUT_US 20000 /* torque on's least reply deadline [us] */
#define DRV_TURNAROUND_US     100.0 /* host latency allowance per request/reply turnaround [us] */

/* ---------------------------------------------------- unit conversion (device <-> joint SI) */
/* Servo shaft position in counts -> joint position, and back, for servo k of joint j. */
double units_counts_to_q(const cfg_joint *j, int k, int32_t counts);
int32_t units_q_to_counts(const cfg_joint *j, int k, double q);
/* Joint torque -> per-servo motor current [A] (twin servos share the torque), and back. */
double units_tau_to_amps(const cfg_joint *j, int k, double tau);
double units_amps_to_tau(const cfg_joint *j, int k, double amps);
/* The tool servo: shaft counts <-> opening [m], shaft rpm -> opening speed [m/s], motor
 * current [A] <-> squeezing force [N] (> 0 closing), by cfg_tool's mapping. */
double units_counts_to_opening(const cfg_tool *t, int32_t counts);
int32_t units_opening_to_counts(const cfg_tool *t, double opening);
double units_rpm_to_opening_speed(const cfg_tool *t, double rpm);
double units_amps_to_force(const cfg_tool *t, double amps);
double units_force_to_amps(const cfg_tool *t, double force);
/* Servo shaft velocity [rev/min] <-> joint velocity. */
double units_rpm_to_qd(const cfg_joint *j, int k, double rpm);
double units_qd_to_rpm(const cfg_joint *j, int k, double qd);

/* ------------------------------------------------------------- Dynamixel Protocol 2.0 codec */
/* (declared by the drivers work: packet build/parse, CRC-16, byte stuffing, both directions,
 *  so armsim can play servos) */
#include "drivers/dxl2_codec.h"
/* ------------------------------------------------------------------------ armlink codec */
#include "drivers/armlink_codec.h"

#endif
