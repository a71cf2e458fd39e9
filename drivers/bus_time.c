/*
 * bus_time.c — estimated serial bus time of one control tick (one state read + one torque
 * write) for a configuration, without stuffing bytes (rare in practice):
 *
 *   t = 10 * B / baud * 1e6 + R + L * T                                              [us]
 *
 *   B = bytes on the wire in both directions (10 bits per byte: start, 8 data, stop)
 *   R = reply delays: dxl2 Sync Read n x return_delay_us (each servo waits its Return Delay
 *       Time after the previous one), Fast Sync Read 1 x return_delay_us; armlink 0
 *   T = transactions that turn the line around (dxl2: 1 — the Sync Write has no reply;
 *       armlink: 2 — both requests are acknowledged)
 *   L = DRV_TURNAROUND_US, the host-side latency allowance per turnaround (USB-serial
 *       adapter with latency_timer = 1 and the kernel's tty path)
 *
 * dxl2, n servos: Sync Read out 14 + n, replies n x 21 (Fast Sync Read: 8 + 14 n),
 *                 Sync Write 14 + 3 n.
 * armlink, c board channels: READ_STATE 7 out, 14 + 12 c back; WRITE_TORQUE 8 + 4 c out,
 *                 13 back.
 */
#include "drivers/driver_impl.h"

double drv_tick_bus_time_us(const armd_config *cfg)
{
    int n = 0, max_ch = 0;
    for (int j = 0; j < cfg->n_joints && j < CFG_MAX_JOINTS; j++) {
        for (int k = 0; k < cfg->joint[j].n_ids && k < CFG_MAX_IDS; k++) {
            n++;
            if (cfg->joint[j].id[k] + 1 > max_ch) max_ch = cfg->joint[j].id[k] + 1;
        }
    }
    double baud = cfg->driver.baud > 0 ? cfg->driver.baud : 1;
    double bytes, delays, turnarounds;
    if (cfg->driver.type == DRIVER_DXL2) {
        double reply = cfg->driver.fast_sync_read ? 8.0 + 14.0 * n : 21.0 * n;
        bytes = (14.0 + n) + reply + (14.0 + 3.0 * n);
        delays = (cfg->driver.fast_sync_read ? 1 : n) * (double)cfg->driver.return_delay_us;
        turnarounds = 1;
    } else {
        int c = max_ch; /* the board reports at least the configured channels */
        bytes = 7.0 + (14.0 + 12.0 * c) + (8.0 + 4.0 * c) + 13.0;
        delays = 0;
        turnarounds = 2;
    }
    return 10.0 * bytes / baud * 1e6 + delays + turnarounds * DRV_TURNAROUND_US;
}
