/*
 * fuzz_model.c — config text -> model -> dynamics: any configuration that cfg_load_string
 * accepts with 0 errors must give, through dyn_model_create, a model whose inverse dynamics
 * (dyn_rnea, DYN_ALL), gravity torque, mass matrix and both forward dynamics solvers return
 * finite numbers at every state within the configured limits.
 *
 * Input: INI text up to the first NUL byte; after it, the state, two bytes per value (signed,
 * little-endian, as a fraction of the allowed range; missing bytes read 0): for each joint q
 * (from the middle of [lower, upper] to either end), then qd (|qd| <= velocity), qdd
 * (|qdd| <= acceleration) and tau for the forward dynamics (|tau| <= torque). An infinite
 * position limit is taken as +-CFG_MAX_POSITION (the largest config/ accepts).
 *
 * abort() on violation, with the quantity, the joint and the state on stderr.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

#define CFG_MAX_POSITION 1e4 /* |lower|, |upper| <= 1e4 rad or m (config/cfg_joint.c) */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next state value as a fraction in [-1, 1] (0 once the bytes are used up). */
static double fraction(const uint8_t **p, const uint8_t *end)
{
    if (end - *p < 2) return 0;
    int16_t v = (int16_t)((*p)[0] | (*p)[1] << 8);
    *p += 2;
    return v < -32767 ? -1.0 : v / 32767.0;
}

/* A position between lo and hi [rad|m]: the middle for f = 0, lo for -1, hi for +1. */
static double position(double lo, double hi, double f)
{
    if (!isfinite(lo)) lo = -CFG_MAX_POSITION;
    if (!isfinite(hi)) hi = CFG_MAX_POSITION;
    double mid = lo / 2 + hi / 2, half = hi / 2 - lo / 2;
    double q = mid + f * half;
    return q < lo ? lo : q > hi ? hi : q; /* rounding never leaves the limits */
}

/* Aborts unless v[0..n) are all finite, naming what and the state. */
static void require_finite(const char *what, const double *v, int n, const armd_config *cfg,
                           const double *q, const double *qd, const double *qdd)
{
    for (int i = 0; i < n; i++) {
        if (isfinite(v[i])) continue;
        fprintf(stderr, "fuzz_model: %s[%d] = %g for an accepted configuration of %d joints\n",
                what, i, v[i], cfg->n_joints);
        for (int j = 0; j < cfg->n_joints; j++)
            fprintf(stderr, "  joint %s: q %.17g qd %.17g qdd %.17g\n", cfg->joint[j].name, q[j],
                    qd[j], qdd[j]);
        abort();
    }
}

/* Runs every dynamics function the daemon and armsim use at one state. */
static void check_state(const armd_config *cfg, const dyn_model *m, dyn_data *d, const uint8_t *p,
                        const uint8_t *end)
{
    int n = cfg->n_joints;
    static double q[DYN_MAX_DOF], qd[DYN_MAX_DOF], qdd[DYN_MAX_DOF], tau_in[DYN_MAX_DOF];
    static double tau[DYN_MAX_DOF], H[DYN_MAX_DOF * DYN_MAX_DOF];
    for (int i = 0; i < n; i++) {
        const cfg_joint *J = &cfg->joint[i];
        q[i] = position(J->lower, J->upper, fraction(&p, end));
        qd[i] = J->velocity * fraction(&p, end);
        qdd[i] = J->acceleration * fraction(&p, end);
        tau_in[i] = J->torque * fraction(&p, end);
    }
    dyn_rnea(m, d, q, qd, qdd, NULL, DYN_ALL, tau);
    require_finite("inverse dynamics", tau, n, cfg, q, qd, qdd);
    dyn_gravity(m, d, q, tau);
    require_finite("gravity torque", tau, n, cfg, q, qd, qdd);
    dyn_mass_matrix(m, d, q, DYN_ARMATURE, H);
    require_finite("mass matrix", H, n * n, cfg, q, qd, qdd);
    if (dyn_forward_chol(m, d, q, qd, tau_in, NULL, DYN_ALL, tau) == 0)
        require_finite("forward dynamics (Cholesky)", tau, n, cfg, q, qd, qdd);
    if (dyn_forward_aba(m, d, q, qd, tau_in, NULL, DYN_ALL, tau) == 0)
        require_finite("forward dynamics (O(n))", tau, n, cfg, q, qd, qdd);
}

/* Loads the text before the first NUL; when config/ accepts it, builds the model and checks
 * the dynamics at the state that follows. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t text_len = nul ? (size_t)(nul - data) : size;
    char *text = malloc(text_len + 1);
    if (!text) return 0;
    memcpy(text, data, text_len);
    text[text_len] = 0;
    static armd_config cfg;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load_string(text, "fuzz.ini", &cfg, &rep);
    if (getenv("ARMD_FUZZ_TRACE")) cfg_report_print(&rep, stderr); /* to read an input */
    cfg_report_free(&rep);
    free(text);
    if (errors) return 0;
    dyn_model *m = dyn_model_create(&cfg.model, NULL, NULL);
    if (!m) {
        fprintf(stderr, "fuzz_model: dyn_model_create refused a configuration config/ accepted\n");
        abort();
    }
    dyn_data *d = dyn_data_create(m);
    if (!d) abort();
    check_state(&cfg, m, d, nul ? nul + 1 : data + size, data + size);
    dyn_data_free(d);
    dyn_model_free(m);
    return 0;
}
