/*
 * armlink_codec.h — armd's own protocol for custom motor boards (one microcontroller per arm,
 * all joints), both directions. The normative specification is drivers/README.md ("armlink").
 *
 * Frame:  A5 | LEN_L LEN_H | SEQ | CMD | payload (LEN bytes) | CRC_L CRC_H
 *   CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR;
 *   check("123456789") = 0x29B1) over every byte before the CRC, sync byte included.
 *   All multi-byte fields little-endian. Replies echo SEQ; reply CMD = request CMD | 0x80;
 *   NAK = 0xFF. Every reply payload starts with the device timestamp (u32 us) and flags (u16).
 *
 * Units on the wire: position = motor shaft encoder counts (i32, multi-turn), velocity =
 * milli-rpm of the motor shaft (i32), current = microamperes (i32).
 *
 * Nothing here allocates. Builders return bytes written (> 0) or a negative alk_result.
 */
#ifndef ARMD_ARMLINK_CODEC_H
#define ARMD_ARMLINK_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALK_SYNC             0xA5
#define ALK_HEADER_LEN       5 /* sync, len(2), seq, cmd */
#define ALK_CRC_LEN          2
#define ALK_MAX_CHANNELS     64
#define ALK_MAX_PAYLOAD      1024
#define ALK_MAX_FRAME        (ALK_HEADER_LEN + ALK_MAX_PAYLOAD + ALK_CRC_LEN)
#define ALK_PROTOCOL_VERSION 1
#define ALK_STALE_WINDOW     16 /* a reply up to this many sequence numbers behind is late: ignored */

/* commands (host -> board); the reply carries cmd | ALK_REPLY */
#define ALK_CMD_IDENTIFY     0x01
#define ALK_CMD_ENABLE       0x02
#define ALK_CMD_DISABLE      0x03
#define ALK_CMD_READ_STATE   0x04
#define ALK_CMD_WRITE_TORQUE 0x05
#define ALK_CMD_SET_WATCHDOG 0x06
#define ALK_REPLY            0x80
#define ALK_NAK              0xFF

/* status flags (u16) in every reply */
#define ALK_FLAG_ENABLED          0x0001 /* motors energised */
#define ALK_FLAG_FAULT            0x0002 /* a latched fault holds the motors off */
#define ALK_FLAG_WATCHDOG_EXPIRED 0x0004 /* latched: the watchdog stopped the motors */
#define ALK_FLAG_OVER_TEMPERATURE 0x0008
#define ALK_FLAG_OVER_CURRENT     0x0010
#define ALK_FLAG_UNDER_VOLTAGE    0x0020
#define ALK_FLAG_OVER_VOLTAGE     0x0040
#define ALK_FLAG_ENCODER_ERROR    0x0080
#define ALK_FLAG_CURRENT_CLAMPED  0x0100 /* last torque command exceeded a channel limit */
/* flags that are hardware faults (surfaced as DRV_EALERT) */
#define ALK_FLAGS_ALERT                                                                            \
    (ALK_FLAG_FAULT | ALK_FLAG_OVER_TEMPERATURE | ALK_FLAG_OVER_CURRENT | ALK_FLAG_UNDER_VOLTAGE | \
     ALK_FLAG_OVER_VOLTAGE | ALK_FLAG_ENCODER_ERROR)

/* NAK error codes */
#define ALK_NAK_UNKNOWN_COMMAND 1
#define ALK_NAK_BAD_LENGTH      2 /* payload size wrong for the command */
#define ALK_NAK_BAD_CHANNELS    3 /* channel count differs from the board's */
#define ALK_NAK_BAD_VALUE       4 /* parameter out of range */
#define ALK_NAK_FAULT_ACTIVE    5 /* ENABLE refused: a fault condition persists */
#define ALK_NAK_NOT_ENABLED     6 /* (informative) torque written while disabled: ignored */

typedef enum {
    ALK_OK = 0,
    ALK_NEED_MORE = 1,
    ALK_ENOSPACE = -1,
    ALK_EARG = -2,
    ALK_ESYNC = -3,
    ALK_ELENGTH = -4,
    ALK_ECRC = -5,
    ALK_EFORMAT = -6 /* payload does not fit the command */
} alk_result;

const char *alk_result_name(int r);
const char *alk_nak_name(uint8_t code);

