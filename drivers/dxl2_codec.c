/*
 * dxl2_codec.c — Dynamixel Protocol 2.0 packet building and decoding (both directions).
 * Packet layout, CRC and stuffing rules: ROBOTIS e-Manual, "Protocol 2.0",
 * emanual.robotis.com/docs/en/dxl/protocol2/.
 */
#include "drivers/dxl2_codec.h"

#include <stdbool.h>
#include <string.h>

/* Name of a supported X-series model (current control, 2.69 mA current unit), else NULL. */
const char *dxl2_model_name(uint16_t model)
{
    switch (model) {
    case DXL2_MODEL_XH430_W210:
        return "XH430-W210";
    case DXL2_MODEL_XH430_W350:
        return "XH430-W350";
    case DXL2_MODEL_XM430_W350:
        return "XM430-W350";
    case DXL2_MODEL_XM430_W210:
        return "XM430-W210";
    case DXL2_MODEL_XH540_W270:
        return "XH540-W270";
    case DXL2_MODEL_XH540_W150:
        return "XH540-W150";
    case DXL2_MODEL_XM540_W270:
        return "XM540-W270";
    case DXL2_MODEL_XM540_W150:
        return "XM540-W150";
    default:
        return NULL;
    }
}

/* Short name of a dxl2_result. */
const char *dxl2_result_name(int r)
{
    switch (r) {
    case DXL2_OK:
        return "ok";
    case DXL2_NEED_MORE:
        return "incomplete";
    case DXL2_ENOSPACE:
        return "buffer too small";
    case DXL2_EARG:
        return "argument out of range";
    case DXL2_EHEADER:
        return "bad header";
    case DXL2_ELENGTH:
        return "bad length";
    case DXL2_ECRC:
        return "CRC mismatch";
    case DXL2_EFORMAT:
        return "malformed parameters";
    default:
        return "unknown";
    }
}

/* CRC-16/BUYPASS, bitwise MSB-first: poly x^16 + x^15 + x^2 + 1 (0x8005), init 0, no
 * reflection, no final XOR — the e-Manual's update_crc() computes the same values by table. */
uint16_t dxl2_crc16(uint16_t crc, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(data[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x8005) : (uint16_t)(crc << 1);
    }
    return crc;
}

/* Byte stuffing: FF FF FD -> FF FF FD FD. */
int dxl2_stuff(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o >= cap) return DXL2_ENOSPACE;
        out[o++] = in[i];
        if (in[i] == 0xFD && i >= 2 && in[i - 1] == 0xFF && in[i - 2] == 0xFF) {
            if (o >= cap) return DXL2_ENOSPACE;
            out[o++] = 0xFD;
        }
    }
    return (int)o;
}

/* Byte unstuffing in place: FF FF FD FD -> FF FF FD; an FF FF FD followed by anything else
 * (or by nothing) is malformed. */
int dxl2_unstuff(uint8_t *buf, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        buf[o++] = buf[i];
        if (buf[i] == 0xFD && o >= 3 && buf[o - 2] == 0xFF && buf[o - 3] == 0xFF) {
            if (i + 1 >= n || buf[i + 1] != 0xFD) return DXL2_EFORMAT;
            i++; /* skip the stuffing byte */
        }
    }
    return (int)o;
}

/* Header, ID, LEN, INST, stuffed params, CRC over everything before the CRC. */
int dxl2_build_packet(uint8_t *buf, size_t cap, uint8_t id, uint8_t inst, const uint8_t *params,
                      size_t n_params)
{
    if (id > DXL2_BROADCAST_ID) return DXL2_EARG;
    if (cap < DXL2_HEADER_LEN + 3 || n_params > DXL2_MAX_PACKET) return DXL2_ENOSPACE;
    int stuffed =
        dxl2_stuff(params, n_params, buf + DXL2_HEADER_LEN + 1, cap - (DXL2_HEADER_LEN + 1) - 2);
    if (stuffed < 0) return stuffed;
    size_t total = DXL2_HEADER_LEN + 1 + (size_t)stuffed + 2;
    if (total > DXL2_MAX_PACKET) return DXL2_ENOSPACE;
    buf[0] = 0xFF;
    buf[1] = 0xFF;
    buf[2] = 0xFD;
    buf[3] = 0x00;
    buf[4] = id;
    dxl2_put_u16(buf + 5, (uint16_t)(stuffed + 3));
    buf[7] = inst;
    dxl2_put_u16(buf + total - 2, dxl2_crc16(0, buf, total - 2));
    return (int)total;
}

