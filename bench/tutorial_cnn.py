"""tutorial_cnn.py - the PyTorch side of bench/tutorial_cnn.lua: "What is torch.nn really?"'s
CNN on Fashion-MNIST (Debian's dataset-fashion-mnist), the same loop, one thread.
    /usr/bin/python3 bench/tutorial_cnn.py [EPOCHS]
    /usr/bin/python3 bench/tutorial_cnn.py --write-start DIR
The second form writes the initial weights (seed 0) and the first epoch's batch order as
.npy files and exits; bench/tutorial_cnn.lua DIR then trains from the same start."""
import gzip, os, sys, time
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
start_out = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--write-start" else None
epochs = int(sys.argv[1]) if len(sys.argv) > 1 and not start_out else 1
root = "/usr/share/datasets/fashion-mnist"


def idx(name):
    with gzip.open(os.path.join(root, name), "rb") as f:
        b = f.read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)


xtr = torch.from_numpy(idx("train-images-idx3-ubyte.gz").copy()).float().div_(255).view(-1, 1, 28, 28)
ytr = torch.from_numpy(idx("train-labels-idx1-ubyte.gz").astype(np.int64))
xte = torch.from_numpy(idx("t10k-images-idx3-ubyte.gz").copy()).float().div_(255).view(-1, 1, 28, 28)
yte = torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(16, 10, 3, stride=2, padding=1), nn.ReLU(),
    nn.AvgPool2d(4), nn.Flatten())
if start_out:
    os.makedirs(start_out, exist_ok=True)
    for name, t in model.state_dict().items():   # "0.weight" is lutorch's "1.weight"
        i, rest = name.split(".", 1)
        np.save(os.path.join(start_out, f"{int(i) + 1}.{rest}.npy"), t.numpy())
    np.save(os.path.join(start_out, "perm.npy"), torch.randperm(xtr.shape[0]).numpy())
    sys.exit(0)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
bs, n = 64, xtr.shape[0]
loss_sum, nb = 0.0, 0
t0 = time.perf_counter()
for _ in range(epochs):
    perm = torch.randperm(n)
    for i in range(0, n, bs):
        idx_ = perm[i:i + bs]
        xb, yb = xtr.index_select(0, idx_), ytr.index_select(0, idx_)
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        loss_sum += loss.item(); nb += 1
train_s = time.perf_counter() - t0
with torch.no_grad():
    acc = (model(xte).argmax(1) == yte).sum().item() / xte.shape[0]
print(f"train {train_s:.3f} s mean loss {loss_sum / nb:.4f} test acc {acc:.4f}")
