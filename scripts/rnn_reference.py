#!/usr/bin/python3
"""Writes tests/fixtures/rnn_reference.txt: what PyTorch's RNN, LSTM and
GRU compute in float64 for the weights and inputs test_nn_recurrent.c
builds by the same formulas, mapped from Keras' layout (kernel [in, g*u],
recurrent_kernel [u, g*u], gates i f c o / z r h) to PyTorch's
(weight_ih [g*u, in], gates i f g o / r z n). Three lines per kind:
"<kind>" from zero state; "<kind>_state" from the initial state h0 (seed
8; an LSTM's c0 seed 9), every step then the final h (and c);
"<kind>_bidi" a bidirectional layer (backward weights seeds 4, 5, 6), its
[B, T, 2U] output (PyTorch's backward half is back in time order, as
Keras' Bidirectional with merge_mode concat) then the final states of both
directions. Run with Debian's
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


def load(layer, suffix, gates, order, seeds):
    kernel, rec = matrix(seeds[0], F, gates * U), matrix(seeds[1], U, gates * U)
    bias = matrix(seeds[2], 2, gates * U)  # row 0 input bias, row 1 recurrent (GRU only)
    getattr(layer, "weight_ih_l0" + suffix).copy_(keras_to_torch(kernel, order, U).T)
    getattr(layer, "weight_hh_l0" + suffix).copy_(keras_to_torch(rec, order, U).T)
    getattr(layer, "bias_ih_l0" + suffix).copy_(keras_to_torch(bias[0], order, U))
    if gates == 3:
        getattr(layer, "bias_hh_l0" + suffix).copy_(keras_to_torch(bias[1], order, U))
    else:
        getattr(layer, "bias_hh_l0" + suffix).zero_()


def show(name, *tensors):
    print(name, " ".join("%.17g" % v for t in tensors for v in t.flatten().tolist()))


def run(kind, gates, order, cls):
    layer = cls(F, U, batch_first=True).double()
    with torch.no_grad():
        load(layer, "", gates, order, (1, 2, 3))
        show(kind, layer(inputs())[0])
        h0 = matrix(8, B, U).unsqueeze(0)
        if kind == "lstm":
            y, (h, c) = layer(inputs(), (h0, matrix(9, B, U).unsqueeze(0)))
            show(kind + "_state", y, h, c)
        else:
            y, h = layer(inputs(), h0)
            show(kind + "_state", y, h)
        bidi = cls(F, U, batch_first=True, bidirectional=True).double()
        load(bidi, "", gates, order, (1, 2, 3))
        load(bidi, "_reverse", gates, order, (4, 5, 6))
        y, state = bidi(inputs())
        show(kind + "_bidi", y, state[0] if kind == "lstm" else state)


run("simple", 1, [0], torch.nn.RNN)
run("lstm", 4, [0, 1, 2, 3], torch.nn.LSTM)
run("gru", 3, [1, 0, 2], torch.nn.GRU)  # Keras z r h -> PyTorch r z n
