/*
 * main.c — armd: loads the configuration, opens and probes the arm, starts the real-time
 * control thread, serves the socket API on a libev loop, and stops the arm safely on SIGTERM /
 * SIGINT. SIGHUP reloads the configuration; SIGUSR1 and the fatal signals are handled in
 * fatal.c. Talks to systemd through sd_notify. `--check-config` and `--torque-off` run their
 * own small jobs (checkconfig.c, torqueoff.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>
#include <pthread.h>
#include <systemd/sd-daemon.h>

#include "config/config.h"
#include "daemon/api.h"
#include "daemon/checkconfig.h"
#include "daemon/control.h"
#include "daemon/dyngen.h"
#include "daemon/fatal.h"
#include "daemon/lockstep.h"
#include "daemon/lockstep_pace.h"
#include "daemon/log.h"
#include "daemon/reload.h"
#include "daemon/torqueoff.h"
#include "drivers/drivers.h"
#include "dynamics/dynamics.h"

#ifndef ARMD_VERSION
#define ARMD_VERSION "unknown"
#endif

#define DEFAULT_SOCKET "/run/armd/armd.sock"
#define EVENT_POLL_S   0.05              /* how often control-thread events are logged [s] */
#define HEALTH_S       0.5               /* longest interval between health checks [s] */
#define STALL_S        CTL_STALL_SECONDS /* no tick for this long = stalled control thread [s] */

static const char usage_text[] =
    "NAME\n"
    "    armd - real-time computed-torque controller daemon for serial robot arms\n"
    "\n"
    "SYNOPSIS\n"
    "    armd -c CONFIG [--socket PATH] [--port PATH] [--foreground] [--verbose]\n"
    "    armd -c CONFIG --lockstep [--speed X | --paused] [--socket PATH] [-- ARMSIM-OPTIONS]\n"
    "    armd --check-config CONFIG\n"
    "    armd --torque-off -c CONFIG [--port PATH]\n"
    "    armd --version | --help\n"
    "\n"
    "DESCRIPTION\n"
    "    armd reads the arm description CONFIG (INI), opens and probes the servos on the\n"
    "    configured serial port, and runs a fixed-rate control loop (computed torque, PD +\n"
    "    gravity or gravity compensation) in a real-time thread. Clients command it through a\n"
    "    UNIX socket speaking newline-delimited JSON (armd-api(7), armctl(1)). The arm\n"
    "    starts disabled (no torque) until a client sends \"enable\".\n"
    "\n"
    "OPTIONS\n"
    "    -c, --config CONFIG   the arm's configuration file; drop-ins in CONFIG minus .ini\n"
    "                          plus .d/*.ini override it\n"
    "    -s, --socket PATH     listen on PATH instead of [socket] path\n"
    "    -p, --port PATH       use serial port PATH instead of [driver] port (e.g. armsim's\n"
    "                          --link); kept across reloads\n"
    "    -f, --foreground      accepted for compatibility: armd never forks (systemd runs it\n"
    "                          as Type=notify)\n"
    "    -v, --verbose         also log debug messages\n"
    "        --check-config CONFIG\n"
    "                          validate CONFIG without touching the hardware and print the\n"
    "                          joints, total mass, gravity torque at the zero pose, torque\n"
    "                          limits, loop period, bus time per tick, and which dynamics\n"
    "                          armd would use (the arm's generated code or the general core)\n"
    "        --lockstep        drive a simulated arm instead of the serial port: armsim's\n"
    "                          physics and servos in this process on a simulated clock, the\n"
    "                          real loop stepped on it, as fast as the machine computes\n"
    "                          (deterministic: the same config, options and requests give the\n"
    "                          same telemetry bit for bit). The socket API is the same, plus\n"
    "                          sim.run; options after -- are armsim's (armsim(1), without -c\n"
    "                          and --link)\n"
    "        --speed X         with --lockstep: X times real time instead of as fast as it\n"
    "                          computes (1: watch it in armweb at the real pace)\n"
    "        --paused          with --lockstep: simulated time stands still but for sim.run and\n"
    "                          the ticks a command needs to be answered\n"
    "        --torque-off      with -c (and --port): switch the torque of every configured\n"
    "                          servo (or the armlink board) off, each confirmed, and exit;\n"
    "                          nothing else is probed or changed. For an arm whose armd is\n"
    "                          gone (systemd: ExecStopPost=); refused while a running armd\n"
    "                          holds the port (use armctl estop)\n"
    "    -V, --version         print the version and exit\n"
    "    -h, --help            print this help and exit\n"
    "\n";
