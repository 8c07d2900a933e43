#!/usr/bin/env python3
"""The PR counts glassbox stores, held against scikit-learn on the same
predictions, to the last count.

    sklearn_check.py PR_CURVE_DUMP WORK_DIR

Predictions lie on the thresholds' grid (k / 128 with 129 thresholds), or
3/512 above it, so "floor(p * 128) >= i" and scikit-learn's "p >= t"
select the same examples and both sides count exactly. At every threshold
glassbox's TP, FP, TN and FN must equal the cumulative counts of
sklearn.metrics' _binary_clf_curve at the smallest prediction at or above
it (0 when none), and its precision and recall the values of
precision_recall_curve there, as doubles, bit for bit. Unweighted, with
weights (multiples of 1/4, so every sum is exact), and off the grid.
Without scikit-learn, the same counts come from NumPy directly.
"""
import os
import subprocess
import sys

import numpy as np

try:
    from sklearn.metrics import precision_recall_curve
    from sklearn.metrics._ranking import _binary_clf_curve
    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - Debian's python3-sklearn missing
    HAVE_SKLEARN = False

T = 129


def glassbox(dump, store, labels, preds, weights):
    text = "%d %d\n" % (T, len(labels)) + "".join(
        "%d %.17g %.17g\n" % (l, p, w) for l, p, w in zip(labels, preds, weights))
    out = subprocess.run([dump, store], input=text, capture_output=True, text=True, check=True)
    rows = [[float(x) for x in line.split()] for line in out.stdout.splitlines()]
    return np.array(rows)  # columns tp fp tn fn precision recall


def reference(labels, preds, weights):
    """tps, fps at descending distinct thresholds, and precision/recall there."""
    if HAVE_SKLEARN:
        fps, tps, thr = _binary_clf_curve(labels, preds, sample_weight=weights)
        precision, recall, thr2 = precision_recall_curve(labels, preds, sample_weight=weights)
        assert np.array_equal(thr2[::-1], thr) or np.array_equal(np.sort(thr2), np.sort(thr))
        # precision_recall_curve returns ascending thresholds (and a last
        # point (1, 0) without one): map each threshold to its values.
        pr = {t: (precision[i], recall[i]) for i, t in enumerate(thr2)}
        return tps, fps, thr, pr
    thr = np.unique(preds)[::-1]
    tps = np.array([np.sum(weights * (labels == 1) * (preds >= t)) for t in thr])
    fps = np.array([np.sum(weights * (labels == 0) * (preds >= t)) for t in thr])
    pr = {t: (tp / (tp + fp), tp / tps[-1]) for t, tp, fp in zip(thr, tps, fps)}
    return tps, fps, thr, pr


def check(dump, store, labels, preds, weights, name):
    got = glassbox(dump, store, labels, preds, weights)
    tps, fps, thr, pr = reference(labels, preds, weights)
    total_p = np.sum(weights * (labels == 1))
    total_n = np.sum(weights * (labels == 0))
    compared = 0
    for i in range(T):
        t = i / (T - 1)
        above = np.nonzero(thr >= t)[0]
        tp = tps[above[-1]] if len(above) else 0.0
        fp = fps[above[-1]] if len(above) else 0.0
        row = got[i]
        want = [tp, fp, total_n - fp, total_p - tp]
        if list(row[:4]) != want:
            sys.exit("%s: threshold %d: glassbox tp fp tn fn %s, reference %s"
                     % (name, i, list(row[:4]), want))
        if len(above):   # the same examples as the smallest prediction >= t
            p, r = pr[thr[above[-1]]]
            if row[4] != p or row[5] != r:
                sys.exit("%s: threshold %d: glassbox precision %.17g recall %.17g, "
                         "reference %.17g %.17g" % (name, i, row[4], row[5], p, r))
            compared += 1
    if compared < 50:
        sys.exit("%s: only %d thresholds were predictions; the check compares too little"
                 % (name, compared))
    print("%s: %d thresholds equal, %d of them precision and recall too (%s)"
          % (name, T, compared, "scikit-learn" if HAVE_SKLEARN else "NumPy"))


def main():
    dump, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(30)
    n = 5000
    labels = rng.integers(0, 2, n)
    # Positives lean high, negatives low, as a classifier's scores do.
    k = np.clip(rng.normal(np.where(labels == 1, 80, 48), 25), 0, 128).astype(int)
    preds = k / 128.0
    # Off the grid: 3/512 above a threshold, which floor() keeps in the
    # bucket below and rounding would not (exact in binary too).
    off = np.minimum(k, 127) / 128.0 + 3 / 512.0
    for name, p, weights in (("unweighted", preds, np.ones(n)),
                             ("weighted", preds, rng.integers(0, 9, n) / 4.0),
                             ("between thresholds", off, np.ones(n))):
        store = os.path.join(work, name.replace(" ", "_") + ".db")
        for f in (store, store + "-wal", store + "-shm"):
            if os.path.exists(f):
                os.remove(f)
        check(dump, store, labels, p, weights, name)


if __name__ == "__main__":
    main()
