#!/usr/bin/env bash
# Times `gpudays report` over the whole catalog (the defaults: 16 models x 4 GPU types x 1/2/4/8
# GPUs) into a scratch directory, and prints the wall time with the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "machine: $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC'); gpudays $(git rev-parse --short HEAD)"
start=$(date +%s.%N)
build/gpudays report --out "$out/report" "$@"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "wall %.1f s\n", e - s }'
