/*
 * identify.c — `armctl identify`: drives the holding arm through an excitation motion, fits the
 * arm's dynamic parameters to the torques armd applied, checks the fit on a second motion and
 * writes an INI fragment, a report and a plot (tools/armctl/README.md, "Identifying the arm's
 * model").
 *
 * 1. The configuration armd runs (info.config, or --config) gives the model: the prior, the
 *    limits and the structure of the regressor.
 * 2. Two Fourier excitations around the present pose (ident_excite.h): the identification one,
 *    run --periods times, and a validation one with another seed, run once. Each period is one
 *    trajectory (20 points a second with q, qd, qdd), the later ones appended; it starts and ends
 *    at rest at the present pose.
 * 3. Samples at the loop rate (q, qd and tau_meas, the torque the servos report with q) of
 *    each run, recorded by armd and fetched afterwards (ident_record.c), from its request to its
 *    last trajectory_done "done" + 0.2 s; any fault, collision, state change or other end stops
 *    it. Not the commanded tau: the servo applies it rounded to
 *    its current resolution (PUMA wrist: 0.018 N m), the loop's feedback answers the rounding,
 *    and that error follows the motion closely enough to bias the fit (the wrist's inertia by
 *    2-4 %). tau_meas is also what acted as q was read, where tau is one tick later.
 * 4. Per stretch of evenly spaced samples (a gap: telemetry dropped or a late tick's skipped
 *    periods, seen in the mono stamps), q, qd and tau are low-passed forwards and backwards
 *    (--cutoff, zero phase) and qdd is the central difference of qd (ident_signal.h); the
 *    stretch's first and last 0.1 s are left out. Every 4th sample feeds the fit (ident_fit.h).
 * 5. Validation: the torque the identified parameters predict on the validation motion against
 *    the measured one (RMS error per joint, and over all joints in % of the torque's RMS), next to
 *    the configured model's. No INI without a validation that is long enough, a number, and
 *    better than the configured model's (validation_refused).
 *
 * Units: SI, joint side (rad, m, N m, N, kg); times in armd's clock [s].
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "tools/armctl/armctl.h"
#include "tools/armctl/ident_excite.h"
#include "tools/armctl/ident_fit.h"
#include "tools/armctl/ident_run.h"
#include "tools/armctl/ident_signal.h"

#define ID_EDGE_S 0.1  /* s left out at each end of a stretch (the filter's start) */
#define ID_V_MIN  0.02 /* [rad/s|m/s] at least: slower joints give no equation */
/* the validation must use at least this share of its motion's duration (gaps and the stretches'
 * ends take the rest), else no parameters are written */
#define ID_VALIDATION_MIN 0.5
/* a joint's equations within this many filter time constants (1 / cutoff) of its velocity
 * reversals are left out (mark_reversals) */
#define ID_REVERSAL_CUTOFFS 1.5

/* Sets near[i * n + j] for the samples within reach ticks of a sign change of joint j's raw
 * velocity. There the Coulomb torque steps: the recorded torque, low-passed, spreads the step
 * over the filter's reach while the regressor, evaluated on the filtered velocity, keeps it
 * sharp, and the two disagree by up to the whole Coulomb band (PUMA j1: 62 N m). */
static void mark_reversals(const id_rec *r, long reach, unsigned char *near)
{
    int n = r->n;
    for (int j = 0; j < n; j++)
        for (long i = 1; i < r->len; i++) {
            if ((r->qd[i * n + j] > 0) == (r->qd[(i - 1) * n + j] > 0)) continue;
            for (long k = i - reach; k <= i + reach; k++)
                if (k >= 0 && k < r->len) near[k * n + j] = 1;
        }
}

/* Filters each stretch of evenly spaced samples (q, qd, tau low-passed at cutoff [Hz], qdd the
 * derivative of the filtered qd), marks the samples away from the stretches' ends (use) and,
 * per joint, those near a velocity reversal (near); counts the gaps. The spacing is read from
 * the mono stamps, not from tick: the tick after a late one is the next in number but 2-4
 * periods later in time (a busy host), and one stretch across it spoiled a whole fit (residual
 * 0.032 N m where 0.003-0.004 is usual). 0, or -1 when memory is short. */