static const char usage_text_2[] =
    "SIGNALS\n"
    "    SIGHUP     reload CONFIG: gains, limits and safety thresholds switch between two\n"
    "               ticks; changes needing a restart (joints, kinematics, masses, driver,\n"
    "               port) are refused and logged, the running configuration stays\n"
    "    SIGTERM, SIGINT\n"
    "               stop the trajectory, zero the torques, disable the servos, remove the\n"
    "               socket and exit 0; a control thread not joined within 2.5 s gets the\n"
    "               torque-off frame from the main thread, and armd exits 1\n"
    "    SIGUSR1    emergency stop (like armctl estop, even while the main loop is busy):\n"
    "               torque zero at the next tick, servos disabled, state estop\n"
    "    SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGQUIT, SIGTRAP, SIGSYS, SIGXCPU,\n"
    "    SIGXFSZ\n"
    "               a torque-off frame is written to the port, then armd dies by the signal\n"
    "\n"
    "LOGGING\n"
    "    To stderr, one line per message with a syslog priority prefix (<3> error ...\n"
    "    <7> debug) that journald understands. systemd: READY=1 once serving, STATUS= with\n"
    "    the state, WATCHDOG=1 only while control ticks advance, STOPPING=1 at shutdown.\n"
    "\n"
    "FILES\n"
    "    /etc/armd/NAME.ini, /etc/armd/NAME.d/*.ini   configuration and drop-ins\n"
    "    /run/armd/ARM/armd.sock   the socket when neither --socket nor [socket] path\n"
    "                         names one (ARM: [arm] name; armctl --arm ARM looks there);\n"
    "                         armd.service passes --socket " DEFAULT_SOCKET ",\n"
    "                         armd@NAME /run/armd/NAME/armd.sock\n"
    "    /etc/armd/NAME.dyn.so    the arm's generated dynamics (armgen --shared -c NAME.ini);\n"
    "                             used only if generated for exactly this model\n"
    "\n"
    "EXIT STATUS\n"
    "    0  clean shutdown, --check-config found the file valid, or --torque-off: every\n"
    "       device confirmed\n"
    "    1  the arm could not be opened, probed or started; the socket could not be created;\n"
    "       --check-config: the loop rate does not fit on the bus; --torque-off: a device did\n"
    "       not confirm (each is named), or the port is held by a running armd; at\n"
    "       SIGTERM/SIGINT: the control thread could not be joined\n"
    "    2  usage error or invalid configuration\n"
    "\n"
    "SEE ALSO\n"
    "    armd.conf(5), armd-api(7), armctl(1), armsim(1), systemd/armd.service\n";

/* Everything the main thread owns. */
typedef struct {
    struct ev_loop *loop;
    bool torque_off; /* --torque-off: only that, then exit */
    const char *config_path;
    const char *socket_override, *port_override;
    armd_config *cfg; /* as loaded at start, with overrides applied */
    dyngen gen;       /* the arm's generated dynamics, if any (released after the ctl) */
    ctl *c;
    api_server *api;
    uint64_t event_cursor;
    bool watchdog;
    bool stalled;
    int health_ticks;
    double health_period;
    char last_status[256];
    reloader rl; /* SIGHUP's and the socket's reload */
    /* --lockstep: the simulated arm and when its time runs */
    bool lockstep;
    double speed;
    bool paused;
    int sim_argc;
    char **sim_argv;
    lockstep *ls;
    lockstep_pace *pace;
} armd;

