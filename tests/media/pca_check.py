"""media/pca_check.py — the Projector's PCA against NumPy's SVD.

    pca_check.py NODE PCA_DUMP WORK_DIR

For matrices of 2,000 x 128 and 600 x 300 (clusters with a spread of
variances, like activations), the components the page computes
(static/projector/pca.js through pca_dump.mjs) must be NumPy's right
singular vectors of the centered float64 matrix, the sign fixed by the
largest entry, to 1e-9, and each one's share of the variance S**2 /
sum(S**2) to 1e-12; the projected points must be the centered rows times
the components, to float32 precision.
"""
import json
import os
import subprocess
import sys

import numpy as np

node, dump, work = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
failures = []
rng = np.random.default_rng(5)

for n, d in ((2000, 128), (600, 300)):
    centres = rng.normal(0, 3, (10, d))
    scales = np.linspace(2.0, 0.1, d)
    x = (centres[rng.integers(0, 10, n)] + rng.normal(0, 1, (n, d)) * scales).astype(np.float32)
    path = os.path.join(work, f"m{n}x{d}.f32")
    x.astype("<f4").tofile(path)
    out = json.loads(subprocess.run([node, dump, path, str(n), str(d)], capture_output=True, text=True,
                                    check=True).stdout)
    xc = x.astype(np.float64)
    xc -= xc.mean(axis=0)
    _, s, vt = np.linalg.svd(xc, full_matrices=False)
    ratio = s ** 2 / np.sum(s ** 2)
    for k in range(10):
        v = vt[k] * np.sign(vt[k][np.argmax(np.abs(vt[k]))])
        got = np.array(out["components"][k])
        err = np.max(np.abs(got - v))
        if err > 1e-9:
            failures.append(f"{n}x{d}: component {k} differs from NumPy's by {err:.3g}")
        if abs(out["ratio"][k] - ratio[k]) > 1e-12:
            failures.append(f"{n}x{d}: component {k} explains {out['ratio'][k]!r}, NumPy {ratio[k]!r}")
        if abs(out["variance"][k] - s[k] ** 2 / (n - 1)) > 1e-9 * s[0] ** 2 / (n - 1):
            failures.append(f"{n}x{d}: component {k}'s variance {out['variance'][k]!r}, NumPy {s[k] ** 2 / (n - 1)!r}")
    signs = [np.sign(vt[k][np.argmax(np.abs(vt[k]))]) for k in range(3)]
    want = (xc[:5] @ (vt[:3].T * signs)).reshape(-1)
    got = np.array(out["projection"])
    if np.max(np.abs(got - want)) > 1e-5 * np.max(np.abs(want)):
        failures.append(f"{n}x{d}: projected points differ: {got[:3]} against {want[:3]}")
    print(f"{n}x{d}: ratios {np.round(out['ratio'][:3], 6)} (NumPy {np.round(ratio[:3], 6)})")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("pca_check: components and explained variance agree with NumPy's SVD")
