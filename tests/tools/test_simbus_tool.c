/*
 * test_simbus_tool.c — armsim's tool servo on its in-process bus (tools/armsim/simbus.h), spoken
 * to packet by packet on the link, as the driver would (no driver): the OpenManipulator-X example
 * (joints' servos 11-14, 1 Mbps) with the contract's gripper at ID 15 (set by hand over the
 * example's [tool gripper], so the figures here do not follow edits of the example) and
 * --object 0.02,1e5. The tool servo answers the probe's Ping, Read and Write like an XM430-W350;
 * one Bulk Write carries the joints' Goal Current and the tool's goal block and each servo takes
 * its own; Sync Read and Fast Sync Read answer for the tool in list order with its position,
 * speed and force; a plain Write of the goal block works too; torque off and the bus watchdog
 * stop the fingers; --silent-id takes the tool servo alone off the line; --object without a
 * tool and --silent-id of no servo are refused. argv[1]:
 * open_manipulator_x.ini. Simulated time; each test runs once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/drivers.h"
#include "drivers/dxl2_codec.h"
#include "tools/armsim/simbus.h"

#define TOOL_ID   15
#define N_JOINTS  4
#define MAX_REPLY 8
#define WAIT_NS   3000000ull /* a request's replies are all in within 3 ms (return delay 0) */

static const char *omx_ini;
static const uint8_t ids[N_JOINTS + 1] = {11, 12, 13, 14, TOOL_ID};

/* One status packet as received. */
typedef struct {
    uint8_t id, error;
    uint16_t n;
    uint8_t data[64];
} reply;

/* The simulated arm under test and the host's end of its line. */
typedef struct {
    armd_config cfg;
    armsim_options opt;
    simbus *b;
    const drv_link *l;
    dxl2_framer fr;
    uint8_t pkt[DXL2_MAX_PACKET];
} bench;

/* The contract's OpenManipulator-X gripper at TOOL_ID. */
static void fill_tool(cfg_tool *t)
{
    *t = (cfg_tool){.present = true,
                    .name = "gripper",
                    .id = TOOL_ID,
                    .zero_offset = M_PI,
                    .opening_at_zero = 0.042,
                    .m_per_rad = -0.030,
                    .counts_per_rev = 4096,
                    .lower = 0.020,
                    .upper = 0.075,
                    .speed = 0.05,
                    .velocity = 0.1,
                    .force = 10,
                    .max_force = 20,
                    .torque_per_amp = 1.78,
                    .tolerance = 0.001,
                    .epsilon = 0.005,
                    .timeout = 5};
}

/* Sends one packet of n bytes (a builder's result) at the bus's now. */
static void send(bench *t, int n)
{
    assert_true(n > 0);
    assert_int_equal(t->l->write(t->l->ctx, t->pkt, (size_t)n), 0);
}

/* The status packets that arrive within WAIT_NS (the clock ends there), at most max. */
static int replies(bench *t, reply *out, int max)
{
    uint64_t deadline = simbus_now_ns(t->b) + WAIT_NS;
    uint8_t buf[1024];
    int n = 0;
    ssize_t got;
    while ((got = t->l->read(t->l->ctx, buf, sizeof buf, deadline)) > 0) {
        for (size_t used = 0; used < (size_t)got;) {
            used += dxl2_framer_push(&t->fr, buf + used, (size_t)got - used);
            dxl2_packet p;
            int r;
            while ((r = dxl2_framer_next(&t->fr, &p)) != DXL2_NEED_MORE) {
                assert_int_equal(r, DXL2_OK);
                assert_int_equal(p.instruction, DXL2_INST_STATUS);
                assert_true(n < max && p.n_params <= sizeof out[n].data);
                out[n] = (reply){.id = p.id, .error = p.error, .n = p.n_params};
                memcpy(out[n].data, p.params, p.n_params);
                n++;
            }
        }
    }
    assert_true(got == 0);
    return n;
}

/* Sends the packet and expects exactly one status from id with error err and n data bytes. */
static reply one_reply(bench *t, int len, uint8_t id, uint8_t err, uint16_t n)
{
    send(t, len);
    reply r[MAX_REPLY];
    assert_int_equal(replies(t, r, MAX_REPLY), 1);
    if (r[0].id != id || r[0].error != err || r[0].n != n)
        fail_msg("reply from %d, error %d, %d bytes; want %d, %d, %d", r[0].id, r[0].error, r[0].n,
                 id, err, n);
    return r[0];
}

