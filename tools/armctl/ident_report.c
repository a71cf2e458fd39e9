/*
 * ident_report.c — what `armctl identify` writes (see ident_run.h): the raw samples, the INI
 * drop-in, the report and the gnuplot plot of the validation torques.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/armctl/armctl.h"
#include "tools/armctl/ident_run.h"

/* The recorded samples as they came (before filtering), appended to out: motion name, armd's
 * time, CLOCK_MONOTONIC, then q, qd, tau per joint. */
void ident_write_samples(FILE *out, const char *what, const id_rec *r)
{
    for (long i = 0; i < r->len; i++) {
        fprintf(out, "%s,%.6f,%.6f", what, r->t[i], r->mono[i]);
        for (int k = 0; k < 3; k++) {
            const double *v = k == 0 ? r->q : k == 1 ? r->qd : r->tau;
            for (int j = 0; j < r->n; j++) fprintf(out, ",%.9g", v[i * r->n + j]);
        }
        fputc('\n', out);
    }
}

/* The INI fragment: one [joint NAME] section per joint with the identified dynamics keys (a
 * temporary file renamed to path once written). */
int ident_write_ini(const char *path, const armd_config *cfg, const double *pi,
                    const id_validation *v, const id_validation *v0)
{
    /* written beside path under a temporary name and renamed once complete: never a partial
     * file at path */
    char tmp[4096];
    FILE *f = stdout;
    if (strcmp(path, "-") != 0) {
        int fd = -1;
        if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) < (int)sizeof tmp) fd = mkstemp(tmp);
        f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            fprintf(stderr, ID_PREFIX "%s: %s\n", path, strerror(errno));
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
            return 1;
        }
        fchmod(fd, 0644);
    }
    dyn_model_desc d = cfg->model;
    dyn_params_to_desc(pi, &d);
    time_t now = time(NULL);
    char stamp[40], dropins[CFG_PATH_MAX + 8];
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    if (cfg_sibling_path(cfg->source, ".d", dropins, sizeof dropins) != 0)
        snprintf(dropins, sizeof dropins, "the drop-in directory");
    fprintf(f,
            "# armctl identify, %s: the dynamics of %s identified from its own motion.\n"
            "# Validation torque error %.2f %% of the torque RMS (the configured model: %.2f %%).\n"
            "# Use it as a drop-in (%s/60-identified.ini), then armctl reload. Generated code\n"
            "# (armgen) no longer fits: run armgen again and restart armd to have it back.\n",
            stamp, cfg->name, v->percent, v0->percent, dropins);
    for (int j = 0; j < d.n; j++) {
        const dyn_joint_desc *jd = &d.joint[j];
        fprintf(f, "\n[joint %s]\n", cfg->joint[j].name);
        fprintf(f, "mass = %.9g\n", jd->mass);
        fprintf(f, "com = %.9g %.9g %.9g\n", jd->com[0], jd->com[1], jd->com[2]);
        fprintf(f, "inertia = %.9g %.9g %.9g %.9g %.9g %.9g\n", jd->inertia[0], jd->inertia[1],
                jd->inertia[2], jd->inertia[3], jd->inertia[4], jd->inertia[5]);
        fprintf(f, "armature = %.9g\n", jd->armature);
        fprintf(f, "viscous = %.9g\n", jd->viscous);
        fprintf(f, "coulomb = %.9g %.9g\n", jd->coulomb_pos, jd->coulomb_neg);
    }
    if (f == stdout) return 0;
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, ID_PREFIX "%s: %s\n", path, strerror(errno));
        unlink(tmp);
        return 1;
    }
    return 0;
}

/* The report: the motion and the torque fitted (measured: the servos' tau_meas, else the
 * commanded tau), the fit's residual, torque timing and consistency steps, the base parameters
 * with their standard deviations, the validation table. */
