"""PyTorch peer for bench/dist_bench.c: data-parallel training of the MLP.

PyTorch's DistributedDataParallel with the gloo backend, 2 processes on
loopback (torch.multiprocessing.spawn, MASTER_ADDR=127.0.0.1, one torch
thread each), the Fashion-MNIST MLP 784-256-128-10 at batch 64 per rank,
Adam 1e-3, data in memory — the work the glassbox side does. DDP averages
the gradients in buckets during backward (its reducer), as glassbox does.
Prints `samples_per_s <median>` (both ranks' samples together) over the
repeats, each of --steps steps after a warm-up.

  ddp_peer.py [--images N] [--steps S] [--repeats R] [--ranks P]
"""
import argparse
import gzip
import os
import socket
import statistics
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

DATA = "/usr/share/datasets/fashion-mnist"
BATCH = 64


def load(n):
    with gzip.open(f"{DATA}/train-images-idx3-ubyte.gz", "rb") as f:
        x = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 784)[:n]
    with gzip.open(f"{DATA}/train-labels-idx1-ubyte.gz", "rb") as f:
        y = np.frombuffer(f.read(), dtype=np.uint8, offset=8)[:n]
    return torch.from_numpy(x.astype(np.float32) / 255.0), torch.from_numpy(y.astype(np.int64))


def worker(rank, a, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=a.ranks)
    torch.manual_seed(0)
    x, y = load(a.images)
    nn = torch.nn
    model = DDP(nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                              nn.Linear(128, 10)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(42)   # the same order on every rank
    perm = torch.randperm(len(x), generator=g)
    per_step = BATCH * a.ranks
    steps_per_pass = len(x) // per_step
    step = 0

    def run(steps):
        nonlocal step
        for _ in range(steps):
            k = step % steps_per_pass
            idx = perm[k * per_step + rank * BATCH:k * per_step + (rank + 1) * BATCH]
            opt.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            step += 1

    run(a.steps // 5)   # warm up
    rates = []
    for _ in range(a.repeats):
        dist.barrier()
        t0 = time.perf_counter()
        run(a.steps)
        dist.barrier()
        rates.append(a.steps * per_step / (time.perf_counter() - t0))
    if rank == 0:
        out.put(statistics.median(rates))
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--images", type=int, default=20000)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--ranks", type=int, default=2)
    a = p.parse_args()
    ctx = mp.get_context("spawn")
    out = ctx.SimpleQueue()
    mp.spawn(worker, args=(a, free_port(), out), nprocs=a.ranks, join=True)
    print(f"samples_per_s {out.get():.1f}")


if __name__ == "__main__":
    main()