/* Writes len bytes at addr of servo id, expecting status error err. */
static void write_reg(bench *t, uint8_t id, uint16_t addr, const uint8_t *data, uint16_t len,
                      uint8_t err)
{
    one_reply(t, dxl2_build_write(t->pkt, sizeof t->pkt, id, addr, data, len), id, err, 0);
}

/* Reads len bytes at addr of servo id into out. */
static void read_reg(bench *t, uint8_t id, uint16_t addr, uint16_t len, uint8_t *out)
{
    reply r = one_reply(t, dxl2_build_read(t->pkt, sizeof t->pkt, id, addr, len), id, 0, len);
    memcpy(out, r.data, len);
}

/* A Sync Write of one byte at addr to every servo (joints and tool). */
static void sync_write_all(bench *t, uint16_t addr, uint8_t v)
{
    uint8_t data[N_JOINTS + 1];
    memset(data, v, sizeof data);
    send(t, dxl2_build_sync_write(t->pkt, sizeof t->pkt, addr, 1, ids, data, N_JOINTS + 1));
    reply r[MAX_REPLY];
    assert_int_equal(replies(t, r, MAX_REPLY), 0);
}

/* The OMX example with the gripper, armsim options args (NULL-terminated), every servo's return
 * delay 0 (a broadcast Write while the torque is off). */
