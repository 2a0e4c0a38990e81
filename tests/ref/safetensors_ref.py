#!/usr/bin/env python3
"""safetensors_ref.py -- a tiny reference reader and writer of the safetensors
format (json + struct only), and a bridge to the `safetensors` package when it
is importable. Used by tests/lua/test_safetensors.lua.

    safetensors_ref.py write OUT EXPECTED.lua [package]
        write tensors of every dtype (ordered by name, header NOT padded, so
        data offsets are misaligned on purpose) plus metadata; EXPECTED.lua
        gets the values as a Lua table
    safetensors_ref.py read IN [package]
        check IN as the format requires and print its contents as a Lua table:
        { tensors = { name = {dtype=, shape={}, values={}} }, metadata = {} }
"""
import json
import math
import struct
import sys

FMT = {"F64": "d", "F32": "f", "F16": "e", "I64": "q", "I32": "i", "I16": "h", "I8": "b", "U8": "B", "BOOL": "?",
       "BF16": "H"}
SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def bf16_to_float(h):
    return struct.unpack("<f", struct.pack("<I", h << 16))[0]


def float_to_bf16(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


def lua(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return "%d" % v
    if isinstance(v, float):
        if math.isnan(v):
            return "(0/0)"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return "%.17g" % v
    if isinstance(v, str):
        return json.dumps(v)   # a JSON string literal is a valid Lua string literal for ASCII
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("[%s] = %s" % (lua(k), lua(x)) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def cases():
    """name -> (dtype, shape, flat values)"""
    c = {}
    c["f64"] = ("F64", [2, 3], [0.5, -1.25, 3.0, 1e-300, -7.5, 2.0])
    c["f32"] = ("F32", [3, 2], [1.5, -2.0, 0.25, 100.0, -0.125, 3.0])
    c["f16"] = ("F16", [4], [1.0, -0.5, 2048.0, 0.099975586])
    c["bf16"] = ("BF16", [2, 2], [1.0, -2.5, 0.15625, 256.0])
    c["i64"] = ("I64", [3], [-(2 ** 62), 5, 2 ** 40])
    c["i32"] = ("I32", [2, 2], [-7, 8, 2 ** 30, -(2 ** 31)])
    c["i16"] = ("I16", [3], [-300, 0, 32767])
    c["i8"] = ("I8", [3], [-128, 1, 127])
    c["u8"] = ("U8", [2, 2], [0, 1, 128, 255])
    c["bool"] = ("BOOL", [3], [True, False, True])
    c["scalar"] = ("F32", [], [4.5])
    c["empty"] = ("F32", [0, 5], [])
    return c


def pack(dtype, values):
    if dtype == "BF16":
        values = [float_to_bf16(x) for x in values]
    return struct.pack("<%d%s" % (len(values), FMT[dtype]), *values)


def write(out, expected, package):
    c = cases()
    meta = {"format": "np", "note": "written by safetensors_ref.py"}
    if package:
        import numpy as np
        from safetensors.numpy import save_file
        npt = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
               "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
        c = {k: v for k, v in c.items() if v[0] in npt}        # numpy has no bfloat16
        arrays = {k: np.array(v, dtype=npt[d]).reshape(s) for k, (d, s, v) in c.items()}
        save_file(arrays, out, metadata=meta)
    else:
        header, data = {"__metadata__": meta}, b""
        for name in sorted(c):
            d, s, v = c[name]
            b = pack(d, v)
            header[name] = {"dtype": d, "shape": s, "data_offsets": [len(data), len(data) + len(b)]}
            data += b
        h = json.dumps(header).encode()       # not padded: offsets are deliberately misaligned
        with open(out, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + data)
    exp = {}
    for k, (d, s, v) in c.items():
        if d == "F16":
            v = [struct.unpack("<e", struct.pack("<e", x))[0] for x in v]
        exp[k] = {"dtype": d, "shape": s, "values": v}
    with open(expected, "w") as f:
        f.write("return " + lua({"tensors": exp, "metadata": meta}) + "\n")


def read(path, package):
    if package:
        from safetensors import safe_open
        out, meta = {}, None
        with safe_open(path, framework="np") as f:
            meta = f.metadata()
            for k in f.keys():
                a = f.get_tensor(k)
                d = {"float64": "F64", "float32": "F32", "float16": "F16", "int64": "I64", "int32": "I32",
                     "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}[str(a.dtype)]
                vals = [bool(x) if d == "BOOL" else (float(x) if d[0] == "F" else int(x)) for x in a.reshape(-1)]
                out[k] = {"dtype": d, "shape": list(a.shape), "values": vals}
        print("return " + lua({"tensors": out, "metadata": meta or {}}))
        return
    b = open(path, "rb").read()
    assert len(b) >= 8, "shorter than the header length"
    n = struct.unpack("<Q", b[:8])[0]
    assert n <= 100000000 and 8 + n <= len(b), "bad header length"
    header = json.loads(b[8:8 + n].decode("utf-8"))
    data = b[8 + n:]
    meta = header.pop("__metadata__", None) or {}
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()), "metadata not str->str"
    entries = sorted(header.items(), key=lambda kv: tuple(kv[1]["data_offsets"]))
    at = 0
    out = {}
    for name, info in entries:
        d, s, (b0, b1) = info["dtype"], info["shape"], info["data_offsets"]
        assert b0 == at, "tensor %s does not start where the previous one ended" % name
        assert b1 - b0 == numel(s) * SIZE[d], "tensor %s: size mismatch" % name
        raw = data[b0:b1]
        vals = list(struct.unpack("<%d%s" % (numel(s), FMT[d]), raw))
        if d == "BF16":
            vals = [bf16_to_float(x) for x in vals]
        out[name] = {"dtype": d, "shape": s, "values": vals}
        at = b1
    assert at == len(data), "the tensors do not cover the data buffer"
    # the offsets of a lutorch file are aligned for mmap: report that too
    aligned = all((8 + n + info["data_offsets"][0]) % SIZE[info["dtype"]] == 0 for _, info in entries)
    print("return " + lua({"tensors": out, "metadata": meta, "aligned": aligned}))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == "package")
    elif len(sys.argv) >= 3 and sys.argv[1] == "read":
        read(sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "package")
    else:
        sys.exit(__doc__)
