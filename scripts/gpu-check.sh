#!/usr/bin/env bash
# The GPU check, in one run of at most 540 s on a bare GPU machine (GPU_CHECK_TOTAL_S,
# 515 s, for the stages, then at most 15 s for the report): builds the CUDA variant (gpudays and
# gpudays_torch_tests only), checks with `ldd` that every built binary finds its libraries, records
# the machine (nvidia-smi), runs the *_CUDA tests (the CUDA graph test last, in its own invocation,
# so that a crash in capture hides nothing else; after a crash of the others, those it left
# unstarted in another invocation), runs one `gpudays trial` per preset (naive,
# free-lunch, all) directly on pythia-160m with whole-step timing and its stderr kept, then sweeps
# pythia-160m with naive and free-lunch, and pythia-410m only while time remains, plans the same
# and writes $OUT/report.md (scripts/gpu-check-report.py), which explains every failure: each
# stage's outcome, each failed test's message, each failed trial's first error line. Each stage has
# a time budget, is killed with its children at the deadline, and a failing stage does not stop the
# later ones from reporting; report.md is rewritten after every stage, so a run cut short still
# says how far it came.
#
# On any machine with an NVIDIA GPU, a CUDA build of torch, g++, CMake and ninja:
#   bash scripts/prepare-carry.sh    # once, on a Debian 12 machine with network: fills .carry/
#                                    # (our Debian packages' headers and libraries, the parity
#                                    # fixtures of the *_CUDA parity tests)
#   bash scripts/gpu-check.sh        # on the GPU machine, from the repository with .carry/ beside
#                                    # scripts/ (or with our Debian packages installed instead)
#   OUT=/tmp/gc GPUDAYS_PYTHON=/path/to/python3 bash scripts/gpu-check.sh   # another CUDA torch
# The device tool of this workplace (docs/testing.md, "The GPU check"):
#   run(command="bash scripts/gpu-check.sh", carry=[".carry"], timeout_s=570)
# Without a GPU (CI: `make gpu-check-dry`, which `make test` runs after test-cuda), the GPU stages
# print "skipped: no GPU" and the script still builds or finds its binaries, checks them with ldd
# (a missing libcuda.so.1 is expected only there), loads them, plans and writes its report; it
# exits 0 when no stage failed, non-zero when one did (a binary missing a library, say).
#
# Settings (environment): OUT (out/gpu-check), GPUDAYS_PYTHON (the python whose torch is built
# against: /opt/torch/.venv/bin/python3, else .venv/bin/python3, else python3), GPU_CHECK_TOTAL_S
# (515), GPU_CHECK_BUILD_S (300: configure and both targets), GPU_CHECK_BUILD_DIR (build-cuda),
# GPU_CHECK_SKIP_BUILD (1: use the binaries already in the build folder; fail if absent),
# GPU_CHECK_DRY (1: skip the GPU stages even where a GPU is), GPU_CHECK_JOBS (nproc), GPU_CHECK_GPU
# (h200), GPU_CHECK_GLOBAL_BATCH (32), GPU_CHECK_STEPS (3), GPU_CHECK_TRIAL_S (90: a direct trial's
# budget, a sweep trial's time-out at most), GPU_CHECK_SWEEP_TIMING (parts, bench's default; the
# direct trials time whole steps).
#
# $OUT receives 7 files (the device tool brings back at most 8), replacing an earlier run's:
#   report.md          the report
#   build.log          configure and build
#   tests.log          tree + carry size, ldd check, binaries loaded, machine, the *_CUDA tests
#   bench.log          the direct trials' results and the sweeps' progress
#   trials-stderr.log  every trial's stderr: the direct ones, and each sweep trial's where this
#                      gpudays keeps it (GPUDAYS_TRIAL_STDERR_DIR: SWEEP.trial-NNN.stderr)
#   plan.log           the plans, `gpudays best`, the report script's own output
#   gpudays.db         every sweep trial (SQLite)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD

