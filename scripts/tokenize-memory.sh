#!/usr/bin/env bash
# Peak memory of `gpudays data tokenize` on one large one-document file (docs/data.md): the
# Genesis texts of tests/data, joined and repeated to MB megabytes (default 200), tokenized under
# /usr/bin/time -v. GPUDAYS picks the binary; TOKENIZER the tokenizer.json (default
# tests/data/kjv-genesis-tokenizer.json) and EOD its end-of-document token (default <|endoftext|>;
# </s> for tests/data/kjv-genesis-llama-tokenizer.json).
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-200}
gpudays=${GPUDAYS:-build/gpudays}
tokenizer=${TOKENIZER:-tests/data/kjv-genesis-tokenizer.json}
eod=${EOD:-<|endoftext|>}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/doc.txt" "$mb" <<'PY'
import json, sys
texts = [json.loads(line)["text"] for line in open("tests/data/kjv-genesis.jsonl", encoding="utf-8")]
text = "\n\n".join(texts)
limit, written = int(sys.argv[2]) * 1024 * 1024, 0
with open(sys.argv[1], "w", encoding="utf-8") as out:
    while written < limit:
        out.write(text)
        written += len(text.encode())
PY
echo "tokenize-memory: one document of $(stat -c %s "$work/doc.txt") bytes; $("$gpudays" --version)"
/usr/bin/time -v "$gpudays" data tokenize --tokenizer "$tokenizer" --eod "$eod" \
  "$work/doc.txt" --out "$work/ds" 2> "$work/time"
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$work/time"
sha256sum "$work/ds.bin" "$work/ds.idx" | sed "s|$work/||"
