/*
 * armlink_codec.c — armlink frames and payloads, both directions. Specification:
 * drivers/README.md ("armlink protocol").
 */
#include "drivers/armlink_codec.h"

#include <string.h>

/* little-endian field helpers */
static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

const char *alk_result_name(int r)
{
    switch (r) {
    case ALK_OK:
        return "ok";
    case ALK_NEED_MORE:
        return "incomplete";
    case ALK_ENOSPACE:
        return "buffer too small";
    case ALK_EARG:
        return "argument out of range";
    case ALK_ESYNC:
        return "no sync byte";
    case ALK_ELENGTH:
        return "bad length";
    case ALK_ECRC:
        return "CRC mismatch";
    case ALK_EFORMAT:
        return "payload does not fit the command";
    default:
        return "unknown";
    }
}

const char *alk_nak_name(uint8_t code)
{
    switch (code) {
    case ALK_NAK_UNKNOWN_COMMAND:
        return "unknown command";
    case ALK_NAK_BAD_LENGTH:
        return "bad payload length";
    case ALK_NAK_BAD_CHANNELS:
        return "channel count mismatch";
    case ALK_NAK_BAD_VALUE:
        return "value out of range";
    case ALK_NAK_FAULT_ACTIVE:
        return "fault still active";
    case ALK_NAK_NOT_ENABLED:
        return "not enabled";
    default:
        return "unknown error";
    }
}

