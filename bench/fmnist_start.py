"""fmnist_start.py - writes the starting point of ../shared/bench-ref/fmnist_torch.py:
the initial weights of its model (seed 0 unless --seed) and the batch order of its
first epoch, as .npy files, so that lutorch can train from exactly the same start:
    /usr/bin/python3 bench/fmnist_start.py --model lenet --out /tmp/start
    lutorch examples/fashion_mnist_cnn.lua --start /tmp/start
The model classes are built exactly as fmnist_torch.py builds them (same layer
order, so the same draws from the same generator)."""
import argparse, os
import numpy as np
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--model", choices=["mlp", "lenet"], default="mlp")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--out", required=True)
args = p.parse_args()
torch.manual_seed(args.seed)
if args.model == "mlp":
    layers = {"fc1": nn.Linear(784, 512), "fc2": nn.Linear(512, 256), "fc3": nn.Linear(256, 10)}
else:
    layers = {"c1": nn.Conv2d(1, 6, 5), "c2": nn.Conv2d(6, 16, 5),
              "f1": nn.Linear(256, 120), "f2": nn.Linear(120, 84), "f3": nn.Linear(84, 10)}
os.makedirs(args.out, exist_ok=True)
for name, layer in layers.items():
    for pname, t in layer.state_dict().items():
        np.save(os.path.join(args.out, f"{name}.{pname}.npy"), t.numpy())
# fmnist_torch.py draws the first epoch's permutation right after building the model
np.save(os.path.join(args.out, "perm.npy"), torch.randperm(60000).numpy())
