/*
 * serial.c — the transport (see serial.h): a serial port through libserialport for opening and
 * configuring, ppoll() on its descriptor for microsecond deadlines; or a drv_link, every call
 * forwarded to it. The serial port is claimed exclusively before it is configured: a second
 * armd on the same port would probe (and so disable) the servos under a running arm. Runs on
 * the driver's thread; serial_silence also from a signal handler.
 */
#include "drivers/serial.h"

#include <errno.h>
#include <fcntl.h>
#include <libserialport.h>
#include <limits.h>
#include <linux/serial.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

struct serial_port {
    struct sp_port *sp;
    int fd;      /* the descriptor data goes through; -1 for a link */
    int lock_fd; /* holds the flock() claim: fd itself, or a second descriptor beside sp's */
    atomic_int silenced; /* serial_silence(): writes refused from then on */
    bool is_link;        /* a drv_link port: every call goes to link */
    drv_link link;
};

/* CLOCK_MONOTONIC now [ns]. */
static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The port's clock [ns]: CLOCK_MONOTONIC, or the link's. */
uint64_t serial_now_ns(const serial_port *p)
{
    return p->is_link ? p->link.now_ns(p->link.ctx) : monotonic_ns();
}

/* Sleeps ns on CLOCK_MONOTONIC (a link: its sleep_ns), restarted after signals. */
void serial_sleep_ns(serial_port *p, uint64_t ns)
{
    if (p->is_link) {
        p->link.sleep_ns(p->link.ctx, ns);
        return;
    }
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* A port that forwards every call to a copy of link. */
serial_port *serial_open_link(const drv_link *link, char *err, size_t errlen)
{
    if (!link || !link->now_ns || !link->write || !link->read || !link->flush_input ||
        !link->sleep_ns) {
        snprintf(err, errlen,
                 "link: now_ns, write, read, flush_input and sleep_ns must all be given");
        return NULL;
    }
    serial_port *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "link: out of memory");
        return NULL;
    }
    p->fd = p->lock_fd = -1;
    p->is_link = true;
    p->link = *link;
    return p;
}

/* Formats "what: libserialport's last error" into err. */
static void sp_error(char *err, size_t errlen, const char *path, const char *what)
{
    char *msg = sp_last_error_message();
    snprintf(err, errlen, "%s: %s: %s", path, what, msg ? msg : "unknown error");
    if (msg) sp_free_error_message(msg);
}

/* Formats the "port taken" message every way of detecting it reports. */
static void in_use_error(char *err, size_t errlen, const char *path)
{
    snprintf(err, errlen, "%s is in use by another process (another armd?)", path);
}

/* Opens real (the resolved path) and takes an advisory exclusive flock() on it, before anything
 * configures the port. flock() binds root too, between cooperating processes; an open refused
 * with EBUSY is another opener's TIOCEXCL. Returns the descriptor, or -1 with err set (errno
 * EBUSY when the port is taken). */
static int claim_port(const char *path, const char *real, char *err, size_t errlen)
{
    int fd = open(real, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == EBUSY)
            in_use_error(err, errlen, path);
        else
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno == EWOULDBLOCK ? EBUSY : errno;
        if (e == EBUSY)
            in_use_error(err, errlen, path);
        else
            snprintf(err, errlen, "%s: cannot lock: %s", path, strerror(e));
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Refuses further open()s of the tty to anyone but root (TIOCEXCL). Where the device does not
 * support it the flock() claim still stands, so a failure is not an error. */
static void set_exclusive(int fd)
{
    (void)ioctl(fd, TIOCEXCL);
}

/* Asks the UART driver to deliver bytes without batching (ASYNC_LOW_LATENCY). Devices that do
 * not support it (pseudo-terminals, some adapters) are left as they are. */
static void request_low_latency(int fd)
{
    struct serial_struct ss;
    if (ioctl(fd, TIOCGSERIAL, &ss) == 0) {
        ss.flags |= ASYNC_LOW_LATENCY;
        (void)ioctl(fd, TIOCSSERIAL, &ss);
    }
}

/* The termios speed constant for a standard baud rate, B0 if there is none. */
static speed_t speed_constant(int baud)
{
    static const struct {
        int baud;
        speed_t c;
    } table[] = {{9600, B9600},       {19200, B19200},     {38400, B38400},     {57600, B57600},
                 {115200, B115200},   {230400, B230400},   {460800, B460800},   {500000, B500000},
                 {576000, B576000},   {921600, B921600},   {1000000, B1000000}, {1152000, B1152000},
                 {1500000, B1500000}, {2000000, B2000000}, {2500000, B2500000}, {3000000, B3000000},
                 {3500000, B3500000}, {4000000, B4000000}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].baud == baud) return table[i].c;
    return B0;
}

