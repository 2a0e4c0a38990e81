#!/usr/bin/env python3
"""t7_writer.py -- a small reference writer of Torch7's serialization format
(torch.save / torch.File:writeObject), in plain Python (struct only), used by
tests/lua/test_t7.lua to make .t7 files without Torch7.

    python3 tests/ref/t7_writer.py OUTDIR

writes OUTDIR/{tensors,cycle,mlp,convnet}.{bin,ascii}.t7 and OUTDIR/expected.lua
(a Lua table literal with the values the test must find).

The format, as Torch7's File.lua and DiskFile.c define it:
  value   = int tag, then by tag:
            0 nil | 1 number: double | 2 string: int len, chars
            3 table: int ref-index, then (first time only) int n, n x (key value)
            4 torch object: int ref-index, then (first time only)
                            string "V <version>", string class name, payload
            5 boolean: int (1 true)
  tensor payload  = int ndim, long[ndim] sizes, long[ndim] strides,
                    long storage offset + 1, value storage (or nil)
  storage payload = long n, n elements
  class payload   = value (a table of the object's fields)
Binary: little-endian int32, int64 longs, float64 doubles, raw chars.
Ascii: every write call prints its numbers ("%d", "%.17g" doubles, "%.9g"
floats) separated by spaces and ends with a newline; chars are raw bytes
followed by a newline. Reference indices count torch objects and tables in
the order they are first written, from 1.
"""
import math
import os
import struct
import sys


class Storage:
    def __init__(self, kind, values):
        self.kind = kind          # Double Float Half Long Int Short Char Byte
        self.values = list(values)


class Tensor:
    def __init__(self, kind, sizes, strides, offset, storage):
        self.kind, self.sizes, self.strides, self.offset, self.storage = kind, sizes, strides, offset, storage


class Obj:
    """a Torch7 class instance written through its fields table (nn modules)"""
    def __init__(self, cls, fields):
        self.cls, self.fields = cls, fields


class Func:
    """a Lua function (Torch7 wrote bytecode): readers must refuse it"""


PACK = {"Double": "d", "Float": "f", "Half": "e", "Long": "q", "Int": "i", "Short": "h",
        "Char": "b", "Byte": "B"}


class Writer:
    def __init__(self, ascii_mode):
        self.ascii = ascii_mode
        self.out = bytearray()
        self.refs = {}
        self.n = 0

    # one write call of Torch7's File
    def _nums(self, fmt, values, text):
        if not values:
            return
        if self.ascii:
            self.out += " ".join(text(v) for v in values).encode() + b"\n"
        else:
            self.out += struct.pack("<%d%s" % (len(values), fmt), *values)

    def ints(self, *v): self._nums("i", v, lambda x: "%d" % x)
    def longs(self, *v): self._nums("q", v, lambda x: "%d" % x)
    def doubles(self, *v): self._nums("d", v, lambda x: "%.17g" % x)

    def chars(self, b):
        self.out += b
        if self.ascii and b:
            self.out += b"\n"

    def string(self, s):
        b = s.encode() if isinstance(s, str) else s
        self.ints(len(b))
        self.chars(b)

    def storage_data(self, st):
        fmt = PACK[st.kind]
        if st.kind in ("Char", "Byte"):
            self.chars(struct.pack("<%d%s" % (len(st.values), fmt), *st.values))
        elif st.kind in ("Double",):
            self.doubles(*st.values)
        elif st.kind in ("Float", "Half"):
            # ascii Half goes through float text, as DiskFile.c does
            self._nums(fmt, st.values, lambda x: "%.9g" % x)
        else:
            self._nums(fmt, st.values, lambda x: "%d" % x)

    def obj(self, v):
        if v is None:
            self.ints(0)
        elif isinstance(v, bool):
            self.ints(5)
            self.ints(1 if v else 0)
        elif isinstance(v, (int, float)):
            self.ints(1)
            self.doubles(float(v))
        elif isinstance(v, (str, bytes)):
            self.ints(2)
            self.string(v)
        elif isinstance(v, Func):
            self.ints(6)
            self.string(b"\x1bLuaQ fake bytecode")
        elif isinstance(v, (dict, list, Tensor, Storage, Obj)):
            is_table = isinstance(v, (dict, list))
            self.ints(3 if is_table else 4)
            if id(v) in self.refs:
                self.ints(self.refs[id(v)])
                return
            self.n += 1
            self.refs[id(v)] = self.n
            self.ints(self.n)
            if is_table:
                items = list(v.items()) if isinstance(v, dict) else [(i + 1, x) for i, x in enumerate(v)]
                self.ints(len(items))
                for k, x in items:
                    self.obj(k)
                    self.obj(x)
                return
            self.string("V 1")
            if isinstance(v, Storage):
                self.string("torch.%sStorage" % v.kind)
                self.longs(len(v.values))
                self.storage_data(v)
            elif isinstance(v, Tensor):
                self.string("torch.%sTensor" % v.kind)
                self.ints(len(v.sizes))
                self.longs(*v.sizes)
                self.longs(*v.strides)
                self.longs(v.offset + 1)
                self.obj(v.storage)
            else:
                self.string(v.cls)
                self.obj(v.fields)
        else:
            raise TypeError(type(v))


