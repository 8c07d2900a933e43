#!/usr/bin/python3
"""Writes tests/fixtures/rnn_reference.txt: what PyTorch's RNN, LSTM and
GRU compute in float64 for the weights and inputs test_nn_recurrent.c
builds by the same formulas, mapped from Keras' layout (kernel [in, g*u],
recurrent_kernel [u, g*u], gates i f c o / z r h) to PyTorch's
(weight_ih [g*u, in], gates i f g o / r z n). Run with Debian's
python3-torch: /usr/bin/python3 scripts/rnn_reference.py > tests/fixtures/rnn_reference.txt
"""
import math
import torch

B, T, F, U = 2, 3, 4, 3


def value(seed, i, j):
    """The formula test_nn_recurrent.c fills weights and inputs with."""
    return 0.5 * math.sin(seed + 0.37 * i + 0.71 * j)


def matrix(seed, rows, cols):
    return torch.tensor([[value(seed, i, j) for j in range(cols)] for i in range(rows)],
                        dtype=torch.float64)


def inputs():
    x = torch.tensor([[[value(7, b * T + t, f) for f in range(F)] for t in range(T)]
                      for b in range(B)], dtype=torch.float64)
    return x


def keras_to_torch(w, order, units):
    """Columns of a Keras [.., g*u] matrix, regrouped gate by gate into `order`."""
    return torch.cat([w[..., k * units:(k + 1) * units] for k in order], dim=-1)


def run(kind, gates, order, cls):
    kernel, rec = matrix(1, F, gates * U), matrix(2, U, gates * U)
    bias = matrix(3, 2, gates * U)  # row 0 input bias, row 1 recurrent (GRU only)
    layer = cls(F, U, batch_first=True).double()
    with torch.no_grad():
        layer.weight_ih_l0.copy_(keras_to_torch(kernel, order, U).T)
        layer.weight_hh_l0.copy_(keras_to_torch(rec, order, U).T)
        layer.bias_ih_l0.copy_(keras_to_torch(bias[0], order, U))
        if kind == "gru":
            layer.bias_hh_l0.copy_(keras_to_torch(bias[1], order, U))
        else:
            layer.bias_hh_l0.zero_()
        y = layer(inputs())[0]
    print(kind, " ".join("%.17g" % v for v in y.flatten().tolist()))


run("simple", 1, [0], torch.nn.RNN)
run("lstm", 4, [0, 1, 2, 3], torch.nn.LSTM)
run("gru", 3, [1, 0, 2], torch.nn.GRU)  # Keras z r h -> PyTorch r z n
