/*
 * dxl2_codec.h — Dynamixel Protocol 2.0 packets, both directions (host and servo side), for
 * X-series servos (ROBOTIS e-Manual, "Protocol 2.0", emanual.robotis.com/docs/en/dxl/protocol2/).
 *
 * Packet:  FF FF FD 00 | ID | LEN_L LEN_H | INST | params... | CRC_L CRC_H
 *          LEN = (stuffed) params + 3; status packets have INST 0x55 and the error byte as their
 *          first parameter. Multi-byte fields little-endian.
 *
 * Nothing here allocates: callers pass the buffers. Builders return the number of bytes written
 * (> 0) or a negative dxl2_result when the buffer is too small or an argument is out of range.
 * Decoded packets point into the caller's buffer (parameters are unstuffed in place).
 */
#ifndef ARMD_DXL2_CODEC_H
#define ARMD_DXL2_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------ framing */
#define DXL2_HEADER_LEN   7    /* FF FF FD 00 ID LEN_L LEN_H */
#define DXL2_MAX_PACKET   4096 /* largest packet this codec builds or accepts (bytes on wire) */
#define DXL2_BROADCAST_ID 0xFE
#define DXL2_MAX_ID       252
#define DXL2_STATUS_MIN   11 /* header + INST + ERR + CRC */

/* ------------------------------------------------------------------------- instructions */
#define DXL2_INST_PING           0x01
#define DXL2_INST_READ           0x02
#define DXL2_INST_WRITE          0x03
#define DXL2_INST_REG_WRITE      0x04
#define DXL2_INST_ACTION         0x05
#define DXL2_INST_FACTORY_RESET  0x06
#define DXL2_INST_REBOOT         0x08
#define DXL2_INST_CLEAR          0x10
#define DXL2_INST_STATUS         0x55
#define DXL2_INST_SYNC_READ      0x82
#define DXL2_INST_SYNC_WRITE     0x83
#define DXL2_INST_FAST_SYNC_READ 0x8A
#define DXL2_INST_BULK_READ      0x92
#define DXL2_INST_BULK_WRITE     0x93

/* ---------------------------------------------------------------- status error byte */
#define DXL2_ERR_ALERT       0x80 /* hardware alert: read Hardware Error Status (70) */
#define DXL2_ERR_MASK        0x7F /* the error number in bits 6..0: */
#define DXL2_ERR_RESULT_FAIL 1
#define DXL2_ERR_INSTRUCTION 2
#define DXL2_ERR_CRC         3
#define DXL2_ERR_DATA_RANGE  4
#define DXL2_ERR_DATA_LENGTH 5
#define DXL2_ERR_DATA_LIMIT  6
#define DXL2_ERR_ACCESS      7

/* Hardware Error Status (address 70) bits */
#define DXL2_HW_INPUT_VOLTAGE    0x01
#define DXL2_HW_OVERHEATING      0x04
#define DXL2_HW_MOTOR_ENCODER    0x08
#define DXL2_HW_ELECTRICAL_SHOCK 0x10
#define DXL2_HW_OVERLOAD         0x20

