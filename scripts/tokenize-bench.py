#!/usr/bin/env python3
"""Tokenizer throughput on one core: `gpudays data tokenize` against the `tokenizers` package
(RAYON_NUM_THREADS=1, one document after another) on the same JSONL corpus and tokenizer.json,
best of --repeats runs each, in MB of UTF-8 text per second. Checks the ids are identical.
Run under the ref venv: .venv/bin/python scripts/tokenize-bench.py --jsonl F --tokenizer T."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jsonl", required=True)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--gpudays", default="build/gpudays")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from tokenizers import Tokenizer
    import numpy

    texts = [json.loads(line)["text"] for line in open(args.jsonl, encoding="utf-8") if line.strip()]
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    tok = Tokenizer.from_file(args.tokenizer)
    best_ref = best_batch = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        ref_ids = [tok.encode(t, add_special_tokens=False).ids for t in texts]
        best_ref = min(best_ref, time.perf_counter() - start)
        start = time.perf_counter()
        tok.encode_batch(texts, add_special_tokens=False)
        best_batch = min(best_batch, time.perf_counter() - start)
    best_ours = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            out = subprocess.run(["taskset", "-c", "0", args.gpudays, "data", "tokenize", "--tokenizer",
                                  args.tokenizer, "--out", f"{tmp}/bench", args.jsonl],
                                 check=True, capture_output=True, text=True).stdout
            best_ours = min(best_ours, float(re.search(r"in ([0-9.]+) s", out).group(1)))
        ours = numpy.fromfile(f"{tmp}/bench.bin", dtype=numpy.uint16).tolist()
    eod = tok.token_to_id("<|endoftext|>")
    expected = [i for ids in ref_ids for i in ids + [eod]]
    print(f"corpus: {len(texts)} documents, {megabytes:.2f} MB; vocabulary {tok.get_vocab_size()}")
    print(f"tokenizers 1 thread: encode {megabytes / best_ref:.2f} MB/s, "
          f"encode_batch {megabytes / best_batch:.2f} MB/s")
    print(f"gpudays data tokenize, 1 core: {megabytes / best_ours:.2f} MB/s (tokenizing and writing)")
    print(f"identical ids: {ours == expected}")
    sys.exit(0 if ours == expected else 1)


if __name__ == "__main__":
    main()
