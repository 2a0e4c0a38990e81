# dist_ddp.py — PyTorch's DDP over gloo, 2 processes on this machine, on the LeNet-5 step of
# bench/dist_ddp.lua (batch 64 per rank, SGD momentum); prints "pytorch ms_per_step".
import os, sys, time
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

def run(rank, world, steps, B, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84),
                          nn.ReLU(), nn.Linear(84, 10))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(B, 1, 28, 28), torch.randint(0, 10, (B,))
    def step():
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
    for _ in range(5): step()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(steps): step()
    dt = time.perf_counter() - t0
    if rank == 0: print("pytorch %.3f" % (1e3 * dt / steps), flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    B = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    port = 29500 + os.getpid() % 1000
    mp.spawn(run, args=(2, steps, B, port), nprocs=2)
