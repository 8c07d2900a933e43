"""PyTorch peer for the gelu_kernel figure of bench/graph_passes_bench.c.

Prints `gelu_us <median>`: microseconds per call of PyTorch's own fused
kernel, torch.nn.functional.gelu(x, approximate='tanh'), on 1M float32
values drawn from N(0, 1), the faster of 1 and 2 threads (its default is
1; its elementwise kernels split across OpenMP threads from 32k elements).
"""
import statistics
import time

import torch

N = 1 << 20
CALLS = 20
REPEATS = 9


def median_us(x):
    f = torch.nn.functional.gelu
    for _ in range(3):
        f(x, approximate='tanh')
    samples = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            f(x, approximate='tanh')
        samples.append((time.perf_counter() - t0) / CALLS * 1e6)
    return statistics.median(samples)


def main():
    torch.manual_seed(7)
    x = torch.randn(N, dtype=torch.float32)
    best = None
    for threads in (1, 2):
        torch.set_num_threads(threads)
        us = median_us(x)
        best = us if best is None else min(best, us)
    print(f"gelu_us {best:.1f}")


if __name__ == "__main__":
    main()
