/*
 * simbus.c — the in-process simulated bus (see simbus.h): the drv_link's callbacks, the event
 * loop that delivers requests and runs housekeeping in time order while the physics keeps up,
 * and the device output that queues replies with their arrival times. Owns the physics, the
 * devices, the faults and the truth log of one simulated arm; runs on the caller's thread only.
 */
#include "tools/armsim/simbus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/armsim/bus_queue.h"
#include "tools/armsim/device.h"

struct simbus {
    armd_config cfg;    /* the devices' and the physics' copy */
    armsim_options opt; /* ditto */
    physics *phys;
    truth_log *truth; /* NULL without --truth */
    armsim_faults faults;
    sim_device dev;
    bool have_dev;
    drv_link link;

    uint64_t now;            /* the simulated clock [ns] */
    uint64_t next_hk;        /* the devices' next housekeeping [ns] */
    uint64_t host_free;      /* the host's requests occupy its transmitter until then [ns] */
    uint64_t reply_earliest; /* the last request's replies start no earlier [ns] */
    uint64_t bus_free;       /* the devices' replies occupy the line until then [ns] */

    bus_queue tx;          /* requests on their way to the devices */
    bus_queue rx;          /* replies on their way to the host, or arrived and unread */
    uint8_t scratch[4096]; /* requests handed to the devices */
};

/* The bus time of n bytes at the configured baud, 10 bits per byte [ns]. */
static uint64_t bytes_ns(const simbus *b, size_t n)
{
    return (uint64_t)n * 10u * 1000000000u / (uint64_t)b->cfg.driver.baud;
}

/* The earlier of two times. */
static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The next thing due on the bus: a request's arrival or the housekeeping [ns]. */
static uint64_t next_event(const simbus *b)
{
    return min_u64(bus_queue_next(&b->tx), b->next_hk);
}

/* Hands the requests arrived by now to the devices, as the armsim program's serving loop does
 * with the bytes it reads: faults armed, ignored while silent. */
static void deliver(simbus *b)
{
    size_t n;
    while ((n = bus_queue_take(&b->tx, b->now, b->scratch, sizeof b->scratch)) > 0) {
        faults_arm(&b->faults, b->now);
        if (faults_silent(&b->faults, b->now)) {
            b->faults.n_silenced++;
            continue;
        }
        b->reply_earliest = b->now + (uint64_t)(DRV_TURNAROUND_US * 1000.0);
        b->dev.feed(b->dev.self, b->scratch, n, b->now);
    }
}

/* Moves the clock to t (an event time or a target, never behind now): the physics first, then
 * the requests arriving at t, then the housekeeping due at t. */
static void step_to(simbus *b, uint64_t t)
{
    physics_advance_to(b->phys, t);
    b->now = t;
    if (bus_queue_next(&b->tx) <= t) deliver(b);
    if (b->next_hk <= t) {
        if (!faults_silent(&b->faults, t)) b->dev.tick(b->dev.self, t);
        b->next_hk += SIMBUS_HOUSEKEEPING_NS;
    }
}

/* Runs every event up to t in time order, then sets the clock to t. */
static void run_until(simbus *b, uint64_t t)
{
    if (t <= b->now) return;
    for (uint64_t ev = next_event(b); ev <= t; ev = next_event(b)) step_to(b, ev);
    step_to(b, t);
}

/* device_out: queues a reply to arrive after the request's turnaround or the previous reply,
 * its delay [us] and its bytes. A reply that finds the queue full (a host that has not read
 * BUS_QUEUE_BYTES or BUS_QUEUE_CHUNKS of them) is lost, as in a full receive buffer. */
static void bus_send(void *ctx, const uint8_t *buf, size_t n, long delay_us)
{
    simbus *b = ctx;
    uint64_t start = b->reply_earliest > b->bus_free ? b->reply_earliest : b->bus_free;
    uint64_t end = start + (uint64_t)(delay_us > 0 ? delay_us : 0) * 1000u + bytes_ns(b, n);
    if (bus_queue_push(&b->rx, end, buf, n) == 0) b->bus_free = end;
}

/* ---------------------------------------------------------------- the link (drivers.h) */
/* The simulated clock [ns]. */
static uint64_t link_now_ns(void *ctx)
{
    return ((const simbus *)ctx)->now;
}

/* Queues the request behind the host's earlier ones; the clock stays. -1 (ENOBUFS) when
 * BUS_QUEUE_BYTES or BUS_QUEUE_CHUNKS of requests are already on their way. */
static int link_write(void *ctx, const uint8_t *data, size_t n)
{
    simbus *b = ctx;
    uint64_t start = b->now > b->host_free ? b->now : b->host_free;
    uint64_t end = start + bytes_ns(b, n);
    if (bus_queue_push(&b->tx, end, data, n) < 0) {
        errno = ENOBUFS;
        return -1;
    }
    b->host_free = end;
    return 0;
}

/* The replies arrived by now; else the clock runs, event by event, to the next arrival or to the
 * deadline, whichever comes first. */
static ssize_t link_read(void *ctx, uint8_t *buf, size_t cap, uint64_t deadline_ns)
{
    simbus *b = ctx;
    for (;;) {
        size_t n = bus_queue_take(&b->rx, b->now, buf, cap);
        if (n > 0) return (ssize_t)n;
        if (b->now >= deadline_ns) return 0;
        step_to(b, min_u64(min_u64(deadline_ns, bus_queue_next(&b->rx)), next_event(b)));
    }
}