/* CRC-16/CCITT-FALSE; start with crc = 0xFFFF. check("123456789") = 0x29B1. */
#define ALK_CRC_INIT 0xFFFF
uint16_t alk_crc16(uint16_t crc, const uint8_t *data, size_t len);

/* -------------------------------------------------------------------------- frames */
typedef struct {
    uint8_t seq, cmd;
    uint16_t len;
    const uint8_t *payload; /* into the decoded buffer */
} alk_frame;

int alk_encode(uint8_t *buf, size_t cap, uint8_t seq, uint8_t cmd, const uint8_t *payload,
               size_t len);
/* Validates one complete frame buf[0..len) (sync at 0, exact length). */
int alk_decode(const uint8_t *buf, size_t len, alk_frame *out);

/* ------------------------------------------------------------------------- payloads */
typedef struct {
    uint32_t time_us; /* device clock, wraps at 2^32 us */
    uint16_t flags;
} alk_reply_head;

typedef struct {
    uint16_t model;
    uint8_t fw_major, fw_minor;
    uint8_t n_channels;
    uint8_t protocol; /* ALK_PROTOCOL_VERSION */
    uint32_t serial;
} alk_identity;

typedef struct {
    int32_t position;   /* motor shaft encoder counts */
    int32_t velocity;   /* motor shaft milli-rpm */
    int32_t current_ua; /* motor current, microamperes */
} alk_channel_state;

typedef struct {
    alk_reply_head head;
    int n;
    alk_channel_state ch[ALK_MAX_CHANNELS];
} alk_state;

/* Host side: requests. */
int alk_build_identify(uint8_t *buf, size_t cap, uint8_t seq);
int alk_build_enable(uint8_t *buf, size_t cap, uint8_t seq);
int alk_build_disable(uint8_t *buf, size_t cap, uint8_t seq);
int alk_build_read_state(uint8_t *buf, size_t cap, uint8_t seq);
int alk_build_write_torque(uint8_t *buf, size_t cap, uint8_t seq, const int32_t *current_ua, int n);
int alk_build_set_watchdog(uint8_t *buf, size_t cap, uint8_t seq, uint16_t timeout_ms);

/* Host side: replies. Each checks the reply command and payload size (ALK_EFORMAT else). */
int alk_parse_reply_head(const alk_frame *f, alk_reply_head *out); /* any reply incl. NAK */
int alk_parse_identity(const alk_frame *f, alk_reply_head *head, alk_identity *out);
int alk_parse_state(const alk_frame *f, alk_state *out);
int alk_parse_nak(const alk_frame *f, alk_reply_head *head, uint8_t *code, uint8_t *cmd);

/* Board side: requests. */
int alk_parse_write_torque(const alk_frame *f, int32_t *current_ua, int max, int *n);
int alk_parse_set_watchdog(const alk_frame *f, uint16_t *timeout_ms);

/* Board side: replies. alk_build_ack answers ENABLE / DISABLE / WRITE_TORQUE / SET_WATCHDOG
 * (payload = head only). */
int alk_build_ack(uint8_t *buf, size_t cap, uint8_t seq, uint8_t cmd, const alk_reply_head *h);
int alk_build_identity(uint8_t *buf, size_t cap, uint8_t seq, const alk_reply_head *h,
                       const alk_identity *id);
int alk_build_state(uint8_t *buf, size_t cap, uint8_t seq, const alk_state *s);
int alk_build_nak(uint8_t *buf, size_t cap, uint8_t seq, const alk_reply_head *h, uint8_t code,
                  uint8_t cmd);

/* ------------------------------------------------------------ incremental frame parser */
/* Same contract as dxl2_framer: push bytes, call next() until ALK_NEED_MORE; a frame returned
 * stays valid until the next push()/next()/reset(). Resynchronises one byte past a sync byte
 * whose frame has an impossible length or a bad CRC. */
typedef struct {
    uint8_t buf[ALK_MAX_FRAME];
    size_t len, consumed;
    uint64_t dropped, bad_crc, bad_len;
} alk_framer;

void alk_framer_reset(alk_framer *f);
size_t alk_framer_push(alk_framer *f, const uint8_t *data, size_t n);
int alk_framer_next(alk_framer *f,
                    alk_frame *out); /* ALK_OK, ALK_NEED_MORE, ALK_ECRC, ALK_ELENGTH */

#endif
