/*
 * torqueoff.h — `armd --torque-off -c CONFIG [--port PATH]`: switches the torque of every
 * configured servo (or the armlink board) off without probing or configuring anything else, for
 * an arm whose armd is gone (systemd runs it as ExecStopPost=, so a crash, a watchdog abort or a
 * SIGKILL still ends with the torque off).
 */
#ifndef ARMD_TORQUEOFF_H
#define ARMD_TORQUEOFF_H

/* Loads config_path (drop-ins included), opens the port (port_override if not NULL) and turns
 * every device's torque off (drv_torque_off_each), logging each device that did not confirm.
 * Returns the exit status: 0 every device confirmed; 1 a device did not confirm, or the port
 * cannot be opened or is held by another process (a running armd: use `armctl estop`);
 * 2 the configuration cannot say which devices are on which port. */
int armd_torque_off(const char *config_path, const char *port_override);

#endif
