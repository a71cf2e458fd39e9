/*
 * checkconfig.h — `armd --check-config FILE`: validates a configuration without touching the
 * hardware and prints what it describes.
 */
#ifndef ARMD_CHECKCONFIG_H
#define ARMD_CHECKCONFIG_H

#include <stdio.h>

/* Loads and validates path, prints the report and a summary (joints, total mass, gravity torque
 * at the zero pose, torque limits, loop period, bus time per tick) to out. Returns the exit
 * status: 0 valid, 1 the loop does not fit on the bus, 2 configuration errors. */
int armd_check_config(const char *path, FILE *out);

#endif