/* Logs control-thread events (state changes, faults, trajectory ends) from the main thread. */
static void log_events(armd *a)
{
    ctl_event ev[32];
    int k;
    /* from the ring's first record: cursor 0 would mean "from the first read on" and skip the
     * events pushed before it (an enable within the first EVENT_POLL_S) */
    if (a->event_cursor == 0) a->event_cursor = 1;
    do {
        k = ctl_events_read(a->c, &a->event_cursor, ev, 32);
        for (int i = 0; i < k; i++) {
            switch (ev[i].type) {
            case CTL_EV_STATE:
                log_info("state: %s (t = %.3f s)", ctl_state_name(ev[i].state), ev[i].time);
                break;
            case CTL_EV_FAULT:
                log_err("fault: %s (t = %.3f s, now %s)", ev[i].text, ev[i].time,
                        ctl_state_name(ev[i].state));
                break;
            case CTL_EV_TRAJECTORY_DONE:
                log_info("trajectory %u: %s (t = %.3f s)", ev[i].traj_id, ev[i].text, ev[i].time);
                break;
            case CTL_EV_COLLISION: {
                const armd_config *cfg = ctl_config(a->c);
                int j = ev[i].joint;
                if (j == -1)
                    log_warn("collision at the tool: force over max_tool_force (t = %.3f s, "
                             "reaction %s, now %s)",
                             ev[i].time, ev[i].text, ctl_state_name(ev[i].state));
                else
                    log_warn("collision on joint %s: external torque %.3g (t = %.3f s, reaction "
                             "%s, now %s)",
                             j >= 0 && j < cfg->n_joints ? cfg->joint[j].name : "?",
                             j >= 0 && j < cfg->n_joints ? ev[i].ext[j] : 0.0, ev[i].time,
                             ev[i].text, ctl_state_name(ev[i].state));
                break;
            }
            }
        }
    } while (k == 32);
}

/* Every EVENT_POLL_S: logs control events and watches for a stalled control thread (no tick
 * for STALL_S: ctl_stalled() then also makes the control thread fault as soon as it runs). */
static void events_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    armd *a = w->data;
    if (fatal_estop_signalled())
        log_notice("SIGUSR1: emergency stop (torque off at the next control tick)");
    log_events(a);
    bool stalled = ctl_stalled(a->c, STALL_S);
    if (stalled && !a->stalled) {
        log_err("fault: control thread stalled (no tick for more than %.2f s); withholding the "
                "systemd watchdog",
                STALL_S);
        sd_notify(0, "STATUS=fault: control thread stalled");
    } else if (!stalled && a->stalled) {
        log_notice("control thread ticking again");
    }
    a->stalled = stalled;
}

/* Updates systemd's STATUS= when the summary changed. */
static void update_status(armd *a)
{
    ctl_status st;
    ctl_status_get(a->c, &st);
    char s[256];
    snprintf(s, sizeof s, "%s, %g Hz, %llu overruns, %llu failed reads%s%s",
             ctl_state_name(st.state), st.rate_hz, (unsigned long long)st.overruns,
             (unsigned long long)st.failed_reads, st.fault[0] ? ", fault: " : "", st.fault);
    if (strcmp(s, a->last_status) != 0) {
        snprintf(a->last_status, sizeof a->last_status, "%s", s);
        sd_notifyf(0, "STATUS=%s", s);
    }
}

/* Health check: pings the systemd watchdog only while control ticks advance, and refreshes
 * STATUS= about once a second. */
static void health_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    armd *a = w->data;
    if (ctl_alive(a->c) && !a->stalled && a->watchdog) sd_notify(0, "WATCHDOG=1");
    if (++a->health_ticks * a->health_period >= 1.0) {
        a->health_ticks = 0;
        if (!a->stalled) update_status(a);
    }
}

/* SIGHUP's reload has its answer: tell systemd the reload is over. */
static void sighup_reloaded(void *ctx, int rc, const ctl_error *err, const ctl_result *res)
{
    (void)ctx, (void)rc, (void)err, (void)res; /* reload_done logged it */
    sd_notify(0, "READY=1");
}