/* Configures a device libserialport cannot enumerate (a pseudo-terminal), already opened and
 * claimed as p->fd, to raw 8N1, no flow control, non-blocking. The baud rate is set when it is
 * a standard one (a pty ignores it). Closes p->fd on failure. */
static int open_termios(serial_port *p, const char *path, int baud, char *err, size_t errlen)
{
    struct termios t;
    if (tcgetattr(p->fd, &t) < 0) {
        snprintf(err, errlen, "%s: not a serial port: %s", path, strerror(errno));
        close(p->fd);
        return -1;
    }
    cfmakeraw(&t);
    t.c_cflag &= ~(tcflag_t)(CSTOPB | PARENB | CRTSCTS | CSIZE);
    t.c_cflag |= CS8 | CLOCAL | CREAD;
    t.c_iflag &= ~(tcflag_t)(IXON | IXOFF | IXANY);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    speed_t sc = speed_constant(baud);
    if (sc != B0) cfsetspeed(&t, sc);
    if (tcsetattr(p->fd, TCSANOW, &t) < 0) {
        snprintf(err, errlen, "%s: cannot configure: %s", path, strerror(errno));
        close(p->fd);
        return -1;
    }
    return 0;
}

serial_port *serial_open(const char *path, int baud, char *err, size_t errlen)
{
    if (baud <= 0) {
        snprintf(err, errlen, "%s: invalid baud rate %d", path, baud);
        return NULL;
    }
    serial_port *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    p->fd = -1;
    /* libserialport's default debug handler calls getenv and writes to stderr on every call,
     * including sp_flush from the control thread: silence it before the first call */
    sp_set_debug_handler(NULL);
    /* libserialport looks the name up in sysfs, which knows /dev/pts/N but not a symlink to
     * it (armsim's --link): resolve links first, report errors with the name given. */
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        free(p);
        return NULL;
    }
    p->lock_fd = claim_port(path, real, err, errlen);
    if (p->lock_fd < 0) {
        int e = errno;
        free(p);
        errno = e;
        return NULL;
    }
    if (sp_get_port_by_name(real, &p->sp) != SP_OK) {
        /* libserialport 0.1.1 requires the device in /sys/class/tty, which pseudo-terminals
         * are not: configure those through termios with the same settings */
        p->fd = p->lock_fd;
        if (open_termios(p, path, baud, err, errlen) < 0) {
            free(p);
            return NULL;
        }
        set_exclusive(p->fd);
        request_low_latency(p->fd);
        serial_flush(p);
        return p;
    }
    if (sp_open(p->sp, SP_MODE_READ_WRITE) != SP_OK) {
        int e = sp_last_error_code();
        if (e == EBUSY)
            in_use_error(err, errlen, path);
        else
            sp_error(err, errlen, path, "cannot open");
        sp_free_port(p->sp);
        close(p->lock_fd);
        free(p);
        errno = e == EBUSY ? EBUSY : EIO;
        return NULL;
    }
    const char *step = NULL;
    if (sp_set_baudrate(p->sp, baud) != SP_OK)
        step = "cannot set baud rate";
    else if (sp_set_bits(p->sp, 8) != SP_OK || sp_set_parity(p->sp, SP_PARITY_NONE) != SP_OK ||
             sp_set_stopbits(p->sp, 1) != SP_OK)
        step = "cannot set 8N1";
    else if (sp_set_flowcontrol(p->sp, SP_FLOWCONTROL_NONE) != SP_OK)
        step = "cannot disable flow control";
    else if (sp_get_port_handle(p->sp, &p->fd) != SP_OK)
        step = "no descriptor";
    if (step) {
        sp_error(err, errlen, path, step);
        serial_close(p);
        return NULL;
    }
    set_exclusive(p->fd);
    int fl = fcntl(p->fd, F_GETFL);
    if (fl >= 0) (void)fcntl(p->fd, F_SETFL, fl | O_NONBLOCK);
    request_low_latency(p->fd);
    serial_flush(p);
    return p;
}

