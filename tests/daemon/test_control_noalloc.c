/*
 * test_control_noalloc.c — runs the real control thread (daemon/loop_thread.c) against armsim on
 * a pseudo-terminal (PUMA 560, dxl2, 1 kHz) with malloc/calloc/realloc/free interposed, and
 * asserts that the control thread allocates nothing once it ticks — through enable, a
 * minimum-time move, a trajectory with an append, a cancel, a gains change and a control-law
 * switch, with the collision observer running (detect mode), and through the collision
 * reactions retract and float (react mode, thresholds dropped mid-move by a reload). It also checks
 * the command replies, the events, and that ctl_stop leaves zero torque and the arm disabled.
 * Prints the measured loop timings and tracking errors. The arm starts in a pose friction holds,
 * and is enabled once it is seen at rest (a state, not a time), so a slow or loaded machine changes
 * nothing.
 *
 * usage: test_daemon_control_noalloc ARMSIM CONFIG.ini
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/control.h"

/* ------------------------------------------------------------- allocation counter */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static pthread_t main_thread;
static _Atomic int counting;
static _Atomic uint64_t other_thread_allocs; /* allocations by threads other than main */

static void note(void)
{
    if (atomic_load_explicit(&counting, memory_order_relaxed) &&
        !pthread_equal(pthread_self(), main_thread))
        atomic_fetch_add_explicit(&other_thread_allocs, 1, memory_order_relaxed);
}

void *malloc(size_t n)
{
    note();
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    note();
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    note();
    return __libc_realloc(p, n);
}
int posix_memalign(void **out, size_t align, size_t n)
{
    note();
    *out = __libc_memalign(align, n);
    return *out ? 0 : ENOMEM;
}
void *aligned_alloc(size_t align, size_t n)
{
    note();
    return __libc_memalign(align, n);
}
void free(void *p)
{
    note(); /* a free in a tick is as bad as a malloc */
    __libc_free(p);
}

/* ----------------------------------------------------------------------- helpers */
static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static pid_t sim_pid = -1;