OUT=${OUT:-$ROOT/out/gpu-check}
TOTAL_S=${GPU_CHECK_TOTAL_S:-515}  # the report's 15 s come on top: 540 s in all
JOBS=${GPU_CHECK_JOBS:-$(nproc)}
# A cold build of the two targets is about 22 CPU-minutes (205 files, 84 of them LibTorch's, 8-14 s
# each; measured on the development machine, 2026-12-01): 2 to 3 minutes on 16 cores.
BUILD_S=${GPU_CHECK_BUILD_S:-300}
BUILD=${GPU_CHECK_BUILD_DIR:-build-cuda}
SKIP_BUILD=${GPU_CHECK_SKIP_BUILD:-0}
DRY=${GPU_CHECK_DRY:-0}
GPU=${GPU_CHECK_GPU:-h200}
# Benchmarked global batch (sequences): a full Pythia step (1024 x 2048 tokens) takes seconds to
# tens of seconds; 32 keeps each trial near a second per step. train_steps is scaled by 1024/32 so
# the days estimates still count Pythia's 300B tokens.
GLOBAL_BATCH=${GPU_CHECK_GLOBAL_BATCH:-32}
STEPS=${GPU_CHECK_STEPS:-3}
TRIAL_S=${GPU_CHECK_TRIAL_S:-90}  # each direct trial's budget; a sweep trial's time-out at most
SWEEP_TIMING=${GPU_CHECK_SWEEP_TIMING:-parts}
MODELS=(pythia-160m pythia-410m)
PRESETS=(naive free-lunch all)
TRIAL_MODEL=pythia-160m  # the direct trials'
PROFILED=(naive free-lunch)  # direct trials run again with their timed steps profiled
# Sweeps in order; the 410m ones run only while at least MIN_SWEEP_S remain beyond the reserve.
SWEEPS_FIRST=("pythia-160m naive" "pythia-160m free-lunch")
SWEEPS_IF_TIME=("pythia-410m naive" "pythia-410m free-lunch")
MIN_SWEEP_S=60
RESERVE_S=30  # kept after the sweeps for the plans, the stderr file and the report
GRAPH_TESTS='*Graph*_CUDA'  # run last, alone (tests/engine/engine_model_test.cpp)
MIB=$((1024 * 1024))
LIMIT_BYTES=$((64 * MIB))  # what the device tool carries: the tree and .carry together

PYTHON=${GPUDAYS_PYTHON:-}
if [ -z "$PYTHON" ]; then
  for p in /opt/torch/.venv/bin/python3 "$ROOT/.venv/bin/python3"; do
    [ -x "$p" ] && { PYTHON=$p; break; }
  done
fi
[ -n "$PYTHON" ] || PYTHON=$(command -v python3)

# The environment of every stage, set here and not inside a stage: a stage's command runs in a
# background subshell (run_with_deadline), whose exports die with it. .carry/ holds our Debian
# packages' libraries; libicudata is needed by libicuuc, which the binaries' DT_RUNPATH does not
# reach, so the loader must find it through LD_LIBRARY_PATH. Python runs with the machine's own
# LD_LIBRARY_PATH (run_sys): its sqlite3 module must not load the carried libsqlite3.
SYS_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
CARRY=$ROOT/.carry
if [ -d "$CARRY" ]; then
  export PATH="$PATH:$CARRY/bin"  # ninja and pkg-config, where the machine has none
  export PKG_CONFIG_PATH="$CARRY/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$CARRY/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
run_sys() {
  if [ -n "$SYS_LD_LIBRARY_PATH" ]; then
    LD_LIBRARY_PATH=$SYS_LD_LIBRARY_PATH "$@"
  else
    env -u LD_LIBRARY_PATH "$@"
  fi
}

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
OUT_FILES=(report.md build.log tests.log bench.log trials-stderr.log plan.log gpudays.db)
for f in "${OUT_FILES[@]}" gpudays.db-journal; do rm -f "${OUT:?}/$f"; done
work=$(mktemp -d /tmp/gpu-check.XXXXXX)
mkdir -p "$work/stderr"
start=$(date +%s)
: > "$work/stages.tsv"
failures=()

# Whether a GPU is here (nvidia-smi lists one), and whether the GPU stages run.
GPU_PRESENT=0
if command -v nvidia-smi > /dev/null && timeout 60 nvidia-smi -L 2> /dev/null | grep -q '^GPU '; then
  GPU_PRESENT=1
fi
RUN_GPU=$GPU_PRESENT
NO_GPU_REASON="no GPU"  # each skipped GPU stage's line; the detail once, at the top
NO_GPU_DETAIL=""
if [ "$GPU_PRESENT" = 0 ]; then
  NO_GPU_DETAIL="no GPU ($(command -v nvidia-smi > /dev/null && echo "nvidia-smi lists none" ||
    echo "no nvidia-smi"))"
