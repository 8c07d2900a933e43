"""char_lm_peer.py — examples/char_lm.c's model, data and optimizer in PyTorch.

The same decoder (token embedding + learned positions, pre-norm blocks of
causal nn.MultiheadAttention and a GELU MLP, final LayerNorm, logits), the
same corpus split (every tenth fortune held out, files in name order), the
same training windows (the example's LCG), AdamW with the same cosine
schedule and warmup, epsilon 1e-7 as Keras, no weight decay on vectors,
global gradient clipping at 1.0.

  --bench    tokens/s of the train step after --warmup steps: prints
             `tokens_per_s <v>` (the eager step, and torch.jit.trace of
             the model, whichever is faster: 1.13 has no torch.compile)
  --train    fit for --epochs of --steps steps, the validation loss after
             each: prints `val_loss <v>` (the last)

Run as /usr/bin/python3 (Debian's python3-torch).
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 128


def read_corpus(path):
    """The fortunes between "%" lines, every tenth held out (char_lm.c's split_records)."""
    names = sorted(n for n in os.listdir(path) if not n.startswith(".") and "." not in n)
    train, val, k = [], [], 0
    for n in names:
        p = os.path.join(path, n)
        if not os.path.isfile(p):
            continue
        data = open(p, "rb").read()
        rec = line = 0
        while line < len(data):
            nl = data.find(b"\n", line)
            nxt = nl + 1 if nl >= 0 else len(data)
            separator = data[line:(nl if nl >= 0 else len(data))] == b"%"
            if separator or nxt == len(data):
                stop = line if separator else len(data)
                if stop > rec:
                    (val if k % 10 == 9 else train).append(data[rec:stop] + b"\n")
                    k += 1
                rec = nxt
            line = nxt
    return b"".join(train), b"".join(val)


def windows(text, n, context, seed):
    ids = torch.frombuffer(bytearray(text), dtype=torch.uint8).to(torch.int64)
    # char_lm.c's char_id: control bytes but newlines are spaces, non-ASCII '?'
    ids = torch.where(ids < VOCAB, ids, torch.full_like(ids, ord("?")))
    ids = torch.where(((ids < 32) & (ids != 10)) | (ids == 127), torch.full_like(ids, 32), ids)
    s, mask, offs = seed, (1 << 64) - 1, []
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & mask
        offs.append((s >> 11) % (len(text) - context - 1))
    idx = torch.tensor(offs)[:, None] + torch.arange(context)[None, :]
    return ids[idx], ids[idx + 1]


def glorot(t, fan_in, fan_out):
    lim = math.sqrt(6.0 / (fan_in + fan_out))
    nn.init.uniform_(t, -lim, lim)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d, eps=1e-5)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        # Keras' initializers: Glorot-uniform kernels with Keras' fans of the
        # MultiHeadAttention kernels, [d, heads, key_dim] (fan_in heads * d,
        # fan_out key_dim * d) and [heads, key_dim, d] (key_dim * heads,
        # d * heads); zero biases
        kd = d // heads
        for w in (self.attn.in_proj_weight[:d], self.attn.in_proj_weight[d:2 * d],
                  self.attn.in_proj_weight[2 * d:]):
            with torch.no_grad():
                glorot(w, heads * d, kd * d)
        glorot(self.attn.out_proj.weight, kd * heads, d * heads)
        nn.init.zeros_(self.attn.in_proj_bias)
        nn.init.zeros_(self.attn.out_proj.bias)
        for lin in (self.up, self.down):
            glorot(lin.weight, lin.in_features, lin.out_features)
            nn.init.zeros_(lin.bias)

    def forward(self, x, mask):
        a = self.norm1(x)
        x = x + self.attn(a, a, a, attn_mask=mask, need_weights=False)[0]
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class CharLM(nn.Module):
    def __init__(self, layers, d, heads, context):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        nn.init.uniform_(self.tok.weight, -0.05, 0.05)
        self.pos = nn.Parameter(torch.empty(context, d))
        glorot(self.pos, context, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d, eps=1e-5)
        self.out = nn.Linear(d, VOCAB)
        glorot(self.out.weight, d, VOCAB)
        nn.init.zeros_(self.out.bias)
        self.register_buffer("mask", torch.triu(torch.ones(context, context, dtype=torch.bool), 1))

    def forward(self, x):
        h = self.tok(x) + self.pos[: x.shape[1]]
        for b in self.blocks:
            h = b(h, self.mask)
        return self.out(self.norm(h))


def cosine_warmup(step, lr, total):
    """Keras' CosineDecay(initial lr/10, decay_steps, alpha 0.1, warmup_target lr, warmup_steps)."""
    warmup = total // 20 + 1
    decay = max(1, total - warmup)
    if step < warmup:
        return lr / 10 + (lr - lr / 10) * step / warmup
    t = min(step - warmup, decay) / decay
    return lr * ((1 - 0.1) * 0.5 * (1 + math.cos(math.pi * t)) + 0.1)


def optimizer(model, lr):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                              {"params": rest, "weight_decay": 0.0}], lr=lr, eps=1e-7)


def step_fn(model, opt):
    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss
    return step


def bench(a):
    torch.manual_seed(a.seed)
    model = CharLM(a.layers, a.d_model, 4, a.context)
    x = torch.randint(0, VOCAB, (a.batch, a.context))
    y = torch.randint(0, VOCAB, (a.batch, a.context))
    best = 0.0
    for variant in ("eager", "jit_trace"):
        m = model if variant == "eager" else torch.jit.trace(model, (x,))
        opt = optimizer(model, 1e-3)
        step = step_fn(m, opt)
        for _ in range(a.warmup):
            step(x, y)
        rates = []
        for _ in range(a.repeats):
            t = time.perf_counter()
            for _ in range(a.steps):
                step(x, y)
            rates.append(a.steps * a.batch * a.context / (time.perf_counter() - t))
        rate = sorted(rates)[len(rates) // 2]
        print(f"{variant} {rate:.1f}", file=sys.stderr)
        best = max(best, rate)
    print(f"tokens_per_s {best:.1f}")


def train(a):
    tr, va = read_corpus(a.dir)
    x, y = windows(tr, a.steps * a.batch, a.context, a.seed * 2 + 1)
    vx, vy = windows(va, a.val_windows, a.context, 99991)
    torch.manual_seed(a.seed)
    model = CharLM(a.layers, a.d_model, 4, a.context)
    opt = optimizer(model, a.lr)
    step = step_fn(model, opt)
    total, it = a.epochs * a.steps, 0
    g = torch.Generator().manual_seed(a.seed + 7)
    for epoch in range(a.epochs):
        model.train()
        for b in torch.randperm(len(x), generator=g).split(a.batch):
            for group in opt.param_groups:
                group["lr"] = cosine_warmup(it, a.lr, total)
            step(x[b], y[b])
            it += 1
        model.eval()
        with torch.no_grad():
            losses = [F.cross_entropy(model(vx[i:i + a.batch]).reshape(-1, VOCAB),
                                      vy[i:i + a.batch].reshape(-1), reduction="sum")
                      for i in range(0, len(vx), a.batch)]
        val = float(sum(losses)) / vx.numel()
        print(f"epoch {epoch + 1} val_loss {val:.4f}", file=sys.stderr)
    print(f"val_loss {val:.6f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bench", action="store_true")
    p.add_argument("--train", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--val-windows", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--dir", default="/usr/share/games/fortunes")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.bench:
        bench(a)
    elif a.train:
        train(a)
    else:
        p.error("--bench or --train")


if __name__ == "__main__":
    main()
