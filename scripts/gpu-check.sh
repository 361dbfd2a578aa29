#!/usr/bin/env bash
# The GPU check, for the device machine (one H200; torch in /opt/torch/.venv, nvcc, CMake, ninja; no
# network, none of our Debian packages: those come from .carry/, made here by
# scripts/prepare-carry.sh). Builds the CUDA variant, runs the *_CUDA tests, benchmarks pythia-160m
# and pythia-410m on one GPU with the naive, free-lunch and all presets, plans the same, and writes
# $OUT/report.md (scripts/gpu-check-report.py): MFU and the planner's predicted against the measured
# step time and memory. Each stage has a time budget inside GPU_CHECK_TOTAL_S (450 s), logs under
# $OUT, and a failing stage does not stop the later ones from reporting.
#
#   device tool: run(command="bash scripts/gpu-check.sh", carry=[".carry"], timeout_s=540)
#   here (no GPU: the tests skip, the benchmarks fail fast): OUT=out/gpu-check bash scripts/gpu-check.sh
#
# $OUT receives at most 6 files (the tool brings back 8): report.md, build.log, tests.log,
# bench.log, plan.log, gpudays.db.
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-$PWD/out/gpu-check}
TOTAL_S=${GPU_CHECK_TOTAL_S:-450}
JOBS=${GPU_CHECK_JOBS:-$(nproc)}
BUILD_S=${GPU_CHECK_BUILD_S:-300}  # the build's budget (a first build here, on 2 cores, takes ~25 min)
BUILD=${GPU_CHECK_BUILD_DIR:-build-cuda}
GPU=${GPU_CHECK_GPU:-h200}
# Benchmarked global batch (sequences): a full Pythia step (1024 x 2048 tokens) takes seconds to
# tens of seconds; 32 keeps each trial near a second per step. train_steps is scaled by 1024/32 so
# the days estimates still count Pythia's 300B tokens.
GLOBAL_BATCH=${GPU_CHECK_GLOBAL_BATCH:-32}
MODELS=(pythia-160m pythia-410m)
PRESETS=(naive free-lunch all)
PYTHON=${GPUDAYS_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)

mkdir -p "$OUT"
work=$(mktemp -d /tmp/gpu-check.XXXXXX)
start=$(date +%s)
: > "$work/stages.tsv"

# kill_tree PID: ends PID and everything below it. A trial runs in its own process group, which a
# signal to `gpudays bench` alone would leave running on the GPU.
kill_tree() {
  local pids=("$1") i=0 child
  while [ $i -lt ${#pids[@]} ]; do
    for child in $(pgrep -P "${pids[$i]}" 2>/dev/null); do pids+=("$child"); done
    i=$((i + 1))
  done
  kill -TERM "${pids[@]}" 2>/dev/null
  sleep 2
  kill -KILL "${pids[@]}" 2>/dev/null
}

# run_with_deadline SECONDS CMD...: CMD's exit status, or 124 when it ran out of time.
run_with_deadline() {
  local limit=$1 t=0 pid
  shift
  "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ $t -ge "$limit" ]; then
      kill_tree "$pid"
      wait "$pid" 2>/dev/null
      return 124
    fi
    sleep 1
    t=$((t + 1))
  done
  wait "$pid"
}

seconds_left() { echo $((TOTAL_S - ($(date +%s) - start))); }

# stage NAME LOG BUDGET_S CMD...: runs CMD for at most BUDGET_S (and what is left of TOTAL_S),
# appends its output to $OUT/LOG and its outcome to stages.tsv. Returns CMD's status.
stage() {
  local name=$1 log=$2 budget=$3 left t0 rc status
  shift 3
  left=$(seconds_left)
  [ "$budget" -gt "$left" ] && budget=$left
  if [ "$budget" -lt 5 ]; then
    printf '%s\tskipped: no time left\t0\n' "$name" >> "$work/stages.tsv"
    return 1
  fi
  echo "== $name (budget ${budget} s): $*" >> "$OUT/$log"
  t0=$(date +%s)
  run_with_deadline "$budget" "$@" >> "$OUT/$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then status=ok
  elif [ $rc -eq 124 ]; then status="timeout after ${budget} s"
  else status="failed (exit $rc)"; fi
  printf '%s\t%s\t%s\n' "$name" "$status" $(($(date +%s) - t0)) >> "$work/stages.tsv"
  echo "== $name: $status" >> "$OUT/$log"
  return $rc
}

build() {
  command -v ninja > /dev/null || export PATH="$PATH:$PWD/.carry/bin"
  command -v pkg-config > /dev/null || export PATH="$PATH:$PWD/.carry/bin"
  export PKG_CONFIG_PATH="$PWD/.carry/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$PWD/.carry/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -d .carry ] || echo "no .carry/: using this machine's packages (make it with scripts/prepare-carry.sh)"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUDAYS_WITH_TORCH=ON \
    -DGPUDAYS_CUDA=ON -DGPUDAYS_PYTHON="$PYTHON" \
    -DCMAKE_PREFIX_PATH="$PWD/.carry" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
    cmake --build "$BUILD" -j "$JOBS" --target gpudays gpudays_torch_tests
}

machine() {
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    "$PYTHON" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)' || true
    echo "commit $(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)"
  } | tee "$work/machine.txt"
}