elif [ "$DRY" = 1 ]; then
  RUN_GPU=0
  NO_GPU_REASON="dry run"
  NO_GPU_DETAIL="dry run (GPU_CHECK_DRY=1: the GPU here is left alone)"
fi
echo "gpu-check: $(date -u '+%F %T') UTC, work folder $work, logs in $OUT"
[ "$RUN_GPU" = 1 ] || echo "gpu-check: GPU stages: skipped: $NO_GPU_DETAIL"

# children PID: the processes PID started (pgrep, else /proc where procps is missing).
children() {
  if command -v pgrep > /dev/null; then
    pgrep -P "$1"
  else
    cat /proc/"$1"/task/*/children
  fi 2> /dev/null
}

# kill_tree PID: ends PID and everything below it. A trial runs in its own process group, which a
# signal to `gpudays bench` alone would leave running on the GPU.
kill_tree() {
  local pids=("$1") i=0 child
  while [ $i -lt ${#pids[@]} ]; do
    for child in $(children "${pids[$i]}"); do pids+=("$child"); done
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

# interim_report: report.md as the stages so far, in case the run is cut short before the report.
interim_report() {
  {
    echo "# GPU check: interim report (the run did not reach its report stage)"
    echo
    echo "| stage | outcome | seconds |"
    echo "| --- | --- | --- |"
    awk -F '\t' '{ printf "| %s | %s | %s |\n", $1, $2, $3 }' "$work/stages.tsv"
    echo
    echo "The logs beside this file hold each stage's output."
  } > "$OUT/report.md"
}

# record NAME STATUS SECONDS LOG: one line in stages.tsv (name, status, seconds, log), the log and
# the console.
record() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$work/stages.tsv"
  echo "== $1: $2" >> "$OUT/$4"
  echo "gpu-check: $1: $2 (${3} s)"
  case "$2" in failed* | timeout*) failures+=("$1") ;; esac
  interim_report
}

# skip NAME LOG REASON: a stage that does not run, with one clear line.
skip() { record "$1" "skipped: $3" 0 "$2"; }

# stage NAME LOG BUDGET_S CMD...: runs CMD for at most BUDGET_S (and what is left of TOTAL_S),
# appends its output to $OUT/LOG and its outcome to stages.tsv. Returns CMD's status.
stage() {
  local name=$1 log=$2 budget=$3 left t0 rc status
  shift 3
  left=$(seconds_left)
  [ "$budget" -gt "$left" ] && budget=$left
  if [ "$budget" -lt 5 ]; then
    skip "$name" "$log" "no time left"
    return 1
  fi
  echo "== $name (budget ${budget} s): $*" >> "$OUT/$log"
  t0=$(date +%s)
  run_with_deadline "$budget" "$@" >> "$OUT/$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then status=ok
  elif [ $rc -eq 124 ]; then status="timeout after ${budget} s"
  else status="failed (exit $rc)"; fi
  record "$name" "$status" $(($(date +%s) - t0)) "$log"
  return $rc
}

# --- the stages' commands -------------------------------------------------------------------------

# The size of what the device tool carries: tracked and untracked-not-ignored files, and .carry/.
tree_size() {
  local tree carry total how
  if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    tree=$(git ls-files -z --cached --others --exclude-standard |
      du -cb --files0-from=- 2> /dev/null | tail -n 1 | cut -f1)
    how="tracked and untracked-not-ignored files"
  else  # a copy without .git (as on the device machine): everything but builds, outputs, .carry
    tree=$(du -sb --exclude=./.carry --exclude='./build*' --exclude=./out --exclude=./.git . |
      cut -f1)
    how="every file but .carry/, build*/ and out/ (no git here)"
  fi
  carry=0
  if [ -d "$CARRY" ]; then carry=$(du -sb "$CARRY" | cut -f1); else echo "no .carry/ here"; fi
  total=$((tree + carry))
  awk -v t="$tree" -v c="$carry" -v s="$total" -v m="$MIB" -v how="$how" 'BEGIN {
    printf "tree + carry: %.1f MiB (tree %.1f MiB, %s; .carry %.1f MiB) of 64 MiB\n",
      s / m, t / m, how, c / m }' | tee "$work/size.txt"
  if [ "$total" -gt "$LIMIT_BYTES" ]; then
    echo "TOO LARGE: the device tool carries at most 64 MiB of tree and .carry together" |
      tee -a "$work/size.txt"
    return 1
  fi
}

