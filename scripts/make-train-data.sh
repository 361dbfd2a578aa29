#!/usr/bin/env bash
# Makes the trainer's end-to-end training data in OUT (default out/train-data): kjv.jsonl (the King
# James Bible from Debian's bible-kjv, one document per chapter, seeded order), tokenizer.json (a
# byte-level BPE of VOCAB tokens trained by `tokenizers` on half the chapters) and kjv.bin/kjv.idx
# (the whole text tokenized by `gpudays data tokenize`). Usage: make-train-data.sh [OUT] [VOCAB]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/train-data}
vocab=${2:-4096}

if ! command -v bible >/dev/null; then
  echo "make-train-data: installing bible-kjv"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends bible-kjv >/dev/null
fi
bash scripts/install-torch.sh ref .venv   # tokenizers
[ -x build/gpudays ] || make build-gpudays
.venv/bin/python scripts/make-train-data.py --out "$out" --gpudays build/gpudays --vocab-size "$vocab"
