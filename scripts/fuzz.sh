#!/usr/bin/env bash
# Runs every fuzz target of a fuzz build (tests/fuzz; `make fuzz`) for SECONDS each, from a scratch
# copy of its checked-in seed corpus (tests/fuzz/corpus/NAME/, which stays as it is) with its
# dictionary (tests/fuzz/NAME.dict) when there is one. Fails when any target finds a crash, a
# sanitizer report, a hang or a broken invariant, and says where libFuzzer saved the input and how
# to replay it. Every target starts from the same random seed (FUZZ_SEED, default 1), so that two
# runs on the same machine try the same inputs in the same order and a run in CI is a prefix of a
# longer run here: `FUZZ_SEED=0` (libFuzzer's own choice, a new one each run) explores further.
#   usage: scripts/fuzz.sh BUILD_DIR SECONDS [NAME...]
set -uo pipefail

build=${1:?usage: fuzz.sh BUILD_DIR SECONDS [NAME...]}
seconds=${2:?usage: fuzz.sh BUILD_DIR SECONDS [NAME...]}
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
base=${TMPDIR:-/tmp}
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && base=/dev/shm  # in memory: the targets write files
scratch=$(mktemp -d "$base/gpudays-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

seed=${FUZZ_SEED:-1}
if ! [[ $seed =~ ^[0-9]+$ ]]; then
  echo "fuzz: FUZZ_SEED must be a non-negative integer (0: a new seed each run), is '$seed'" >&2
  exit 2
fi

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for bin in "$build"/fuzz/*_fuzz; do names+=("$(basename "$bin" _fuzz)"); done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
for name in "${names[@]}"; do
  bin="$build/fuzz/${name}_fuzz"
  [ -x "$bin" ] || { echo "fuzz: no target $bin" >&2; failed=1; continue; }
  corpus="$scratch/$name"
  mkdir -p "$corpus"
  cp "$src/tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null
  flags=(-max_total_time="$seconds" -seed="$seed" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1
         -artifact_prefix="$artifacts/$name-")
  [ -f "$src/tests/fuzz/$name.dict" ] && flags+=(-dict="$src/tests/fuzz/$name.dict")
  log="$artifacts/$name.log"
  # The targets' scratch files go under the scratch directory (libFuzzer may exit without
  # running their destructors).
  mkdir -p "$scratch/tmp"
  if TMPDIR="$scratch/tmp" "$bin" "${flags[@]}" "$corpus" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    echo "fuzz: $name: ${runs:-?} inputs in ${seconds} s, no crash"
  else
    failed=1
    saved=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //')
    echo "fuzz: $name: FAILED (log: $log)"
    grep -E "ERROR: |fuzz: bug:|runtime error:|SUMMARY:|deadly signal|timeout" "$log" | head -5 | sed 's/^/  /'
    [ -n "$saved" ] && echo "  input saved to $saved; replay: $bin $saved"
  fi
done
exit $failed
