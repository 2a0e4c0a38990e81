"""numpy_ref.py - the numpy side of tests/lua/test_numpy.lua.

    /usr/bin/python3 tests/numpy_ref.py REQUEST RESULT

REQUEST is a file of cases written by the Lua test:

    case ID OP NINPUTS [key=value ...]\n
    tensor NDIM D1 ... Dn\n  then the values, row-major, as little-endian float64, then \n

Every input is computed in float64 (the Lua side sends the exact values its tensors hold).
RESULT gets, per case, either `result ID NOUT` followed by NOUT tensors in the same format,
or `error ID message`. Dims in key=value pairs are already 0-based.
"""
import math
import sys

import numpy as np


def parse_value(s):
    if s in ("true", "false"):
        return s == "true"
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def read_cases(path):
    with open(path, "rb") as f:
        cases = []
        while True:
            head = f.readline().split()
            if not head:
                break
            assert head[0] == b"case", head
            cid, op, n = head[1].decode(), head[2].decode(), int(head[3])
            params = dict(kv.decode().split("=", 1) for kv in head[4:])
            params = {k: parse_value(v) for k, v in params.items()}
            inputs = []
            for _ in range(n):
                t = f.readline().split()
                ndim = int(t[1])
                shape = tuple(int(d) for d in t[2:2 + ndim])
                count = int(np.prod(shape, dtype=np.int64))
                vals = np.frombuffer(f.read(8 * count), dtype="<f8")
                f.read(1)
                inputs.append(vals.astype(np.float64).reshape(shape))
            cases.append((cid, op, inputs, params))
    return cases


def logsumexp(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def vector_norm(x, p=2.0, dim=None):
    a = np.abs(x)
    if p == math.inf:
        return np.max(a, axis=dim)
    if p == 1:
        return np.sum(a, axis=dim)
    return np.sum(a ** p, axis=dim) ** (1.0 / p)


def red(fn):
    """a reduction taking optional dim / keepdim like torch's"""
    def f(x, dim=None, keepdim=False, **kw):
        return fn(x, axis=dim, keepdims=keepdim, **kw)
    return f


OPS = {
    "add": lambda a, b, alpha=1: a + alpha * b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "neg": lambda a: -a,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "tanh": np.tanh,
    "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a)),
    "pow": lambda a, b: np.power(a, b),
    "pow_scalar": lambda a, e: np.power(a, e),
    "maximum": np.maximum,
    "minimum": np.minimum,
    "eq": lambda a, b: (a == b).astype(np.float64),
    "ne": lambda a, b: (a != b).astype(np.float64),
    "lt": lambda a, b: (a < b).astype(np.float64),
    "le": lambda a, b: (a <= b).astype(np.float64),
    "gt": lambda a, b: (a > b).astype(np.float64),
    "ge": lambda a, b: (a >= b).astype(np.float64),
    "sum": red(np.sum),
    "mean": red(np.mean),
    "prod": red(np.prod),
    "amax": red(np.max),
    "var": lambda x, dim=None, keepdim=False, ddof=1: np.var(x, axis=dim, ddof=ddof, keepdims=keepdim),
    "std": lambda x, dim=None, keepdim=False, ddof=1: np.std(x, axis=dim, ddof=ddof, keepdims=keepdim),
    "max_dim": lambda x, dim: (np.max(x, axis=dim), np.argmax(x, axis=dim) + 1),
    "min_dim": lambda x, dim: (np.min(x, axis=dim), np.argmin(x, axis=dim) + 1),
    "norm": vector_norm,
    "logsumexp": lambda x, dim: logsumexp(x, dim),
    "cumsum": lambda x, dim: np.cumsum(x, axis=dim),
    "argmax": lambda x, dim=None: np.argmax(x, axis=dim) + 1,
    "argmin": lambda x, dim=None: np.argmin(x, axis=dim) + 1,
    "softmax": lambda x, dim: np.exp(x - np.expand_dims(logsumexp(x, dim), dim)),
    "matmul": np.matmul,
    "mm": np.matmul,
    "bmm": np.matmul,
    "mv": np.matmul,
    "dot": np.dot,
    "einsum": lambda *ts, spec: np.einsum(spec, *ts),
}


def fmt(a):
    a = np.asarray(a, dtype=np.float64)
    head = "tensor %d%s\n" % (a.ndim, "".join(" %d" % d for d in a.shape))
    return head.encode() + np.ascontiguousarray(a, dtype="<f8").tobytes() + b"\n"


def main():
    cases = read_cases(sys.argv[1])
    with open(sys.argv[2], "wb") as out:
        for cid, op, inputs, params in cases:
            try:
                with np.errstate(all="ignore"):
                    r = OPS[op](*inputs, **params)
                rs = r if isinstance(r, tuple) else (r,)
                out.write(b"result %s %d\n" % (cid.encode(), len(rs)))
                for t in rs:
                    out.write(fmt(t))
            except Exception as e:  # reported back to the Lua test as a failure of that case
                out.write(("error %s %s\n" % (cid, repr(e).replace("\n", " "))).encode())


main()