/* ------------------------------------------------- X-series control table (addresses, sizes) */
#define DXL2_ADDR_MODEL_NUMBER     0   /* 2 B */
#define DXL2_ADDR_FIRMWARE_VERSION 6   /* 1 B */
#define DXL2_ADDR_ID               7   /* 1 B */
#define DXL2_ADDR_BAUD_RATE        8   /* 1 B */
#define DXL2_ADDR_RETURN_DELAY     9   /* 1 B, unit 2 us */
#define DXL2_ADDR_OPERATING_MODE   11  /* 1 B */
#define DXL2_ADDR_CURRENT_LIMIT    38  /* 2 B, unit 2.69 mA */
#define DXL2_ADDR_TORQUE_ENABLE    64  /* 1 B */
#define DXL2_ADDR_LED              65  /* 1 B */
#define DXL2_ADDR_STATUS_RETURN    68  /* 1 B */
#define DXL2_ADDR_HW_ERROR_STATUS  70  /* 1 B */
#define DXL2_ADDR_BUS_WATCHDOG     98  /* 1 B, unit 20 ms, 0 = off */
#define DXL2_ADDR_GOAL_CURRENT     102 /* 2 B signed, unit 2.69 mA */
#define DXL2_ADDR_GOAL_VELOCITY    104 /* 4 B signed, unit 0.229 rpm (velocity mode only) */
#define DXL2_ADDR_PROFILE_ACCEL    108 /* 4 B, 0 = no acceleration limit */
#define DXL2_ADDR_PROFILE_VELOCITY 112 /* 4 B, unit 0.229 rpm, 0 = no velocity limit */
#define DXL2_ADDR_GOAL_POSITION    116 /* 4 B */
#define DXL2_ADDR_PRESENT_CURRENT  126 /* 2 B signed, unit 2.69 mA */
#define DXL2_ADDR_PRESENT_VELOCITY 128 /* 4 B signed, unit 0.229 rpm */
#define DXL2_ADDR_PRESENT_POSITION 132 /* 4 B signed, 4096 per revolution */
/* the per-tick block: Present Current, Velocity, Position in one read of 10 bytes */
#define DXL2_STATE_ADDR 126
#define DXL2_STATE_LEN  10

#define DXL2_OPERATING_MODE_CURRENT          0
#define DXL2_OPERATING_MODE_CURRENT_POSITION 5 /* current-based position control (a tool) */
/* A tool servo's goal block, written whole (one Bulk Write block per tick that changes it):
 * Goal Current (102, 2 B signed: the current clamp), Goal Velocity (104, 4 B: 0), Profile
 * Acceleration (108, 4 B: 0), Profile Velocity (112, 4 B), Goal Position (116, 4 B signed). */
#define DXL2_TOOL_GOAL_ADDR       102
#define DXL2_TOOL_GOAL_LEN        18
#define DXL2_RETURN_DELAY_UNIT_US 2
#define DXL2_BUS_WATCHDOG_UNIT_MS 20

/* ------------------------------------------------------------------ units (X series) */
#define DXL2_CURRENT_UNIT_A    0.00269 /* Goal/Present Current LSB [A] */
#define DXL2_VELOCITY_UNIT_RPM 0.229   /* Present Velocity LSB [rev/min] */
#define DXL2_COUNTS_PER_REV    4096

/* ---------------------------------------------------------------------- model numbers */
#define DXL2_MODEL_XH430_W210 1000
#define DXL2_MODEL_XH430_W350 1010
#define DXL2_MODEL_XM430_W350 1020
#define DXL2_MODEL_XM430_W210 1030
#define DXL2_MODEL_XH540_W270 1100
#define DXL2_MODEL_XH540_W150 1110
#define DXL2_MODEL_XM540_W270 1120
#define DXL2_MODEL_XM540_W150 1130

/* Name of a model this driver can run in current control ("XM430-W350"), NULL if the model is
 * not one of them (e.g. XL430 / XC430 have no current control). */
const char *dxl2_model_name(uint16_t model);

/* ----------------------------------------------------------------------- results */
typedef enum {
    DXL2_OK = 0,
    DXL2_NEED_MORE = 1, /* framer: no complete packet yet */
    DXL2_ENOSPACE = -1, /* output buffer too small / too many parameters */
    DXL2_EARG = -2,     /* argument out of range (ID, length) */
    DXL2_EHEADER = -3,  /* not FF FF FD 00 */
    DXL2_ELENGTH = -4,  /* LEN field impossible or inconsistent with the bytes */
    DXL2_ECRC = -5,     /* CRC mismatch */
    DXL2_EFORMAT = -6   /* parameters do not fit the instruction (e.g. bad stuffing) */
} dxl2_result;

const char *dxl2_result_name(int r);

/* ------------------------------------------------------------- little-endian helpers */
static inline uint16_t dxl2_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t dxl2_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void dxl2_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void dxl2_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------------ CRC and stuffing */
/* CRC-16/BUYPASS (poly 0x8005, init 0, no reflection, no final XOR); pass crc = 0 to start,
 * or a previous result to continue. check("123456789") = 0xFEE8. */
