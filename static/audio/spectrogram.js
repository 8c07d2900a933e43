// spectrogram.js — a short-time Fourier transform of a clip, as the Audio
// page draws it: Hann windows of `size` samples (a power of two) every
// `hop` samples, the magnitude of each frequency bin in decibels relative
// to the loudest bin of the clip, clamped to `range` dB below it. Returns
// { frames, bins, db: Float32Array frames*bins (bin 0 = 0 Hz) }. Pure: the
// worker runs it, node's tests check a tone lands in its bin.

// In-place iterative radix-2 FFT of re/im (length a power of two).
export function fft(re, im) {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len, wr = Math.cos(ang), wi = Math.sin(ang);
    for (let i = 0; i < n; i += len) {
      let cr = 1, ci = 0;
      for (let k = 0; k < len / 2; k++) {
        const a = i + k, b = a + len / 2;
        const tr = re[b] * cr - im[b] * ci, ti = re[b] * ci + im[b] * cr;
        re[b] = re[a] - tr; im[b] = im[a] - ti;
        re[a] += tr; im[a] += ti;
        const nr = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = nr;
      }
    }
  }
}

export function spectrogram(samples, { size = 512, hop = 128, range = 80 } = {}) {
  const bins = size / 2 + 1;
  const frames = Math.max(1, Math.floor((samples.length - size) / hop) + 1);
  const db = new Float32Array(frames * bins);
  const window = new Float64Array(size).map((_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size));
  const re = new Float64Array(size), im = new Float64Array(size);
  let peak = -Infinity;
  for (let f = 0; f < frames; f++) {
    for (let i = 0; i < size; i++) {
      re[i] = (samples[f * hop + i] ?? 0) * window[i];
      im[i] = 0;
    }
    fft(re, im);
    for (let b = 0; b < bins; b++) {
      const v = 10 * Math.log10(re[b] * re[b] + im[b] * im[b] + 1e-20);
      db[f * bins + b] = v;
      if (v > peak) peak = v;
    }
  }
  for (let i = 0; i < db.length; i++) db[i] = Math.max(-range, db[i] - peak);
  return { frames, bins, db };
}
