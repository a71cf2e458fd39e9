/*
 * drv_life.c — the driver's life and the protocol-independent checks (see drv_life.h).
 */
#include "tests/drivers/drv_life.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Device mapping values, all inside the ranges config/ accepts (its boundaries included). */
static const char *const gear_ratios[8] = {"1",   "100",    "628.3", "0.01",
                                           "1e5", "1e-300", "1e-3",  "3"};
static const char *const torques_per_amp[8] = {"1",    "0.5", "1e4",  "1e-300",
                                               "3e-5", "2",   "0.01", "100"};
static const char *const zero_offsets[4] = {"0", "3.14159", "-1e6", "1e6"};
static const char *const torque_limits[8] = {"10", "0.001", "1e6", "1e-300",
                                             "40", "2.5",   "100", "5"};
static const char *const counts_per_rev[8] = {"4096", "1",   "1e9",   "1e-300",
                                              "2048", "0.5", "65536", "4096"};
static const char *const timeouts_us[4] = {"1000", "50", "20000", "1000000"};
static const char *const retries[4] = {"0", "1", "2", "10"};

/* Torques written in the cycles [N m]: the awkward values first. */
static const double torques[] = {NAN,      INFINITY, -INFINITY, 0.0,   -0.0, 1e-300, -1e-300,
                                 1e300,    -1e300,   1.5,       -2.25, 10,   -10,    DBL_MAX,
                                 -DBL_MAX, 4.9e-324, 0.3,       1e6,   -7.5, 40};
#define N_TORQUES (sizeof torques / sizeof torques[0])