static int prepare(id_rec *r, double rate, double cutoff, id_ready *out)
{
    int n = r->n;
    out->gaps = out->used = 0;
    out->qdd = calloc((size_t)(r->len ? r->len : 1) * (size_t)n, sizeof(double));
    out->use = calloc((size_t)(r->len ? r->len : 1), 1);
    out->near = calloc((size_t)(r->len ? r->len : 1) * (size_t)n, 1);
    if (!out->qdd || !out->use || !out->near) return -1;
    mark_reversals(r, (long)(ID_REVERSAL_CUTOFFS / cutoff * rate), out->near);
    long edge = (long)(ID_EDGE_S * rate);
    for (long s = 0; s < r->len;) {
        long e = ident_stretch_end(r->mono, r->len, rate, s);
        if (e < r->len) out->gaps++;
        long len = e - s;
        if (len > 2 * edge + 10) {
            for (int j = 0; j < n; j++) {
                ident_lowpass(r->q + s * n + j, len, n, cutoff, rate);
                ident_lowpass(r->qd + s * n + j, len, n, cutoff, rate);
                ident_lowpass(r->tau + s * n + j, len, n, cutoff, rate);
                ident_derivative(r->qd + s * n + j, len, n, rate, out->qdd + s * n + j);
            }
            for (long i = s + edge; i < e - edge; i++) out->use[i] = 1;
            out->used += len - 2 * edge;
        }
        s = e;
    }
    return 0;
}

/* Replaces the torque of every sample use marks (its neighbours are in its stretch) by the
 * torque fitted at alignment a (ident_aligned). */
static void align_torque(id_rec *r, const id_ready *rd, double a)
{
    int n = r->n;
    for (int j = 0; j < n; j++) {
        double prev = r->tau[j];
        for (long i = 1; i + 1 < r->len; i++) {
            double cur = r->tau[i * n + j];
            if (rd->use[i])
                r->tau[i * n + j] = ident_aligned(a, prev, cur, r->tau[(i + 1) * n + j]);
            prev = cur;
        }
    }
}

static void validate(ident_fit *f, const double *pi, const id_rec *r, const id_ready *rd,
                     id_validation *v)
{
    int n = r->n;
    double se[DYN_MAX_DOF] = {0}, st[DYN_MAX_DOF] = {0}, all_e = 0, all_t = 0;
    memset(v, 0, sizeof *v);
    long rows[DYN_MAX_DOF] = {0};
    for (long i = 0; i < r->len; i += ID_DECIMATE) {
        if (!rd->use[i]) continue;
        double pred[DYN_MAX_DOF];
        ident_predict(f, pi, r->q + i * n, r->qd + i * n, rd->qdd + i * n, pred);
        for (int j = 0; j < n; j++) {
            if (!(fabs(r->qd[i * n + j]) >= ident_v_min(f))) continue; /* sticking: unknown */
            if (rd->near[i * n + j]) continue;
            double e = pred[j] - r->tau[i * n + j];
            se[j] += e * e;
            st[j] += r->tau[i * n + j] * r->tau[i * n + j];
            rows[j]++;
        }
        v->samples++;
    }
    for (int j = 0; j < n; j++) {
        v->rms[j] = rows[j] ? sqrt(se[j] / (double)rows[j]) : 0;
        v->tau_rms[j] = rows[j] ? sqrt(st[j] / (double)rows[j]) : 0;
        all_e += se[j];
        all_t += st[j];
    }
    v->percent = all_t > 0 ? 100 * sqrt(all_e / all_t) : NAN;
}

/* Whether the identified parameters must not be written: their validation (v, on rd's
 * samples at rate [Hz] of a motion of period [s]) is missing, too short (under
 * ID_VALIDATION_MIN of the motion), not a number, or no better than the configured model's
 * (v0) on the same samples. Says why in why, with the figures. */
