#!/usr/bin/env bash
# Checks, changing nothing, that every tracked C++ file (*.cpp, *.h) is formatted as .clang-format
# says: prints the files that differ and exits 1 (`make format` rewrites them), else prints nothing.
# CLANG_FORMAT picks the binary (default clang-format, Debian 12's version 14).
set -uo pipefail
cd "$(dirname "$0")/.."

clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" > /dev/null; then
  echo "format-check: $clang_format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi

mapfile -t files < <(git ls-files '*.cpp' '*.h')
[ ${#files[@]} -eq 0 ] && exit 0
# One call for every file; each violation is reported as "path:line:col: error: ...".
log=$("$clang_format" --dry-run -Werror "${files[@]}" 2>&1)
rc=$?
[ $rc -eq 0 ] && exit 0
differ=$(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<< "$log" |
         sort -u)
if [ -z "$differ" ]; then  # clang-format failed for another reason: show why
  echo "$log" >&2
  exit $rc
fi
echo "$differ"
echo "format-check: $(wc -l <<< "$differ") of ${#files[@]} files differ from .clang-format" \
     "($("$clang_format" --version | grep -o 'version [0-9.]*')); run make format" >&2
exit 1