/* Appends printf-style text to buf (cap bytes, NUL-terminated). */
static void add(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* The INI text for header bytes h[0..4): h[0] joints (1..4), twin servos on the first joint
 * and their direction, retries, timeout; h[1] the protocol's variant; h[2] gear ratio,
 * torque_per_amp, zero_offset; h[3] torque limit and counts_per_rev (rotated per joint). */
static void build_ini(const drv_proto *p, const uint8_t *h, char *ini, size_t cap)
{
    int n = 1 + (h[0] & 3), base = p->type == DRIVER_DXL2 ? 1 : 0;
    bool twin = h[0] & 4, mirrored = h[0] & 8;
    ini[0] = 0;
    add(ini, cap, "[arm]\nname = fuzz\nrate_hz = 500\n[driver]\nport = /dev/fake0\n");
    add(ini, cap, "timeout_us = %s\nretries = %s\n", timeouts_us[h[0] >> 6],
        retries[(h[0] >> 4) & 3]);
    size_t len = strlen(ini);
    p->driver_ini(ini + len, cap - len, h[1]);
    for (int j = 0; j < n; j++) {
        add(ini, cap,
            "[joint j%d]\ntype = revolute\ndh = standard\na = 0.1\nalpha = 0\nd = 0\ntheta = 0\n"
            "mass = 1\ninertia = 0.01 0 0 0.01 0 0.01\nlower = -3\nupper = 3\nvelocity = 5\n"
            "acceleration = 20\nkp = 100\nkd = 20\n",
            j);
        if (j == 0 && twin)
            add(ini, cap, "id = %d %d\ndirection = 1 %d\n", base, base + 20, mirrored ? -1 : 1);
        else
            add(ini, cap, "id = %d\n", base + j);
        add(ini, cap,
            "gear_ratio = %s\ntorque_per_amp = %s\nzero_offset = %s\ntorque = %s\n"
            "counts_per_rev = %s\n",
            gear_ratios[((h[2] & 7) + j) & 7], torques_per_amp[(((h[2] >> 3) & 7) + j) & 7],
            zero_offsets[((h[2] >> 6) + j) & 3], torque_limits[((h[3] & 7) + j) & 7],
            counts_per_rev[(h[3] >> 3) & 7]);
    }
}

/* Whether ARMD_FUZZ_TRACE is set: then the configuration's messages, each call and its result
 * are printed (to read a crash's input). */
static bool tracing(void)
{
    static int on = -1;
    if (on < 0) on = getenv("ARMD_FUZZ_TRACE") != NULL;
    return on;
}

/* Prints a call and its result when tracing. */
static void trace(const char *call, int rc, const drv_fault *f)
{
    bool on = tracing();
    if (on)
        fprintf(stderr, "%s -> %d%s%s%s\n", call, rc, rc ? " (" : "",
                rc ? drv_status_name(f->status) : "", rc ? ")" : "");
    if (on && rc) fprintf(stderr, "    %.160s\n", f->message);
}

/* Fills a fault with garbage, so that what a call leaves there is what it wrote. */
static void scribble(drv_fault *f)
{
    memset(f, 0xA5, sizeof *f);
}

/* The fault contract of drivers.h for one call's result. */
static void check_fault(const char *call, int rc, const drv_fault *f)
{
    trace(call, rc, f);
    if (rc != 0 && rc != -1) fz_fail("%s returned %d (0 or -1 expected)", call, rc);
    if (rc == 0) {
        if (f->status != DRV_OK)
            fz_fail("%s succeeded but left fault status %d (%.160s)", call, (int)f->status,
                    f->message);
        return;
    }
    if (!(f->status > DRV_OK && f->status <= DRV_ECONFIG))
        fz_fail("%s failed with status %d, not a drv_status fault", call, (int)f->status);
    if (!memchr(f->message, 0, sizeof f->message) || !f->message[0])
        fz_fail("%s failed (%s) with an empty or unterminated message", call,
                drv_status_name(f->status));
    if (f->device_id < -1 || f->device_id > 255)
        fz_fail("%s failed with device_id %d", call, f->device_id);
}

/* A value that the driver left untouched (the 0xFF fill) or wrote as a finite number. */
static bool untouched_or_finite(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits == UINT64_MAX || isfinite(v);
}

typedef struct {
    const drv_proto *p;
    const armd_config *cfg;
    fake_port *fp;
    drv *d;
    uint64_t reads, writes; /* drv_read / drv_write calls */
} life;

/* drv_read with its checks; returns its result, *f the fault. */
static int do_read(life *L, drv_fault *f)
{
    drv_state st;
    memset(&st, 0xFF, sizeof st);
    scribble(f);
    L->reads++;
    int rc = drv_read(L->d, &st, f);
    check_fault("drv_read", rc, f);
    int n = L->cfg->n_joints;
    if (rc == 0 && st.n != n) fz_fail("drv_read: state of %d joints, config has %d", st.n, n);
    for (int j = 0; j < n; j++) {
        bool ok = rc == 0 ? isfinite(st.q[j]) && isfinite(st.qd[j]) && isfinite(st.tau[j])
                          : untouched_or_finite(st.q[j]) && untouched_or_finite(st.qd[j]) &&
                                untouched_or_finite(st.tau[j]);
        if (!ok)
            fz_fail("drv_read (rc %d): joint %d has q %g qd %g tau %g", rc, j, st.q[j], st.qd[j],
                    st.tau[j]);
    }
    return rc;
}

/* drv_write of the torques of cycle k, with its checks. */
static int do_write(life *L, int k, uint8_t seed)
{
    double tau[CFG_MAX_JOINTS];
    for (int j = 0; j < L->cfg->n_joints; j++)
        tau[j] = torques[((seed & 31u) + 7u * (unsigned)k + 3u * (unsigned)j) % N_TORQUES];
    drv_fault f;
    scribble(&f);
    L->writes++;
    int rc = drv_write(L->d, tau, &f);
    check_fault("drv_write", rc, &f);
    L->p->after_write(tau, rc);
    return rc;
}

/* drv_enable with its checks (torque on's longer deadlines allowed meanwhile). */
static int do_enable(life *L, bool on)
{
    drv_fault f;
    scribble(&f);
    L->fp->max_wait_ns = L->p->tx_budget_ns(L->cfg, on ? DRV_ENABLE_TIMEOUT_US : 0);
    int rc = drv_enable(L->d, on, &f);
    L->fp->max_wait_ns = L->p->tx_budget_ns(L->cfg, 0);
    check_fault(on ? "drv_enable(true)" : "drv_enable(false)", rc, &f);
    L->p->after_enable(on, rc);
    return rc;
}

/* drv_probe with its checks (the probe's own, longer, deadlines allowed meanwhile). */
static int do_probe(life *L)
{
    drv_fault f;
    scribble(&f);
    L->fp->max_wait_ns = L->p->tx_budget_ns(L->cfg, DRV_PROBE_TIMEOUT_US);
    int rc = drv_probe(L->d, &f);
    L->fp->max_wait_ns = L->p->tx_budget_ns(L->cfg, 0);
    check_fault("drv_probe", rc, &f);
    L->p->after_probe(rc);
    for (int j = 0; rc == 0 && j < L->cfg->n_joints; j++) {
        double cap = drv_torque_capacity(L->d, j);
        if (!(cap >= 0)) fz_fail("drv_torque_capacity(%d) = %g after probe", j, cap);
    }
    return rc;
}

/* Before a successful probe nothing reaches the bus and every call fails with DRV_EPROBE. */
static void check_unprobed(life *L)
{
    drv_fault f;
    drv_state st;
    double tau[CFG_MAX_JOINTS] = {0};
    uint64_t w = L->fp->writes;
    scribble(&f);
    L->reads++;
    if (drv_read(L->d, &st, &f) != -1 || f.status != DRV_EPROBE)
        fz_fail("drv_read before probe: status %d", (int)f.status);
    scribble(&f);
    L->writes++;
    if (drv_write(L->d, tau, &f) != -1 || f.status != DRV_EPROBE)
        fz_fail("drv_write before probe: status %d", (int)f.status);
    scribble(&f);
    if (drv_enable(L->d, true, &f) != -1 || f.status != DRV_EPROBE)
        fz_fail("drv_enable(true) before probe: status %d", (int)f.status);
    if (L->fp->writes != w) fz_fail("bus traffic before a successful probe");
}

/* Enable, then cycles of read + write (4 + 4 * (seed >> 5) of them, fewer when the script is
 * used up after 3), reacting to device faults as armd does (torque off) and enabling again now
 * and then; finally torque off. */
static void run_cycles(life *L, uint8_t seed)
{
    bool on = do_enable(L, true) == 0;
    int cycles = 4 + 4 * (seed >> 5);
    for (int k = 0; k < cycles && (k < 3 || fz_more(&L->fp->script)); k++) {
        if (!on && k % 8 == 1) on = do_enable(L, true) == 0;
        drv_fault f;
        int rc = do_read(L, &f);
        if (rc != 0 && on && (f.status == DRV_EALERT || f.status == DRV_EDEVICE)) {
            do_enable(L, false);
            on = false;
        }
        do_write(L, k, seed);
    }
    do_enable(L, false);
}

/* The life of one driver on the fake port. */
static void live(life *L, uint8_t seed)
{
    drv_fault f;
    scribble(&f);
    L->d = drv_open(L->cfg, &f);
    if (!L->d) {
        check_fault("drv_open", -1, &f);
        if (f.status != DRV_ECONFIG)
            fz_fail("drv_open failed with %s on a fake port: %s", drv_status_name(f.status),
                    f.message);
        return;
    }
    if (f.status != DRV_OK) fz_fail("drv_open succeeded with fault status %d", (int)f.status);
    if (L->fp->writes) fz_fail("drv_open sent bytes");
    check_unprobed(L);
    int rc = do_probe(L);
    if (rc != 0) rc = do_probe(L); /* as an operator restarting armd would */
    if (rc == 0)
        run_cycles(L, seed);
    else
        do_enable(L, false); /* armd's exit: torque off whatever the probe left */
    const drv_counters *c = drv_counters_get(L->d);
    if (c->reads != L->reads || c->writes != L->writes)
        fz_fail("counters: %llu reads, %llu writes; %llu and %llu calls",
                (unsigned long long)c->reads, (unsigned long long)c->writes,
                (unsigned long long)L->reads, (unsigned long long)L->writes);
    drv_close(L->d);
}

/* The configuration for header bytes h[0..4), or NULL when config/ rejects it. Loaded once
 * per header and kept (the fuzz target is about the driver, and parsing dominated the run). */
static const armd_config *config_for(const drv_proto *p, const uint8_t *h)
{
    static struct {
        bool used, valid;
        uint8_t h[4];
        armd_config cfg;
    } cache[64];
    unsigned slot = (h[0] * 31u + h[1] * 7u + h[2] * 3u + h[3]) % 64u;
    if (!cache[slot].used || memcmp(cache[slot].h, h, 4) != 0) {
        static char ini[16384];
        build_ini(p, h, ini, sizeof ini);
        cfg_report rep;
        cfg_report_init(&rep);
        int errors = cfg_load_string(ini, "fuzz.ini", &cache[slot].cfg, &rep);
        if (tracing() && rep.n_lines) cfg_report_print(&rep, stderr);
        cfg_report_free(&rep);
        cache[slot].used = true;
        cache[slot].valid = errors == 0;
        memcpy(cache[slot].h, h, 4);
    }
    return cache[slot].valid ? &cache[slot].cfg : NULL;
}

int drv_life_run(const drv_proto *p, const uint8_t *data, size_t size)
{
    if (size < DRV_LIFE_HEADER) return 0;
    const armd_config *cfg = config_for(p, data);
    if (!cfg) return 0;
    uint8_t seed = data[4];
    static fake_port fp;
    fake_port_begin(&fp, data + DRV_LIFE_HEADER, size - DRV_LIFE_HEADER, cfg->driver.baud,
                    p->begin(cfg));
    fp.overrun_ns = 1000;
    fp.max_wait_ns = p->tx_budget_ns(cfg, 0);
    life L = {p, cfg, &fp, NULL, 0, 0};
    live(&L, seed);
    if (fp.opens > 1 || fp.closes != fp.opens)
        fz_fail("port opened %d times, closed %d times", fp.opens, fp.closes);
    return 0;
}

double drv_life_expected_current(const cfg_joint *J, int k, double tau, double amps_per_unit,
                                 double limit)
{
    if (!isfinite(tau)) return 0;
    double raw = J->direction[k] * tau / (J->n_ids * J->torque_per_amp) / amps_per_unit;
    if (!(raw <= limit)) raw = limit; /* also +inf from an overflow */
    if (!(raw >= -limit)) raw = -limit;
    return round(raw);
}