/* Ping: no parameters. */
int dxl2_build_ping(uint8_t *buf, size_t cap, uint8_t id)
{
    return dxl2_build_packet(buf, cap, id, DXL2_INST_PING, NULL, 0);
}

/* Read: addr(2) len(2). */
int dxl2_build_read(uint8_t *buf, size_t cap, uint8_t id, uint16_t addr, uint16_t len)
{
    uint8_t p[4];
    dxl2_put_u16(p, addr);
    dxl2_put_u16(p + 2, len);
    return dxl2_build_packet(buf, cap, id, DXL2_INST_READ, p, sizeof p);
}

/* Write: addr(2) data(len). */
int dxl2_build_write(uint8_t *buf, size_t cap, uint8_t id, uint16_t addr, const uint8_t *data,
                     size_t len)
{
    uint8_t p[DXL2_MAX_PACKET];
    if (len + 2 > sizeof p) return DXL2_ENOSPACE;
    dxl2_put_u16(p, addr);
    if (len) memcpy(p + 2, data, len);
    return dxl2_build_packet(buf, cap, id, DXL2_INST_WRITE, p, len + 2);
}

/* Reboot: no parameters. */
int dxl2_build_reboot(uint8_t *buf, size_t cap, uint8_t id)
{
    return dxl2_build_packet(buf, cap, id, DXL2_INST_REBOOT, NULL, 0);
}

/* Sync Read / Fast Sync Read body: addr(2) len(2) id1 id2 ... to broadcast. */
static int build_sync_read(uint8_t *buf, size_t cap, uint8_t inst, uint16_t addr, uint16_t len,
                           const uint8_t *ids, size_t n_ids)
{
    uint8_t p[4 + DXL2_MAX_ID + 1];
    if (n_ids == 0 || n_ids > DXL2_MAX_ID + 1) return DXL2_EARG;
    dxl2_put_u16(p, addr);
    dxl2_put_u16(p + 2, len);
    for (size_t i = 0; i < n_ids; i++) {
        if (ids[i] > DXL2_MAX_ID) return DXL2_EARG;
        p[4 + i] = ids[i];
    }
    return dxl2_build_packet(buf, cap, DXL2_BROADCAST_ID, inst, p, 4 + n_ids);
}

int dxl2_build_sync_read(uint8_t *buf, size_t cap, uint16_t addr, uint16_t len, const uint8_t *ids,
                         size_t n_ids)
{
    return build_sync_read(buf, cap, DXL2_INST_SYNC_READ, addr, len, ids, n_ids);
}

int dxl2_build_fast_sync_read(uint8_t *buf, size_t cap, uint16_t addr, uint16_t len,
                              const uint8_t *ids, size_t n_ids)
{
    return build_sync_read(buf, cap, DXL2_INST_FAST_SYNC_READ, addr, len, ids, n_ids);
}

/* Sync Write: addr(2) len(2) then [id, data x len] per servo, to broadcast. */
int dxl2_build_sync_write(uint8_t *buf, size_t cap, uint16_t addr, uint16_t len, const uint8_t *ids,
                          const uint8_t *data, size_t n_ids)
{
    uint8_t p[DXL2_MAX_PACKET];
    if (n_ids == 0 || n_ids > DXL2_MAX_ID + 1) return DXL2_EARG;
    if (4 + n_ids * (1 + (size_t)len) > sizeof p) return DXL2_ENOSPACE;
    dxl2_put_u16(p, addr);
    dxl2_put_u16(p + 2, len);
    size_t o = 4;
    for (size_t i = 0; i < n_ids; i++) {
        if (ids[i] > DXL2_MAX_ID) return DXL2_EARG;
        p[o++] = ids[i];
        if (len) memcpy(p + o, data + i * len, len);
        o += len;
    }
    return dxl2_build_packet(buf, cap, DXL2_BROADCAST_ID, DXL2_INST_SYNC_WRITE, p, o);
}