/* Discards the replies arrived and unread; those still on the line come later. */
static void link_flush_input(void *ctx)
{
    simbus *b = ctx;
    bus_queue_drop(&b->rx, b->now);
}

/* The driver's pause: the bus runs on meanwhile. */
static void link_sleep_ns(void *ctx, uint64_t ns)
{
    simbus *b = ctx;
    run_until(b, b->now + ns);
}

/* ---------------------------------------------------------------------------- the bus */
/* Checks what the in-process bus cannot take; 0, or -1 with err. */
static int check_use(const armd_config *cfg, const armsim_options *o, char *err, size_t errlen)
{
    static const char *const proto_name[] = {"dxl2", "armlink"};
    if (o->link_path) {
        snprintf(err, errlen,
                 "--link %s: the armsim program's pseudo-terminal; the simulated arm in process "
                 "needs none (drop --link)",
                 o->link_path);
        return -1;
    }
    if (o->print_model) {
        snprintf(err, errlen,
                 "--print-model: run the armsim program for it (armsim -c CONFIG "
                 "--print-model)");
        return -1;
    }
    armsim_protocol cfg_proto = cfg->driver.type == DRIVER_ARMLINK ? PROTO_ARMLINK : PROTO_DXL2;
    if (o->protocol != PROTO_FROM_CONFIG && o->protocol != cfg_proto) {
        snprintf(err, errlen,
                 "--protocol %s, but the config's [driver] type is %s, which the driver in "
                 "process speaks: drop --protocol or change [driver] type",
                 proto_name[o->protocol], proto_name[cfg_proto]);
        return -1;
    }
    if (cfg->driver.baud <= 0) {
        snprintf(err, errlen, "[driver] baud %d: the simulated bus needs a baud rate above 0",
                 cfg->driver.baud);
        return -1;
    }
    return 0;
}

/* Builds the physics, the truth log, the faults and the devices on copies of cfg and o, and
 * puts t = 0 of the physics at SIMBUS_START_NS. */
simbus *simbus_create(const armd_config *cfg, const armsim_options *o, char *err, size_t errlen)
{
    if (check_use(cfg, o, err, errlen) < 0) return NULL;
    simbus *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "simulated bus: out of memory");
        return NULL;
    }
    b->cfg = *cfg;
    b->opt = *o;
    b->now = SIMBUS_START_NS;
    b->next_hk = SIMBUS_START_NS + SIMBUS_HOUSEKEEPING_NS;
    b->host_free = b->bus_free = b->reply_earliest = SIMBUS_START_NS;
    bus_queue_init(&b->tx);
    bus_queue_init(&b->rx);
    b->phys = physics_create(&b->cfg, &b->opt, NULL, err, errlen);
    if (!b->phys) {
        simbus_free(b);
        return NULL;
    }
    if (o->truth_path) {
        b->truth = physics_open_truth(b->phys, &b->cfg, o->truth_path, o->truth_decimate,
                                      TRUTH_SYNCHRONOUS, err, errlen);
        if (!b->truth) {
            simbus_free(b);
            return NULL;
        }
    }
    faults_init(&b->faults, &b->opt, SIMBUS_START_NS);
    device_env env = {&b->cfg, &b->opt, b->phys, &b->faults, {b, bus_send}};
    int rc = b->cfg.driver.type == DRIVER_ARMLINK
                 ? armlink_device_create(&env, &b->dev, err, errlen)
                 : dxl2_device_create(&env, &b->dev, err, errlen);
    if (rc != 0) {
        simbus_free(b);
        return NULL;
    }
    b->have_dev = true;
    physics_begin(b->phys, SIMBUS_START_NS);
    b->link = (drv_link){b,         "simulated bus",  link_now_ns,  link_write,
                         link_read, link_flush_input, link_sleep_ns};
    return b;
}

/* The link (drivers.h) whose ctx is b. */
const drv_link *simbus_link(simbus *b)
{
    return &b->link;
}

/* The simulated clock [ns]. */
uint64_t simbus_now_ns(const simbus *b)
{
    return b->now;
}

/* Every event up to t_ns in time order (run_until). */
void simbus_advance_to(simbus *b, uint64_t t_ns)
{
    run_until(b, t_ns);
}

/* The physics' published state (the last step at or before now). */
void simbus_state(simbus *b, physics_state *s)
{
    physics_snapshot(b->phys, s);
}

/* faults.c decides: the next count replies are dropped. */
void simbus_lose_replies(simbus *b, int count)
{
    faults_lose_replies(&b->faults, count);
}

/* faults.c decides: requests arriving before t_ns [ns] are ignored. */
void simbus_silence_until(simbus *b, uint64_t t_ns)
{
    faults_silence_until(&b->faults, t_ns);
}

/* faults_start_now at the simulated now. */
void simbus_faults_start(simbus *b)
{
    faults_start_now(&b->faults, b->now);
}

void simbus_flush(simbus *b)
{
    truth_flush(b->truth);
}

/* Devices, physics, then the truth log (the physics writes to it); NULL does nothing. */
void simbus_free(simbus *b)
{
    if (!b) return;
    if (b->have_dev) b->dev.destroy(b->dev.self);
    physics_free(b->phys); /* before the truth: it writes to it */
    uint64_t lost = truth_close(b->truth);
    if (lost)
        fprintf(stderr, "armsim: --truth %s: %llu rows could not be written\n", b->opt.truth_path,
                (unsigned long long)lost);
    free(b);
}
