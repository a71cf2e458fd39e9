/*
 * bus_time.c — estimated serial bus time of one control tick (one state read + one torque
 * write) for a configuration, without stuffing bytes (rare in practice):
 *
 *   t = 10 * B / baud * 1e6 + R + L * T                                              [us]
 *
 *   B = bytes on the wire in both directions (10 bits per byte: start, 8 data, stop)
 *   R = reply delays: dxl2 Sync Read s x return_delay_us (each servo waits its Return Delay
 *       Time after the previous one), Fast Sync Read 1 x return_delay_us; armlink 0
 *   T = transactions that turn the line around (dxl2: 1 — the Sync Write and the Bulk Write
 *       have no reply; armlink: 2 — both requests are acknowledged)
 *   L = DRV_TURNAROUND_US, the host-side latency allowance per turnaround (USB-serial
 *       adapter with latency_timer = 1 and the kernel's tty path)
 *
 * dxl2, n joint servos, s = n + 1 with a [tool NAME] servo (else s = n); a packet is 10 bytes
 * (header 4, ID 1, length 2, instruction 1, CRC 2) plus its parameters:
 *   Sync Read out 14 + s (address 2, length 2, one ID per servo), replies s x 21 (10 + error 1
 *   + 10 data bytes; Fast Sync Read: 8 + 14 s);
 *   the write, the worst tick's: without a tool the Sync Write of Goal Current, 14 + 3 n
 *   (address 2, length 2, per servo ID 1 + 2 data); with one, a tick that sends the tool's goal
 *   writes a Bulk Write instead, 10 + n x (5 + 2) + (5 + 18) = 33 + 7 n (per block ID 1,
 *   address 2, length 2, data: each joint servo's Goal Current, 2 bytes, and the tool's goal
 *   block, DXL2_TOOL_GOAL_LEN = 18 bytes).
 * armlink, c board channels: READ_STATE 7 out, 14 + 12 c back; WRITE_TORQUE 8 + 4 c out,
 *                 13 back. (armlink has no tool servo.)
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
        bool tool = cfg->tool.present;
        int s = n + (tool ? 1 : 0); /* servos read */
        double reply = cfg->driver.fast_sync_read ? 8.0 + 14.0 * s : 21.0 * s;
        double write = tool ? 10.0 + 7.0 * n + (5.0 + DXL2_TOOL_GOAL_LEN) : 14.0 + 3.0 * n;
        bytes = (14.0 + s) + reply + write;
        delays = (cfg->driver.fast_sync_read ? 1 : s) * (double)cfg->driver.return_delay_us;
        turnarounds = 1;
    } else {
        int c = max_ch; /* the board reports at least the configured channels */
        bytes = 7.0 + (14.0 + 12.0 * c) + (8.0 + 4.0 * c) + 13.0;
        delays = 0;
        turnarounds = 2;
    }
    return 10.0 * bytes / baud * 1e6 + delays + turnarounds * DRV_TURNAROUND_US;
}
