// spectrogram.worker.js — the Audio page's spectrograms, off the page's
// thread: { id, samples: Float32Array, height } in, { id, width, height,
// pixels: Uint8ClampedArray RGBA, frames, bins } out: one column per STFT
// frame, low frequencies at the bottom, coloured from dark (quiet, -80 dB)
// to yellow (loudest).

import { spectrogram } from './spectrogram.js';

// A perceptual dark-to-bright ramp (magma-like), as [t, r, g, b] stops.
const STOPS = [[0, 0, 0, 4], [0.25, 80, 18, 123], [0.5, 182, 54, 121], [0.75, 251, 136, 97], [1, 252, 253, 191]];

function colour(t, out, o) {
  let k = 1;
  while (k < STOPS.length - 1 && STOPS[k][0] < t) k++;
  const [t0, r0, g0, b0] = STOPS[k - 1], [t1, r1, g1, b1] = STOPS[k];
  const u = Math.min(1, Math.max(0, (t - t0) / (t1 - t0)));
  out[o] = r0 + (r1 - r0) * u;
  out[o + 1] = g0 + (g1 - g0) * u;
  out[o + 2] = b0 + (b1 - b0) * u;
  out[o + 3] = 255;
}

self.onmessage = (ev) => {
  const { id, samples } = ev.data;
  const size = samples.length >= 8192 ? 512 : 256;
  const s = spectrogram(samples, { size, hop: size / 4, range: 80 });
  const width = s.frames, height = s.bins;
  const pixels = new Uint8ClampedArray(width * height * 4);
  for (let f = 0; f < width; f++) {
    for (let b = 0; b < height; b++) {
      const t = (s.db[f * s.bins + b] + 80) / 80;
      colour(t, pixels, ((height - 1 - b) * width + f) * 4);
    }
  }
  self.postMessage({ id, width, height, pixels, frames: s.frames, bins: s.bins }, [pixels.buffer]);
};
