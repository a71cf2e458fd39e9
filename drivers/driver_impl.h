/*
 * driver_impl.h — drivers/-private: the drv object shared by the dispatch (driver.c) and the
 * protocols (dxl2.c, armlink.c).
 */
#ifndef ARMD_DRIVERS_DRIVER_IMPL_H
#define ARMD_DRIVERS_DRIVER_IMPL_H

#include "drivers/drivers.h"
#include "drivers/serial.h"

#define DRV_MAX_SERVOS (DXL2_MAX_ID + 1)

/* Twin servos of one joint must agree on the joint position within this at probe [rad|m]. */
#define DRV_TWIN_TOLERANCE 0.05

/* One servo (dxl2) or board channel (armlink) and the joint it drives. */
#define DRV_TOOL_JOINT (-1) /* drv_servo.joint of the tool servo ([tool NAME]) */
typedef struct {
    int id;    /* servo ID / channel number */
    int joint; /* index into cfg joints, DRV_TOOL_JOINT for the tool servo */
    int k;     /* which of the joint's servos (0 = the one position is read from) */
    /* last raw reading (dxl2: 2.69 mA, 0.229 rpm, counts; armlink: uA, milli-rpm, counts) */
    int32_t current, velocity, position;
    bool seen;             /* reading arrived in this transaction */
    int32_t current_limit; /* |goal current| clamp in device units */
    double limit_amps;     /* the same in A, INFINITY when the device reports none */
} drv_servo;

typedef struct drv_ops {
    int (*probe)(drv *d, drv_fault *f);
    int (*enable)(drv *d, bool on, drv_fault *f);
    int (*read)(drv *d, drv_state *out, drv_fault *f);
    int (*write)(drv *d, const double *tau, drv_fault *f);
    /* builds d->off_frame (drv_torque_off_async) from the configured IDs; 0 or -1 */
    int (*build_off_frame)(drv *d);
    /* drv_torque_off_each's protocol part; returns the count of devices not confirmed */
    int (*torque_off_each)(drv *d, drv_off_report report, void *ctx);
} drv_ops;

#define DRV_OFF_FRAME_MAX 1024 /* Sync Write of 1 byte to DRV_MAX_SERVOS IDs fits */

struct drv {
    const drv_ops *ops;
    cfg_driver cfg;
    int n_joints;
    cfg_joint joint[CFG_MAX_JOINTS];
    serial_port *port;
    drv_counters counters;
    bool probed, enabled;

    int n_servos; /* the joints' servos in config order, then the tool's (if any) */
    drv_servo servo[DRV_MAX_SERVOS];
    /* the tool servo ([tool NAME], dxl2 only): its index in servo[] (-1: none) and the goal
     * block (DXL2_TOOL_GOAL_LEN bytes) drv_tool_set queued for the next write */
    cfg_tool tool;
    int tool_servo;
    bool tool_pending;
    uint8_t tool_goal[32];
    int servo_of[CFG_MAX_JOINTS][CFG_MAX_IDS]; /* index into servo[] */

    uint8_t tx[DXL2_MAX_PACKET];
    uint8_t tx_state[512]; /* the per-tick state request, built at probe */
    size_t tx_state_len;
    uint8_t off_frame[DRV_OFF_FRAME_MAX]; /* torque off for every device, built at open */
    size_t off_len;
    long off_gap_ns; /* between the frame's two copies (drv_torque_off_async) */
    union {
        dxl2_framer dxl;
        alk_framer alk;
    } rx;

    /* dxl2 */
    uint64_t last_tx_ns; /* when the last packet was sent (taken before the write) [serial_now_ns];
                            0 = none yet */
    double wd_quiet_ms;  /* > 0: the bus was quiet this long while enabled; the servos' Bus
                            Watchdog is to be checked (check_bus_watchdog) */

    /* armlink */
    uint8_t seq;
    alk_state alk_state; /* last READ_STATE reply */
    int board_channels;
    uint32_t last_time_us;
    uint64_t time_high; /* device clock unwrapping */
    bool have_time;
};

extern const drv_ops drv_dxl2_ops;
extern const drv_ops drv_armlink_ops;

/* Fills *f (may be NULL) with status, device ID and a printf-style message; returns -1. */
int drv_fail(drv_fault *f, drv_status s, int device_id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Counts a fault of status s in d->counters. */
void drv_count(drv *d, drv_status s);
/* Converts raw readings to joint state (units_*); scale factors turn raw values into amps and
 * rpm. Joint position and velocity come from the joint's first servo, torque is the sum. */
void drv_fill_state(const drv *d, drv_state *out, double amps_per_unit, double rpm_per_unit);
/* Joint torques -> per-servo current in device units (rounded, clamped to the servo's limit,
 * also when the conversion overflows; a non-finite torque gives 0). Writes servo[i].current. */
void drv_torques_to_current(drv *d, const double *tau, double amps_per_unit);
/* "joint NAME" or "tool NAME": what servo s drives, for messages. */
const char *drv_servo_owner(const drv *d, const drv_servo *s, char *buf, size_t len);
/* The tool goal block for goal (DXL2_TOOL_GOAL_LEN bytes: Goal Current, Goal Velocity 0,
 * Profile Acceleration 0, Profile Velocity, Goal Position) into out; goal already clamped. */
void drv_tool_goal_block(const drv *d, const drv_tool_goal *goal, uint8_t *out);
/* Checks that the twins of every joint agree within DRV_TWIN_TOLERANCE (after a read). */
int drv_check_twins(const drv *d, drv_fault *f);

#endif