build_gpudays() {
  { g++ --version | head -n 1; nvcc --version | tail -n 1; cmake --version | head -n 1
    echo "ninja $(ninja --version)"; } 2>&1
  [ -d "$CARRY" ] || echo "no .carry/: using this machine's packages (make it with scripts/prepare-carry.sh)"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUDAYS_WITH_TORCH=ON \
    -DGPUDAYS_CUDA=ON -DGPUDAYS_PYTHON="$PYTHON" \
    -DCMAKE_PREFIX_PATH="$CARRY" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
    cmake --build "$BUILD" -j "$JOBS" --target gpudays
}

build_tests() { cmake --build "$BUILD" -j "$JOBS" --target gpudays_torch_tests; }

# Every ELF executable or shared library in the build folder (CMake's own probes left out).
built_binaries() {
  local f magic
  find "$BUILD" -path "$BUILD/CMakeFiles" -prune -o -path '*/CMakeFiles/*' -prune -o \
    -type f -perm -u+x -print 2> /dev/null | sort | while IFS= read -r f; do
    IFS= read -r -n 4 magic < "$f" 2> /dev/null
    [ "$magic" = $'\x7fELF' ] && echo "$f"
  done
}

# ldd_check: every built binary finds every library it needs, in the environment the stages run
# in. libcuda.so.1 is the driver's: missing only where no GPU (and so no driver) is.
ldd_check() {
  local f out missing n=0 bad=0
  : > "$work/ldd.tsv"
  while IFS= read -r f; do
    n=$((n + 1))
    out=$(ldd "$f" 2>&1)
    missing=$(awk '/not found/ { print $1 }' <<< "$out" | sort -u | tr '\n' ' ')
    missing=${missing% }
    if [ -z "$missing" ]; then
      echo "ok       $f"
      printf '%s\tok\t\n' "$f" >> "$work/ldd.tsv"
    elif [ "$missing" = libcuda.so.1 ] && [ "$GPU_PRESENT" = 0 ]; then
      echo "ok       $f (libcuda.so.1 not found: expected here, a machine without a GPU driver)"
      printf '%s\tok (no GPU driver: libcuda.so.1 expected missing)\t\n' "$f" >> "$work/ldd.tsv"
    else
      echo "MISSING  $f: $missing"
      grep 'not found' <<< "$out"
      printf '%s\tMISSING\t%s\n' "$f" "$missing" >> "$work/ldd.tsv"
      bad=1
    fi
  done < <(built_binaries)
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  if [ $n -eq 0 ]; then
    echo "no binaries under $BUILD/"
    return 1
  fi
  [ $bad -eq 0 ] || echo "ldd: a binary misses a library (above): it would exit 127"
  return $bad
}

# load_check: the binaries start (the loader resolves every symbol) and list what they hold.
load_check() {
  local n
  "$bin" --version || return 1
  "$tests" --gtest_list_tests > "$work/tests.list" || return 1
  n=$(awk '/^  / && /_CUDA/' "$work/tests.list" | wc -l)
  echo "$tests lists $(grep -c '^  ' "$work/tests.list") tests, $n of them *_CUDA:"
  awk '/^[^ ]/ { suite = $1 } /^  / && /_CUDA/ { print "  " suite $1 }' "$work/tests.list"
  awk '/^[^ ]/ { suite = $1 } /^  / && /Graph/ && /_CUDA/ { found = 1 } END { exit !found }' \
    "$work/tests.list" || echo "warning: no test matches $GRAPH_TESTS"
}

# The GPU's measured matmul rates and copy bandwidth (gpudays trial --probe-device, one JSON line),
# which the report sets beside the catalog's figures.
probe() {
  "$bin" gpus --format json > "$work/gpus.json" || return 1
  "$bin" trial --probe-device cuda | tee "$work/probe.json"
}

