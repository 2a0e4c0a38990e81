"""image_ref.py DIR — the test images of tests/lua/test_image.lua and Pillow's reading of them.

Writes into DIR image files (PNG through Pillow and through a small writer here, for the
kinds Pillow cannot write: 16-bit RGB, low bit depths, Adam7 interlacing; JPEG through
Pillow), and for each NAME.EXT the pixels Pillow decodes as NAME.npy ([C, H, W], so the
Lua test reads them with torch.load_npy), plus the damaged files of the error tests.
Run by /usr/bin/python3 (Debian's python3-pil and python3-numpy).
"""
import io
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image

out = sys.argv[1]
rng = np.random.default_rng(7)


def path(name):
    return os.path.join(out, name)


def chw(a):
    a = np.asarray(a)
    if a.ndim == 2:
        a = a[None]
    else:
        a = a.transpose(2, 0, 1)
    return np.ascontiguousarray(a)


def ref(name, img_or_array):
    """NAME.npy: pixels as [C, H, W]; Pillow images are converted with np.asarray"""
    a = chw(img_or_array)
    if a.dtype == np.uint16:
        a = a.astype(np.int32)
    np.save(path(name + ".npy"), a)


def pil_ref(name, ext, mode=None):
    """NAME.npy from Pillow's reading of NAME.EXT (converted to mode when given)"""
    im = Image.open(path(name + "." + ext))
    im.load()
    if mode:
        im = im.convert(mode)
    ref(name if mode is None else name + "_" + mode, im)


# ---- a PNG writer for what Pillow does not write ----
def chunk(kind, data):
    c = struct.pack(">I", len(data)) + kind + data
    return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def pack_rows(a, depth, channels):
    """a: [H, W, C] integers -> the raw scanlines (without filter bytes), one bytes per row"""
    h, w = a.shape[0], a.shape[1]
    rows = []
    for y in range(h):
        if depth == 16:
            rows.append(a[y].astype(">u2").tobytes())
        elif depth == 8:
            rows.append(a[y].astype(np.uint8).tobytes())
        else:
            vals = a[y].reshape(-1)
            per = 8 // depth
            b = bytearray((len(vals) * depth + 7) // 8)
            for i, v in enumerate(vals):
                b[i // per] |= int(v) << (8 - depth * (i % per + 1))
            rows.append(bytes(b))
    return rows


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(name, a, depth, color, interlace=False, plte=None, trns=None):
    """a: [H, W, C] (or [H, W]) samples; color: PNG colour type"""
    a = np.asarray(a)
    if a.ndim == 2:
        a = a[:, :, None]
    h, w, c = a.shape
    raw = b""
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            sub = a[y0::dy, x0::dx]
            if sub.shape[0] == 0 or sub.shape[1] == 0:
                continue
            raw += b"".join(b"\0" + r for r in pack_rows(sub, depth, c))
    else:
        raw = b"".join(b"\0" + r for r in pack_rows(a, depth, c))
    data = b"\x89PNG\r\n\x1a\n"
    data += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, 1 if interlace else 0))
    if plte is not None:
        data += chunk(b"PLTE", bytes(np.asarray(plte, np.uint8).reshape(-1)))
    if trns is not None:
        data += chunk(b"tRNS", trns)
    data += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path(name + ".png"), "wb") as f:
        f.write(data)
    return data


def randimg(h, w, c=None, hi=256, dtype=np.uint8):
    shape = (h, w) if c is None else (h, w, c)
    return rng.integers(0, hi, size=shape).astype(dtype)


# ---- PNG through Pillow: 8-bit RGB, RGBA, gray, gray + alpha, palette (with transparency) ----
rgb = randimg(23, 37, 3)
Image.fromarray(rgb, "RGB").save(path("rgb8.png"))
pil_ref("rgb8", "png")
for mode in ("L", "RGBA"):
    pil_ref("rgb8", "png", mode)
rgba = randimg(19, 29, 4)
Image.fromarray(rgba, "RGBA").save(path("rgba8.png"))
pil_ref("rgba8", "png")
pil_ref("rgba8", "png", "RGB")
pil_ref("rgba8", "png", "L")
gray = randimg(31, 17)
Image.fromarray(gray, "L").save(path("gray8.png"))
pil_ref("gray8", "png")
pil_ref("gray8", "png", "RGB")
pil_ref("gray8", "png", "RGBA")
la = randimg(13, 11, 2)
Image.fromarray(la, "LA").save(path("la8.png"))
pil_ref("la8", "png", "LA")
pil_ref("la8", "png", "RGBA")
pal = Image.fromarray(randimg(21, 26, hi=16), "P")
pal.putpalette(list(randimg(16, 3).reshape(-1)))
pal.save(path("palette.png"))
pil_ref("palette", "png", "RGB")
pal.save(path("palette_trns.png"), transparency=bytes([0, 128, 255, 7] + [255] * 12))
pil_ref("palette_trns", "png", "RGBA")