void ident_write_report(FILE *f, const armd_config *cfg, const ident_result *res,
                        const id_validation *v, const id_validation *v0, double cond,
                        const id_options *o, double seconds, bool measured)
{
    const char *names[DYN_MAX_DOF];
    for (int j = 0; j < cfg->n_joints; j++) names[j] = cfg->joint[j].name;
    fprintf(f,
            "identification of %s: %d x %.3g s excitation (%d harmonics, swing %.3g), "
            "%.1f s of motion recorded\n",
            cfg->name, o->periods, o->period, o->harmonics, o->swing, seconds);
    fprintf(f, "torque fitted: %s\n",
            measured ? "the servos' reports (telemetry tau_meas)"
                     : "armd's command (this armd sends no tau_meas: expect a bias where the "
                       "servos' current resolution is coarse)");
    fprintf(f,
            "regressor: %d standard parameters, %d base parameters, condition number %.3g "
            "(design %.3g), %ld equations\n",
            res->P, res->r, res->cond, cond, res->rows);
    fprintf(f,
            "fit: residual %.4g of torque RMS %.4g; joints the physical consistency changed: "
            "%d (%d ADMM steps%s)\n",
            res->fit_rms, res->tau_rms, res->projected, res->steps,
            res->converged ? ""
                           : ", stopped at the limit: the INI's parameters are consistent "
                             "but not quite the best such");
    fprintf(f,
            "torque timing: %.2f (the torque of a sample is (a tau_before + tau + (1 - a) "
            "tau_after) / 2, a fitted%s)\n",
            res->align, res->align_at_end ? "; at the end of the range searched" : "");
    fprintf(f, "\nbase parameters (each the first named plus combinations of dependent ones):\n");
    for (int k = 0; k < res->r; k++) {
        char name[96];
        ident_param_name(res->perm[k], names, name, sizeof name);
        fprintf(f, "  %-22s %12.6g  sd %.3g\n", name, res->theta[k], res->sd[k]);
    }
    fprintf(f, "\nvalidation (a second excitation, %ld samples): RMS torque error\n", v->samples);
    fprintf(f, "  %-10s %12s %12s %12s\n", "joint", "identified", "configured", "torque RMS");
    for (int j = 0; j < cfg->n_joints; j++)
        fprintf(f, "  %-10s %12.4g %12.4g %12.4g\n", names[j], v->rms[j], v0->rms[j],
                v->tau_rms[j]);
    fprintf(f, "  all joints: %.2f %% of the torque RMS (configured model %.2f %%)\n", v->percent,
            v0->percent);
}

/* The plot: measured and predicted validation torques per joint, PREFIX.dat, PREFIX.gp and
 * (when gnuplot runs) PREFIX.png. */
void ident_write_plot(const char *prefix, ident_fit *f, const double *pi, const id_rec *r,
                      const id_ready *rd, const armd_config *cfg)
{
    char dat[1024], gp[1024], png[1024];
    snprintf(dat, sizeof dat, "%s.dat", prefix);
    snprintf(gp, sizeof gp, "%s.gp", prefix);
    snprintf(png, sizeof png, "%s.png", prefix);
    FILE *d = fopen(dat, "w");
    if (!d) {
        fprintf(stderr, ID_PREFIX "%s: %s\n", dat, strerror(errno));
        return;
    }
    int n = r->n;
    double t0 = r->len ? r->t[0] : 0;
    for (long i = 0; i < r->len; i += ID_PLOT_DECIM) {
        if (!rd->use[i]) continue;
        double pred[DYN_MAX_DOF];
        ident_predict(f, pi, r->q + i * n, r->qd + i * n, rd->qdd + i * n, pred);
        fprintf(d, "%.4f", r->t[i] - t0);
        for (int j = 0; j < n; j++) fprintf(d, " %.6g %.6g", r->tau[i * n + j], pred[j]);
        fprintf(d, "\n");
    }
    fclose(d);
    FILE *g = fopen(gp, "w");
    if (!g) return;
    int rows = (n + 1) / 2;
    fprintf(g,
            "set terminal pngcairo size 1200,%d font ',9'\nset output '%s'\n"
            "set multiplot layout %d,2 title 'armctl identify: validation torques of %s, "
            "measured vs predicted'\nset grid\nset xlabel 't [s]'\n",
            300 * rows, png, rows, cfg->name);
    for (int j = 0; j < n; j++)
        fprintf(g,
                "set ylabel '%s [%s]'\nplot '%s' using 1:%d with lines lw 2 title 'measured', "
                "'' using 1:%d with lines title 'identified model'\n",
                cfg->joint[j].name, cfg->model.joint[j].type == DYN_PRISMATIC ? "N" : "N m", dat,
                2 + 2 * j, 3 + 2 * j);
    fprintf(g, "unset multiplot\n");
    fclose(g);
    run_gnuplot(ID_PREFIX, gp, png, dat);
}