/* Closes the port and releases the claim (TIOCEXCL cleared, flock released with the last
 * descriptor), so the port can be opened again at once. */
void serial_close(serial_port *p)
{
    if (!p) return;
    if (p->is_link) {
        free(p);
        return;
    }
    if (p->fd >= 0) (void)ioctl(p->fd, TIOCNXCL);
    if (p->sp) {
        sp_close(p->sp);
        sp_free_port(p->sp);
    }
    close(p->lock_fd); /* p->fd itself on the termios path */
    free(p);
}

int serial_fd(const serial_port *p)
{
    return p->fd;
}

void serial_silence(serial_port *p)
{
    atomic_store_explicit(&p->silenced, 1, memory_order_release);
}

void serial_flush(serial_port *p)
{
    if (p->is_link)
        p->link.flush_input(p->link.ctx);
    else if (p->sp)
        (void)sp_flush(p->sp, SP_BUF_BOTH);
    else
        (void)tcflush(p->fd, TCIOFLUSH);
}

/* Waits for events on the descriptor until deadline_ns: 1 ready, 0 timeout, -1 error. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = monotonic_ns();
        if (now >= deadline_ns) return 0;
        uint64_t left = deadline_ns - now;
        struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        struct pollfd pfd = {.fd = fd, .events = events};
        int r = ppoll(&pfd, 1, &ts, NULL);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) return 0;
        if (pfd.revents & (POLLERR | POLLNVAL)) {
            errno = EIO;
            return -1;
        }
        if (pfd.revents & events) return 1;
        if (pfd.revents & POLLHUP) {
            errno = EIO;
            return -1;
        }
    }
}

int serial_write(serial_port *p, const uint8_t *data, size_t n, uint64_t deadline_ns)
{
    if (atomic_load_explicit(&p->silenced, memory_order_acquire)) {
        errno = EPIPE;
        return -1;
    }
    if (p->is_link) return p->link.write(p->link.ctx, data, n);
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(p->fd, data + done, n - done);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
        int r = wait_fd(p->fd, POLLOUT, deadline_ns);
        if (r == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (r < 0) return -1;
    }
    return 0;
}

ssize_t serial_read(serial_port *p, uint8_t *buf, size_t cap, uint64_t deadline_ns)
{
    if (p->is_link) return p->link.read(p->link.ctx, buf, cap, deadline_ns);
    for (;;) {
        ssize_t r = read(p->fd, buf, cap);
        if (r > 0) return r;
        /* a tty in raw mode with VMIN = VTIME = 0 returns 0 when empty; a hang-up shows as
         * POLLHUP / EIO below */
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
        int w = wait_fd(p->fd, POLLIN, deadline_ns);
        if (w < 0) return w;
        if (w == 0) {
            /* the deadline passed: once more, because a reply that came while this thread was
             * descheduled (or stopped) past the deadline is a reply, not a timeout */
            r = read(p->fd, buf, cap);
            return r > 0 ? r : 0;
        }
    }
}

void serial_flush_input(serial_port *p)
{
    if (p->is_link)
        p->link.flush_input(p->link.ctx);
    else if (p->sp)
        (void)sp_flush(p->sp, SP_BUF_INPUT);
    else
        (void)tcflush(p->fd, TCIFLUSH);
}
