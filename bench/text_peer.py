"""Python peer for bench/text_bench.c: the same fortunes tokenized the way a
PyTorch text pipeline does it in Python (torchtext's basic_english is this:
lower case, a regex, str.split, a dict lookup per token), 64 ids per
fortune (padded with 0 or cut) as the glassbox side's TextVectorization
gives them (output_mode int, output_sequence_length 64).

Prints `text_vectorize_strings_per_s <median>`: fortunes per second over
the whole corpus, the vocabulary built once beforehand, as on the glassbox
side.
"""
import collections
import glob
import re
import statistics
import sys
import time

STRIP = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')


def read_fortunes(directory):
    records = []
    for path in sorted(glob.glob(directory + "/*")):
        if "." in path.rsplit("/", 1)[-1]:  # the .dat indexes and .u8 links
            continue
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        records += [r.strip("\n") for r in re.split(r"^%\r?$", text, flags=re.M) if r.strip("\n")]
    return records


def tokenize(s):
    return STRIP.sub("", s.lower()).split()


def main():
    records = read_fortunes(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/games/fortunes")
    counts = collections.Counter(t for r in records for t in tokenize(r))
    vocab = {t: i + 2 for i, (t, _) in enumerate(counts.most_common(19998))}

    def vectorize():
        out = []
        for r in records:
            ids = [vocab.get(t, 1) for t in tokenize(r)][:64]
            out.append(ids + [0] * (64 - len(ids)))
        return out

    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        vectorize()
        samples.append(len(records) / (time.perf_counter() - t0))
    print("text_vectorize_strings_per_s", statistics.median(samples))


main()
