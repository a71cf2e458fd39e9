/*
 * drv_life.h — one driver's whole life for the driver fuzz targets: a small configuration
 * chosen by the first input bytes (cfg_load_string), then drv_open -> drv_probe -> drv_enable
 * -> drv_read / drv_write cycles (torques include NaN, +-inf, 0, 1e-300, 1e300, negatives)
 * -> drv_enable(false) -> drv_close over the scripted fake port (fake_port.h), the rest of the
 * input being the port's script.
 *
 * Checks that hold for every protocol (abort() on violation):
 *  - every call returns 0 or -1; -1 comes with a drv_fault whose status is a drv_status other
 *    than DRV_OK, whose message is non-empty and whose device_id is -1..255; 0 comes with
 *    DRV_OK;
 *  - drv_read/drv_write/drv_enable(true) before a successful probe fail with DRV_EPROBE and no
 *    bus traffic; drv_open sends nothing;
 *  - a successful drv_read fills n joints with finite q, qd and tau; a failed one leaves every
 *    value either untouched or finite;
 *  - the counters count every read and write call; the port is closed exactly once;
 *  - time: each transaction's deadline stays within the protocol's budget and no read starts
 *    more than one chunk's wire time after it (fake_port.h).
 * The protocol (drv_proto) adds its device model and the checks of what was written.
 */
#ifndef ARMD_TESTS_DRV_LIFE_H
#define ARMD_TESTS_DRV_LIFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/drivers.h"
#include "tests/drivers/fake_port.h"

/* Input bytes before the port's script: four choose the configuration, one the number of
 * cycles (high 3 bits) and the order of the torques written (low 5 bits). */
#define DRV_LIFE_HEADER 5

typedef struct {
    cfg_driver_type type;
    /* Writes the [driver] section's protocol-specific lines for variant byte v. */
    int (*driver_ini)(char *buf, size_t cap, uint8_t v);
    /* Resets the device model for a run with this configuration; returns its port hooks. */
    fake_port_device (*begin)(const armd_config *cfg);
    /* Longest wait for one transaction's replies (deadline - request) the protocol may need,
     * with the reply timeout raised to at least least_us (the probe's and torque on's longer
     * deadlines; 0 = the configured one) [ns]. */
    uint64_t (*tx_budget_ns)(const armd_config *cfg, int least_us);
    /* Called after each call with its result: checks what the device saw. */
    void (*after_probe)(int rc);
    void (*after_enable)(bool on, int rc);
    void (*after_write)(const double *tau, int rc);
} drv_proto;

/* Runs one input through the life above; returns 0 (libFuzzer's convention). */
int drv_life_run(const drv_proto *p, const uint8_t *data, size_t size);

/* The expected device current [device units] for joint torque tau on servo k of joint J:
 * tau / (n_ids * torque_per_amp) * direction / amps_per_unit, rounded, within +-limit; 0 for a
 * non-finite tau. Written from drivers/README.md ("Units"), independently of drivers/. */
double drv_life_expected_current(const cfg_joint *J, int k, double tau, double amps_per_unit,
                                 double limit);

#endif