def contiguous(kind, sizes, values):
    strides, s = [], 1
    for d in reversed(sizes):
        strides.insert(0, s)
        s *= d
    return Tensor(kind, list(sizes), strides, 0, Storage(kind, values))


def empty(kind="Double"):
    return Tensor(kind, [], [], 0, None)


def w(i, j, seed):
    """deterministic weights"""
    return round(math.sin(seed * 7.0 + i * 1.3 + j * 0.7) * 0.5, 6)


def matrix(rows, cols, seed):
    return [[w(i, j, seed) for j in range(cols)] for i in range(rows)]


def flat(m):
    return [x for row in m for x in row]


def module(cls, fields, kind="Double"):
    base = {"output": empty(kind), "gradInput": empty(kind), "train": True, "_type": "torch.%sTensor" % kind}
    base.update(fields)
    return Obj(cls, base)


def linear(nin, nout, seed):
    W, b = matrix(nout, nin, seed), [w(0, j, seed + 1) for j in range(nout)]
    m = module("nn.Linear", {"weight": contiguous("Double", [nout, nin], flat(W)),
                             "bias": contiguous("Double", [nout], b),
                             "gradWeight": contiguous("Double", [nout, nin], [0.0] * (nout * nin)),
                             "gradBias": contiguous("Double", [nout], [0.0] * nout)})
    return m, W, b