uint16_t dxl2_crc16(uint16_t crc, const uint8_t *data, size_t len);
/* Copies in[0..n) to out inserting FD after every FF FF FD (the parameter area; the
 * instruction byte is never FF so the pattern cannot span it). Returns the stuffed length or
 * DXL2_ENOSPACE. */
int dxl2_stuff(const uint8_t *in, size_t n, uint8_t *out, size_t cap);
/* Removes the FD after every FF FF FD in place; returns the new length, or DXL2_EFORMAT when an
 * FF FF FD is not followed by FD. */
int dxl2_unstuff(uint8_t *buf, size_t n);

/* ------------------------------------------------------------------------- building */
/* Any packet: header, ID, LEN, INST, stuffed params, CRC. For status packets pass
 * inst = DXL2_INST_STATUS and the error byte as params[0] (or use dxl2_build_status). */
int dxl2_build_packet(uint8_t *buf, size_t cap, uint8_t id, uint8_t inst, const uint8_t *params,
                      size_t n_params);
/* Host side. */
int dxl2_build_ping(uint8_t *buf, size_t cap, uint8_t id);
int dxl2_build_read(uint8_t *buf, size_t cap, uint8_t id, uint16_t addr, uint16_t len);
int dxl2_build_write(uint8_t *buf, size_t cap, uint8_t id, uint16_t addr, const uint8_t *data,
                     size_t len);
int dxl2_build_reboot(uint8_t *buf, size_t cap, uint8_t id);
/* Sync Read (0x82) and Fast Sync Read (0x8A) to broadcast: addr, len, then the IDs. */
int dxl2_build_sync_read(uint8_t *buf, size_t cap, uint16_t addr, uint16_t len, const uint8_t *ids,
                         size_t n_ids);
int dxl2_build_fast_sync_read(uint8_t *buf, size_t cap, uint16_t addr, uint16_t len,
                              const uint8_t *ids, size_t n_ids);
/* Sync Write (0x83): data holds n_ids records of len bytes, in the order of ids. */
int dxl2_build_sync_write(uint8_t *buf, size_t cap, uint16_t addr, uint16_t len, const uint8_t *ids,
                          const uint8_t *data, size_t n_ids);
/* One ID's block of a Bulk Write: len bytes at addr (Protocol 2.0 lets each ID have its own). */
typedef struct {
    uint8_t id;
    uint16_t addr, len;
    const uint8_t *data;
} dxl2_bulk_block;
/* Bulk Write (0x93) to broadcast: per block ID, ADDR_L, ADDR_H, LEN_L, LEN_H, data (ROBOTIS
 * e-Manual, Protocol 2.0, Bulk Write); no servo answers it. Each ID at most once. */
int dxl2_build_bulk_write(uint8_t *buf, size_t cap, const dxl2_bulk_block *b, size_t n);
/* Servo side: a status packet (INST 0x55) with the error byte and n data bytes. */
int dxl2_build_status(uint8_t *buf, size_t cap, uint8_t id, uint8_t error, const uint8_t *data,
                      size_t n);

/* One servo's part of a Fast Sync Read reply. */
typedef struct {
    uint8_t id;
    uint8_t error;
    const uint8_t *data; /* len bytes */
} dxl2_fast_entry;
/* Servo side (all servos at once, as armsim plays them): the combined Fast Sync Read reply
 *   FF FF FD 00 FE LEN 55 | ERR1 ID1 DATA1 CRC1 | ERR2 ID2 DATA2 CRC2 | ... | ERRn IDn DATAn CRC
 * where CRCk (k < n) is the CRC-16 of the unstuffed packet from FF up to DATAk (each servo
 * continues the packet's CRC) and the last CRC is the packet CRC over the transmitted bytes. */
int dxl2_build_fast_sync_status(uint8_t *buf, size_t cap, const dxl2_fast_entry *e, size_t n,
                                uint16_t len);

