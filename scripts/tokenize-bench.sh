#!/usr/bin/env bash
# Tokenizer throughput on one core (docs/data.md): the King James Bible of scripts/make-train-data.sh
# tokenized by `gpudays data tokenize` and by the `tokenizers` package on one thread, with
# tokenizers of 4,096 tokens and of as many as `tokenizers` learns toward 50,000 from half the
# chapters; prints the machine, MB/s of each and whether the ids are identical.
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/tokenize-bench
bash scripts/make-train-data.sh "$out/4k" 4096 >/dev/null
bash scripts/make-train-data.sh "$out/50k" 50000 >/dev/null
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC'); gpudays $(git rev-parse --short HEAD)"
for vocab in 4k 50k; do
  .venv/bin/python scripts/tokenize-bench.py --jsonl "$out/$vocab/kjv.jsonl" \
    --tokenizer "$out/$vocab/tokenizer.json" 2>/dev/null
done
