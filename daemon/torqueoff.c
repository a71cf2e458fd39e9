/*
 * torqueoff.c — `armd --torque-off` (see torqueoff.h). Not real-time; bounded by the driver's
 * per-device attempts (drv_torque_off_each).
 */
#include "daemon/torqueoff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "daemon/log.h"
#include "drivers/drivers.h"

/* The keys torque off relies on: which driver, on which port at which rate, and every joint's
 * IDs. */
static bool is_bus_key(const char *section, const char *key)
{
    if (strcmp(section, "driver") == 0)
        return strcmp(key, "type") == 0 || strcmp(key, "port") == 0 || strcmp(key, "baud") == 0;
    return strncmp(section, "joint ", 6) == 0 && strcmp(key, "id") == 0;
}

/* True when every error of rep is about a key torque off does not use, so the devices, port
 * and baud rate were read as the file says ("FILE:LINE: [section] key: message"; an error
 * without a key, a missing section or a line that is not INI counts against). */
static bool errors_spare_the_bus(const cfg_report *rep)
{
    for (int i = 0; i < rep->n_lines; i++) {
        const char *l = rep->lines[i];
        if (strstr(l, ": warning: ")) continue;
        const char *open = strstr(l, ": [");
        const char *close = open ? strchr(open, ']') : NULL;
        if (!close || close[1] != ' ') return false; /* no key: a section or a line */
        char section[CFG_NAME_MAX + 8], key[64];
        size_t sl = (size_t)(close - open - 3);
        const char *k = close + 2, *colon = strchr(k, ':');
        if (sl >= sizeof section || !colon || (size_t)(colon - k) >= sizeof key) return false;
        memcpy(section, open + 3, sl);
        section[sl] = 0;
        memcpy(key, k, (size_t)(colon - k));
        key[colon - k] = 0;
        if (is_bus_key(section, key) || strchr(key, ' ')) return false;
    }
    return true;
}

/* Logs one device that did not confirm (drv_torque_off_each's report). */
static void report_missing(void *ctx, const drv_fault *f)
{
    (void)ctx;
    log_err("torque off: %s", f->message);
}

int armd_torque_off(const char *config_path, const char *port_override)
{
    armd_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) return 1;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(config_path, cfg, &rep);
    for (int i = 0; i < rep.n_lines; i++) /* errors only: warnings are --check-config's */
        if (!strstr(rep.lines[i], ": warning: ")) log_err("%s", rep.lines[i]);
    bool usable = errors == 0 || (errors_spare_the_bus(&rep) && cfg->n_joints > 0);
    cfg_report_free(&rep);
    if (!usable) {
        log_err("torque off: %s: %d errors, among them the driver or the servo IDs; not "
                "touching the bus",
                config_path, errors);
        free(cfg);
        return 2;
    }
    if (errors)
        log_warn("torque off: %s has %d errors, none in the driver or the servo IDs; turning the "
                 "torque off anyway",
                 config_path, errors);
    if (port_override) snprintf(cfg->driver.port, sizeof cfg->driver.port, "%s", port_override);
    drv_fault f = {DRV_OK, -1, ""};
    drv *d = drv_open(cfg, &f);
    if (!d) {
        if (f.status == DRV_EBUSY)
            log_err("torque off: %s is held by a running armd (or another program): not "
                    "touching it; stop that arm with `armctl estop` or `systemctl stop`",
                    cfg->driver.port);
        else
            log_err("torque off: cannot open %s: %s", cfg->driver.port, f.message);
        free(cfg);
        return f.status == DRV_ECONFIG ? 2 : 1;
    }
    int n = 0;
    for (int j = 0; j < cfg->n_joints; j++) n += cfg->joint[j].n_ids;
    bool dxl = cfg->driver.type == DRIVER_DXL2;
    int missing = drv_torque_off_each(d, report_missing, NULL);
    drv_close(d);
    if (missing == 0 && dxl)
        log_notice("torque off: all %d servos on %s confirmed Torque Enable = 0", n,
                   cfg->driver.port);
    else if (missing == 0)
        log_notice("torque off: the armlink board on %s acknowledged DISABLE", cfg->driver.port);
    else if (dxl)
        log_err("torque off: %d of %d servos on %s did not confirm (see above)", missing, n,
                cfg->driver.port);
    free(cfg);
    return missing ? 1 : 0;
}