# The model files benchmarked: the catalog's, at GLOBAL_BATCH sequences per step.
model_file() {
  local m=$1 f="$work/$1-gb$GLOBAL_BATCH.toml"
  [ -f "$f" ] || awk -v m="$m" -v gb="$GLOBAL_BATCH" '
    $1 == "name" && $3 == "\"" m "\"" { $0 = "name = \"" m "-gb" gb "\"" }
    $1 == "global_batch" { old = $3; $0 = "global_batch = " gb "  # gpu-check; the recipe has " old }
    $1 == "train_steps" { $0 = sprintf("train_steps = %d  # scaled by %d / %d", $3 * old / gb, old, gb) }
    { print }' "configs/models/$m.toml" > "$f"
  echo "$f"
}

# 1. Build (the torch-heavy part: about 150 objects on 16 cores).
stage build build.log "$BUILD_S" build
bin="$BUILD/gpudays"

# 2. The GPU tests.
stage machine tests.log 15 machine
stage cuda-tests tests.log 90 "$BUILD/tests/models/gpudays_torch_tests" --gtest_filter='*_CUDA' \
  --gtest_output="xml:$work/cuda-tests.xml"

# 3. Benchmarks: the time left (less 30 s for plans and the report) shared by the sweeps still to
# run; finished trials are in the database whatever happens to the sweep.
sweeps=$((${#MODELS[@]} * ${#PRESETS[@]}))
for m in "${MODELS[@]}"; do
  f=$(model_file "$m")
  for p in "${PRESETS[@]}"; do
    budget=$((($(seconds_left) - 30) / sweeps))
    trial_timeout=$((budget < 90 ? budget : 90))
    [ $trial_timeout -lt 5 ] && trial_timeout=5
    stage "bench $m $p" bench.log "$budget" "$bin" bench --model-file "$f" --device cuda \
      --gpu "$GPU" --methods "$p" --steps 3 --trial-timeout "$trial_timeout" --db "$OUT/gpudays.db"
    sweeps=$((sweeps - 1))
  done
done

# 4. Plans (uncalibrated, for the predictions; calibrated by the measurements, for the log) and
# the fastest measured configurations.
plans() {
  local m f p
  for m in "${MODELS[@]}"; do
    f=$(model_file "$m")
    for p in "${PRESETS[@]}"; do
      "$bin" plan --model-file "$f" --gpu "$GPU" --methods "$p" --no-calibration --format json \
        > "$work/plan-$m-$p.json"
      echo "-- $m $p (calibrated by $OUT/gpudays.db)"
      "$bin" plan --model-file "$f" --gpu "$GPU" --methods "$p" --db "$OUT/gpudays.db"
    done
    echo "-- best measured: $m"
    "$bin" best --model "$m-gb$GLOBAL_BATCH" --gpu "$GPU" --db "$OUT/gpudays.db" || true
  done
}
stage plan plan.log 20 plans

# 5. The report.
stage report plan.log 20 "$PYTHON" scripts/gpu-check-report.py --work "$work" --db "$OUT/gpudays.db" \
  --out "$OUT/report.md" --gpu "$GPU" --global-batch "$GLOBAL_BATCH" --models "${MODELS[@]}" \
  --presets "${PRESETS[@]}"
if [ ! -s "$OUT/report.md" ]; then  # the report script failed: the stages at least
  { echo "# GPU check: report script failed (see plan.log)"; echo; cat "$work/stages.tsv"; } \
    > "$OUT/report.md"
fi
cat "$work/stages.tsv"
echo "gpu-check: $(($(date +%s) - start)) s; report in $OUT/report.md"
