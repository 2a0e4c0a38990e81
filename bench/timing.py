"""timing.py - the timing harness shared by the bench scripts (twin of timing.lua).

    from timing import Timer
    T = Timer(warmup=10, fmt="%.4f")
    T.bench("key", n, fn)   # fn(n) runs the workload n times
    T.report()              # prints "key microseconds", in bench order

Each figure is the median over `reps` runs of fn(n), per call, after one warm-up run.
Options: reps (default int(sys.argv[1]) or 5); warmup, a number d for a warm-up
fn(max(1, n // d)) (default 5) or a function of n giving the warm-up count; fmt, the
format of the microseconds (default "%.2f"); clock, default time.process_time: the
scripts run pinned to one core and one thread, where CPU time is the wall time of an
idle machine and other processes' load does not count (as os.clock on the Lua side).
"""
import sys
import time


def median(t):
    t = sorted(t)
    return t[(len(t) - 1) // 2]


class Timer:
    def __init__(self, reps=None, warmup=5, fmt="%.2f", clock=time.process_time):
        if reps is None:
            reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
        self.reps = reps
        if not callable(warmup):
            d = warmup
            warmup = lambda n: max(1, n // d)
        self.warmup = warmup
        self.fmt = fmt
        self.clock = clock
        self.keys = []
        self.r = {}

    def time(self, n, fn):
        """seconds per call of fn(n): the median of reps runs, after a warm-up run"""
        clock = self.clock
        fn(self.warmup(n))
        ts = []
        for _ in range(self.reps):
            t0 = clock()
            fn(n)
            ts.append((clock() - t0) / n)
        return median(ts)

    def set(self, key, seconds):
        """records a figure in seconds (a new key keeps its place; a repeated one is overwritten)"""
        if key not in self.r:
            self.keys.append(key)
        self.r[key] = seconds

    def bench(self, key, n, fn):
        self.set(key, self.time(n, fn))
        return self.r[key]

    def report(self):
        line = "%s " + self.fmt
        for key in self.keys:
            print(line % (key, self.r[key] * 1e6))
