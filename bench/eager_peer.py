"""PyTorch peer for bench/eager_bench.c: eager overhead of tiny ops.

Prints `eager_add_us <median>` and `tiny_mlp_step_us <median>`: one-element
add, and one SGD step (forward, backward, update) of a 10-10-1 MLP at
batch 1 — the same work the glassbox side does. PyTorch's default single
thread is its strongest setting for tensors this small.
"""
import statistics
import time

import torch

torch.manual_seed(0)


def median_us(fn, iters, repeats=7):
    fn(iters // 10)  # warm up
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(iters)
        samples.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(samples)


def add_loop(n):
    a = torch.tensor([1.0])
    b = torch.tensor([2.0])
    for _ in range(n):
        a + b


model = torch.nn.Sequential(torch.nn.Linear(10, 10), torch.nn.ReLU(), torch.nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(1, 10)
y = torch.randn(1, 1)


def mlp_loop(n):
    for _ in range(n):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()


print(f"eager_add_us {median_us(add_loop, 200000):.4f}")
print(f"tiny_mlp_step_us {median_us(mlp_loop, 20000):.4f}")