static bool validation_refused(const id_validation *v, const id_validation *v0, const id_ready *rd,
                               double rate, double period, char *why, size_t why_len)
{
    double used = (double)rd->used / rate, need = ID_VALIDATION_MIN * period;
    if (!(used >= need))
        snprintf(why, why_len,
                 "validation: %.2f s of the %.3g s validation motion usable (%ld gaps), at least "
                 "%.3g s needed",
                 used, period, rd->gaps, need);
    else if (!(v->percent >= 0 && isfinite(v->percent)))
        snprintf(why, why_len, "validation: the torque error is not a number (%ld samples)",
                 v->samples);
    else if (!(v->percent < v0->percent))
        snprintf(why, why_len,
                 "validation: the identified model's torque error %.2f %% is no better than the "
                 "configured model's %.2f %% on the same motion",
                 v->percent, v0->percent);
    else
        return false;
    return true;
}

/* Parses the options; 0, or the usage exit status (reported). */
static int parse_options(int argc, char **argv, id_options *o)
{
    static const struct {
        const char *name;
        char kind; /* d: double > 0, i: int >= 1, s: string, u: seed */
        size_t off;
    } opts[] = {
        {"--config", 's', offsetof(id_options, config)},
        {"--out", 's', offsetof(id_options, out)},
        {"--report", 's', offsetof(id_options, report)},
        {"--period", 'd', offsetof(id_options, period)},
        {"--swing", 'd', offsetof(id_options, swing)},
        {"--cutoff", 'd', offsetof(id_options, cutoff)},
        {"--periods", 'i', offsetof(id_options, periods)},
        {"--harmonics", 'i', offsetof(id_options, harmonics)},
        {"--candidates", 'i', offsetof(id_options, candidates)},
        {"--seed", 'u', offsetof(id_options, seed)},
    };
    for (int i = 0; i < argc; i++) {
        int k = -1;
        for (int m = 0; m < (int)(sizeof opts / sizeof opts[0]); m++)
            if (strcmp(argv[i], opts[m].name) == 0) k = m;
        if (k < 0) return usage_error("identify: unexpected argument '%s'", argv[i]);
        if (i + 1 >= argc) return usage_error("identify: %s needs a value", argv[i]);
        const char *v = argv[++i];
        char *base = (char *)o + opts[k].off, *end;
        double x;
        switch (opts[k].kind) {
        case 's':
            *(const char **)base = v;
            break;
        case 'd':
            if (!parse_double(v, &x) || !(x > 0 && x <= 1e4))
                return usage_error("identify: '%s' is not a number in (0, 1e4]", v);
            *(double *)base = x;
            break;
        case 'i':
            errno = 0;
            long l = strtol(v, &end, 10);
            if (errno || end == v || *end || l < 1 || l > 1000)
                return usage_error("identify: '%s' is not a whole number 1 ... 1000", v);
            *(int *)base = (int)l;
            break;
        default:
            errno = 0;
            unsigned long long u = strtoull(v, &end, 10);
            if (errno || end == v || *end || *v == '-')
                return usage_error("identify: '%s' is not a seed (a whole number >= 0)", v);
            *(unsigned long long *)base = u;
        }
    }
    if (o->harmonics > IDENT_MAX_HARMONICS)
        return usage_error("identify: --harmonics %s is more than 10", "");
    return 0;
}

/* The configuration armd runs, loaded here (drop-ins included) and checked against info. */
static int load_config(armctl_conn *c, const id_options *o, const arm_info *a, json_t *info,
                       armd_config *cfg)
{
    const char *path = o->config ? o->config : json_string_value(json_object_get(info, "config"));
    if (!path) {
        fprintf(stderr, ID_PREFIX "armd did not name its configuration: give --config FILE\n");
        return 1;
    }
    (void)c;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, cfg, &rep);
    for (int i = 0; errors && i < rep.n_lines; i++) fprintf(stderr, "%s\n", rep.lines[i]);
    cfg_report_free(&rep);
    if (errors) {
        fprintf(stderr, ID_PREFIX "%s: %d errors\n", path, errors);
        return 1;
    }
    bool same = cfg->n_joints == a->n;
    for (int j = 0; same && j < a->n; j++) same = strcmp(cfg->joint[j].name, a->name[j]) == 0;
    if (!same) {
        fprintf(stderr, ID_PREFIX "%s does not describe the arm armd runs (other joints)\n", path);
        return 1;
    }
    return 0;
}

