"""fft.py - numpy's and PyTorch's side of bench/fft.sh: numpy.fft.fft / rfft and
torch.fft.fft / rfft of 2^20 and of the prime 1000003 points, float64 and float32, one
thread. Prints "numpy|pytorch OP DTYPE N MS": the median of REPS calls after one warm-up,
in process CPU time (as lutorch's os.clock: pinned to one core, other load counts less).
numpy 1.24's numpy.fft is pocketfft (C) and computes in double whatever the input;
Debian's PyTorch 1.13 is built without MKL, so torch.fft runs pocketfft (C++) too.
Usage: python3 bench/fft.py [REPS]"""
import sys, time
import numpy as np
import torch

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 7
torch.set_num_threads(1)
assert not torch.backends.mkl.is_available()

def median(ts):
    ts = sorted(ts)
    return ts[(len(ts) - 1) // 2]

def timed(f, a):
    f(a)
    ts = []
    for _ in range(reps):
        t0 = time.process_time()
        f(a)
        ts.append(time.process_time() - t0)
    return median(ts) * 1e3

rng = np.random.default_rng(1)
for dt, cdt in ((np.float64, np.complex128), (np.float32, np.complex64)):
    for n in (1 << 20, 1000003):
        x = rng.standard_normal(n).astype(dt)
        z = np.fft.fft(x).astype(cdt)
        tx, tz = torch.from_numpy(x), torch.from_numpy(z)
        name = np.dtype(dt).name
        print("numpy fft %s %d %.2f" % (name, n, timed(np.fft.fft, z)))
        print("numpy rfft %s %d %.2f" % (name, n, timed(np.fft.rfft, x)))
        print("pytorch fft %s %d %.2f" % (name, n, timed(torch.fft.fft, tz)))
        print("pytorch rfft %s %d %.2f" % (name, n, timed(torch.fft.rfft, tx)))
