#!/usr/bin/env python3
"""Prints what a screenshot holds, as JSON: its size, the share of pixels that
are not white, and how many distinct colours it has (a blank or one-colour
page shows up as ink 0 or colours 1). Decodes 8-bit RGB/RGBA PNGs, which is
what Chromium writes, with the standard library alone.

    png_ink.py FILE.png
"""
import json
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = header[:4]
    assert depth == 8 and colour in (2, 6), f"unsupported PNG: depth {depth}, colour type {colour}"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main(path):
    width, height, bpp, rows = pixels(path)
    ink, colours = 0, set()
    for row in rows:
        for x in range(0, len(row), bpp):
            rgb = row[x:x + 3]
            colours.add(rgb)
            if rgb != b"\xff\xff\xff":
                ink += 1
    json.dump({"width": width, "height": height, "ink": ink / (width * height), "colours": len(colours)}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
