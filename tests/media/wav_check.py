"""media/wav_check.py — the audio summaries' WAV files, read by Python's
wave module and by sox, hold the samples written.

    wav_check.py AUDIO_DUMP WORK_DIR

Writes a tensor of 2 stereo clips (a sine, a ramp from -1.5 to 1.5 that
clips) and a third clip past max_outputs through audio_dump; each stored
WAV must read back, with both readers, as round(clip(x, -1, 1) * 32767) of
the float32 values, at the sample rate and channel count written, and the
clipped counts must be exact. Then a NaN must be refused by name, word
for word.
"""
import os
import subprocess
import sys
import wave

import numpy as np

dump, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
store = os.path.join(work, "audio.db")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(values, rate, k, frames, channels, max_outputs):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    text = "\n".join(repr(float(v)) for v in values.reshape(-1))
    out = subprocess.run([dump, store, work, str(rate), str(k), str(frames), str(channels), str(max_outputs)],
                         input=text, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


rate, frames, channels = 22050, 1000, 2
t = np.arange(frames) / rate
x = np.zeros((3, frames, channels), dtype=np.float32)
x[0, :, 0] = 0.8 * np.sin(2 * np.pi * 440 * t)
x[0, :, 1] = 0.5 * np.sin(2 * np.pi * 660 * t)
x[1, :, 0] = np.linspace(-1.5, 1.5, frames)
x[1, :, 1] = -np.linspace(-1.5, 1.5, frames)
x[2] = 0.25
lines = run(x, rate, 3, frames, channels, 2)

check(len(lines) == 2, f"two clips stored of three (max_outputs 2), got {lines}")
for i, line in enumerate(lines):
    clip = x[i].astype(np.float64)
    expected = np.round(np.clip(clip, -1, 1) * 32767).astype(np.int16)
    clipped = int(np.sum(np.abs(clip) > 1))
    want = f"clip {i} rate {rate} channels {channels} frames {frames} clipped {clipped} bytes {44 + frames * channels * 2}"
    check(line == want, f"clip {i}: '{line}' != '{want}'")
    path = os.path.join(work, f"clip{i}.wav")
    with wave.open(path, "rb") as w:
        check(w.getnchannels() == channels, f"clip {i}: wave says {w.getnchannels()} channels")
        check(w.getsampwidth() == 2, f"clip {i}: wave says {w.getsampwidth()} bytes a sample")
        check(w.getframerate() == rate, f"clip {i}: wave says {w.getframerate()} Hz")
        check(w.getnframes() == frames, f"clip {i}: wave says {w.getnframes()} frames")
        got = np.frombuffer(w.readframes(frames), dtype="<i2").reshape(frames, channels)
    check(np.array_equal(got, expected), f"clip {i}: wave's samples differ from the values written "
          f"(first difference at {np.argwhere(got != expected)[:1].tolist()})")
    info = subprocess.run(["sox", "--i", path], capture_output=True, text=True, check=True).stdout
    check(f"Sample Rate    : {rate}" in info and f"Channels       : {channels}" in info
          and "16-bit Signed Integer PCM" in info, f"clip {i}: sox --i says\n{info}")
    raw = subprocess.run(["sox", path, "-t", "raw", "-e", "signed-integer", "-b", "16", "-L", "-"],
                         capture_output=True, check=True).stdout
    sox = np.frombuffer(raw, dtype="<i2").reshape(-1, channels)
    check(np.array_equal(sox, expected), f"clip {i}: sox's samples differ from the values written")
check(int(lines[1].split()[9]) == 2 * 334, f"the ramps clip 2 x 334 samples: {lines[1]}")

bad = np.zeros((1, 4, 1), dtype=np.float32)
bad[0, 2, 0] = np.nan
lines = run(bad, 8000, 1, 4, 1, 1)
want = "refused: gb_summary_audio 'sound': clip 0, frame 2, channel 0 is nan: audio must be finite"
check(lines == [want], f"a NaN: {lines} != ['{want}']")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("wav_check: the WAV files read back exactly with wave and sox")
