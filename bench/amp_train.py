"""amp_train.py - the PyTorch twin of amp_train.lua: one Fashion-MNIST epoch (SGD,
momentum 0.9, batch 64) of the MLP 784-512-256-10 and of LeNet-5 in float32 and under
`torch.autocast("cpu", dtype=torch.bfloat16)`; prints "key seconds" (batches only).
BATCHES=N times the first N batches and scales to the epoch; MODELS="mlp lenet"."""
import gzip, os, sys, time
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(int(os.environ.get("THREADS", "1")))
data = os.environ.get("DATA", "/usr/share/datasets/fashion-mnist")


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    nd = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


Xtr = torch.from_numpy(read_idx(os.path.join(data, "train-images-idx3-ubyte.gz")).copy()).float().div_(255)
Ytr = torch.from_numpy(read_idx(os.path.join(data, "train-labels-idx1-ubyte.gz")).astype(np.int64))
n, batch = Xtr.shape[0], 64
nb = (n + batch - 1) // batch
limit = int(os.environ.get("BATCHES", "0"))
if limit <= 0 or limit > nb:
    limit = nb


def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))


def lenet():
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84),
                         nn.ReLU(), nn.Linear(84, 10))


def epoch(name, mode):
    torch.manual_seed(0)
    model = mlp() if name == "mlp" else lenet()
    X = Xtr.view(-1, 784) if name == "mlp" else Xtr.view(-1, 1, 28, 28)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    perm = torch.randperm(n)
    t0 = None
    for b in range(limit):
        if b == 1:
            t0 = time.perf_counter()
        idx = perm[b * batch:(b + 1) * batch]
        x, y = X.index_select(0, idx), Ytr.index_select(0, idx)
        opt.zero_grad()
        if mode == "autocast":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(x), y)
        else:
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return (time.perf_counter() - t0) / (limit - 1) * nb


modes = sys.argv[1:2] or ["float32", "autocast"]
for mode in modes:
    for name in os.environ.get("MODELS", "mlp lenet").split():
        print("%s_%s %.3f" % (name, mode, epoch(name, mode)))