static void reload_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)loop;
    (void)revents;
    armd *a = w->data;
    log_notice("SIGHUP: reloading %s", a->config_path);
    sd_notify(0, "RELOADING=1");
    ctl_error err;
    ctl_reply_to to = {sighup_reloaded, a};
    if (reload_request(&a->rl, &to, &err)) sd_notify(0, "READY=1");
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    log_notice("%s: stopping", w->signum == SIGINT ? "SIGINT" : "SIGTERM");
    ev_break(loop, EVBREAK_ALL);
}

/* Parses the options; returns -1 to exit with *status. */
static int parse_args(int argc, char **argv, armd *a, int *status)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"socket", required_argument, NULL, 's'},
                                         {"port", required_argument, NULL, 'p'},
                                         {"foreground", no_argument, NULL, 'f'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"check-config", required_argument, NULL, 'C'},
                                         {"torque-off", no_argument, NULL, 'T'},
                                         {"version", no_argument, NULL, 'V'},
                                         {"lockstep", no_argument, NULL, 'L'},
                                         {"speed", required_argument, NULL, 'S'},
                                         {"paused", no_argument, NULL, 'P'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "c:s:p:fvVh", opts, NULL)) != -1) {
        switch (o) {
        case 'c':
            a->config_path = optarg;
            break;
        case 's':
            a->socket_override = optarg;
            break;
        case 'p':
            a->port_override = optarg;
            break;
        case 'f':
            break;
        case 'v':
            log_set_max_priority(LOG_PRIO_DEBUG);
            break;
        case 'C':
            *status = armd_check_config(optarg, stdout);
            return -1;
        case 'T':
            a->torque_off = true;
            break;
        case 'L':
            a->lockstep = true;
            break;
        case 'S': {
            char *end;
            a->speed = strtod(optarg, &end);
            if (*end || !(a->speed > 0 && a->speed <= 1e6)) {
                fprintf(stderr,
                        "armd: --speed: '%s' is not a speed within (0, 1e6] (times real "
                        "time)\n",
                        optarg);
                *status = 2;
                return -1;
            }
            break;
        }
        case 'P':
            a->paused = true;
            break;
        case 'V':
            printf("armd %s\n", ARMD_VERSION);
            *status = 0;
            return -1;
        case 'h':
            fputs(usage_text, stdout);
            fputs(usage_text_2, stdout);
            *status = 0;
            return -1;
        default:
            fprintf(stderr, "usage: armd -c CONFIG [--socket PATH] [--port PATH] "
                            "[--foreground]; armd --help for more\n");
            *status = 2;
            return -1;
        }
    }
    if (optind < argc && !(a->lockstep && strcmp(argv[optind - 1], "--") == 0)) {
        fprintf(stderr, "armd: unexpected argument '%s'; armd --help for usage%s\n", argv[optind],
                a->lockstep ? " (the simulator's options follow --)" : "");
        *status = 2;
        return -1;
    }
    a->sim_argc = argc - optind;
    a->sim_argv = argv + optind;
    if ((a->speed > 0 || a->paused) && !a->lockstep) {
        fprintf(stderr, "armd: --speed and --paused go with --lockstep\n");
        *status = 2;
        return -1;
    }
    if (a->speed > 0 && a->paused) {
        fprintf(stderr, "armd: --speed or --paused, not both\n");
        *status = 2;
        return -1;
    }
    if (a->lockstep && (a->port_override || a->torque_off)) {
        fprintf(stderr, "armd: --lockstep drives a simulated arm: no --port, no --torque-off\n");
        *status = 2;
        return -1;
    }
    if (!a->config_path) {
        fprintf(stderr, "armd: no configuration given: armd -c CONFIG (armd --help)\n");
        *status = 2;
        return -1;
    }
    if (a->torque_off) {
        if (a->socket_override) {
            fprintf(stderr, "armd: --torque-off takes -c CONFIG and --port PATH only\n");
            *status = 2;
            return -1;
        }
        *status = armd_torque_off(a->config_path, a->port_override);
        return -1;
    }
    return 0;
}

/* The arm's driver: the serial port opened and probed, or (--lockstep) the simulated arm's.
 * NULL on failure (logged). */
