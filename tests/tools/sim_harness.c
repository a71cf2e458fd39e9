/*
 * sim_harness.c — armsim child processes, truth CSV parsing and config loading for tests/tools.
 */
#include "tests/tools/sim_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *sim_armsim_path(void)
{
    const char *p = getenv("ARMSIM");
    return p && *p ? p : "armsim";
}

void sim_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

double sim_elapsed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reads armsim's stdout until the ready line or the deadline. 0 when ready. */
static int wait_ready(sim_proc *s, double seconds)
{
    char buf[1024];
    size_t len = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left =
            seconds - ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9);
        if (left <= 0) return -1;
        struct pollfd pfd = {.fd = s->out_fd, .events = POLLIN};
        if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0) continue;
        ssize_t n = read(s->out_fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0) return -1; /* exited */
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, "armsim: ready on ")) return 0;
        if (len == sizeof buf - 1) len = 0;
    }
}

#define MAX_LIVE 16
static sim_proc *live[MAX_LIVE]; /* started and not yet cleaned up */

int sim_teardown(void **state)
{
    (void)state;
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i]) sim_cleanup(live[i]);
    return 0;
}

int sim_start(sim_proc *s, const char *ini, const char *const *extra)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = s;
            break;
        }
    s->pid = -1;
    s->out_fd = -1;
    snprintf(s->dir, sizeof s->dir, "/tmp/armsim-test-XXXXXX");
    if (!mkdtemp(s->dir)) return -1;
    snprintf(s->link, sizeof s->link, "%s/tty", s->dir);
    snprintf(s->truth, sizeof s->truth, "%s/truth.csv", s->dir);
    const char *argv[64];
    int a = 0;
    argv[a++] = sim_armsim_path();
    argv[a++] = "-c";
    argv[a++] = ini;
    argv[a++] = "--link";
    argv[a++] = s->link;
    argv[a++] = "--truth";
    argv[a++] = s->truth;
    argv[a++] = "--quiet";
    for (int i = 0; extra && extra[i] && a < 62; i++) argv[a++] = extra[i];
    argv[a] = NULL;
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* armsim dies with the test (e.g. killed by meson's timeout); a parent that died
         * before the prctl took effect would leave us reparented: exit then */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
        dup2(pfd[1], STDOUT_FILENO);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    s->pid = pid;
    s->out_fd = pfd[0];
    if (wait_ready(s, 15.0) != 0) {
        fprintf(stderr, "armsim did not report ready\n");
        sim_stop(s);
        return -1;
    }
    return 0;
}

int sim_stop(sim_proc *s)
{
    int status = -1;
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        for (int i = 0; i < 1000; i++) {
            pid_t r = waitpid(s->pid, &status, WNOHANG);
            if (r == s->pid) break;
            if (i == 999) {
                kill(s->pid, SIGKILL);
                waitpid(s->pid, &status, 0);
                status = -1;
            }
            sim_sleep(0.01);
        }
        s->pid = -1;
    }
    if (s->out_fd >= 0) close(s->out_fd);
    s->out_fd = -1;
    return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void sim_cleanup(sim_proc *s)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == s) live[i] = NULL;
    sim_stop(s);
    if (s->truth[0]) unlink(s->truth);
    if (s->link[0]) unlink(s->link);
    if (s->dir[0]) rmdir(s->dir);
}

armd_config *sim_load_config(const char *ini, const char *link, int type)
{
    armd_config *cfg = calloc(1, sizeof *cfg);
    cfg_report rep;
    cfg_report_init(&rep);
    int nerr = cfg_load(ini, cfg, &rep);
    if (nerr) {
        cfg_report_print(&rep, stderr);
        fprintf(stderr, "%s: configuration errors\n", ini);
        abort();
    }
    cfg_report_free(&rep);
    snprintf(cfg->driver.port, sizeof cfg->driver.port, "%s", link);
    if (type >= 0) cfg->driver.type = (cfg_driver_type)type;
    return cfg;
}

/* Where column name goes in a truth_row of an n-joint table: its offset, -1 if the name is
 * none of armsim's (ignored), -2 if it names a joint beyond n. */
static int truth_column(const char *name, int n)
{
    static const struct {
        const char *prefix;
        int block; /* offset of joint 1 in units of n, after t */
    } per_joint[] = {{"qd", 1}, {"q", 0}, {"tau", 2}, {"ext", 3}};
    if (!strcmp(name, "t")) return TRUTH_T;
    if (!strcmp(name, "wall_force")) return TRUTH_WALL_FORCE(n);
    for (size_t i = 0; i < sizeof per_joint / sizeof per_joint[0]; i++) {
        size_t len = strlen(per_joint[i].prefix);
        if (strncmp(name, per_joint[i].prefix, len) != 0) continue;
        char *end;
        long j = strtol(name + len, &end, 10);
        if (end == name + len || *end != '\0') continue;
        if (j < 1 || j > n) return -2;
        return 1 + per_joint[i].block * n + (int)j - 1;
    }
    return -1;
}

int truth_load(const char *path, int n, truth_table *t)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    size_t width = 2 + 4 * (size_t)n, alloc = 0, ncol = 0;
    int rc = 0, map[1024], seen[2 + 4 * CFG_MAX_JOINTS] = {0};
    if (getline(&line, &cap, f) < 0) rc = -1;
    char *save = NULL;
    if (rc == 0) line[strcspn(line, "\r\n")] = '\0';
    for (char *name = rc ? NULL : strtok_r(line, ",", &save); rc == 0 && name;
         name = strtok_r(NULL, ",", &save)) {
        if (ncol == sizeof map / sizeof map[0]) rc = -1;
        int c = rc ? -1 : truth_column(name, n);
        if (c == -2 || (c >= 0 && seen[c]++)) rc = -1;
        if (rc == 0) map[ncol++] = c;
    }
    for (size_t c = 0; c < 1 + 3 * (size_t)n; c++)
        if (!seen[c]) rc = -1; /* t, q, qd, tau are required */
    t->has_contact = seen[TRUTH_WALL_FORCE(n)] && seen[TRUTH_EXT(n)];
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        if (t->rows == alloc) {
            alloc = alloc ? 2 * alloc : 4096;
            double *v = realloc(t->v, alloc * width * sizeof(double));
            if (!v) {
                rc = -1;
                break;
            }
            t->v = v;
        }
        char *p = line, *end;
        double *row = t->v + t->rows * width;
        memset(row, 0, width * sizeof(double));
        for (size_t i = 0; i < ncol; i++) {
            double v = strtod(p, &end);
            if (end == p || (i + 1 < ncol && *end != ',')) {
                rc = -1;
                break;
            }
            if (map[i] >= 0) row[map[i]] = v;
            p = end + 1;
        }
        if (rc == 0) t->rows++;
    }
    free(line);
    fclose(f);
    if (rc) truth_free(t);
    return rc;
}

void truth_free(truth_table *t)
{
    free(t->v);
    t->v = NULL;
    t->rows = 0;
}