# ---- PNG through the writer: 16-bit gray / RGB / RGBA, 1-, 2- and 4-bit gray, interlaced ----
g16 = randimg(9, 14, hi=65536, dtype=np.uint16)
write_png("gray16", g16, 16, 0)
ref("gray16_raw", g16)
pil_ref("gray16", "png")        # Pillow: mode I;16, the full values
rgb16 = randimg(7, 12, 3, hi=65536, dtype=np.uint16)
write_png("rgb16", rgb16, 16, 2)
ref("rgb16_raw", rgb16)
pil_ref("rgb16", "png")         # Pillow: 8-bit RGB (the high bytes)
rgba16 = randimg(6, 5, 4, hi=65536, dtype=np.uint16)
write_png("rgba16", rgba16, 16, 6)
ref("rgba16_raw", rgba16)
for depth in (1, 2, 4):
    g = randimg(10, 13, hi=1 << depth)
    write_png("gray%d" % depth, g, depth, 0)
    pil_ref("gray%d" % depth, "png", "L")
write_png("interlaced", rgb[:, :, :], 8, 2, interlace=True)
pil_ref("interlaced", "png")
write_png("interlaced16", rgba16, 16, 6, interlace=True)
ref("interlaced16_raw", rgba16)
# an RGB image whose tRNS chunk makes one colour transparent
trns_rgb = randimg(8, 8, 3, hi=4) * 60
write_png("rgb_trns", trns_rgb, 8, 2, trns=struct.pack(">HHH", 0, 60, 120))
pil_ref("rgb_trns", "png", "RGBA")

# ---- JPEG through Pillow ----
# a smooth picture (random pixels are the worst case for JPEG, and not what it is for)
yy, xx = np.mgrid[0:40, 0:56]
smooth = np.stack([(xx * 4) % 256, (yy * 6) % 256, ((xx + yy) * 3) % 256], -1).astype(np.uint8)
np.save(path("smooth.npy"), chw(smooth))
Image.fromarray(smooth, "RGB").save(path("rgb.jpg"), quality=90)
pil_ref("rgb", "jpg")
pil_ref("rgb", "jpg", "L")
Image.fromarray(smooth[:, :, 0], "L").save(path("gray.jpg"), quality=90)
pil_ref("gray", "jpg")
Image.fromarray(smooth, "RGB").save(path("progressive.jpg"), quality=80, progressive=True)
pil_ref("progressive", "jpg")
Image.fromarray(smooth, "RGB").save(path("cmyk.jpg"), quality=90)
Image.fromarray(smooth, "RGB").convert("CMYK").save(path("cmyk.jpg"), quality=90)

# ---- damaged files ----
good = open(path("rgb8.png"), "rb").read()
open(path("truncated.png"), "wb").write(good[: len(good) // 2])
bad = bytearray(good)
bad[20] ^= 0xFF        # inside IHDR's data: the CRC no longer matches
open(path("corrupt_header.png"), "wb").write(bytes(bad))
bad = bytearray(good)
idat = good.index(b"IDAT")
for i in range(idat + 8, idat + 40):
    bad[i] ^= 0x5A     # the compressed data scrambled (the chunk CRC left wrong too)
open(path("corrupt_data.png"), "wb").write(bytes(bad))


def huge_png(name, w, h, color=2):
    ihdr = struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    data += chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    open(path(name), "wb").write(data)


huge_png("huge.png", 60000, 60000)       # within libpng's limits, far beyond what the bytes hold
huge_png("wider.png", 1000000, 1)        # beyond the side limit
jpg = open(path("rgb.jpg"), "rb").read()
open(path("truncated.jpg"), "wb").write(jpg[: len(jpg) // 2])
bad = bytearray(jpg)
sof = jpg.index(b"\xff\xc0")
bad[sof + 5: sof + 9] = struct.pack(">HH", 65000, 65000)   # height, width
open(path("huge.jpg"), "wb").write(bytes(bad))
open(path("notimage.png"), "wb").write(b"GIF89a not a png at all")
open(path("empty.png"), "wb").write(b"")
print("return {ok = true}")
