"""PyTorch peer for bench/eager_bench.c and bench/traced_bench.c: tiny ops.

Plain, for eager_bench.c, prints `eager_add_us <median>` and
`tiny_mlp_step_us <median>`: a one-element add, and one SGD step (forward,
backward, update) of a 10-10-1 MLP at batch 1 — the same work the
glassbox side does.

With --traced, for traced_bench.c, prints `tiny_mlp_step_us` and
`tiny_mlp_step_script_us`: the same step eagerly and with the model
compiled by torch.jit.script (backward and optimizer as usual; 1.13 has no
torch.compile). The benchmark compares against the faster of the two.

PyTorch's default single thread is its strongest setting for tensors this
small.
"""
import argparse
import statistics
import time

import torch

torch.manual_seed(0)


def median_us(fn, iters, repeats=7):
    fn(iters // 10)  # warm up (and, for TorchScript, let the profiling executor optimize)
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


def tiny_mlp():
    return torch.nn.Sequential(torch.nn.Linear(10, 10), torch.nn.ReLU(), torch.nn.Linear(10, 1))


def sgd_loop(model):
    """A loop of n SGD steps of `model` on one sample."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(1, 10)
    y = torch.randn(1, 1)

    def loop(n):
        for _ in range(n):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()

    return loop


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--traced", action="store_true",
                   help="the tiny step eagerly and with TorchScript, no add")
    a = p.parse_args()
    if not a.traced:
        print(f"eager_add_us {median_us(add_loop, 200000):.4f}")
    print(f"tiny_mlp_step_us {median_us(sgd_loop(tiny_mlp()), 20000):.4f}")
    if a.traced:
        scripted = torch.jit.script(tiny_mlp())
        print(f"tiny_mlp_step_script_us {median_us(sgd_loop(scripted), 20000):.4f}")


main()