/* --------------------------------------------------------------------------- parsing */
typedef struct {
    uint8_t id;
    uint8_t instruction;
    uint8_t error;         /* status packets: the error byte (0 otherwise) */
    uint16_t n_params;     /* unstuffed; for status packets the bytes after the error byte */
    const uint8_t *params; /* into the decoded buffer */
} dxl2_packet;

/* Validates one complete packet buf[0..len) (header at 0, len = exact packet length): header,
 * LEN, CRC; then unstuffs the parameters in place and fills *out. */
int dxl2_decode(uint8_t *buf, size_t len, dxl2_packet *out);

/* Host side: splits a decoded Fast Sync Read reply (ID 0xFE) of len-byte records into entries.
 * Returns the number of entries (<= max) or DXL2_ELENGTH when the size does not fit. */
int dxl2_parse_fast_sync_status(const dxl2_packet *p, uint16_t len, dxl2_fast_entry *out,
                                size_t max);

/* Servo side: the parameters of decoded instructions. Each returns DXL2_OK or DXL2_EFORMAT. */
typedef struct {
    uint16_t addr, len;
    const uint8_t *data; /* Write: len bytes of data; Read: NULL */
} dxl2_rw_request;
int dxl2_parse_read(const dxl2_packet *p, dxl2_rw_request *out);
int dxl2_parse_write(const dxl2_packet *p, dxl2_rw_request *out);

typedef struct {
    uint16_t addr, len;
    size_t n_ids;
    const uint8_t *ids;     /* Sync Read / Fast Sync Read: n_ids IDs */
    const uint8_t *records; /* Sync Write: n_ids records of [id, len data bytes] */
} dxl2_sync_request;
int dxl2_parse_sync_read(const dxl2_packet *p, dxl2_sync_request *out); /* 0x82 and 0x8A */
int dxl2_parse_sync_write(const dxl2_packet *p, dxl2_sync_request *out);
/* Servo side: the block for `id` in a decoded Bulk Write (0x93): DXL2_OK with *out filled,
 * DXL2_NEED_MORE when the packet has no block for id, DXL2_EFORMAT when the blocks do not tile
 * the parameters exactly (a block of length 0 or one running past the end). */
int dxl2_parse_bulk_write(const dxl2_packet *p, uint8_t id, dxl2_bulk_block *out);
/* The data record for `id` in a parsed Sync Write, NULL if the ID is not addressed. */
const uint8_t *dxl2_sync_write_data(const dxl2_sync_request *r, uint8_t id);
/* Position of `id` in a parsed Sync Read's ID list (the order servos answer in), -1 if absent */
int dxl2_sync_read_index(const dxl2_sync_request *r, uint8_t id);

/* ------------------------------------------------------------ incremental frame parser */
/* Finds packets in a byte stream: header search, LEN sanity, CRC, resynchronisation one byte
 * past a bad header after garbage or a corrupt packet. Usage:
 *     dxl2_framer_push(&f, bytes, n);            // returns bytes accepted (<= n)
 *     while ((r = dxl2_framer_next(&f, &pkt)) != DXL2_NEED_MORE) { if (r == DXL2_OK) ...; }
 * A packet returned by next() stays valid until the next push()/next()/reset(). */
typedef struct {
    uint8_t buf[DXL2_MAX_PACKET];
    size_t len;       /* bytes held */
    size_t consumed;  /* bytes of the packet last returned, dropped on the next call */
    uint64_t dropped; /* garbage bytes skipped while searching for a header */
    uint64_t bad_crc; /* candidate packets rejected for their CRC */
    uint64_t bad_len; /* candidate packets rejected for an impossible LEN or stuffing */
} dxl2_framer;

void dxl2_framer_reset(dxl2_framer *f); /* also initialises; counters are kept if zeroed */
size_t dxl2_framer_push(dxl2_framer *f, const uint8_t *data, size_t n);
/* DXL2_OK (packet in *out), DXL2_NEED_MORE, or DXL2_ECRC / DXL2_ELENGTH when a candidate packet
 * was rejected (already skipped; call again). */
int dxl2_framer_next(dxl2_framer *f, dxl2_packet *out);

#endif
