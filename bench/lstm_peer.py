"""PyTorch peer for bench/lstm_bench.c: an LSTM's traced train step.

The same workload as the C side: one torch.nn.LSTM layer (256 units) over
x [32, 64, 256] (batch_first), every step's output against a target by
mean squared error, Adam 1e-3; the step is forward, backward and update.
Prints `tokens_per_s <median>` (batch * length per second) over repeats of
--steps timed steps, after warm-up steps, for the faster of eager and
torch.jit.trace (torch 1.13 has no torch.compile) and its
`variant <eager|jit>`. Run it in the tuned configuration lstm_bench.c
passes (threads, allocator, OpenMP waiting).

  lstm_peer.py [--steps N] [--repeats R] [--threads T]
"""
import argparse
import statistics
import time

import torch

BATCH, LENGTH, FEATURES, UNITS = 32, 64, 256, 256


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(FEATURES, UNITS, batch_first=True)

    def forward(self, x):
        return self.lstm(x)[0]


def rate(model, x, y, steps, repeats):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(3):  # warm-up (allocator, the JIT's profiling runs)
        step()
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        rates.append(BATCH * LENGTH * steps / (time.perf_counter() - t0))
    return statistics.median(rates)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x = torch.randn(BATCH, LENGTH, FEATURES)
    y = torch.randn(BATCH, LENGTH, UNITS)
    eager = rate(Model(), x, y, a.steps, a.repeats)
    jit = rate(torch.jit.trace(Model(), x), x, y, a.steps, a.repeats)
    best, variant = (jit, "jit") if jit > eager else (eager, "eager")
    print(f"variant {variant}")
    print(f"eager_tokens_per_s {eager:.1f}")
    print(f"jit_tokens_per_s {jit:.1f}")
    print(f"tokens_per_s {best:.1f}")


main()