/* Starts armsim and waits (10 s at most) for its ready line. */
static int start_armsim(const char *armsim, const char *config, const char *link, const char *truth)
{
    int fd[2];
    if (pipe(fd)) return -1;
    pid_t parent = getpid();
    sim_pid = fork();
    if (sim_pid == 0) {
        /* armsim dies with the test (e.g. killed by meson's timeout); a parent that died
         * before the prctl took effect would leave us reparented: exit then */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
        dup2(fd[1], 1);
        close(fd[0]);
        /* SCHED_FIFO where allowed, as the Python rigs do: the simulator stands in for hardware,
         * which does not slow down when the machine running the tests is busy */
        struct sched_param sp = {.sched_priority = 40};
        (void)sched_setscheduler(0, SCHED_FIFO, &sp);
        /* the ready pose (upright), where friction holds the disabled arm: it starts at rest
         * however long the test takes to enable it */
        execl(armsim, armsim, "-c", config, "--link", link, "--truth", truth, "--truth-decimate",
              "10", "--q0", "0,1.5708,-1.5708,0,0,0", "--quiet", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[512];
    size_t len = 0;
    for (int waited = 0; waited < 100; waited++) {
        struct pollfd p = {fd[0], POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            ssize_t k = read(fd[0], buf + len, sizeof buf - 1 - len);
            if (k <= 0) break;
            len += (size_t)k;
            buf[len] = 0;
            if (strstr(buf, "armsim: ready on")) {
                close(fd[0]);
                return 0;
            }
        }
    }
    close(fd[0]);
    fprintf(stderr, "armsim did not print its ready line; got: %.*s\n", (int)len, buf);
    return -1;
}

static uint64_t ticks_of(ctl *c)
{
    ctl_status st;
    ctl_status_get(c, &st);
    return st.ticks;
}

static void wait_ticks(ctl *c, uint64_t n)
{
    uint64_t t0 = ticks_of(c);
    for (int i = 0; i < 20000 && ticks_of(c) < t0 + n; i++) sleep_s(0.001);
}

/* Waits (at most timeout s) until every joint's measured |qd| is below 0.05 rad/s; returns
 * whether it came to rest. */
static bool wait_at_rest(ctl *c, double timeout)
{
    for (double t = 0; t < timeout; t += 0.01) {
        ctl_status st;
        ctl_status_get(c, &st);
        double fastest = 0;
        for (int j = 0; j < st.n; j++) fastest = fmax(fastest, fabs(st.qd[j]));
        if (st.n > 0 && fastest < 0.05) return true;
        sleep_s(0.01);
    }
    return false;
}

/* Waits (timeout s) for a trajectory_done event of id; copies its text. */
static bool wait_done(ctl *c, uint64_t *cursor, uint32_t id, double timeout, char *text)
{
    ctl_event ev[16];
    for (double t = 0; t < timeout; t += 0.005) {
        int k = ctl_events_read(c, cursor, ev, 16);
        for (int i = 0; i < k; i++) {
            if (ev[i].type == CTL_EV_TRAJECTORY_DONE && ev[i].traj_id == id) {
                strcpy(text, ev[i].text);
                return true;
            }
        }
        sleep_s(0.005);
    }
    return false;
}

/* Waits (timeout [s]) for a collision event after *cursor; its reaction text into text. */
static bool wait_collision(ctl *c, uint64_t *cursor, double timeout, char *text)
{
    ctl_event ev[16];
    for (double t = 0; t < timeout; t += 0.005) {
        int k = ctl_events_read(c, cursor, ev, 16);
        for (int i = 0; i < k; i++) {
            if (ev[i].type == CTL_EV_COLLISION) {
                strcpy(text, ev[i].text);
                return true;
            }
        }
        sleep_s(0.005);
    }
    return false;
}

/* Waits (timeout [s]) until the state is s. */
static bool wait_state(ctl *c, ctl_state s, double timeout)
{
    ctl_status st;
    for (double t = 0; t < timeout; t += 0.005) {
        ctl_status_get(c, &st);
        if (st.state == s) return true;
        sleep_s(0.005);
    }
    return false;
}

/* Reloads cc with every joint's collision threshold thr [N m] and the reaction given. */
static void reload_collision(ctl *c, armd_config *cc, double thr, cfg_collision_reaction how)
{
    ctl_error e;
    char changed[512];
    cc->safety.collision = COLLISION_REACT;
    cc->safety.collision_reaction = how;
    for (int j = 0; j < cc->n_joints; j++) cc->joint[j].collision_threshold = thr;
    CHECK(ctl_reload(c, cc, changed, sizeof changed, NULL, &e) == 0, "reload: %s", e.message);
}

/* A collision reaction in the middle of a trajectory between goal and points around it: the
 * thresholds dropped to 1 mN m by a reload 0.5 s into it (any model error is a collision);
 * returns whether the reaction event named `how`. Thresholds back out of reach afterwards. */
static bool collide(ctl *c, armd_config *cc, const double *goal, uint64_t *ecur,
                    cfg_collision_reaction how, const char *name)
{
    static ctl_waypoint w[2];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 2; i++) {
        w[i].t = 1.0 * (i + 1);
        for (int j = 0; j < 6; j++) w[i].q[j] = goal[j] + (i == 0 ? 0.15 : 0);
    }
    uint32_t id;
    double dur;
    ctl_error e;
    char text[160] = "";
    reload_collision(c, cc, 1e4, how);
    CHECK(ctl_trajectory(c, w, 2, false, &id, &dur, NULL, &e) == 0, "trajectory: %s", e.message);
    sleep_s(0.5);
    reload_collision(c, cc, 1e-3, how);
    bool seen = wait_collision(c, ecur, 2, text);
    CHECK(seen && strcmp(text, name) == 0, "collision reaction '%s' (wanted %s)", text, name);
    CHECK(wait_state(c, CTL_HOLDING, 3), "holding after the reaction %s", name);
    reload_collision(c, cc, 1e4, how);
    wait_ticks(c, 100);
    return seen && strcmp(text, name) == 0;
}

/* Largest |q_des - q| over the samples since *cursor. */
static double max_ext; /* the largest |collision observer estimate| seen in the samples */

static double track_error(ctl *c, uint64_t *cursor)
{
    static ctl_sample s[512];
    double worst = 0;
    int k;
    while ((k = ctl_samples_read(c, cursor, s, 512)) > 0)
        for (int i = 0; i < k; i++)
            for (int j = 0; j < 6; j++) {
                worst = fmax(worst, fabs(s[i].q_des[j] - s[i].q[j]));
                max_ext = fmax(max_ext, fabs(s[i].ext[j]));
            }
    return worst;
}

int main(int argc, char **argv)
{
    main_thread = pthread_self();
    if (argc != 3) {
        fprintf(stderr, "usage: %s ARMSIM CONFIG.ini\n", argv[0]);
        return 2;
    }
    char dir[] = "/tmp/armd-noalloc-XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char link[256], truth[256];
    snprintf(link, sizeof link, "%s/tty", dir);
    snprintf(truth, sizeof truth, "%s/truth.csv", dir);

    static armd_config cfg;
    cfg_report rep;
    cfg_report_init(&rep);
    if (cfg_load(argv[2], &cfg, &rep) != 0) {
        cfg_report_print(&rep, stderr);
        return 1;
    }
    cfg_report_free(&rep);
    cfg.rate_hz = 1000;
    /* the test machine is shared and loaded: generous reply deadline and read tolerance so
     * that what is tested is the control thread, not the scheduler */
    cfg.driver.timeout_us = 5000;
    cfg.safety.max_failed_reads = 20;
    /* what this test checks is allocation and the command semantics, not tracking precision:
     * a host stall in the middle of a move must not abort it (test_api_tracking judges
     * tracking) */
    cfg.trajectory.path_tolerance = 0.5;
    for (int j = 0; j < cfg.n_joints; j++) cfg.joint[j].following_error = 0.6;
    cfg.realtime.priority = 50; /* SCHED_FIFO where allowed (a warning otherwise) */
    /* the collision observer runs in every tick too (events only, thresholds out of reach) */
    cfg.safety.collision = COLLISION_DETECT;
    for (int j = 0; j < cfg.n_joints; j++) cfg.joint[j].collision_threshold = 1e4;
    snprintf(cfg.driver.port, sizeof cfg.driver.port, "%s", link);
    if (start_armsim(argv[1], argv[2], link, truth)) return 1;

    drv_fault f;
    drv *d = drv_open(&cfg, &f);
    CHECK(d != NULL, "drv_open: %s", d ? "" : f.message);
    if (!d) goto out;
    CHECK(drv_probe(d, &f) == 0, "drv_probe: %s", f.message);
    dyn_model *m = dyn_model_create(&cfg.model, NULL, NULL);
    CHECK(m != NULL, "model");
    ctl_error e;
    ctl *c = ctl_create(&cfg, m, d, &e);
    CHECK(c != NULL, "ctl_create: %s", e.message);
    if (!c) goto out;
    CHECK(ctl_start(c, &e) == 0, "ctl_start: %s", e.message);
    uint64_t ecur = 0, scur = 0;
    ctl_events_read(c, &ecur, NULL, 0);
    wait_ticks(c, 50);
    CHECK(ctl_alive(c), "ticks advance");
    CHECK(wait_at_rest(c, 10), "the simulated arm came to rest before the enable");

    atomic_store(&counting, 1); /* ---- from here on the control thread must not allocate */
    uint64_t allocs0 = atomic_load(&other_thread_allocs);

    ctl_status st;
    ctl_status_get(c, &st);
    CHECK(st.state == CTL_DISABLED, "starts disabled (%s)", ctl_state_name(st.state));
    uint32_t id;
    double dur;
    double goal[CFG_MAX_JOINTS];
    CHECK(ctl_move_to(c, goal, 0, &id, &dur, NULL, &e) == -1 && strcmp(e.code, "bad_state") == 0,
          "move while disabled refused (%s)", e.code);
    ctl_samples_read(c, &scur, NULL, 0); /* samples from now on */
    CHECK(ctl_enable(c, NULL, &e) == 0, "enable: %s", e.message);
    ctl_status_get(c, &st);
    CHECK(st.state == CTL_HOLDING, "holding after enable (%s)", ctl_state_name(st.state));
    double q0[CFG_MAX_JOINTS];
    memcpy(q0, st.q_des, sizeof q0);
    { /* the tick that enabled holds the position it read: no jump */
        static ctl_sample s[256];
        int k = ctl_samples_read(c, &scur, s, 256), first = -1;
        for (int i = 0; i < k && first < 0; i++)
            if (s[i].state == CTL_HOLDING) first = i;
        CHECK(first >= 0, "a holding sample");
        for (int j = 0; first >= 0 && j < 6; j++)
            CHECK(s[first].q_des[j] == s[first].q[j] && s[first].qd_des[j] == 0,
                  "hold at present q (j%d)", j);
    }
    wait_ticks(c, 300);
    ctl_status_get(c, &st);
    double drift = 0;
    for (int j = 0; j < 6; j++) drift = fmax(drift, fabs(st.q[j] - q0[j]));
    printf("hold: |q - q_hold| after 0.3 s %.2e rad\n", drift);
    CHECK(drift < 0.01, "hold without drift (%g rad)", drift);
    for (int j = 0; j < 6; j++) CHECK(st.q_des[j] == q0[j], "hold target unchanged");

    /* a minimum-time move */
    for (int j = 0; j < 6; j++) goal[j] = q0[j] + (j < 3 ? 0.3 : 0.2);
    track_error(c, &scur);
    CHECK(ctl_move_to(c, goal, 0, &id, &dur, NULL, &e) == 0, "move_to: %s", e.message);
    printf("move_to: id %u, minimum duration %.3f s\n", id, dur);
    char text[160] = "";
    CHECK(wait_done(c, &ecur, id, dur + 3, text), "move done event");
    CHECK(strcmp(text, "done") == 0, "move done text '%s'", text);
    double worst = track_error(c, &scur);
    printf("move_to: max |q_des - q| %.2e rad (measured by the driver)\n", worst);
    CHECK(worst < 0.1, "move tracked (%g)", worst);
    printf("collision observer: max |external torque estimate| %.3g N m during the move\n",
           max_ext);
    CHECK(max_ext > 0 && isfinite(max_ext), "the collision observer ran (max |r| %g)", max_ext);

    /* a trajectory, an append, then cancel in the middle of the second */
    static ctl_waypoint w[3];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 3; i++) {
        w[i].t = 0.6 * (i + 1);
        for (int j = 0; j < 6; j++) w[i].q[j] = goal[j] + 0.15 * sin(i + 1 + j);
    }
    uint32_t id1, id2;
    CHECK(ctl_trajectory(c, w, 3, false, &id1, &dur, NULL, &e) == 0, "trajectory: %s", e.message);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) w[i].q[j] = goal[j] - 0.1 * cos(i + j);
    CHECK(ctl_trajectory(c, w, 3, true, &id2, &dur, NULL, &e) == 0, "append: %s", e.message);
    CHECK(wait_done(c, &ecur, id1, 4, text) && strcmp(text, "done") == 0, "first done '%s'", text);
    sleep_s(0.5);
    CHECK(ctl_cancel(c, NULL, &e) == 0, "cancel: %s", e.message);
    CHECK(wait_done(c, &ecur, id2, 3, text) && strcmp(text, "cancelled") == 0,
          "second cancelled '%s'", text);
    worst = track_error(c, &scur);
    printf("trajectory+append+cancel: max |q_des - q| %.2e rad\n", worst);
    /* cancel brakes to a stop (moving) before it holds: wait for the state, not a time */
    bool held = wait_state(c, CTL_HOLDING, 3.0);
    ctl_status_get(c, &st);
    CHECK(held, "holding after cancel (%s)", ctl_state_name(st.state));

    /* the collision reactions retract (back along the path, then holding) and float (damped
     * gravity_comp until the controller is set again) */
    static armd_config cc;
    cc = *ctl_config(c);
    cc.safety.collision_retract = 0.05;
    collide(c, &cc, goal, &ecur, REACT_RETRACT, "retract");
    collide(c, &cc, goal, &ecur, REACT_FLOAT, "float");
    ctl_status_get(c, &st);
    CHECK(st.controller == CTRL_GRAVITY_COMP, "float switched to gravity_comp");
    wait_ticks(c, 200);
    CHECK(ctl_controller_set(c, CTRL_COMPUTED_TORQUE, NULL, &e) == 0, "controller.set: %s",
          e.message);

    /* gains and law switches between ticks */
    double kp[CFG_MAX_JOINTS], kd[CFG_MAX_JOINTS], ki[CFG_MAX_JOINTS];
    ctl_gains_get(c, kp, kd, ki);
    kp[0] *= 0.5;
    CHECK(ctl_gains_set(c, kp, NULL, NULL, NULL, &e) == 0, "gains.set: %s", e.message);
    double kp2[CFG_MAX_JOINTS];
    ctl_gains_get(c, kp2, NULL, NULL);
    CHECK(kp2[0] == kp[0], "gain applied");
    CHECK(ctl_controller_set(c, CTRL_PD_GRAVITY, NULL, &e) == 0, "controller.set: %s", e.message);
    wait_ticks(c, 300);
    ctl_status_get(c, &st);
    CHECK(st.controller == CTRL_PD_GRAVITY, "law switched");

    /* reload: live keys switch between ticks, restart keys are refused */
    static armd_config cand;
    cand = *ctl_config(c);
    cand.joint[1].kp *= 0.8;
    char changed[512];
    CHECK(ctl_reload(c, &cand, changed, sizeof changed, NULL, &e) == 0, "reload: %s", e.message);
    printf("reload changed: %s\n", changed);
    CHECK(strstr(changed, "kp") != NULL, "reload names kp ('%s')", changed);
    ctl_gains_get(c, kp2, NULL, NULL);
    CHECK(kp2[1] == cand.joint[1].kp, "reloaded gain live");
    CHECK(kp2[0] == cand.joint[0].kp, "run-time gains replaced by the file's at reload");
    cand.model.joint[1].mass *= 1.1; /* new dynamics: a model built here, swapped in there */
    CHECK(ctl_reload(c, &cand, changed, sizeof changed, NULL, &e) == 0, "reload: %s", e.message);
    printf("reload changed: %s\n", changed);
    CHECK(strstr(changed, "mass") != NULL, "reload names mass ('%s')", changed);
    CHECK(ctl_config(c)->model.joint[1].mass == cand.model.joint[1].mass, "reloaded mass in use");
    cand.n_joints = 5;
    CHECK(ctl_reload(c, &cand, changed, sizeof changed, NULL, &e) == -1 &&
              strcmp(e.code, "restart_needed") == 0,
          "joint count change refused (%s: %s)", e.code, e.message);
    printf("reload refused: %s\n", e.message);
    dyn_payload pl = {.mass = 1.0, .com = {0, 0, 0.05}, .inertia = {1e-3, 0, 0, 1e-3, 0, 1e-3}};
    CHECK(ctl_payload_set(c, &pl, NULL, &e) == 0, "payload: %s", e.message);
    wait_ticks(c, 200);

    uint64_t allocs1 = atomic_load(&other_thread_allocs);
    atomic_store(&counting, 0); /* ---- */
    printf("control thread allocations while ticking: %llu (over %llu ticks)\n",
           (unsigned long long)(allocs1 - allocs0), (unsigned long long)st.ticks);
    CHECK(allocs1 == allocs0, "zero allocations in ticks (got %llu)",
          (unsigned long long)(allocs1 - allocs0));

    ctl_status_get(c, &st);
    printf("loop at %.0f Hz: ticks %llu overruns %llu failed reads %llu saturations %llu\n",
           st.rate_hz, (unsigned long long)st.ticks, (unsigned long long)st.overruns,
           (unsigned long long)st.failed_reads, (unsigned long long)st.saturations);
    printf("  lateness p50 %.1f p99 %.1f max %.1f us\n", st.lateness.p50_us, st.lateness.p99_us,
           st.lateness.max_us);
    printf("  read     p50 %.1f p99 %.1f max %.1f us\n", st.read.p50_us, st.read.p99_us,
           st.read.max_us);
    printf("  compute  p50 %.1f p99 %.1f max %.1f us\n", st.compute.p50_us, st.compute.p99_us,
           st.compute.max_us);
    printf("  write    p50 %.1f p99 %.1f max %.1f us\n", st.write.p50_us, st.write.p99_us,
           st.write.max_us);
    CHECK(st.ticks > 1000, "ticks counted");

    /* estop: torque zero at once, then reset -> disabled, enable again */
    CHECK(ctl_estop(c, NULL, &e) == 0, "estop: %s", e.message);
    ctl_status_get(c, &st);
    CHECK(st.state == CTL_ESTOP, "estop state (%s)", ctl_state_name(st.state));
    for (int j = 0; j < 6; j++)
        CHECK(st.tau[j] == 0, "zero torque in estop (j%d %g)", j, st.tau[j]);
    CHECK(ctl_enable(c, NULL, &e) == -1 && strcmp(e.code, "bad_state") == 0,
          "enable refused in estop");
    CHECK(ctl_reset(c, NULL, &e) == 0, "reset: %s", e.message);
    ctl_status_get(c, &st);
    CHECK(st.state == CTL_DISABLED, "disabled after reset (%s)", ctl_state_name(st.state));
    CHECK(ctl_controller_set(c, CTRL_COMPUTED_TORQUE, NULL, &e) == 0, "controller.set: %s",
          e.message);
    CHECK(ctl_enable(c, NULL, &e) == 0, "enable again: %s", e.message);
    wait_ticks(c, 100);

    /* the device vanishes while holding: fault after max_failed_reads, torque zero */
    kill(sim_pid, SIGKILL);
    waitpid(sim_pid, NULL, 0);
    sim_pid = -1;
    for (int i = 0; i < 300; i++) {
        ctl_status_get(c, &st);
        if (st.state == CTL_FAULT) break;
        sleep_s(0.01);
    }
    CHECK(st.state == CTL_FAULT, "fault when the device is gone (%s)", ctl_state_name(st.state));
    CHECK(strstr(st.fault, "consecutive failed") != NULL, "fault reason '%s'", st.fault);
    printf("device gone: fault \"%s\"\n", st.fault);
    for (int j = 0; j < 6; j++)
        CHECK(st.tau[j] == 0, "zero torque in fault (j%d %g)", j, st.tau[j]);
    bool fault_event = false;
    ctl_event ev[32];
    int k;
    while ((k = ctl_events_read(c, &ecur, ev, 32)) > 0)
        for (int i = 0; i < k; i++)
            if (ev[i].type == CTL_EV_FAULT && strcmp(ev[i].text, st.fault) == 0) fault_event = true;
    CHECK(fault_event, "fault event with the reason");

    ctl_stop(c);
    ctl_status_get(c, &st);
    CHECK(st.state == CTL_FAULT, "the fault stays after stop (%s)", ctl_state_name(st.state));
    for (int j = 0; j < 6; j++)
        CHECK(st.tau[j] == 0, "zero torque after stop (j%d %g)", j, st.tau[j]);
    ctl_free(c);
out:
    if (sim_pid > 0) {
        kill(sim_pid, SIGTERM);
        waitpid(sim_pid, NULL, 0);
    }
    unlink(truth);
    unlink(link); /* armsim removes its tty symlink on SIGTERM, not when it was SIGKILLed */
    if (rmdir(dir) != 0) {
        fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(errno));
        failures++;
    }
    printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