/* Bulk Write: per block ID, address, length, data (all little-endian), to broadcast. */
int dxl2_build_bulk_write(uint8_t *buf, size_t cap, const dxl2_bulk_block *b, size_t n)
{
    uint8_t p[DXL2_MAX_PACKET];
    if (n == 0 || n > DXL2_MAX_ID + 1) return DXL2_EARG;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i].id > DXL2_MAX_ID || b[i].len == 0) return DXL2_EARG;
        for (size_t k = 0; k < i; k++)
            if (b[k].id == b[i].id) return DXL2_EARG;
        if (o + 5 + (size_t)b[i].len > sizeof p) return DXL2_ENOSPACE;
        p[o] = b[i].id;
        dxl2_put_u16(p + o + 1, b[i].addr);
        dxl2_put_u16(p + o + 3, b[i].len);
        memcpy(p + o + 5, b[i].data, b[i].len);
        o += 5 + (size_t)b[i].len;
    }
    return dxl2_build_packet(buf, cap, DXL2_BROADCAST_ID, DXL2_INST_BULK_WRITE, p, o);
}

/* Status: INST 0x55, ERR, data. */
int dxl2_build_status(uint8_t *buf, size_t cap, uint8_t id, uint8_t error, const uint8_t *data,
                      size_t n)
{
    uint8_t p[DXL2_MAX_PACKET];
    if (n + 1 > sizeof p) return DXL2_ENOSPACE;
    p[0] = error;
    if (n) memcpy(p + 1, data, n);
    return dxl2_build_packet(buf, cap, id, DXL2_INST_STATUS, p, n + 1);
}

/* Combined Fast Sync Read reply (see the header for the layout and the per-servo CRCs). */
int dxl2_build_fast_sync_status(uint8_t *buf, size_t cap, const dxl2_fast_entry *e, size_t n,
                                uint16_t len)
{
    uint8_t raw[DXL2_MAX_PACKET]; /* the unstuffed packet, to compute the running CRCs */
    if (n == 0 || n > DXL2_MAX_ID + 1) return DXL2_EARG;
    size_t body = n * ((size_t)len + 4) - 2; /* params without the packet CRC */
    if (DXL2_HEADER_LEN + 1 + body + 2 > sizeof raw) return DXL2_ENOSPACE;
    static const uint8_t head[DXL2_HEADER_LEN + 1] = {
        0xFF, 0xFF, 0xFD, 0x00, DXL2_BROADCAST_ID, 0, 0, DXL2_INST_STATUS};
    memcpy(raw, head, sizeof head);
    dxl2_put_u16(raw + 5, (uint16_t)(body + 3)); /* before stuffing; only for the running CRC */
    size_t o = sizeof head;
    for (size_t k = 0; k < n; k++) {
        raw[o++] = e[k].error;
        raw[o++] = e[k].id;
        if (len) memcpy(raw + o, e[k].data, len);
        o += len;
        if (k + 1 < n) {
            dxl2_put_u16(raw + o, dxl2_crc16(0, raw, o));
            o += 2;
        }
    }
    return dxl2_build_packet(buf, cap, DXL2_BROADCAST_ID, DXL2_INST_STATUS, raw + sizeof head,
                             body);
}

/* Header, LEN, CRC over the transmitted bytes, then unstuff the parameters in place. */
int dxl2_decode(uint8_t *buf, size_t len, dxl2_packet *out)
{
    if (len < DXL2_HEADER_LEN + 3) return DXL2_ELENGTH;
    if (buf[0] != 0xFF || buf[1] != 0xFF || buf[2] != 0xFD || buf[3] != 0x00) return DXL2_EHEADER;
    uint16_t plen = dxl2_get_u16(buf + 5);
    if (plen < 3 || (size_t)plen + DXL2_HEADER_LEN != len) return DXL2_ELENGTH;
    if (dxl2_get_u16(buf + len - 2) != dxl2_crc16(0, buf, len - 2)) return DXL2_ECRC;
    int n = dxl2_unstuff(buf + DXL2_HEADER_LEN + 1, plen - 3);
    if (n < 0) return DXL2_EFORMAT;
    out->id = buf[4];
    out->instruction = buf[7];
    out->error = 0;
    out->params = buf + DXL2_HEADER_LEN + 1;
    out->n_params = (uint16_t)n;
    if (out->instruction == DXL2_INST_STATUS) {
        if (n < 1) return DXL2_ELENGTH;
        out->error = out->params[0];
        out->params++;
        out->n_params--;
    }
    return DXL2_OK;
}

/* Fast Sync Read reply after dxl2_decode: error = ERR1, params = ID1 DATA1 CRC1 ERR2 ID2 ...
 * IDn DATAn, i.e. n * (len + 4) - 3 bytes. */
