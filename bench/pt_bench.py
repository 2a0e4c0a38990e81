"""pt_bench.py - the PyTorch side of the side-by-side benchmarks (bench/lt_bench.lua is the
lutorch side: same sections, same sizes, same output lines).
  /usr/bin/python3 bench/pt_bench.py SECTION THREADS [REPS]
Prints one "R key value" line per figure (median over REPS in-process repetitions)."""
import statistics, sys, time
import torch

section = sys.argv[1] if len(sys.argv) > 1 else "op1"
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 0
torch.set_num_threads(threads)
now = time.perf_counter


def bench(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = now(); fn(); ts.append(now() - t0)
    return statistics.median(ts)


def emit(key, v):
    print("R %s %.6g" % (key, v), flush=True)


def op1():
    N = 200000
    a, b, c = torch.rand(1), torch.rand(1), torch.rand(1)
    reps = REPS or 7
    def loop():
        for _ in range(N):
            pass
    emit("op1_loop_us", 1e6 * bench(loop, reps) / N)
    def add():
        x, y = a, b
        for _ in range(N):
            z = x + y
    emit("op1_add_us", 1e6 * bench(add, reps) / N)
    def add_out():
        x, y, o = a, b, c
        for _ in range(N):
            torch.add(x, y, out=o)
    emit("op1_add_out_us", 1e6 * bench(add_out, reps) / N)


def add16():
    M = 16 * 1024 * 1024
    a, b, c = torch.rand(M), torch.rand(M), torch.rand(M)
    nbytes = 3 * 4 * M
    reps = REPS or 15
    def new():
        z = a + b
    emit("add16_new_t%d_gbs" % threads, nbytes / bench(new, reps) / 1e9)
    emit("add16_out_t%d_gbs" % threads, nbytes / bench(lambda: torch.add(a, b, out=c), reps) / 1e9)


def mm():
    n = 2048
    A, B = torch.rand(n, n), torch.rand(n, n)
    def f():
        C = torch.mm(A, B)
    emit("mm2048_t%d_gflops" % threads, 2 * n ** 3 / bench(f, REPS or 5) / 1e9)


def red():
    M = 16 * 1024 * 1024
    reps = REPS or 11
    x = torch.rand(M)
    emit("sum16_t%d_gbs" % threads, 4 * M / bench(lambda: x.sum(), reps) / 1e9)
    del x
    n = 4096
    X = torch.rand(n, n)
    emit("tcopy4096_t%d_gbs" % threads, 2 * 4 * n * n / bench(lambda: X.t().contiguous(), reps) / 1e9)


def overs():
    a, b = torch.rand(1024 * 1024), torch.rand(1024 * 1024)
    A, B = torch.rand(256, 256), torch.rand(256, 256)
    K = 200
    def f():
        for _ in range(K):
            c = a + b
            D = torch.mm(A, B)
    emit("overs_t%d_ms" % threads, 1e3 * bench(f, REPS or 7) / K)


{"op1": op1, "add16": add16, "mm": mm, "red": red, "overs": overs}[section]()
