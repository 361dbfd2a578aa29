#!/usr/bin/env bash
# Counts the guided search against the exhaustive one on real CPU trials: runs `gpudays bench
# --strategy exhaustive` and `--strategy guided` on tests/data/bench-gpt-neox.toml, each into its
# own fresh database (neither reuses a trial of the other), and prints the trial counts, the two
# best step times and their ratio, and how the exhaustive run measured the guided run's pick.
# docs/bench.md quotes its output. Takes about 5-10 minutes on one core; needs build/gpudays
# (make build-gpudays). Overrides: GPUDAYS (the binary), SEARCH_COUNT_METHODS (all),
# SEARCH_COUNT_MEMORY_LIMIT (bytes, 167772160 = 160 MiB), OMP_NUM_THREADS (1), KEEP_DIR (a folder
# to keep the databases and logs in; default a temporary one, removed).
set -euo pipefail
cd "$(dirname "$0")/.."

gpudays=${GPUDAYS:-build/gpudays}
methods=${SEARCH_COUNT_METHODS:-all}
memory_limit=${SEARCH_COUNT_MEMORY_LIMIT:-167772160}
cores=$(nproc --all)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
model=tests/data/bench-gpt-neox.toml
if [ ! -x "$gpudays" ]; then
  echo "search-count: $gpudays not built (make build-gpudays)" >&2
  exit 2
fi
if [ -n "${KEEP_DIR:-}" ]; then
  dir=$KEEP_DIR
  mkdir -p "$dir"
  rm -f "$dir"/exhaustive.db "$dir"/guided.db
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi

echo "search-count: $model, --methods $methods, --memory-limit $memory_limit," \
  "OMP_NUM_THREADS=$OMP_NUM_THREADS, a fresh database per strategy"
echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $cores cores;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(date -u '+%Y-%m-%d %H:%M UTC');" \
  "gpudays $(git rev-parse --short HEAD 2> /dev/null || echo unknown)"
for strategy in exhaustive guided; do
  start=$(date +%s.%N)
  "$gpudays" bench --model-file "$model" --device cpu --methods "$methods" \
    --memory-limit "$memory_limit" --strategy "$strategy" --db "$dir/$strategy.db" \
    --format json > "$dir/$strategy.json" 2> "$dir/$strategy.log"
  python3 -c "import sys, time; print(time.time() - float(sys.argv[1]))" "$start" \
    > "$dir/$strategy.wall"
done

python3 - "$dir" << 'EOF'
import json, sqlite3, sys
d = sys.argv[1]
runs = {}
for s in ("exhaustive", "guided"):
    summary = json.load(open(f"{d}/{s}.json"))
    db = sqlite3.connect(f"{d}/{s}.db")
    rows = db.execute("SELECT free_lunch, activation_checkpointing, sharding, offloading, "
                      "micro_batch_size, status, step_time_median_s, timing_check FROM trials")
    rows = rows.fetchall()
    runs[s] = summary, rows, float(open(f"{d}/{s}.wall").read())

def key(b):
    return (b["methods"], b["micro_batch_size"])

def name(r):
    # as describe(MethodSet), src/search_space/methods.cpp
    parts = ["free-lunch" if r[0] else "plain"]
    parts += ["ckpt"] if r[1] else []
    parts += [r[2]] if r[2] != "none" else []
    parts += ["offload"] if r[3] else []
    return " + ".join(parts)

print(f"{'strategy':<11} {'trials':>6} {'ok':>4} {'oom':>4} {'other':>5} {'check failed':>12} "
      f"{'wall':>8}  best")
for s, (summary, rows, wall) in runs.items():
    ok = sum(r[5] == "ok" for r in rows)
    oom = sum(r[5] == "oom" for r in rows)
    failed = sum(r[7] == "disagrees" for r in rows)
    b = summary["best"]
    best = (f"{b['methods']}, micro-batch {b['micro_batch_size']}: {b['step_time_s']:.3f} s/step"
            if b else "none")
    print(f"{s:<11} {len(rows):>6} {ok:>4} {oom:>4} {len(rows) - ok - oom:>5} {failed:>12} "
          f"{wall / 60:>6.1f} m  {best}")
    if summary["trials_reused"]:
        print(f"  warning: {summary['trials_reused']} trials reused: the database was not fresh")
ex, gu = runs["exhaustive"][0], runs["guided"][0]
if ex["best"] and gu["best"]:
    n_ex, n_gu = len(runs["exhaustive"][1]), len(runs["guided"][1])
    ratio = gu["best"]["step_time_s"] / ex["best"]["step_time_s"]
    print(f"guided: {n_gu} trials for the exhaustive run's {n_ex} ({n_ex / n_gu:.1f}x fewer); its "
          f"best step time / the exhaustive best = {ratio:.3f} ({100 * (ratio - 1):+.1f}%)")
    same = [r for r in runs["exhaustive"][1]
            if (name(r), r[4]) == key(gu["best"]) and r[5] == "ok"]
    if same:
        print(f"the exhaustive run measured the guided pick at {same[0][6]:.3f} s/step "
              f"({100 * (same[0][6] / ex['best']['step_time_s'] - 1):+.1f}% from its best)")
    print(f"method sets: {gu['method_sets']}; the guided search skipped "
          f"{gu['method_sets_skipped']} and pruned {gu['method_sets_pruned']}")
EOF
