/*
 * main.c — armsim: a simulated arm behind a pseudo-terminal (see --help). Sets up the pieces
 * (config, physics thread, truth logger, pty, device) and runs the device side on the main
 * thread: read request bytes, answer them, until SIGINT/SIGTERM. Everything on CLOCK_MONOTONIC.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "config/config.h"
#include "tools/armsim/device.h"
#include "tools/armsim/pty.h"
#include "tools/armsim/simclock.h"

/* device_out for the pty: sleeps the reply's delay [us], then writes it to the master. */
static void pty_send(void *ctx, const uint8_t *buf, size_t n, long delay_us)
{
    armsim_sleep_us(delay_us);
    pty_write_all(ctx, buf, n);
}

/* Loads and validates the INI; prints the report on errors (and warnings). NULL on errors. */
static armd_config *load_config(const char *path)
{
    armd_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) return NULL;
    cfg_report rep;
    cfg_report_init(&rep);
    int nerr = cfg_load(path, cfg, &rep);
    if (nerr || rep.n_warnings) cfg_report_print(&rep, stderr);
    cfg_report_free(&rep);
    if (nerr) {
        free(cfg);
        return NULL;
    }
    return cfg;
}

/* Blocks the termination signals and SIGUSR1 (start the injected faults) in every thread and
 * returns a signalfd for them. */
static int signal_fd(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC);
}

/* Reads the pending signal from sfd: true for a termination signal; SIGUSR1 starts the
 * per-reply faults now. */
static bool take_signal(const device_env *env, int sfd, uint64_t now)
{
    struct signalfd_siginfo si;
    if (read(sfd, &si, sizeof si) != (ssize_t)sizeof si) return false;
    if (si.ssi_signo != SIGUSR1) return true;
    faults_start_now(env->faults, now);
    return false;
}

/* Serves the line (the pty's master) until a termination signal arrives. */
static void serve(const device_env *env, const armsim_pty *pty, sim_device *dev, int sfd)
{
    uint8_t buf[4096];
    for (;;) {
        struct pollfd pfd[2] = {{.fd = pty->master, .events = POLLIN},
                                {.fd = sfd, .events = POLLIN}};
        int r = poll(pfd, 2, 5);
        uint64_t now = armsim_now_ns();
        if (r < 0 && errno != EINTR) {
            perror("armsim: poll");
            return;
        }
        if (r > 0 && (pfd[1].revents & POLLIN) && take_signal(env, sfd, now)) return;
        if (r > 0 && (pfd[0].revents & POLLIN)) {
            ssize_t n = read(pty->master, buf, sizeof buf);
            faults_arm(env->faults, now);
            if (n > 0 && !faults_silent(env->faults, now))
                dev->feed(dev->self, buf, (size_t)n, now);
            else if (n > 0)
                env->faults->n_silenced++;
        }
        if (!faults_silent(env->faults, now)) dev->tick(dev->self, now);
    }
}

int main(int argc, char **argv)
{
    armsim_options opt;
    int rc = armsim_parse_options(argc, argv, &opt, stderr);
    if (rc == 0) rc = armsim_check_program_options(&opt, stderr);
    if (rc != 0) return rc > 0 ? 0 : 2;
    int sfd = signal_fd(); /* before any thread starts, so all inherit the mask */
    armd_config *cfg = load_config(opt.config_path);
    if (!cfg) {
        fprintf(stderr, "armsim: %s: configuration has errors\n", opt.config_path);
        return 2;
    }
    armsim_protocol proto = opt.protocol;
    if (proto == PROTO_FROM_CONFIG)
        proto = cfg->driver.type == DRIVER_ARMLINK ? PROTO_ARMLINK : PROTO_DXL2;

    char err[512] = "";
    physics *phys = physics_create(cfg, &opt, NULL, err, sizeof err);
    if (!phys) {
        fprintf(stderr, "armsim: %s\n", err);
        free(cfg);
        return 2;
    }
    truth_log *truth = NULL;
    if (opt.truth_path && !opt.print_model) {
        truth = physics_open_truth(phys, cfg, opt.truth_path, opt.truth_decimate,
                                   TRUTH_WRITER_THREAD, err, sizeof err);
        if (!truth) {
            fprintf(stderr, "armsim: %s\n", err);
            physics_free(phys);
            free(cfg);
            return 2;
        }
    }
    if (opt.print_model) { /* printed by physics_create */
        physics_free(phys);
        truth_close(truth);
        free(cfg);
        return 0;
    }
    armsim_pty pty;
    if (sfd < 0 || pty_open(&pty, opt.link_path, err, sizeof err) != 0) {
        fprintf(stderr, "armsim: %s\n", sfd < 0 ? strerror(errno) : err);
        physics_free(phys);
        truth_close(truth);
        free(cfg);
        return 2;
    }
    uint64_t start = armsim_now_ns();
    armsim_faults faults;
    faults_init(&faults, &opt, start);
    device_env env = {cfg, &opt, phys, &faults, {&pty, pty_send}};
    sim_device dev;
    rc = proto == PROTO_ARMLINK ? armlink_device_create(&env, &dev, err, sizeof err)
                                : dxl2_device_create(&env, &dev, err, sizeof err);
    if (rc != 0 || physics_start(phys, start) != 0) {
        fprintf(stderr, "armsim: %s\n", rc ? err : "cannot start the physics thread");
        if (rc == 0) dev.destroy(dev.self);
        pty_close(&pty);
        physics_free(phys);
        truth_close(truth);
        free(cfg);
        return 2;
    }
    printf("armsim: ready on %s -> %s (%s)\n", opt.link_path, pty.slave_name, dev.summary);
    fflush(stdout);

    serve(&env, &pty, &dev, sfd);

    physics_stop(phys);
    physics_stats st;
    physics_get_stats(phys, &st);
    uint64_t lost = truth_close(truth);
    pty_close(&pty);
    if (!opt.quiet)
        fprintf(stderr,
                "armsim: %.3f s, %llu steps (%.0f steps/s, rate %.0f Hz), %llu late wake-ups, "
                "%.4f s skipped, %d solver failures, truth records lost %llu; replies dropped "
                "%llu, corrupted %llu, wrong id %llu; requests ignored while silent %llu\n",
                st.run_s, (unsigned long long)st.steps, st.run_s > 0 ? st.steps / st.run_s : 0.0,
                opt.rate_hz, (unsigned long long)st.late_wakeups, st.skipped_s, st.solver_failures,
                (unsigned long long)lost, (unsigned long long)faults.n_dropped,
                (unsigned long long)faults.n_corrupted, (unsigned long long)faults.n_wrong_id,
                (unsigned long long)faults.n_silenced);
    dev.destroy(dev.self);
    physics_free(phys);
    free(cfg);
    close(sfd);
    return 0;
}