static void bench_start(bench *t, const char *const *args)
{
    cfg_report rep;
    cfg_report_init(&rep);
    int nerr = cfg_load(omx_ini, &t->cfg, &rep);
    if (nerr) cfg_report_print(&rep, stderr);
    cfg_report_free(&rep);
    assert_int_equal(nerr, 0);
    assert_int_equal(t->cfg.driver.type, DRIVER_DXL2);
    fill_tool(&t->cfg.tool);
    char *argv[16] = {"armsim"};
    int argc = 1;
    while (args && args[argc - 1]) {
        assert_true(argc < 15);
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    assert_int_equal(armsim_parse_options(argc, argv, &t->opt, stderr), 0);
    char err[512];
    t->b = simbus_create(&t->cfg, &t->opt, err, sizeof err);
    if (!t->b) fail_msg("simbus_create: %s", err);
    t->l = simbus_link(t->b);
    dxl2_framer_reset(&t->fr);
    uint8_t zero = 0;
    send(t, dxl2_build_write(t->pkt, sizeof t->pkt, DXL2_BROADCAST_ID, DXL2_ADDR_RETURN_DELAY,
                             &zero, 1));
    reply r[MAX_REPLY];
    assert_int_equal(replies(t, r, MAX_REPLY), 0);
}

/* The probe's path (the contract's): joints in current control, the tool in mode 5, then torque
 * on for all with a Sync Write. */
static void bench_enable(bench *t)
{
    for (int i = 0; i < N_JOINTS; i++) {
        uint8_t zero = 0;
        write_reg(t, ids[i], DXL2_ADDR_OPERATING_MODE, &zero, 1, 0);
    }
    uint8_t five = DXL2_OPERATING_MODE_CURRENT_POSITION;
    write_reg(t, TOOL_ID, DXL2_ADDR_OPERATING_MODE, &five, 1, 0);
    sync_write_all(t, DXL2_ADDR_TORQUE_ENABLE, 1);
}

/* The tool's goal block (102, 18 bytes): Goal Current [2.69 mA], 0, 0, Profile Velocity
 * [0.229 rpm], Goal Position [counts]. */
static void tool_block(uint8_t *b, int16_t current, uint32_t profile, int32_t position)
{
    memset(b, 0, DXL2_TOOL_GOAL_LEN);
    dxl2_put_u16(b, (uint16_t)current);
    dxl2_put_u32(b + DXL2_ADDR_PROFILE_VELOCITY - DXL2_TOOL_GOAL_ADDR, profile);
    dxl2_put_u32(b + DXL2_ADDR_GOAL_POSITION - DXL2_TOOL_GOAL_ADDR, (uint32_t)position);
}

/* One servo's state record (126, 10 bytes): current [units], velocity [units], position. */
typedef struct {
    int16_t current;
    int32_t velocity, position;
} record;

static record parse_record(const uint8_t *d)
{
    return (record){(int16_t)dxl2_get_u16(d), (int32_t)dxl2_get_u32(d + 2),
                    (int32_t)dxl2_get_u32(d + 6)};
}

/* A Sync Read of the state of every servo: one reply each, in list order; the tool's record. */
static record sync_read_tool(bench *t)
{
    send(t, dxl2_build_sync_read(t->pkt, sizeof t->pkt, DXL2_ADDR_PRESENT_CURRENT, DXL2_STATE_LEN,
                                 ids, N_JOINTS + 1));
    reply r[MAX_REPLY];
    assert_int_equal(replies(t, r, MAX_REPLY), N_JOINTS + 1);
    for (int i = 0; i <= N_JOINTS; i++) {
        assert_int_equal(r[i].id, ids[i]);
        assert_int_equal(r[i].error, 0);
        assert_int_equal(r[i].n, DXL2_STATE_LEN);
    }
    return parse_record(r[N_JOINTS].data);
}

/* The probe's reads and writes: Ping answers model 1020, Current Limit is the factory 1193,
 * Operating Mode takes 5 (and refuses 2), return delay, bus watchdog and Hardware Error Status
 * read as a servo's; the Present Position is the open stroke's end (75 mm). */
static void test_probe(void **state)
{
    (void)state;
    static bench t;
    bench_start(&t, NULL);
    reply r = one_reply(&t, dxl2_build_ping(t.pkt, sizeof t.pkt, TOOL_ID), TOOL_ID, 0, 3);
    assert_int_equal(dxl2_get_u16(r.data), DXL2_MODEL_XM430_W350);
    uint8_t b[4];
    read_reg(&t, TOOL_ID, DXL2_ADDR_CURRENT_LIMIT, 2, b);
    assert_int_equal(dxl2_get_u16(b), 1193);
    uint8_t two = 2, five = 5, wd = 5, zero = 0;
    write_reg(&t, TOOL_ID, DXL2_ADDR_OPERATING_MODE, &two, 1, DXL2_ERR_DATA_RANGE);
    write_reg(&t, TOOL_ID, DXL2_ADDR_OPERATING_MODE, &five, 1, 0);
    write_reg(&t, TOOL_ID, DXL2_ADDR_RETURN_DELAY, &zero, 1, 0);
    write_reg(&t, TOOL_ID, DXL2_ADDR_BUS_WATCHDOG, &wd, 1, 0);
    read_reg(&t, TOOL_ID, DXL2_ADDR_OPERATING_MODE, 1, b);
    assert_int_equal(b[0], 5);
    read_reg(&t, TOOL_ID, DXL2_ADDR_BUS_WATCHDOG, 1, b);
    assert_int_equal(b[0], 5);
    read_reg(&t, TOOL_ID, DXL2_ADDR_HW_ERROR_STATUS, 1, b);
    assert_int_equal(b[0], 0);
    read_reg(&t, TOOL_ID, DXL2_ADDR_PRESENT_POSITION, 4, b);
    assert_int_equal((int32_t)dxl2_get_u32(b), units_opening_to_counts(&t.cfg.tool, 0.075));
    simbus_free(t.b);
}

/* One Bulk Write with the joints' Goal Current (102, 2 B each) and the tool's goal block: each
 * joint servo holds its own current (read back; the physics applies it), the tool holds its
 * block. The fingers close from 75 mm at the Profile Velocity (70 x 0.229 rpm on the shaft =
 * 0.0504 m/s of opening): after 0.5 s the Sync Read shows that speed and where they got to;
 * after 2 s they press the 20 mm object with the Goal Current (62 x 2.69 mA = 9.90 N): the
 * opening 20 mm - 9.90 N / 1e5 N/m, Present Current 62, no speed. Fast Sync Read agrees. */
static void test_bulk_write(void **state)
{
    (void)state;
    static bench t;
    const char *args[] = {"--object", "0.02,1e5", NULL};
    bench_start(&t, args);
    bench_enable(&t);
    const int16_t joint_cur[N_JOINTS] = {40, -25, 30, -35};
    const int16_t tool_cur = 62;
    const uint32_t profile = 70;
    const cfg_tool *tc = &t.cfg.tool;
    uint8_t jd[N_JOINTS][2], td[DXL2_TOOL_GOAL_LEN];
    dxl2_bulk_block blk[N_JOINTS + 1];
    for (int i = 0; i < N_JOINTS; i++) {
        dxl2_put_u16(jd[i], (uint16_t)joint_cur[i]);
        blk[i] = (dxl2_bulk_block){ids[i], DXL2_ADDR_GOAL_CURRENT, 2, jd[i]};
    }
    tool_block(td, tool_cur, profile, units_opening_to_counts(tc, 0.010));
    blk[N_JOINTS] = (dxl2_bulk_block){TOOL_ID, DXL2_TOOL_GOAL_ADDR, DXL2_TOOL_GOAL_LEN, td};
    send(&t, dxl2_build_bulk_write(t.pkt, sizeof t.pkt, blk, N_JOINTS + 1));
    reply r[MAX_REPLY];
    assert_int_equal(replies(&t, r, MAX_REPLY), 0);   /* no servo answers a Bulk Write */
    const uint64_t t0 = simbus_now_ns(t.b) - WAIT_NS; /* sent then, it arrived 0.6 ms later */

    physics_state st;
    simbus_state(t.b, &st);
    for (int i = 0; i < N_JOINTS; i++) {
        uint8_t b[DXL2_TOOL_GOAL_LEN];
        read_reg(&t, ids[i], DXL2_ADDR_GOAL_CURRENT, 2, b);
        assert_int_equal((int16_t)dxl2_get_u16(b), joint_cur[i]);
        double tau = units_amps_to_tau(&t.cfg.joint[i], 0, joint_cur[i] * DXL2_CURRENT_UNIT_A);
        if (fabs(st.tau_act[i][0] - tau) > 1e-12)
            fail_msg("joint %d: %.9f N m applied, %.9f from the Bulk Write", i + 1,
                     st.tau_act[i][0], tau);
    }
    uint8_t back[DXL2_TOOL_GOAL_LEN];
    read_reg(&t, TOOL_ID, DXL2_TOOL_GOAL_ADDR, DXL2_TOOL_GOAL_LEN, back);
    assert_memory_equal(back, td, DXL2_TOOL_GOAL_LEN);

    /* closing: 0.5 s after the Bulk Write (to within the requests' bus time) */
    simbus_advance_to(t.b, t0 + 500000000ull);
    const double speed = fabs(units_rpm_to_opening_speed(tc, profile * DXL2_VELOCITY_UNIT_RPM));
    uint64_t t_req = simbus_now_ns(t.b);
    record rec = sync_read_tool(&t);
    double opening = units_counts_to_opening(tc, rec.position);
    double at_least = 0.075 - speed * (double)(t_req + WAIT_NS - t0) * 1e-9;
    double at_most = 0.075 - speed * (double)(t_req - t0) * 1e-9;
    print_message("closing at %.4f m/s: velocity %d x 0.229 rpm, opening %.3f mm after 0.5 s\n",
                  speed, rec.velocity, opening * 1e3);
    assert_int_equal(rec.velocity, (int32_t)profile); /* m_per_rad < 0: the shaft turns + */
    assert_true(opening > at_least - 5e-5 && opening < at_most + 5e-5); /* 1 count: 46 um */
    assert_true(abs(rec.current) <= 1);

    /* pressing the object */
    simbus_advance_to(t.b, t0 + 2000000000ull);
    rec = sync_read_tool(&t);
    double force = units_amps_to_force(tc, tool_cur * DXL2_CURRENT_UNIT_A);
    int32_t want = units_opening_to_counts(tc, 0.020 - force / 1e5);
    print_message("pressing: %.3f N, position %d counts (want %d), current %d x 2.69 mA\n", force,
                  rec.position, want, rec.current);
    assert_int_equal(rec.position, want);
    assert_int_equal(rec.current, tool_cur);
    assert_int_equal(rec.velocity, 0);

    send(&t, dxl2_build_fast_sync_read(t.pkt, sizeof t.pkt, DXL2_ADDR_PRESENT_CURRENT,
                                       DXL2_STATE_LEN, ids, N_JOINTS + 1));
    uint64_t deadline = simbus_now_ns(t.b) + WAIT_NS;
    uint8_t buf[512];
    ssize_t got = t.l->read(t.l->ctx, buf, sizeof buf, deadline);
    assert_true(got > 0);
    dxl2_framer_push(&t.fr, buf, (size_t)got);
    dxl2_packet p;
    assert_int_equal(dxl2_framer_next(&t.fr, &p), DXL2_OK);
    dxl2_fast_entry e[N_JOINTS + 1];
    assert_int_equal(dxl2_parse_fast_sync_status(&p, DXL2_STATE_LEN, e, N_JOINTS + 1),
                     N_JOINTS + 1);
    assert_int_equal(e[N_JOINTS].id, TOOL_ID);
    record fast = parse_record(e[N_JOINTS].data);
    assert_true(fast.position == rec.position && fast.current == rec.current);
    simbus_free(t.b);
}

/* A plain Write of the goal block moves the fingers as the Bulk Write's does; Goal Position
 * beyond +-1048575 and Goal Current beyond the Current Limit are refused (data limit error) and
 * change nothing. */
static void test_write_goal(void **state)
{
    (void)state;
    static bench t;
    bench_start(&t, NULL);
    bench_enable(&t);
    const cfg_tool *tc = &t.cfg.tool;
    uint8_t td[DXL2_TOOL_GOAL_LEN], back[DXL2_TOOL_GOAL_LEN];
    tool_block(td, 100, 0, 2000000);
    write_reg(&t, TOOL_ID, DXL2_TOOL_GOAL_ADDR, td, DXL2_TOOL_GOAL_LEN, DXL2_ERR_DATA_LIMIT);
    tool_block(td, 1194, 0, units_opening_to_counts(tc, 0.040));
    write_reg(&t, TOOL_ID, DXL2_TOOL_GOAL_ADDR, td, DXL2_TOOL_GOAL_LEN, DXL2_ERR_DATA_LIMIT);
    read_reg(&t, TOOL_ID, DXL2_TOOL_GOAL_ADDR, DXL2_TOOL_GOAL_LEN, back);
    assert_int_equal(dxl2_get_u16(back), 0);
    tool_block(td, 100, 0, units_opening_to_counts(tc, 0.040));
    write_reg(&t, TOOL_ID, DXL2_TOOL_GOAL_ADDR, td, DXL2_TOOL_GOAL_LEN, 0);
    /* Profile Velocity 0: the Velocity Limit, 200 x 0.229 rpm = 0.144 m/s: 35 mm in 0.24 s */
    simbus_advance_to(t.b, simbus_now_ns(t.b) + 300000000ull);
    record rec = sync_read_tool(&t);
    assert_int_equal(rec.position, units_opening_to_counts(tc, 0.040));
    assert_int_equal(rec.velocity, 0);
    assert_true(abs(rec.current) <= 1);
    simbus_free(t.b);
}

/* Torque off (Sync Write of Torque Enable) stops the closing fingers where they are; the bus
 * watchdog (5 x 20 ms) does not watch while the torque is off; with torque on again, silence on
 * the line stops the fingers 100 ms after the last packet, the watchdog error then reads -1 and
 * the goal block is refused (data range error). */
static void test_torque_off_and_watchdog(void **state)
{
    (void)state;
    static bench t;
    bench_start(&t, NULL);
    bench_enable(&t);
    const cfg_tool *tc = &t.cfg.tool;
    uint8_t td[DXL2_TOOL_GOAL_LEN];
    tool_block(td, 100, 0, units_opening_to_counts(tc, 0.020));
    write_reg(&t, TOOL_ID, DXL2_TOOL_GOAL_ADDR, td, DXL2_TOOL_GOAL_LEN, 0);
    simbus_advance_to(t.b, simbus_now_ns(t.b) + 100000000ull);
    sync_write_all(&t, DXL2_ADDR_TORQUE_ENABLE, 0);
    record a = sync_read_tool(&t);
    simbus_advance_to(t.b, simbus_now_ns(t.b) + 200000000ull);
    record b = sync_read_tool(&t);
    print_message("torque off at %.3f mm, 0.2 s later %.3f mm\n",
                  units_counts_to_opening(tc, a.position) * 1e3,
                  units_counts_to_opening(tc, b.position) * 1e3);
    assert_true(a.position == b.position && b.velocity == 0 && b.current == 0);
    assert_true(units_counts_to_opening(tc, a.position) < 0.070);

    uint8_t wd = 5, v;
    write_reg(&t, TOOL_ID, DXL2_ADDR_BUS_WATCHDOG, &wd, 1, 0);
    simbus_advance_to(t.b, simbus_now_ns(t.b) + 300000000ull); /* torque off: not watched */
    read_reg(&t, TOOL_ID, DXL2_ADDR_BUS_WATCHDOG, 1, &v);
    assert_int_equal(v, 5);
    sync_write_all(&t, DXL2_ADDR_TORQUE_ENABLE, 1);
    uint64_t last = simbus_now_ns(t.b) - WAIT_NS; /* the Sync Write arrived within 0.1 ms */
    simbus_advance_to(t.b, last + 400000000ull);
    record c = sync_read_tool(&t);
    /* 0.144 m/s for 100 ms (the profile is the Velocity Limit): 14.4 mm closer, within the
     * Sync Write's bus time and a count */
    double moved =
        units_counts_to_opening(tc, b.position) - units_counts_to_opening(tc, c.position);
    print_message("watchdog: moved %.3f mm in its 100 ms\n", moved * 1e3);
    assert_true(fabs(moved - 0.1 * 0.144) < 2e-4);
    assert_true(c.velocity == 0 && c.current == 0);
    read_reg(&t, TOOL_ID, DXL2_ADDR_BUS_WATCHDOG, 1, &v);
    assert_int_equal((int8_t)v, -1);
    /* the goal values are read-only until 98 is written */
    write_reg(&t, TOOL_ID, DXL2_TOOL_GOAL_ADDR, td, DXL2_TOOL_GOAL_LEN, DXL2_ERR_DATA_RANGE);
    simbus_free(t.b);
}

/* --silent-id 15: a silence (here simbus_silence_until's) takes the tool servo alone off the
 * line: it answers no Ping and drops out of the Sync Read, the joints' servos answer; after the
 * silence it answers again. */
static void test_tool_silent(void **state)
{
    (void)state;
    static bench t;
    const char *args[] = {"--silent-id", "15", NULL};
    bench_start(&t, args);
    one_reply(&t, dxl2_build_ping(t.pkt, sizeof t.pkt, TOOL_ID), TOOL_ID, 0, 3);
    uint64_t end = simbus_now_ns(t.b) + 50000000ull;
    simbus_silence_until(t.b, end);
    send(&t, dxl2_build_ping(t.pkt, sizeof t.pkt, TOOL_ID));
    reply r[MAX_REPLY];
    assert_int_equal(replies(&t, r, MAX_REPLY), 0);
    one_reply(&t, dxl2_build_ping(t.pkt, sizeof t.pkt, 11), 11, 0, 3);
    send(&t, dxl2_build_sync_read(t.pkt, sizeof t.pkt, DXL2_ADDR_PRESENT_CURRENT, DXL2_STATE_LEN,
                                  ids, N_JOINTS + 1));
    assert_int_equal(replies(&t, r, MAX_REPLY), N_JOINTS);
    assert_int_equal(r[N_JOINTS - 1].id, 14);
    simbus_advance_to(t.b, end);
    one_reply(&t, dxl2_build_ping(t.pkt, sizeof t.pkt, TOOL_ID), TOOL_ID, 0, 3);
    simbus_free(t.b);
}

/* What the bus refuses, naming the option: --object without a [tool NAME] section, --silent-id
 * of no configured servo. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        bool tool;
        const char *opt, *value, *says;
    } cases[] = {{false, "--object", "0.02,1e5", "--object: the config has no [tool NAME]"},
                 {true, "--silent-id", "99", "--silent-id 99: no servo of the config"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static bench t;
        cfg_report rep;
        cfg_report_init(&rep);
        assert_int_equal(cfg_load(omx_ini, &t.cfg, &rep), 0);
        cfg_report_free(&rep);
        if (cases[i].tool)
            fill_tool(&t.cfg.tool);
        else
            t.cfg.tool.present = false;
        char *argv[] = {"armsim", (char *)cases[i].opt, (char *)cases[i].value};
        assert_int_equal(armsim_parse_options(3, argv, &t.opt, stderr), 0);
        char err[512] = "";
        simbus *b = simbus_create(&t.cfg, &t.opt, err, sizeof err);
        if (b || !strstr(err, cases[i].says))
            fail_msg("%s %s: %s", cases[i].opt, cases[i].value, b ? "taken" : err);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s open_manipulator_x.ini\n", argv[0]);
        return 2;
    }
    omx_ini = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe),       cmocka_unit_test(test_bulk_write),
        cmocka_unit_test(test_write_goal),  cmocka_unit_test(test_torque_off_and_watchdog),
        cmocka_unit_test(test_tool_silent), cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
