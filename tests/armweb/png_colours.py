"""png_colours.py — reads a PNG (as Chromium's screenshots are: 8 bits per channel, RGB or
RGBA, not interlaced) with zlib and counts its distinct colours, so that a test can tell a page
with plots and text from a blank one. PNG: ISO/IEC 15948 (W3C PNG specification), sections 5
(chunks), 9 (filters: None, Sub, Up, Average, Paeth) and 11.2.2 (IHDR). Standard library only.
"""
import itertools
import struct
import zlib


class PngError(Exception):
    pass


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(kind, raw, prev, bpp):
    """One scanline without its filter (section 9.2); prev is the previous line (unfiltered)."""
    n = len(raw)
    if kind == 0:
        return raw
    if kind == 2:
        return bytes((x + y) & 255 for x, y in zip(raw, prev))
    out = bytearray(raw)
    if kind == 1:  # Sub: a running sum per channel
        for c in range(bpp):
            out[c::bpp] = bytes(x & 255 for x in itertools.accumulate(raw[c::bpp]))
        return bytes(out)
    for i in range(n):
        a = out[i - bpp] if i >= bpp else 0
        if kind == 3:
            out[i] = (raw[i] + ((a + prev[i]) >> 1)) & 255
        elif kind == 4:
            c = prev[i - bpp] if i >= bpp else 0
            out[i] = (raw[i] + _paeth(a, prev[i], c)) & 255
        else:
            raise PngError("unknown filter type %d" % kind)
    return bytes(out)


def decode(data):
    """(width, height, bytes per pixel, [scanline bytes]) of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise PngError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + length:
                                                              pos + 12 + length])[0]:
            raise PngError("bad CRC in chunk %r" % kind)
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if ihdr is None:
        raise PngError("no IHDR")
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise PngError("only 8-bit RGB/RGBA, not interlaced (got depth %d, colour type %d, "
                       "interlace %d)" % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        raise PngError("image data of %d bytes, expected %d" % (len(raw), height * (stride + 1)))
    rows, prev = [], bytes(stride)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        prev = _unfilter(line[0], line[1:], prev, bpp)
        rows.append(prev)
    return width, height, bpp, rows


def distinct_colours(data):
    """How many different pixel values (RGB or RGBA) the PNG has."""
    _, _, bpp, rows = decode(data)
    seen = set()
    for row in rows:
        seen.update(row[i:i + bpp] for i in range(0, len(row), bpp))
    return len(seen)
