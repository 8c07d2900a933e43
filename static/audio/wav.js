// wav.js — reads the 16-bit PCM WAV files the audio summaries store:
// { sampleRate, channels, frames, samples: Float32Array (channel 0, or the
// channels' mean) }. Chunks are walked by their sizes, so a file with
// chunks beyond "fmt " and "data" reads too; anything but 16-bit PCM is
// refused by name.

export function readWav(buffer) {
  const v = new DataView(buffer);
  const tag = (o) => String.fromCharCode(v.getUint8(o), v.getUint8(o + 1), v.getUint8(o + 2), v.getUint8(o + 3));
  if (buffer.byteLength < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a WAV file');
  let fmt = null, data = null;
  for (let o = 12; o + 8 <= buffer.byteLength;) {
    const id = tag(o), size = v.getUint32(o + 4, true);
    if (id === 'fmt ') fmt = { format: v.getUint16(o + 8, true), channels: v.getUint16(o + 10, true),
      sampleRate: v.getUint32(o + 12, true), bits: v.getUint16(o + 22, true) };
    else if (id === 'data') data = { offset: o + 8, size: Math.min(size, buffer.byteLength - o - 8) };
    o += 8 + size + (size & 1);
  }
  if (!fmt || !data) throw new Error('the WAV file has no fmt or data chunk');
  if (fmt.format !== 1 || fmt.bits !== 16) throw new Error(`only 16-bit PCM is read, this is format ${fmt.format}, ${fmt.bits} bits`);
  const c = fmt.channels, frames = Math.floor(data.size / 2 / c);
  const samples = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    let s = 0;
    for (let k = 0; k < c; k++) s += v.getInt16(data.offset + 2 * (f * c + k), true);
    samples[f] = s / c / 32768;
  }
  return { sampleRate: fmt.sampleRate, channels: c, frames, samples };
}