def lua(v, ind=""):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return "%d" % v
    if isinstance(v, float):
        return "%.17g" % v
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, list):
        return "{" + ", ".join(lua(x, ind) for x in v) + "}"
    if isinstance(v, dict):
        return "{\n" + "".join("%s  [%s] = %s,\n" % (ind, lua(k), lua(x, ind + "  ")) for k, x in v.items()) + ind + "}"
    raise TypeError(type(v))


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    expected = {}

    # every tensor type, a storage, views with strides and offsets, shared storage
    vals = [1, -2, 3, 4, -5, 6]
    tensors = {}
    for kind in ("Double", "Float", "Half", "Long", "Int", "Short", "Char", "Byte"):
        v = [abs(x) for x in vals] if kind == "Byte" else vals
        if kind in ("Double", "Float", "Half"):
            v = [x * 0.5 for x in v]
        tensors[kind] = contiguous(kind, [2, 3], v)
        expected[kind] = [v[0:3], v[3:6]]
    base = Storage("Double", [float(i) for i in range(1, 13)])          # 1..12
    tensors["transposed"] = Tensor("Double", [3, 2], [1, 3], 0, Storage("Double", [1, 2, 3, 4, 5, 6]))
    expected["transposed"] = [[1, 4], [2, 5], [3, 6]]
    tensors["offset"] = Tensor("Double", [2, 2], [4, 1], 5, base)      # rows 2..3, cols 2..3 of a 3x4
    expected["offset"] = [[6, 7], [10, 11]]
    tensors["shared_a"] = Tensor("Double", [12], [1], 0, base)
    tensors["shared_b"] = Tensor("Double", [3, 4], [4, 1], 0, base)
    tensors["storage"] = Storage("Long", [7, 8, 9])
    tensors["empty"] = empty("Float")
    tensors["expanded"] = Tensor("Float", [2, 3], [0, 1], 0, Storage("Float", [1.5, 2.5, 3.5]))
    expected["expanded"] = [[1.5, 2.5, 3.5], [1.5, 2.5, 3.5]]
    tensors["numbers"] = [1, 2.5, -3, 1e300]
    tensors["strings"] = {"a": "hello", "nl": "\nline\n", "": "empty key"}
    tensors["flags"] = [True, False]

    # a table with cycles and shared subtables
    cyc = {"name": "root", "n": 3.5, "list": [1, 2, 3]}
    cyc["self"] = cyc
    shared = {"x": 1}
    cyc["child"] = {"parent": cyc, "shared": shared}
    cyc["shared"] = shared

    # nn.Sequential { Linear(3,4), ReLU, Linear(4,2) }
    l1, W1, b1 = linear(3, 4, 1)
    l2, W2, b2 = linear(4, 2, 3)
    relu = module("nn.ReLU", {"threshold": 0, "val": 0, "inplace": False})
    mlp = module("nn.Sequential", {"modules": [l1, relu, l2]})
    x = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]

    def lin(xr, W, b):
        return [sum(W[o][i] * xr[i] for i in range(len(xr))) + b[o] for o in range(len(b))]
    y = [lin([max(0.0, h) for h in lin(xr, W1, b1)], W2, b2) for xr in x]
    expected["mlp"] = {"input": x, "output": y}

    # a small convnet in Torch7's classes (weights checked in Lua through functional ops)
    cw = matrix(2, 9, 5)                       # 2 filters, 1 plane, 3x3
    cb = [0.1, -0.2]
    conv = module("nn.SpatialConvolutionMM", {
        "nInputPlane": 1, "nOutputPlane": 2, "kW": 3, "kH": 3, "dW": 1, "dH": 1, "padW": 1, "padH": 1,
        "weight": contiguous("Double", [2, 9], flat(cw)), "bias": contiguous("Double", [2], cb),
        "finput": empty(), "fgradInput": empty()})
    pool = module("nn.SpatialMaxPooling", {"kW": 2, "kH": 2, "dW": 2, "dH": 2, "padW": 0, "padH": 0,
                                           "ceil_mode": False, "indices": empty("Long")})
    view = module("nn.View", {"size": Storage("Long", [2 * 2 * 2]), "numElements": 8, "numInputDims": 3})
    lin3, W3, b3 = linear(8, 3, 7)
    bn = module("nn.BatchNormalization", {
        "eps": 1e-5, "momentum": 0.1, "affine": True, "nDim": 2,
        "weight": contiguous("Double", [3], [1.0, 0.5, 2.0]), "bias": contiguous("Double", [3], [0.0, 0.1, -0.1]),
        "running_mean": contiguous("Double", [3], [0.1, -0.1, 0.2]),
        "running_var": contiguous("Double", [3], [1.0, 2.0, 0.5])})
    lsm = module("nn.LogSoftMax", {})
    convnet = module("nn.Sequential", {"modules": [conv, module("nn.ReLU", {"threshold": 0, "val": 0, "inplace": True}),
                                                   pool, view, lin3, bn, module("nn.Tanh", {}), lsm]})
    convnet.fields["train"] = False
    for m in convnet.fields["modules"]:
        m.fields["train"] = False
    expected["convnet"] = {"conv_w": cw, "conv_b": cb, "lin_w": W3, "lin_b": b3}

    for ext, mode in (("bin", False), ("ascii", True)):
        for name, value in (("tensors", tensors), ("cycle", cyc), ("mlp", mlp), ("convnet", convnet),
                            ("function", {"f": Func()}), ("unknown", module("nn.NoSuchLayer", {}))):
            wr = Writer(mode)
            wr.obj(value)
            with open(os.path.join(outdir, "%s.%s.t7" % (name, ext)), "wb") as f:
                f.write(wr.out)
    with open(os.path.join(outdir, "expected.lua"), "w") as f:
        f.write("return " + lua(expected) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: t7_writer.py OUTDIR")
    main(sys.argv[1])
