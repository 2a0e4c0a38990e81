"""nn_rnn.py - the PyTorch side of bench/nn_rnn.lua (same keys; run with bench/nn.sh rnn)."""

import torch
import torch.nn as nn
from timing import Timer

torch.set_num_threads(1)
T = Timer()  # reps from argv[1]; process_time: pinned to one thread, CPU time, as os.clock on the Lua side
bench = T.bench
torch.manual_seed(0)


B, I, H, L = 64, 256, 512, 32
cell = nn.LSTMCell(I, H)
xs = torch.randn(B, I)
h, c = torch.randn(B, H), torch.randn(B, H)


def step_fwd(n):
    with torch.no_grad():
        for _ in range(n):
            cell(xs, (h, c))


def step_fwd_grad(n):
    for _ in range(n):
        cell(xs, (h, c))


bench("lstm_step_fwd", 100, step_fwd)
bench("lstm_step_fwd_grad", 100, step_fwd_grad)

lstm = nn.LSTM(I, H)
x = torch.randn(L, B, I, requires_grad=True)
go = torch.randn(L, B, H)


def seq_fwd(n):
    with torch.no_grad():
        for _ in range(n):
            lstm(x)


def seq_fwd_bwd(n):
    for _ in range(n):
        lstm.zero_grad()
        x.grad = None
        y, _ = lstm(x)
        y.backward(go)


bench("lstm_seq32_fwd", 5, seq_fwd)
bench("lstm_seq32_fwd_bwd", 3, seq_fwd_bwd)

T.report()
