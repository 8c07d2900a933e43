"""PyTorch peer for bench/fmnist_bench.c: Fashion-MNIST training throughput.

Trains the same models as examples/fashion_mnist_{mlp,cnn}.c — same
architecture, batch 128, Adam 1e-3, data in memory, shuffled — and prints
`samples_per_s <median>` over the timed steps of each repeat.

  fmnist_peer.py --model mlp|cnn --images N [--repeats R] [--threads T]
                 [--channels-last]
"""
import argparse
import gzip
import statistics
import time

import numpy as np
import torch

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load(n):
    x = read_idx(f"{DATA}/train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28)[:n]
    y = read_idx(f"{DATA}/train-labels-idx1-ubyte.gz", 8)[:n]
    return torch.from_numpy(x.astype(np.float32) / 255.0), torch.from_numpy(y.astype(np.int64))


def model_for(name):
    nn = torch.nn
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                             nn.ReLU(), nn.Linear(128, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["mlp", "cnn"], required=True)
    p.add_argument("--images", type=int, required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--channels-last", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x, y = load(a.images)
    x = x.unsqueeze(1)  # NCHW
    model = model_for(a.model)
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    rates = []
    for r in range(a.repeats + 1):  # the first pass warms up
        perm = torch.randperm(len(x))
        t0 = time.perf_counter()
        for i in range(0, len(x), 128):
            idx = perm[i:i + 128]
            xb = x[idx].contiguous(memory_format=fmt)
            opt.zero_grad()
            loss = loss_fn(model(xb), y[idx])
            loss.backward()
            opt.step()
        if r:
            rates.append(len(x) / (time.perf_counter() - t0))
    print(f"samples_per_s {statistics.median(rates):.1f}")


main()
