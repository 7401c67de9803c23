#!/usr/bin/env python3
"""Draws Warden's icons (no dependencies): the app icon and one tray icon per health state.

A shield with a check, cross or dash, in the state's colour. Run it after changing
the drawing; the PNGs are committed. `npx tauri icon icons/app-1024.png -o icons` then makes
the bundle's .ico/.icns/sizes from the big one.
"""
import math
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "icons"

COLOURS = {
    "app": (46, 125, 230),
    "healthy": (46, 160, 67),
    "degraded": (219, 145, 0),
    "down": (207, 34, 46),
    "idle": (120, 124, 130),
}
MARKS = {"app": "check", "healthy": "check", "degraded": "bang", "down": "cross", "idle": "dash"}


def png(path, size, pixels):
    raw = b"".join(b"\x00" + bytes(pixels[y * size * 4:(y + 1) * size * 4]) for y in range(size))
    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
    data += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    path.write_bytes(data)


def inside_shield(x, y):
    # x, y in 0..1; a shield: rounded top, pointed bottom.
    if y < 0.08 or y > 0.95:
        return False
    if y < 0.55:
        return 0.14 <= x <= 0.86
    half = 0.36 * math.cos((y - 0.55) / 0.40 * math.pi / 2)
    return abs(x - 0.5) <= half


def seg_dist(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def on_mark(mark, x, y):
    w = 0.075
    if mark == "check":
        return min(seg_dist(x, y, 0.32, 0.47, 0.45, 0.62), seg_dist(x, y, 0.45, 0.62, 0.70, 0.34)) < w
    if mark == "cross":
        return min(seg_dist(x, y, 0.34, 0.30, 0.66, 0.64), seg_dist(x, y, 0.66, 0.30, 0.34, 0.64)) < w
    if mark == "bang":
        return seg_dist(x, y, 0.5, 0.26, 0.5, 0.52) < w or math.hypot(x - 0.5, y - 0.66) < w
    return seg_dist(x, y, 0.33, 0.47, 0.67, 0.47) < w


def draw(name, size, ss=4):
    colour, mark = COLOURS[name], MARKS[name]
    pixels = bytearray(size * size * 4)
    for py in range(size):
        for px in range(size):
            cover = markc = 0
            for sy in range(ss):
                for sx in range(ss):
                    x = (px + (sx + 0.5) / ss) / size
                    y = (py + (sy + 0.5) / ss) / size
                    if inside_shield(x, y):
                        cover += 1
                        if on_mark(mark, x, y):
                            markc += 1
            n = ss * ss
            a = cover / n
            if a == 0:
                continue
            m = markc / max(cover, 1)
            rgb = [round(c * (1 - m) + 255 * m) for c in colour]
            i = (py * size + px) * 4
            pixels[i:i + 4] = bytes(rgb + [round(255 * a)])
    return pixels


def main():
    OUT.mkdir(exist_ok=True)
    for state in ("healthy", "degraded", "down", "idle"):
        png(OUT / f"tray-{state}.png", 64, draw(state, 64))
    png(OUT / "app-1024.png", 1024, draw("app", 1024, ss=1))
    for size, name in ((32, "32x32.png"), (128, "128x128.png"), (256, "128x128@2x.png"), (512, "icon.png")):
        png(OUT / name, size, draw("app", size, ss=2))
    ico(OUT / "icon.ico", [OUT / "32x32.png", OUT / "128x128.png", OUT / "128x128@2x.png"])
    print(f"icons written to {OUT}")


def ico(path, pngs):
    """The Windows icon (the .exe's resource, tauri-build's `icons/icon.ico`): the PNGs as
    they are, which an .ico may hold since Windows Vista."""
    blobs = [p.read_bytes() for p in pngs]
    head = struct.pack("<HHH", 0, 1, len(blobs))
    offset = len(head) + 16 * len(blobs)
    entries = b""
    for blob in blobs:
        width, height = struct.unpack(">II", blob[16:24])
        entries += struct.pack("<BBBBHHII", width % 256, height % 256, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
    path.write_bytes(head + entries + b"".join(blobs))


if __name__ == "__main__":
    main()