/* Runs a recorded motion through prepare() and, for the identification motion, the fit. */
static int record_and_prepare(armctl_conn *c, const ident_excitation *e, int periods,
                              const char *what, double rate, double cutoff, int n, FILE *csv,
                              id_rec *r, id_ready *rd)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    if (ident_run_motion(c, e, periods, what, r) != 0) return 1;
    if (csv) ident_write_samples(csv, what, r);
    if (prepare(r, rate, cutoff, rd) != 0) {
        fprintf(stderr, ID_PREFIX "out of memory\n");
        return 1;
    }
    if (rd->gaps)
        fprintf(stderr,
                ID_PREFIX "%s motion: %ld gaps in the telemetry (late ticks of a busy host, or "
                          "%ld samples armd lost): %.1f s of %.1f s recorded kept\n",
                what, rd->gaps, r->lost, (double)rd->used / rate, (double)r->len / rate);
    return 0;
}

int cmd_identify(armctl_conn *c, int argc, char **argv)
{
    id_options o = {.out = "identified.ini",
                    .report = "identify",
                    .period = 10,
                    .swing = 0.6,
                    .cutoff = 10,
                    .periods = 5,
                    .harmonics = 5,
                    .candidates = 30,
                    .seed = 1};
    int rc = parse_options(argc, argv, &o);
    if (rc) return rc;
    arm_info a;
    json_t *info = NULL;
    if (get_info(c, &a, &info)) return 1;
    static armd_config cfg;
    rc = load_config(c, &o, &a, info, &cfg);
    json_decref(info);
    if (rc) return rc;
    json_t *st = call(c, "status", NULL);
    if (!st) return 1;
    const char *state = json_string_value(json_object_get(st, "state"));
    if (!state || strcmp(state, "holding") != 0) {
        const char *advice = state_advice(state);
        fprintf(stderr,
                ID_PREFIX "the arm is %s, not holding: %s; the excitation runs around "
                          "where it holds\n",
                state ? state : "?", advice ? advice : "enable it (armctl enable)");
        json_decref(st);
        return 1;
    }
    double q0[DYN_MAX_DOF];
    /* the pose armd holds (its setpoint): the trajectory starts there */
    for (int j = 0; j < a.n; j++) q0[j] = vec_at(st, "q_des", j);
    json_decref(st);

    /* a joint slower than this may stick in its Coulomb friction: no equation there */
    double v_min = fmax(ID_V_MIN, 5 * cfg.model.friction_smoothing);
    ident_fit *fit = ident_fit_create(&cfg.model, v_min);
    if (!fit) {
        fprintf(stderr, ID_PREFIX "out of memory\n");
        return 1;
    }
    ident_limits lim;
    for (int j = 0; j < a.n; j++) {
        lim.lower[j] = cfg.joint[j].lower;
        lim.upper[j] = cfg.joint[j].upper;
        lim.velocity[j] = cfg.joint[j].velocity;
        lim.acceleration[j] = cfg.joint[j].acceleration;
        lim.torque[j] = cfg.joint[j].torque;
    }
    ident_excitation ex, va;
    double cond, vcond;
    char why[512];
    if (ident_excitation_design(fit, &cfg.model, &lim, q0, o.period, o.harmonics, o.swing,
                                o.candidates, o.seed, &ex, &cond, why, sizeof why) != 0 ||
        ident_excitation_design(fit, &cfg.model, &lim, q0, o.period, o.harmonics, o.swing,
                                o.candidates, o.seed + 1000003, &va, &vcond, why,
                                sizeof why) != 0) {
        fprintf(stderr, ID_PREFIX "%s\n", why);
        ident_fit_free(fit);
        return 1;
    }
    fprintf(stderr, ID_PREFIX "excitation designed: condition number %.3g\n", cond);
    /* events (and 1 Hz telemetry, the time); the samples come from armd's recorder */
    double rate = subscribe(c, 1) > 0 ? a.rate_hz : 0;
    id_rec rec, vrec;
    id_ready rd = {0}, vrd = {0};
    memset(&rec, 0, sizeof rec);
    memset(&vrec, 0, sizeof vrec);
    rc = 1;
    FILE *csv = NULL;
    if (!rate) goto out;
    char csv_path[1024];
    snprintf(csv_path, sizeof csv_path, "%s.csv", o.report);
    csv = fopen(csv_path, "w");
    if (!csv)
        fprintf(stderr, ID_PREFIX "%s: %s (the samples are not kept)\n", csv_path, strerror(errno));
    if (csv) {
        fprintf(csv, "motion,time,mono");
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < a.n; j++)
                fprintf(csv, ",%s_%s", k == 0 ? "q" : k == 1 ? "qd" : "tau", a.name[j]);
        fputc('\n', csv);
    }
    if (record_and_prepare(c, &ex, o.periods, "identification", rate, o.cutoff, a.n, csv, &rec,
                           &rd))
        goto out;
    for (long i = 0; i < rec.len; i += ID_DECIMATE)
        if (rd.use[i])
            ident_fit_add(fit, rec.q + i * a.n, rec.qd + i * a.n, rd.qdd + i * a.n,
                          rec.tau + (i - 1) * a.n, rec.tau + i * a.n, rec.tau + (i + 1) * a.n,
                          rd.near + i * a.n);
    if (record_and_prepare(c, &va, 1, "validation", rate, o.cutoff, a.n, csv, &vrec, &vrd))
        goto out;
    if (csv) fclose(csv);
    csv = NULL;
    ident_result res;
    if (ident_fit_solve(fit, &res, why, sizeof why) != 0) {
        fprintf(stderr, ID_PREFIX "%s\n", why);
        goto out;
    }
    align_torque(&vrec, &vrd, res.align);
    id_validation v, v0;
    double pi0[DYN_MAX_DOF * DYN_PARAMS];
    dyn_params_from_desc(&cfg.model, pi0);
    validate(fit, res.pi, &vrec, &vrd, &v);
    validate(fit, pi0, &vrec, &vrd, &v0);
    id_validation vf;
    validate(fit, res.pi_free, &vrec, &vrd, &vf);
    fprintf(stderr, ID_PREFIX "validation before the physical projection: %.2f %%\n", vf.percent);
    double seconds = rec.len ? (rec.t[rec.len - 1] - rec.t[0]) : 0;
    ident_write_report(stdout, &cfg, &res, &v, &v0, cond, &o, seconds,
                       rec.measured && vrec.measured);
    char path[1024];
    snprintf(path, sizeof path, "%s.txt", o.report);
    FILE *rf = fopen(path, "w");
    if (rf) {
        ident_write_report(rf, &cfg, &res, &v, &v0, cond, &o, seconds,
                           rec.measured && vrec.measured);
        fclose(rf);
    }
    ident_write_plot(o.report, fit, res.pi, &vrec, &vrd, &cfg);
    if (validation_refused(&v, &v0, &vrd, a.rate_hz, va.period, why, sizeof why)) {
        fprintf(stderr, ID_PREFIX "%s: no parameters written (%s not created); report: %s\n", why,
                o.out, path);
        rc = 1;
        goto out;
    }
    rc = ident_write_ini(o.out, &cfg, res.pi, &v, &v0);
    if (rc == 0) fprintf(stderr, ID_PREFIX "parameters: %s; report: %s\n", o.out, path);
out:
    if (csv) fclose(csv);
    free(rd.qdd);
    free(rd.use);
    free(rd.near);
    free(vrd.qdd);
    free(vrd.use);
    free(vrd.near);
    ident_rec_free(&rec);
    ident_rec_free(&vrec);
    ident_fit_free(fit);
    return rc;
}