# After the cuda-tests stage died of a signal: the gtest filter of its tests that never started
# (tests.list, less the graph test and every test its log shows starting), for a second invocation,
# so that one crash hides only the test it happened in.
tests_left_by_crash() {
  local started
  started=$(awk '/^== cuda-tests \(budget/ { s = 1; next } /^== cuda-tests: / { s = 0 }
                 s && /^\[ RUN      \] / { print $4 }' "$OUT/tests.log")
  awk -v started="$started" 'BEGIN { n = split(started, a, "\n"); for (i = 1; i <= n; i++) seen[a[i]] = 1 }
    /^[^ ]/ { suite = $1 }
    /^  / && /_CUDA/ && !/Graph/ { t = suite $1; if (!(t in seen)) out = out (out ? ":" : "") t }
    END { print out }' "$work/tests.list"
}

machine() {
  {
    if [ "$GPU_PRESENT" = 1 ]; then
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    else
      echo "nvidia-smi: skipped: $NO_GPU_DETAIL"
    fi
    run_sys "$PYTHON" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
"GPU visible" if torch.cuda.is_available() else "no GPU visible")' 2>&1 | tail -n 1
    echo "$(nproc) CPU cores, $(uname -sr)"
    echo "commit $(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)"
  } | tee "$work/machine.txt"
  [ "$GPU_PRESENT" = 1 ] && nvidia-smi
  return 0
}