/* CRC-16/CCITT-FALSE, bitwise MSB-first: poly x^16 + x^12 + x^5 + 1 (0x1021). */
uint16_t alk_crc16(uint16_t crc, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(data[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

/* A5 LEN SEQ CMD payload CRC. */
int alk_encode(uint8_t *buf, size_t cap, uint8_t seq, uint8_t cmd, const uint8_t *payload,
               size_t len)
{
    if (len > ALK_MAX_PAYLOAD) return ALK_EARG;
    size_t total = ALK_HEADER_LEN + len + ALK_CRC_LEN;
    if (cap < total) return ALK_ENOSPACE;
    buf[0] = ALK_SYNC;
    put16(buf + 1, (uint16_t)len);
    buf[3] = seq;
    buf[4] = cmd;
    if (len) memmove(buf + ALK_HEADER_LEN, payload, len);
    put16(buf + total - 2, alk_crc16(ALK_CRC_INIT, buf, total - 2));
    return (int)total;
}

int alk_decode(const uint8_t *buf, size_t len, alk_frame *out)
{
    if (len < ALK_HEADER_LEN + ALK_CRC_LEN) return ALK_ELENGTH;
    if (buf[0] != ALK_SYNC) return ALK_ESYNC;
    size_t plen = get16(buf + 1);
    if (plen > ALK_MAX_PAYLOAD || ALK_HEADER_LEN + plen + ALK_CRC_LEN != len) return ALK_ELENGTH;
    if (get16(buf + len - 2) != alk_crc16(ALK_CRC_INIT, buf, len - 2)) return ALK_ECRC;
    out->seq = buf[3];
    out->cmd = buf[4];
    out->len = (uint16_t)plen;
    out->payload = buf + ALK_HEADER_LEN;
    return ALK_OK;
}

/* ------------------------------------------------------------------ host requests */
int alk_build_identify(uint8_t *buf, size_t cap, uint8_t seq)
{
    return alk_encode(buf, cap, seq, ALK_CMD_IDENTIFY, NULL, 0);
}
int alk_build_enable(uint8_t *buf, size_t cap, uint8_t seq)
{
    return alk_encode(buf, cap, seq, ALK_CMD_ENABLE, NULL, 0);
}
int alk_build_disable(uint8_t *buf, size_t cap, uint8_t seq)
{
    return alk_encode(buf, cap, seq, ALK_CMD_DISABLE, NULL, 0);
}
int alk_build_read_state(uint8_t *buf, size_t cap, uint8_t seq)
{
    return alk_encode(buf, cap, seq, ALK_CMD_READ_STATE, NULL, 0);
}

/* payload: n (u8), then n x current (i32, uA) */
int alk_build_write_torque(uint8_t *buf, size_t cap, uint8_t seq, const int32_t *current_ua, int n)
{
    uint8_t p[1 + 4 * ALK_MAX_CHANNELS];
    if (n < 1 || n > ALK_MAX_CHANNELS) return ALK_EARG;
    p[0] = (uint8_t)n;
    for (int i = 0; i < n; i++) put32(p + 1 + 4 * i, (uint32_t)current_ua[i]);
    return alk_encode(buf, cap, seq, ALK_CMD_WRITE_TORQUE, p, 1 + 4 * (size_t)n);
}

/* payload: timeout (u16, ms, 0 = off) */
int alk_build_set_watchdog(uint8_t *buf, size_t cap, uint8_t seq, uint16_t timeout_ms)
{
    uint8_t p[2];
    put16(p, timeout_ms);
    return alk_encode(buf, cap, seq, ALK_CMD_SET_WATCHDOG, p, sizeof p);
}

/* ------------------------------------------------------------------ host: replies */
#define HEAD_LEN 6

int alk_parse_reply_head(const alk_frame *f, alk_reply_head *out)
{
    if (!(f->cmd & ALK_REPLY) || f->len < HEAD_LEN) return ALK_EFORMAT;
    out->time_us = get32(f->payload);
    out->flags = get16(f->payload + 4);
    return ALK_OK;
}

/* payload: head, model u16, fw_major u8, fw_minor u8, n_channels u8, protocol u8, serial u32 */
int alk_parse_identity(const alk_frame *f, alk_reply_head *head, alk_identity *out)
{
    if (f->cmd != (ALK_CMD_IDENTIFY | ALK_REPLY) || f->len != HEAD_LEN + 10) return ALK_EFORMAT;
    alk_parse_reply_head(f, head);
    const uint8_t *p = f->payload + HEAD_LEN;
    out->model = get16(p);
    out->fw_major = p[2];
    out->fw_minor = p[3];
    out->n_channels = p[4];
    out->protocol = p[5];
    out->serial = get32(p + 6);
    return ALK_OK;
}

/* payload: head, n u8, n x {position i32, velocity i32, current i32} */
int alk_parse_state(const alk_frame *f, alk_state *out)
{
    if (f->cmd != (ALK_CMD_READ_STATE | ALK_REPLY) || f->len < HEAD_LEN + 1) return ALK_EFORMAT;
    int n = f->payload[HEAD_LEN];
    if (n > ALK_MAX_CHANNELS || f->len != HEAD_LEN + 1 + 12 * n) return ALK_EFORMAT;
    alk_parse_reply_head(f, &out->head);
    out->n = n;
    const uint8_t *p = f->payload + HEAD_LEN + 1;
    for (int i = 0; i < n; i++, p += 12) {
        out->ch[i].position = (int32_t)get32(p);
        out->ch[i].velocity = (int32_t)get32(p + 4);
        out->ch[i].current_ua = (int32_t)get32(p + 8);
    }
    return ALK_OK;
}

/* payload: head, code u8, rejected cmd u8 */
int alk_parse_nak(const alk_frame *f, alk_reply_head *head, uint8_t *code, uint8_t *cmd)
{
    if (f->cmd != ALK_NAK || f->len != HEAD_LEN + 2) return ALK_EFORMAT;
    alk_parse_reply_head(f, head);
    *code = f->payload[HEAD_LEN];
    *cmd = f->payload[HEAD_LEN + 1];
    return ALK_OK;
}

/* ------------------------------------------------------------------ board: requests */
int alk_parse_write_torque(const alk_frame *f, int32_t *current_ua, int max, int *n)
{
    if (f->cmd != ALK_CMD_WRITE_TORQUE || f->len < 1) return ALK_EFORMAT;
    int k = f->payload[0];
    if (k < 1 || k > max || f->len != 1 + 4 * k) return ALK_EFORMAT;
    for (int i = 0; i < k; i++) current_ua[i] = (int32_t)get32(f->payload + 1 + 4 * i);
    *n = k;
    return ALK_OK;
}

int alk_parse_set_watchdog(const alk_frame *f, uint16_t *timeout_ms)
{
    if (f->cmd != ALK_CMD_SET_WATCHDOG || f->len != 2) return ALK_EFORMAT;
    *timeout_ms = get16(f->payload);
    return ALK_OK;
}

/* ------------------------------------------------------------------ board: replies */
static void put_head(uint8_t *p, const alk_reply_head *h)
{
    put32(p, h->time_us);
    put16(p + 4, h->flags);
}

int alk_build_ack(uint8_t *buf, size_t cap, uint8_t seq, uint8_t cmd, const alk_reply_head *h)
{
    uint8_t p[HEAD_LEN];
    put_head(p, h);
    return alk_encode(buf, cap, seq, (uint8_t)(cmd | ALK_REPLY), p, sizeof p);
}

int alk_build_identity(uint8_t *buf, size_t cap, uint8_t seq, const alk_reply_head *h,
                       const alk_identity *id)
{
    uint8_t p[HEAD_LEN + 10];
    put_head(p, h);
    put16(p + HEAD_LEN, id->model);
    p[HEAD_LEN + 2] = id->fw_major;
    p[HEAD_LEN + 3] = id->fw_minor;
    p[HEAD_LEN + 4] = id->n_channels;
    p[HEAD_LEN + 5] = id->protocol;
    put32(p + HEAD_LEN + 6, id->serial);
    return alk_encode(buf, cap, seq, ALK_CMD_IDENTIFY | ALK_REPLY, p, sizeof p);
}

int alk_build_state(uint8_t *buf, size_t cap, uint8_t seq, const alk_state *s)
{
    uint8_t p[HEAD_LEN + 1 + 12 * ALK_MAX_CHANNELS];
    if (s->n < 0 || s->n > ALK_MAX_CHANNELS) return ALK_EARG;
    put_head(p, &s->head);
    p[HEAD_LEN] = (uint8_t)s->n;
    uint8_t *q = p + HEAD_LEN + 1;
    for (int i = 0; i < s->n; i++, q += 12) {
        put32(q, (uint32_t)s->ch[i].position);
        put32(q + 4, (uint32_t)s->ch[i].velocity);
        put32(q + 8, (uint32_t)s->ch[i].current_ua);
    }
    return alk_encode(buf, cap, seq, ALK_CMD_READ_STATE | ALK_REPLY, p,
                      HEAD_LEN + 1 + 12 * (size_t)s->n);
}

int alk_build_nak(uint8_t *buf, size_t cap, uint8_t seq, const alk_reply_head *h, uint8_t code,
                  uint8_t cmd)
{
    uint8_t p[HEAD_LEN + 2];
    put_head(p, h);
    p[HEAD_LEN] = code;
    p[HEAD_LEN + 1] = cmd;
    return alk_encode(buf, cap, seq, ALK_NAK, p, sizeof p);
}