static drv *open_driver(armd *a)
{
    if (a->lockstep) {
        char err[512];
        a->ls = lockstep_open(a->cfg, a->config_path, a->sim_argc, a->sim_argv, err, sizeof err);
        if (!a->ls) {
            log_err("cannot start the simulated arm: %s", err);
            return NULL;
        }
        return lockstep_driver(a->ls);
    }
    drv_fault f = {DRV_OK, -1, ""};
    drv *d = drv_open(a->cfg, &f);
    if (!d) {
        log_err("cannot open serial port %s: %s", a->cfg->driver.port, f.message);
        return NULL;
    }
    fatal_arm(d, NULL); /* from here a crash writes the torque-off frame */
    if (drv_probe(d, &f) == 0) return d;
    if (f.device_id >= 0)
        log_err("probe failed on %s, device ID %d: %s (%s)", a->cfg->driver.port, f.device_id,
                f.message, drv_status_name(f.status));
    else
        log_err("probe failed on %s: %s (%s)", a->cfg->driver.port, f.message,
                drv_status_name(f.status));
    fatal_arm(NULL, NULL);
    drv_close(d);
    return NULL;
}

/* Loads the configuration and builds the model; opens and probes the driver; creates and
 * starts the control loop (its thread, or stepped on the simulated clock). Returns the exit
 * status on failure, 0 on success. */
static int start_arm(armd *a)
{
    a->cfg = calloc(1, sizeof *a->cfg);
    if (!a->cfg) return 1;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(a->config_path, a->cfg, &rep);
    if (rep.n_lines || errors) reload_log_report(&rep, a->config_path);
    cfg_report_free(&rep);
    if (errors) {
        log_err("invalid configuration %s; not starting", a->config_path);
        return 2;
    }
    a->rl = (reloader){a->config_path, a->socket_override, a->port_override, DEFAULT_SOCKET, NULL};
    reload_apply_overrides(&a->rl, a->cfg);
    if (api_socket_in_use(a->cfg->socket.path)) {
        log_err("another armd is already serving %s; not touching %s", a->cfg->socket.path,
                a->lockstep ? "the simulated arm" : a->cfg->driver.port);
        return 1;
    }
    dyn_model *model = dyn_model_create(&a->cfg->model, NULL, NULL);
    if (!model) {
        log_err("%s: the dynamics model cannot be built", a->config_path);
        return 2;
    }
    dyngen_find(a->config_path, model, &a->gen);
    log_msg(a->gen.refused ? LOG_PRIO_WARNING : LOG_PRIO_INFO, "dynamics: %s", a->gen.what);
    drv *d = open_driver(a);
    if (!d) {
        dyn_model_free(model);
        return 1;
    }
    ctl_error err = {{0}, {0}};
    a->c = ctl_create(a->cfg, model, d, &err);
    if (!a->c) {
        log_err("cannot create the controller: %s", err.message);
        fatal_arm(NULL, NULL);
        drv_close(d);
        dyn_model_free(model);
        return 1;
    }
    ctl_use_generated(a->c, a->gen.module);
    int rc = a->ls ? lockstep_start(a->ls, a->c, &err) : ctl_start(a->c, &err);
    if (rc != 0) {
        log_err("cannot start the control loop: %s", err.message);
        fatal_arm(NULL, NULL);
        ctl_free(a->c);
        a->c = NULL;
        return 1;
    }
    fatal_arm(d, a->c); /* and SIGUSR1 stops the arm */
    a->rl.c = a->c;
    return 0;
}

/* Lockstep's hooks into the API (lockstep_pace.h): after a batch of ticks, the answers and the
 * telemetry out; how far a subscriber is behind. */
static void pace_after(void *ctx)
{
    api_pump(ctx);
}

static size_t pace_backlog(void *ctx)
{
    return api_backlog(ctx);
}

/* Frees what start_arm made (the controller stopped already). */
static void free_arm(armd *a)
{
    ctl_free(a->c);
    lockstep_free(a->ls); /* after the controller, which closed its driver */
    dyngen_release(&a->gen);
    free(a->cfg);
}