# The parity fixtures the *_CUDA parity tests read (GPUDAYS_FIXTURE_DIR, in the build folder):
# the build's own (target gpudays_fixtures), else those carried in .carry/fixtures
# (scripts/prepare-carry.sh), so that no test fails for want of them.
place_fixtures() {
  local dir="$BUILD/tests/models/fixtures"
  if [ -f "$dir/stamp" ]; then
    echo "parity fixtures: $dir (the build's)"
  elif [ -f "$CARRY/fixtures/stamp" ]; then
    mkdir -p "$dir" && cp -r "$CARRY/fixtures/." "$dir/" &&
      echo "parity fixtures: .carry/fixtures copied to $dir"
  else
    echo "parity fixtures: none (no .carry/fixtures): the *_CUDA parity tests will fail"
  fi
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

# The planner's uncalibrated predictions (JSON), which the direct trials and the report read.
predictions() {
  local m f p rc=0
  for m in "${MODELS[@]}"; do
    f=$(model_file "$m")
    for p in "${PRESETS[@]}"; do
      echo "-- $m $p"
      "$bin" plan --model-file "$f" --gpu "$GPU" --methods "$p" --no-calibration --format json \
        > "$work/plan-$m-$p.json" || rc=1
      "$bin" plan --model-file "$f" --gpu "$GPU" --methods "$p" --no-calibration || rc=1
    done
  done
  return $rc
}

# direct_trial PRESET: one `gpudays trial` of TRIAL_MODEL, whole steps, at the planner's best
# configuration for the preset (for "all", with activation checkpointing on, so that one trial
# exercises a method beyond free-lunch). stdout to the log, stderr kept; the exit status in a file.
direct_trial() {
  local p=$1 f base rc
  base="$work/direct-$p"
  f=$(model_file "$TRIAL_MODEL")
  run_sys "$PYTHON" - "$work/plan-$TRIAL_MODEL-$p.json" "$f" "$TRIAL_MODEL-gb$GLOBAL_BATCH" "$p" \
    "$GLOBAL_BATCH" "$STEPS" \
    > "$base.spec.json" << 'EOF' || return 1
import json, sys
plan_path, model_file, model_name, preset, global_batch, steps = sys.argv[1:7]
try:
    with open(plan_path) as f:
        best = json.load(f)["best"] or {}
except (OSError, ValueError, KeyError):
    best = {}
if not best.get("fits"):  # no plan: a small micro-batch with the preset's methods
    best = {"free_lunch": preset != "naive", "activation_checkpointing": preset == "all",
            "sharding": "none", "offloading": False, "micro_batch_size": 4,
            "grad_acc_steps": max(1, int(global_batch) // 4)}
spec = {"model": model_name, "model_file": model_file, "device": "cuda",
        "free_lunch": bool(best["free_lunch"]),
        "activation_checkpointing": bool(best["activation_checkpointing"]) or preset == "all",
        "sharding": best["sharding"], "offloading": bool(best["offloading"]),
        "micro_batch_size": int(best["micro_batch_size"]), "grad_acc_steps": int(best["grad_acc_steps"]),
        "timed_steps": int(steps), "memory_limit_bytes": 0, "timing": "whole"}
print(json.dumps(spec))
EOF
  echo "-- direct trial $TRIAL_MODEL $p: $(cat "$base.spec.json")"
  "$bin" trial --spec "$base.spec.json" > "$base.out" 2> "$work/stderr/direct-$p.stderr"
  rc=$?
  echo "$rc" > "$base.rc"
  cat "$base.out"
  echo "exit status $rc; stderr: $(wc -l < "$work/stderr/direct-$p.stderr") lines"
  [ $rc -eq 0 ] && grep -q '"status":"ok"' "$base.out"
}

# profile_trial PRESET: the direct trial's specification again, its 2 timed steps under torch's
# profiler (a run of its own: profiling slows the host, and the direct trial's times stay clean);
# the trace stays in the work folder, the summary's 25 longest GPU rows go to the log and the
# report (trial/kernel_profile.h).
profile_trial() {
  local p=$1 spec="$work/direct-$1.spec.json" out="$work/profile-$1"
  [ -s "$spec" ] || { echo "no specification: the direct trial of $p made none"; return 1; }
  run_sys "$PYTHON" -c 'import json, sys
s = json.load(open(sys.argv[1])); s.update(profile=sys.argv[2], timed_steps=2); print(json.dumps(s))' \
    "$spec" "$out.json" > "$out.spec.json" || return 1
  "$bin" trial --spec "$out.spec.json" > "$out.out" 2> "$work/stderr/profile-$p.stderr" || {
    echo "the profiled trial failed: $(grep -m1 -i error "$work/stderr/profile-$p.stderr")"; return 1; }
  grep -q '"status":"ok"' "$out.out" || { echo "the profiled trial did not run: $(cat "$out.out")"; return 1; }
  echo "-- profile of $TRIAL_MODEL $p: the 25 longest GPU rows (kind, name, count, total us, us per step)"
  awk -F'\t' 'NR > 1 && $1 ~ /^gpu_/' "$out.json.kernels.tsv" | head -n 25
}

# sweep MODEL PRESET TRIAL_TIMEOUT: `gpudays bench`, each trial's stderr kept where this gpudays
# supports it.
sweep() {
  local m=$1 p=$2 f dir="$work/stderr/sweep-$1-$2"
  f=$(model_file "$m")
  mkdir -p "$dir"
  GPUDAYS_TRIAL_STDERR_DIR=$dir "$bin" bench --model-file "$f" --device cuda --gpu "$GPU" \
    --methods "$p" --steps "$STEPS" --timing "$SWEEP_TIMING" --trial-timeout "$3" \
    --db "$OUT/gpudays.db"
}

# Plans calibrated by the measurements, and the fastest measured configurations (for the log).
plans() {
  local m f p
  for m in "${MODELS[@]}"; do
    f=$(model_file "$m")
    for p in "${PRESETS[@]}"; do
      echo "-- $m $p (calibrated by $OUT/gpudays.db)"
      "$bin" plan --model-file "$f" --gpu "$GPU" --methods "$p" --db "$OUT/gpudays.db"
    done
    echo "-- best measured: $m"
    "$bin" best --model "$m-gb$GLOBAL_BATCH" --gpu "$GPU" --db "$OUT/gpudays.db" || true
  done
}

# Every trial's stderr in one file: the direct trials', the profiled ones', then each sweep
# trial's (256 KiB each at most).
collect_stderr() {
  local f p dir count
  {
    echo "# Every trial's stderr (scripts/gpu-check.sh): the direct trials, then the sweeps'."
    for p in "${PRESETS[@]}"; do
      f="$work/stderr/direct-$p.stderr"
      [ -f "$f" ] || continue
      echo
      echo "===== direct trial $TRIAL_MODEL $p, exit status $(cat "$work/direct-$p.rc" 2> /dev/null ||
        echo 'none (timed out or killed)'), spec $(cat "$work/direct-$p.spec.json" 2> /dev/null)"
      head -c 262144 "$f"
    done
    for p in "${PROFILED[@]}"; do
      f="$work/stderr/profile-$p.stderr"
      [ -f "$f" ] || continue
      echo
      echo "===== profiled trial $TRIAL_MODEL $p, spec $(cat "$work/profile-$p.spec.json" 2> /dev/null)"
      head -c 262144 "$f"
    done
    for dir in "$work"/stderr/sweep-*; do
      [ -d "$dir" ] || continue
      count=$(find "$dir" -type f | wc -l)
      echo
      echo "===== sweep ${dir##*/sweep-}: $count trial stderr files"
      [ "$count" -gt 0 ] || echo "(none: this gpudays does not write GPUDAYS_TRIAL_STDERR_DIR, or" \
        "no trial ran; bench.log and the database hold each failed trial's message)"
      find "$dir" -type f | sort | while IFS= read -r f; do
        echo "----- ${f##*/}"
        head -c 262144 "$f"
      done
    done
    [ -n "$(find "$work/stderr" -mindepth 1 -print -quit)" ] ||
      echo "(no trial ran: ${NO_TRIALS_REASON:-see report.md})"
  } > "$OUT/trials-stderr.log"
}

# --- the run --------------------------------------------------------------------------------------

bin="$BUILD/gpudays"
tests="$BUILD/tests/models/gpudays_torch_tests"

# 1. What the device tool carries.
stage size tests.log 30 tree_size
sed 's/^/gpu-check: /' "$work/size.txt" 2> /dev/null

# 2. Build (the torch-heavy part: about 150 objects on 16 cores), or the build already there.
if [ "$SKIP_BUILD" = 1 ]; then
  echo "== build (budget 0 s): GPU_CHECK_SKIP_BUILD=1" >> "$OUT/build.log"
  if [ -x "$bin" ] && [ -x "$tests" ]; then
    echo "using $bin and $tests as built (GPU_CHECK_SKIP_BUILD=1)" >> "$OUT/build.log"
    record build "ok (existing $BUILD/, not rebuilt)" 0 build.log
  else
    echo "GPU_CHECK_SKIP_BUILD=1 but $bin or $tests is missing: build them (make test-cuda)" |
      tee -a "$OUT/build.log"
    record build "failed (no build in $BUILD/)" 0 build.log
  fi
else
  t_build=$(date +%s)
  stage build build.log "$BUILD_S" build_gpudays
  if [ -x "$bin" ]; then
    stage build-tests build.log $((BUILD_S - ($(date +%s) - t_build))) build_tests
  else
    skip build-tests build.log "no gpudays binary"
  fi
fi

# 3. Every binary finds its libraries and loads.
stage ldd tests.log 60 ldd_check || grep -h -e '^MISSING' -e '^no binaries' "$OUT/tests.log" |
  sed 's/^/gpu-check: ldd: /'
if [ -x "$bin" ] && [ -x "$tests" ]; then
  stage load tests.log 60 load_check
else
  skip load tests.log "no binaries"
fi

# 4. The machine, what it measures (the device probe), and the GPU tests: the graph test last, in
# its own invocation.
stage machine tests.log 60 machine
if [ "$RUN_GPU" = 1 ] && [ -x "$bin" ]; then
  stage probe tests.log 60 probe
else
  skip probe tests.log "$([ "$RUN_GPU" = 1 ] && echo "no gpudays binary" || echo "$NO_GPU_REASON")"
fi
if [ "$RUN_GPU" = 1 ] && [ -x "$tests" ]; then
  place_fixtures | tee -a "$OUT/tests.log" | sed 's/^/gpu-check: /'
  stage cuda-tests tests.log 120 "$tests" --gtest_filter="*_CUDA:-$GRAPH_TESTS" \
    --gtest_output="xml:$work/cuda-tests.xml"
  if [ $? -gt 128 ] && rest=$(tests_left_by_crash) && [ -n "$rest" ]; then
    stage cuda-tests-after-crash tests.log 60 "$tests" --gtest_filter="$rest" \
      --gtest_output="xml:$work/cuda-tests-after-crash.xml"
  fi
  stage cuda-graph-test tests.log 60 "$tests" --gtest_filter="$GRAPH_TESTS" \
    --gtest_output="xml:$work/cuda-graph-tests.xml"
else
  reason=$NO_GPU_REASON
  [ "$RUN_GPU" = 1 ] && reason="no test binary"
  skip cuda-tests tests.log "$reason"
  skip cuda-graph-test tests.log "$reason"
fi

# 5. The planner's predictions (no GPU needed).
if [ -x "$bin" ]; then
  stage predictions plan.log 60 predictions
else
  skip predictions plan.log "no gpudays binary"
fi

# 6. One direct trial per preset, then the sweeps: 160m first; 410m while time remains. Finished
# trials are in the database whatever happens to their sweep.
if [ "$RUN_GPU" = 1 ] && [ -x "$bin" ]; then
  for p in "${PRESETS[@]}"; do
    stage "trial $TRIAL_MODEL $p" bench.log "$TRIAL_S" direct_trial "$p"
  done
  for p in "${PROFILED[@]}"; do
    stage "profile $TRIAL_MODEL $p" bench.log 60 profile_trial "$p"
  done
  n=${#SWEEPS_FIRST[@]}
  for s in "${SWEEPS_FIRST[@]}"; do
    budget=$((($(seconds_left) - RESERVE_S) / n))
    trial_timeout=$((budget < TRIAL_S ? budget : TRIAL_S))
    [ $trial_timeout -lt 5 ] && trial_timeout=5
    # shellcheck disable=SC2086  # "MODEL PRESET"
    stage "bench $s" bench.log "$budget" sweep $s "$trial_timeout"
    n=$((n - 1))
  done
  n=${#SWEEPS_IF_TIME[@]}
  for s in "${SWEEPS_IF_TIME[@]}"; do
    budget=$((($(seconds_left) - RESERVE_S) / n))
    n=$((n - 1))
    if [ "$budget" -lt "$MIN_SWEEP_S" ]; then
      skip "bench $s" bench.log "no time left (${budget} s for it, under ${MIN_SWEEP_S} s)"
      continue
    fi
    trial_timeout=$((budget < TRIAL_S ? budget : TRIAL_S))
    # shellcheck disable=SC2086
    stage "bench $s" bench.log "$budget" sweep $s "$trial_timeout"
  done
  stage plan plan.log 20 plans
else
  NO_TRIALS_REASON=$NO_GPU_REASON
  [ "$RUN_GPU" = 1 ] && NO_TRIALS_REASON="no gpudays binary"
  for p in "${PRESETS[@]}"; do skip "trial $TRIAL_MODEL $p" bench.log "$NO_TRIALS_REASON"; done
  for p in "${PROFILED[@]}"; do skip "profile $TRIAL_MODEL $p" bench.log "$NO_TRIALS_REASON"; done
  for s in "${SWEEPS_FIRST[@]}" "${SWEEPS_IF_TIME[@]}"; do skip "bench $s" bench.log "$NO_TRIALS_REASON"; done
  skip plan plan.log "no measurements to calibrate with ($NO_TRIALS_REASON)"
fi

# 7. Every trial's stderr in one file, and the report (given its 15 s even past TOTAL_S).
collect_stderr
echo "== report (budget 15 s)" >> "$OUT/plan.log"
t0=$(date +%s)
run_with_deadline 15 run_sys "$PYTHON" scripts/gpu-check-report.py --work "$work" \
  --db "$OUT/gpudays.db" --logs "$OUT" --out "$work/report.md" --gpu "$GPU" \
  --global-batch "$GLOBAL_BATCH" --steps "$STEPS" --models "${MODELS[@]}" \
  --presets "${PRESETS[@]}" --trial-model "$TRIAL_MODEL" \
  --no-gpu "$([ "$RUN_GPU" = 1 ] || echo "$NO_GPU_DETAIL")" >> "$OUT/plan.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -s "$work/report.md" ]; then
  cp "$work/report.md" "$OUT/report.md"
  printf 'report\tok\t%s\tplan.log\n' $(($(date +%s) - t0)) >> "$work/stages.tsv"
  echo "gpu-check: report: ok"
else  # the report script failed: the stages at least (the interim report), and say so
  failures+=(report)
  printf 'report\tfailed (exit %s)\t%s\tplan.log\n' "$rc" $(($(date +%s) - t0)) >> "$work/stages.tsv"
  interim_report
  sed -i '1s/.*/# GPU check: the report script failed (plan.log says why); the stages:/' \
    "$OUT/report.md"
  echo "gpu-check: report: failed (exit $rc): plan.log"
fi

n=$(find "$OUT" -maxdepth 1 -type f | wc -l)
[ "$n" -le 8 ] || echo "gpu-check: warning: $n files in $OUT; the device tool brings back 8"
echo "gpu-check: $(($(date +%s) - start)) s; report in $OUT/report.md; work folder $work"
if [ ${#failures[@]} -gt 0 ]; then
  echo "gpu-check: failed: ${failures[*]}"
  exit 1
fi
echo "gpu-check: no stage failed"
