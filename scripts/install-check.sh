#!/usr/bin/env bash
# The installed gpudays away from its checkout (CTest entry Install.Relocatable; docs/install.md):
# installs BUILD_DIR into a temporary prefix, moves that prefix elsewhere, and runs `--version`,
# `models`, `plan`, `cost`, `report`, `data tokenize`, a tiny CPU `bench` and `train` from it with
# an empty environment, in a fresh working directory, with the source tree (and so .venv and the
# build tree) hidden behind an empty mount where this machine allows a private mount namespace;
# then the same from the unpacked `make dist` tarball. The CUDA variant (`make test-cuda` runs this
# on build-cuda/) links the torch wheel it was built against, here the checkout's .venv: its
# commands run with the checkout visible and no tarball. Prints each step; exits 1 on the first
# that fails.
#   scripts/install-check.sh BUILD_DIR
set -euo pipefail
build_dir=$(cd "${1:-build}" && pwd)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/gpudays-install-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build_dir" --prefix "$tmp/staged" >/dev/null
mv "$tmp/staged" "$tmp/moved"  # an install moves anywhere
mkdir -p "$tmp/inputs"
cp "$source_dir/tests/data/kjv-genesis.jsonl" "$source_dir/tests/data/kjv-genesis-tokenizer.json" \
  "$tmp/inputs/"
cat > "$tmp/inputs/tiny.toml" <<'TOML'
name = "tiny-install-check"
family = "gpt_neox"
[arch]
n_layers = 2
d_model = 64
n_heads = 4
d_ffn = 256
vocab_size = 512
seq_len = 32
rotary_pct = 0.25
[recipe]
global_batch = 8
train_steps = 4
precision = "fp32"
optimizer = "adamw"
lr = 0.001
schedule = "constant"
TOML
cat > "$tmp/inputs/run.toml" <<'TOML'
model_file = "tiny.toml"
gpu = "cpu"
[methods]
sharding = "none"
[batch]
global_batch = 8
micro_batch_size = 8
grad_acc_steps = 1
[train]
checkpoint_interval = 0
log_interval = 1
TOML

# The commands, run by `sh` in the namespace (or not) with an empty environment.
cat > "$tmp/commands.sh" <<'SH'
set -eu
export OMP_NUM_THREADS=1
prefix=$1
work=$2
cd "$work"
cp "$3"/* .
step() { echo "install-check: $*"; "$@" > "$work/last.out" 2>&1 || { cat "$work/last.out"; exit 1; }; }
g="$prefix/bin/gpudays"
step "$g" --version
grep -q "catalog $prefix/share/gpudays (installed)" last.out || { cat last.out; exit 1; }
step "$g" models
grep -q tinyllama-1.1b last.out
step "$g" plan --model pythia-70m --gpu a100
step "$g" cost --model pythia-70m
step "$g" report --out report
test -s report/index.html
step "$g" data tokenize --tokenizer kjv-genesis-tokenizer.json --eod '<|endoftext|>' \
  kjv-genesis.jsonl --out kjv
if [ "$4" = torch ]; then
  step "$g" bench --model-file tiny.toml --device cpu --methods naive --steps 3 \
    --db bench.db
  step "$g" best --model tiny-install-check --gpu cpu --db bench.db
  step "$g" train --config run.toml --data kjv --out run
  grep -q "trained 4 steps" last.out
fi
echo "install-check: $prefix: every command ran"
SH

torch=torch
"$build_dir/gpudays" --help | grep -q " train " || torch=none
run_from() {  # PREFIX: the commands from there, the source tree hidden where possible
  local work
  work=$(mktemp -d "$tmp/work.XXXXXX")
  local cmd=(env -i PATH=/usr/bin:/bin HOME="$work" sh "$tmp/commands.sh" "$1" "$work"
             "$tmp/inputs" "$torch")
  if grep -q "cuda build" "$1/share/gpudays/BUILD"; then
    echo "install-check: the CUDA variant loads the wheel it was built against: $source_dir stays"
    "${cmd[@]}"
  elif unshare -m --propagation private true 2>/dev/null; then
    echo "install-check: $source_dir hidden (private mount namespace)"
    unshare -m --propagation private sh -c \
      'mount -t tmpfs none "$0" && exec "$@"' "$source_dir" "${cmd[@]}"
  else
    echo "install-check: no private mount namespace here: $source_dir stays visible;" \
         "ldd and --version show what the binary uses"
    "${cmd[@]}"
  fi
  if env -i ldd "$1/bin/gpudays" | grep -q -e "not found" ||
    { grep -q "cpu build" "$1/share/gpudays/BUILD" && env -i ldd "$1/bin/gpudays" | grep -q "$source_dir"; }; then
    env -i ldd "$1/bin/gpudays"
    echo "install-check: $1/bin/gpudays loads a library from the checkout or misses one" >&2
    exit 1
  fi
}

run_from "$tmp/moved"
if grep -q "cpu build" "$tmp/moved/share/gpudays/BUILD"; then
  tarball=$(bash "$source_dir/scripts/make-dist.sh" "$build_dir" | cut -d' ' -f1)
  mkdir -p "$tmp/unpacked"
  tar -C "$tmp/unpacked" -xzf "$tarball"
  run_from "$(ls -d "$tmp"/unpacked/gpudays-*)"
fi
