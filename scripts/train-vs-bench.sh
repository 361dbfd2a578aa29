#!/usr/bin/env bash
# Training throughput on the CPU next to the benchmark's measurement of the same settings: a
# `gpudays trial` (whole steps) of tests/data/bench-gpt-neox.toml, then `gpudays train` with the
# same micro-batch and accumulation on random tokens; prints both step times (median, the first
# steps of training left out as warm-up). docs/train.md quotes its output. About a minute on two
# cores; needs build/gpudays. Overrides: GPUDAYS (the binary), MICRO (8), ACC (4), STEPS (20).
set -euo pipefail
cd "$(dirname "$0")/.."

gpudays=${GPUDAYS:-build/gpudays}
micro=${MICRO:-8}
acc=${ACC:-4}
steps=${STEPS:-20}
if [ ! -x "$gpudays" ]; then
  echo "train-vs-bench: $gpudays not built (make build-gpudays)" >&2
  exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "train-vs-bench: tests/data/bench-gpt-neox.toml, fp32, no methods, micro-batch $micro x" \
  "accumulation $acc, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
  "$(nproc --all) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start;" \
  "$(date -u '+%Y-%m-%d %H:%M UTC'); gpudays $(git rev-parse --short HEAD 2> /dev/null || echo unknown)"

cat > "$dir/spec.json" << EOF
{"model": "", "model_file": "$PWD/tests/data/bench-gpt-neox.toml", "device": "cpu",
 "free_lunch": false, "activation_checkpointing": false, "sharding": "none", "offloading": false,
 "micro_batch_size": $micro, "grad_acc_steps": $acc, "warmup_steps": 1, "timed_steps": 5,
 "memory_limit_bytes": 0, "timing": "whole", "check_steps": 0}
EOF
"$gpudays" trial --spec "$dir/spec.json" > "$dir/trial.json"

cat > "$dir/run.toml" << EOF
model_file = "$PWD/tests/data/bench-gpt-neox.toml"
gpu = "cpu"
[methods]
sharding = "none"
[batch]
global_batch = $((micro * acc))
micro_batch_size = $micro
grad_acc_steps = $acc
[schedule]
steps = $steps
[train]
checkpoint_interval = 0
eval_interval = 0
log_interval = $steps
EOF
python3 -c "
import random, struct, sys
random.seed(1)
sys.stdout.buffer.write(struct.pack('<200000H', *[random.randrange(512) for _ in range(200000)]))
" > "$dir/tokens.u16"
"$gpudays" train --config "$dir/run.toml" --data "$dir/tokens.u16" --out "$dir/out" > /dev/null 2>&1

python3 - "$dir/trial.json" "$dir/out/metrics.jsonl" "$((micro * acc * 128))" << 'EOF'
import json, statistics, sys
trial = json.load(open(sys.argv[1]))
steps = [json.loads(line)["step_time_s"] for line in open(sys.argv[2])][3:]
tokens = int(sys.argv[3])
bench_s, train_s = trial["step_time_median_s"], statistics.median(steps)
print(f"bench trial (5 whole steps): {bench_s:.3f} s/step, {tokens / bench_s:,.0f} tokens/s")
print(f"train ({len(steps)} steps after 3): {train_s:.3f} s/step, {tokens / train_s:,.0f} tokens/s"
      f" (step time {100 * (train_s / bench_s - 1):+.1f}% against the trial's)")
EOF
