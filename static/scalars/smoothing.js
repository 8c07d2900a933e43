// smoothing.js — TensorBoard's debiased exponential moving average.
//
// last = last * w + (1 - w) * value, divided by (1 - w^n) so the first
// points are not pulled towards 0. Non-finite values pass through (they
// are drawn as markers) and do not disturb the average; a constant series
// stays exactly constant.
export function smooth(values, weight) {
  const out = new Array(values.length);
  const finite = values.filter((v) => v !== null && Number.isFinite(v));
  const constant = finite.every((v) => v === finite[0]);
  let last = 0, n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || !Number.isFinite(v) || constant || weight <= 0) { out[i] = v; continue; }
    last = last * weight + (1 - weight) * v;
    n++;
    out[i] = weight === 1 ? last : last / (1 - Math.pow(weight, n));
  }
  return out;
}

// The q-quantile (0..1) of the finite values (for "ignore outliers").
export function quantile(values, q) {
  const s = values.filter((v) => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (!s.length) return null;
  const pos = (s.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}
