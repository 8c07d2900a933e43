#!/usr/bin/python3
"""Writes tests/fixtures/mha_reference.txt: what PyTorch's
MultiheadAttention computes in float64 for the weights and inputs
test_nn_attention.c builds by the same formula, mapped from Keras' layout
(query/kernel [dim, heads, key_dim] ...) to PyTorch's (in_proj_weight
[3 dim, dim], heads as consecutive blocks of rows). Lines: "<case> out ..."
and "<case> weights ..." for the self-attention and the causal case. Run:
/usr/bin/python3 scripts/mha_reference.py > tests/fixtures/mha_reference.txt
"""
import math
import torch

B, T, D, H = 2, 4, 6, 2
K = D // H


def value(seed, i, j):
    return 0.5 * math.sin(seed + 0.37 * i + 0.71 * j)


def matrix(seed, rows, cols):
    return torch.tensor([[value(seed, i, j) for j in range(cols)] for i in range(rows)],
                        dtype=torch.float64)


x = matrix(7, B * T, D).reshape(B, T, D)
# Keras kernels flattened to [dim, heads * key_dim] (and [heads * value_dim, dim]).
wq, wk, wv, wo = matrix(1, D, H * K), matrix(2, D, H * K), matrix(3, D, H * K), matrix(4, H * K, D)
bq, bk, bv, bo = matrix(5, 1, H * K)[0], matrix(6, 1, H * K)[0], matrix(8, 1, H * K)[0], matrix(9, 1, D)[0]

mha = torch.nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)
with torch.no_grad():
    mha.in_proj_weight.copy_(torch.cat([wq.T, wk.T, wv.T], dim=0))
    mha.in_proj_bias.copy_(torch.cat([bq, bk, bv]))
    mha.out_proj.weight.copy_(wo.T)
    mha.out_proj.bias.copy_(bo)
    for case, mask in (("self", None), ("causal", torch.triu(torch.ones(T, T), diagonal=1).bool())):
        out, weights = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
        print(case, "out", " ".join("%.17g" % v for v in out.flatten().tolist()))
        print(case, "weights", " ".join("%.17g" % v for v in weights.flatten().tolist()))
