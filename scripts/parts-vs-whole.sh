#!/usr/bin/env bash
# Times real CPU trials of tests/data/bench-gpt-neox.toml both ways, the step composed from its timed
# parts and whole steps (`gpudays trial` with timing "parts" and a check of whole steps), and
# prints composed / whole per configuration and thread count, then two ranks under mpirun.
# docs/bench.md quotes its output. About 2 minutes on two cores; needs build/gpudays (make
# build-gpudays). Overrides: GPUDAYS (the binary), PARTS_STEPS (timed steps each way, 3),
# PARTS_THREADS (the OMP_NUM_THREADS values, "1 2").
set -euo pipefail
cd "$(dirname "$0")/.."

gpudays=${GPUDAYS:-build/gpudays}
steps=${PARTS_STEPS:-3}
threads_list=${PARTS_THREADS:-1 2}
if [ ! -x "$gpudays" ]; then
  echo "parts-vs-whole: $gpudays not built (make build-gpudays)" >&2
  exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "parts-vs-whole: tests/data/bench-gpt-neox.toml, free-lunch, $steps steps each way, median"
echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
  "$(nproc --all) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start;" \
  "$(date -u '+%Y-%m-%d %H:%M UTC'); gpudays $(git rev-parse --short HEAD 2> /dev/null || echo unknown)"

# spec FILE MICRO_BATCH ACCUMULATION
spec() {
  cat > "$1" << EOF
{"model": "", "model_file": "$PWD/tests/data/bench-gpt-neox.toml", "device": "cpu",
 "free_lunch": true, "activation_checkpointing": false, "sharding": "none", "offloading": false,
 "micro_batch_size": $2, "grad_acc_steps": $3, "warmup_steps": 1, "timed_steps": $steps,
 "memory_limit_bytes": 0, "timing": "parts", "check_steps": $steps}
EOF
}

# report LABEL ACCUMULATION: reads a trial's output on stdin, prints whole and composed steps. The
# composition is recomputed from the reported parts, as the trial composes it (docs/bench.md).
cat > "$dir/report.py" << 'EOF'
import json, sys
label, acc, text = sys.argv[1], int(sys.argv[2]), sys.stdin.read()
j = json.loads(text[text.rfind("{"):])
if j["status"] != "ok":
    print(f"{label:<34} {j['status']}: {j['message']}")
    sys.exit(0)
composed = (acc - 1) * j["micro_step_time_s"] + j["last_micro_step_time_s"] + j["optimizer_time_s"]
whole = j["check_step_time_s"]
print(f"{label:<34} composed {composed:.3f} s, whole {whole:.3f} s "
      f"({100 * (composed / whole - 1):+.1f}%), check: {j['timing_check']}")
EOF
report() { python3 "$dir/report.py" "$1" "$2"; }

for threads in $threads_list; do
  for shape in "1 32" "4 8" "8 4"; do
    read -r micro acc <<< "$shape"
    spec "$dir/spec.json" "$micro" "$acc"
    OMP_NUM_THREADS=$threads "$gpudays" trial --spec "$dir/spec.json" 2> /dev/null |
      report "$micro x $acc, OMP_NUM_THREADS=$threads" "$acc"
  done
done

if command -v mpirun > /dev/null; then
  spec "$dir/spec.json" 4 4
  root=()
  [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
  mpirun "${root[@]}" --oversubscribe -np 2 -x OMP_NUM_THREADS=1 "$gpudays" trial \
    --spec "$dir/spec.json" 2> /dev/null | report "2 ranks, 4 x 4 per rank, 1 thread" 4
else
  echo "2 ranks: no mpirun"
fi