int main(int argc, char **argv)
{
    armd a = {0};
    int status = 0;
    if (parse_args(argc, argv, &a, &status) != 0) return status;
    signal(SIGPIPE, SIG_IGN);
    char why[256];
    if (fatal_install(why, sizeof why) != 0) {
        log_err("cannot install the fatal-signal handlers: %s; not starting", why);
        return 1;
    }

    /* the control thread must not receive the signals the main loop handles */
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    status = start_arm(&a);
    if (status != 0) {
        free_arm(&a);
        return status;
    }
    a.loop = ev_default_loop(0);
    ev_signal hup, term, intr;
    ev_signal_init(&hup, reload_cb, SIGHUP);
    ev_signal_init(&term, stop_cb, SIGTERM);
    ev_signal_init(&intr, stop_cb, SIGINT);
    hup.data = term.data = intr.data = &a;
    ev_signal_start(a.loop, &hup);
    ev_signal_start(a.loop, &term);
    ev_signal_start(a.loop, &intr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    const armd_config *cfg = ctl_config(a.c);
    api_options o = {.path = cfg->socket.path,
                     .mode = cfg->socket.mode,
                     .group = cfg->socket.group,
                     .max_clients = cfg->socket.max_clients,
                     .stall_timeout = cfg->socket.stall_timeout,
                     .idle_timeout = cfg->socket.idle_timeout,
                     .version = ARMD_VERSION,
                     .reload = reload_request,
                     .reload_ctx = &a.rl};
    if (a.ls) { /* simulated time runs from the main loop; sim.run asks it to */
        a.pace = lockstep_pace_start(a.loop, a.ls, a.c, a.speed, a.paused);
        o.sim_run = lockstep_pace_run;
        o.sim_ctx = a.pace;
    }
    char err[256] = "";
    a.api = (a.pace || !a.ls) ? api_open(a.loop, a.c, &o, err, sizeof err) : NULL;
    if (!a.api) {
        log_err("cannot serve the socket: %s", err[0] ? err : "out of memory");
        lockstep_pace_stop(a.pace);
        ctl_stop(a.c);
        fatal_arm(NULL, NULL);
        free_arm(&a);
        return 1;
    }
    if (a.pace) {
        lockstep_hooks hooks = {pace_after, pace_backlog, a.api};
        lockstep_pace_hooks(a.pace, &hooks);
    }

    uint64_t wd_usec = 0;
    a.watchdog = sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec > 0;
    a.health_period = HEALTH_S;
    if (a.watchdog && wd_usec / 2e6 < a.health_period) a.health_period = wd_usec / 2e6;
    ev_timer health, events;
    ev_timer_init(&health, health_cb, a.health_period, a.health_period);
    ev_timer_init(&events, events_cb, EVENT_POLL_S, EVENT_POLL_S);
    health.data = events.data = &a;
    ev_timer_start(a.loop, &health);
    ev_timer_start(a.loop, &events);

    char where[300];
    if (a.ls)
        snprintf(where, sizeof where, "a simulated arm (lockstep, %s)",
                 a.paused      ? "paused: time runs by sim.run"
                 : a.speed > 0 ? "paced"
                               : "as fast as it computes");
    else
        snprintf(where, sizeof where, "%s", cfg->driver.port);
    log_notice("armd %s: arm %s, %d joints, %g Hz, %s, driver %s on %s, socket %s, disabled",
               ARMD_VERSION, cfg->name, cfg->n_joints, cfg->rate_hz,
               cfg_controller_name(cfg->controller),
               cfg->driver.type == DRIVER_DXL2 ? "dxl2" : "armlink", where, cfg->socket.path);
    update_status(&a);
    sd_notify(0, "READY=1");

    ev_run(a.loop, 0);

    sd_notify(0, "STOPPING=1\nSTATUS=stopping: torque off");
    lockstep_pace_stop(a.pace);
    bool joined = ctl_stop(a.c);
    log_events(&a);
    api_close(a.api);
    if (!joined) { /* nothing freed: the thread that still spins uses it; exit ends it */
        log_err("stopped: torque-off frame written, but the control thread was stuck; exit 1");
        return 1;
    }
    fatal_arm(NULL, NULL); /* before the driver closes */
    free_arm(&a);
    log_notice("stopped: torque off, servos disabled");
    return 0;
}
