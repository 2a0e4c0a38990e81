#!/usr/bin/env python3
"""t7_file_cases.py -- the objects tests/lua/torch7/test_t7file.lua builds in
Lua, written by the reference writer (t7_writer.py, beside this file), so the
test can compare lutorch's torch.serialize / torch.save with them byte for
byte. Only objects whose Torch7 write order is fixed: sequences (Lua writes
them 1..n), tables of one key, tensors, storages, classes with one field.

    python3 tests/ref/t7_file_cases.py OUTDIR

writes OUTDIR/NAME.bin.t7 and OUTDIR/NAME.ascii.t7 for each case.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from t7_writer import Writer, Tensor, Storage, Obj, contiguous, empty  # noqa: E402


def cases():
    c = {}
    c["numbers"] = [1, 2.5, -3, 1e300, "hello", "", "two\nlines", True, False, 0.1]
    vals = [1, -2, 3, 4, -5, 6]
    ts = []
    for kind in ("Double", "Float", "Half", "Long", "Int", "Short", "Char", "Byte"):
        v = [abs(x) for x in vals] if kind == "Byte" else vals
        if kind in ("Double", "Float", "Half"):
            v = [x * 0.5 for x in v]
        ts.append(contiguous(kind, [2, 3], v))
    c["tensors"] = ts
    base = Storage("Double", [float(i) for i in range(1, 13)])
    a = Tensor("Double", [3, 4], [4, 1], 0, base)
    b = Tensor("Double", [4, 3], [1, 4], 0, base)
    c["shared"] = [a, b, a, base]
    c["narrow"] = Tensor("Double", [2, 2], [4, 1], 5, Storage("Double", [float(i) for i in range(1, 13)]))
    cyc = [1]
    cyc.append(cyc)
    c["cycle"] = cyc
    c["class"] = Obj("t7test.Point", {"x": 2.5})
    c["empty"] = empty("Double")
    c["storage"] = Storage("Int", [7, -8, 9])
    c["keyed"] = {"k": [True, "v"]}
    return c


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, value in cases().items():
        for ext, mode in (("bin", False), ("ascii", True)):
            w = Writer(mode)
            w.obj(value)
            with open(os.path.join(outdir, "%s.%s.t7" % (name, ext)), "wb") as f:
                f.write(w.out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: t7_file_cases.py OUTDIR")
    main(sys.argv[1])