int dxl2_parse_fast_sync_status(const dxl2_packet *p, uint16_t len, dxl2_fast_entry *out,
                                size_t max)
{
    size_t rec = (size_t)len + 4;
    if (p->instruction != DXL2_INST_STATUS || p->id != DXL2_BROADCAST_ID) return DXL2_EFORMAT;
    if (((size_t)p->n_params + 3) % rec != 0) return DXL2_ELENGTH;
    size_t n = ((size_t)p->n_params + 3) / rec;
    if (n == 0 || n > max) return DXL2_ELENGTH;
    const uint8_t *q = p->params;
    for (size_t k = 0; k < n; k++) {
        out[k].error = k == 0 ? p->error : q[-1];
        out[k].id = q[0];
        out[k].data = q + 1;
        q += rec; /* ID, data, CRC, next ERR -> next ID */
    }
    return (int)n;
}

/* Read: addr(2) len(2). */
int dxl2_parse_read(const dxl2_packet *p, dxl2_rw_request *out)
{
    if (p->instruction != DXL2_INST_READ || p->n_params != 4) return DXL2_EFORMAT;
    out->addr = dxl2_get_u16(p->params);
    out->len = dxl2_get_u16(p->params + 2);
    out->data = NULL;
    return DXL2_OK;
}

/* Write: addr(2) data(n_params - 2). */
int dxl2_parse_write(const dxl2_packet *p, dxl2_rw_request *out)
{
    if (p->instruction != DXL2_INST_WRITE || p->n_params < 3) return DXL2_EFORMAT;
    out->addr = dxl2_get_u16(p->params);
    out->len = (uint16_t)(p->n_params - 2);
    out->data = p->params + 2;
    return DXL2_OK;
}

/* Sync Read / Fast Sync Read: addr(2) len(2) ids... */
int dxl2_parse_sync_read(const dxl2_packet *p, dxl2_sync_request *out)
{
    if (p->instruction != DXL2_INST_SYNC_READ && p->instruction != DXL2_INST_FAST_SYNC_READ)
        return DXL2_EFORMAT;
    if (p->n_params < 5) return DXL2_EFORMAT;
    out->addr = dxl2_get_u16(p->params);
    out->len = dxl2_get_u16(p->params + 2);
    out->n_ids = p->n_params - 4u;
    out->ids = p->params + 4;
    out->records = NULL;
    return DXL2_OK;
}

/* Sync Write: addr(2) len(2) then records of (1 + len) bytes. */
int dxl2_parse_sync_write(const dxl2_packet *p, dxl2_sync_request *out)
{
    if (p->instruction != DXL2_INST_SYNC_WRITE || p->n_params < 4) return DXL2_EFORMAT;
    out->addr = dxl2_get_u16(p->params);
    out->len = dxl2_get_u16(p->params + 2);
    size_t rec = (size_t)out->len + 1;
    size_t body = p->n_params - 4u;
    if (out->len == 0 || body == 0 || body % rec != 0) return DXL2_EFORMAT;
    out->n_ids = body / rec;
    out->records = p->params + 4;
    out->ids = NULL;
    return DXL2_OK;
}

int dxl2_parse_bulk_write(const dxl2_packet *p, uint8_t id, dxl2_bulk_block *out)
{
    if (p->instruction != DXL2_INST_BULK_WRITE || p->n_params < 6) return DXL2_EFORMAT;
    size_t o = 0;
    bool found = false;
    while (o < p->n_params) {
        if (p->n_params - o < 6) return DXL2_EFORMAT;
        uint16_t len = dxl2_get_u16(p->params + o + 3);
        if (len == 0 || p->n_params - o - 5 < len) return DXL2_EFORMAT;
        if (p->params[o] == id && !found) {
            out->id = id;
            out->addr = dxl2_get_u16(p->params + o + 1);
            out->len = len;
            out->data = p->params + o + 5;
            found = true;
        }
        o += 5 + (size_t)len;
    }
    return found ? DXL2_OK : DXL2_NEED_MORE;
}

const uint8_t *dxl2_sync_write_data(const dxl2_sync_request *r, uint8_t id)
{
    size_t rec = (size_t)r->len + 1;
    for (size_t i = 0; i < r->n_ids; i++)
        if (r->records[i * rec] == id) return r->records + i * rec + 1;
    return NULL;
}

int dxl2_sync_read_index(const dxl2_sync_request *r, uint8_t id)
{
    for (size_t i = 0; i < r->n_ids; i++)
        if (r->ids[i] == id) return (int)i;
    return -1;
}
