"""serial.py - the PyTorch side of bench/serial.sh: torch.save / torch.load of the same
state dict (N float32 tensors of M elements). Usage: WHAT=save,load python3 bench/serial.py DIR N M
torch.save does not fsync; 'save+fsync' adds an os.fsync so it compares with lutorch's
atomic save, which syncs before it renames (and so that the file can be dropped from the
page cache for a cold load: posix_fadvise DONTNEED drops clean pages only)."""
import os, sys, time, torch
d, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
path = os.path.join(d, "sd.pt")
what = os.environ.get("WHAT", "save,load")
label = os.environ.get("LABEL", "load")
if "save" in what:
    torch.manual_seed(1)
    sd = {"layer%02d.weight" % (i + 1): torch.randn(m) for i in range(n)}
    t0 = time.perf_counter()
    with open(path, "wb") as f:
        torch.save(sd, f)
        t1 = time.perf_counter()
        f.flush(); os.fsync(f.fileno())
    t2 = time.perf_counter()
    print("pytorch save %.3f s" % (t1 - t0))
    print("pytorch save+fsync %.3f s" % (t2 - t0))
    del sd
if "load" in what:
    t0 = time.perf_counter()
    r = torch.load(path)
    t = time.perf_counter() - t0
    assert len(r) == n, "loaded %d tensors, expected %d" % (len(r), n)
    print("pytorch %s %.3f s" % (label, t))
    del r
