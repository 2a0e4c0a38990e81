"""serial.py - the PyTorch side of bench/serial.sh: torch.save / torch.load of the same
state dict (N float32 tensors of M elements). Usage: python3 bench/serial.py DIR N M
torch.save does not fsync; 'save+fsync' adds an os.fsync so it compares with lutorch's
atomic save, which syncs before it renames."""
import os, sys, time, torch
d, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
path = os.path.join(d, "sd.pt")
torch.manual_seed(1)
sd = {"layer%02d.weight" % (i + 1): torch.randn(m) for i in range(n)}
what = os.environ.get("WHAT", "save,load,mmap")
if "save" in what:
    t0 = time.perf_counter()
    with open(path, "wb") as f:
        torch.save(sd, f)
        t1 = time.perf_counter()
        f.flush(); os.fsync(f.fileno())
    t2 = time.perf_counter()
    print("pytorch save %.3f s" % (t1 - t0))
    print("pytorch save+fsync %.3f s" % (t2 - t0))
del sd
if "drop" in what:
    os.system("sync; echo 1 > /proc/sys/vm/drop_caches")
if "load" in what:
    t0 = time.perf_counter()
    r = torch.load(path)
    print("pytorch load %.3f s" % (time.perf_counter() - t0))
    del r
