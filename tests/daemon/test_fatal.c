/*
 * test_fatal.c — the fatal-signal handler (daemon/fatal.c) on a real stack overflow: in a child
 * process the driver is opened on a pseudo-terminal (PUMA 560 config, dxl2, no probe) and armed,
 * then a thread recurses until its stack runs out. The parent reads the pty master and checks
 * that the torque-off frame (Sync Write of Torque Enable (64) = 0 to IDs 1..6, built here with
 * the codec) arrived exactly twice, and that the child died by SIGSEGV.
 *
 * Cases: the overflow on the main thread (fatal_install's alternate stack), on a thread that
 * called rt_altstack_enter (as armd's control thread does), and the negative control: a thread
 * without its own alternate stack, whose overflow the handler cannot catch (no frame), which
 * shows that the per-thread stack is what makes it work.
 *
 * argv[1]: the source root (for config/examples/puma560.ini).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "daemon/fatal.h"
#include "daemon/rt.h"
#include "drivers/drivers.h"

static const char *root = ".";
static armd_config cfg;

typedef enum { ON_MAIN, ON_THREAD_WITH_STACK, ON_THREAD_WITHOUT_STACK } where;

static volatile int keep_going = 1; /* never cleared: keeps the recursion from looking infinite */

/* Uses about 1 KiB of stack per call until the stack runs out. */
static int overflow(int depth)
{
    volatile char buf[1024];
    buf[0] = (char)depth;
    if (keep_going) return overflow(depth + 1) + buf[0];
    return buf[0];
}

static void *thread_overflow(void *arg)
{
    if (arg) rt_altstack_enter();
    return (void *)(intptr_t)overflow(0);
}

/* The child: driver on the pty slave, handlers armed, then the overflow. Never returns. */
static void child(const char *slave, where w)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    snprintf(cfg.driver.port, sizeof cfg.driver.port, "%s", slave);
    drv_fault f;
    drv *d = drv_open(&cfg, &f);
    if (!d) {
        fprintf(stderr, "drv_open: %s\n", f.message);
        _exit(3);
    }
    char err[200];
    if (fatal_install(err, sizeof err) != 0) {
        fprintf(stderr, "fatal_install: %s\n", err);
        _exit(4);
    }
    fatal_arm(d, NULL);
    if (w == ON_MAIN) _exit(overflow(0));
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 * 1024);
    pthread_create(&t, &a, thread_overflow, w == ON_THREAD_WITH_STACK ? (void *)1 : NULL);
    pthread_join(t, NULL);
    _exit(5);
}

/* Runs the child for case w; returns its wait status and what the master read (up to cap). */
static int run_case(where w, uint8_t *got, size_t cap, size_t *n_got)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    char slave[256];
    assert_int_equal(ptsname_r(master, slave, sizeof slave), 0);
    /* the master sees the bytes raw only if the slave side is raw: drv_open sets it so */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) child(slave, w);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    *n_got = 0;
    for (;;) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0 || !(p.revents & POLLIN)) break;
        ssize_t r = read(master, got + *n_got, cap - *n_got);
        if (r <= 0) break;
        *n_got += (size_t)r;
    }
    close(master);
    return status;
}

/* The frame armd must write: Sync Write of Torque Enable = 0 to every configured ID. */
static size_t expected_frame(uint8_t *buf, size_t cap)
{
    uint8_t ids[CFG_MAX_JOINTS], zeros[CFG_MAX_JOINTS] = {0};
    for (int j = 0; j < cfg.n_joints; j++) ids[j] = (uint8_t)cfg.joint[j].id[0];
    int n = dxl2_build_sync_write(buf, cap, DXL2_ADDR_TORQUE_ENABLE, 1, ids, zeros,
                                  (size_t)cfg.n_joints);
    assert_true(n > 0);
    return (size_t)n;
}

static void check_case(where w, bool expect_frame)
{
    uint8_t frame[256], got[4096];
    size_t n_frame = expected_frame(frame, sizeof frame), n_got = 0;
    int status = run_case(w, got, sizeof got, &n_got);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
    if (expect_frame) {
        assert_int_equal(n_got, 2 * n_frame);
        assert_memory_equal(got, frame, n_frame);
        assert_memory_equal(got + n_frame, frame, n_frame);
    } else {
        assert_int_equal(n_got, 0);
    }
}

static void test_overflow_on_main_thread(void **state)
{
    (void)state;
    check_case(ON_MAIN, true);
}

static void test_overflow_on_thread_with_its_stack(void **state)
{
    (void)state;
    check_case(ON_THREAD_WITH_STACK, true);
}

/* AddressSanitizer gives every thread an alternate stack of its own (use_sigaltstack), which
 * makes this control moot there: only the death by SIGSEGV is checked. */
static void test_overflow_on_thread_without_stack_is_lost(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    uint8_t got[4096];
    size_t n_got = 0;
    int status = run_case(ON_THREAD_WITHOUT_STACK, got, sizeof got, &n_got);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
#else
    check_case(ON_THREAD_WITHOUT_STACK, false);
#endif
}

int main(int argc, char **argv)
{
    if (argc > 1) root = argv[1];
    char path[1024];
    snprintf(path, sizeof path, "%s/config/examples/puma560.ini", root);
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load(path, &cfg, &rep);
    cfg_report_free(&rep);
    if (errors) {
        fprintf(stderr, "%s: %d errors\n", path, errors);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overflow_on_main_thread),
        cmocka_unit_test(test_overflow_on_thread_with_its_stack),
        cmocka_unit_test(test_overflow_on_thread_without_stack_is_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
