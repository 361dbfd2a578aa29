#!/usr/bin/env python3
"""Checks that the example outputs in README.md and docs/*.md are what the commands print now.

An example is marked by an HTML comment directly before its fenced block (blank lines between are
allowed); the comment names the command, run from the repository root with the built binary:

    <!-- docs-check: build/gpudays plan --model pythia-1b --gpu a100 --gpus-per-node 4 -->
    ```
    $ gpudays plan --model pythia-1b --gpu a100 --gpus-per-node 4
    pythia-1b on 4 x a100-80gb-sxm ...
    ```

The output compared is what the command prints on stdout, then what it prints on stderr, then
`[exit status N]` when N is not 0. Comparison, line by line and exact, after these normalisations
(and no others):
- `$ ` lines at the top of the block show the command and are not output; the one shown must be the
  marked command with `build/gpudays` written `gpudays`.
- a line `...` alone in the block stands for any number of output lines (an abridged example);
- the repository's absolute path followed by `/` is printed as nothing (paths come out relative);
- trailing blanks are ignored.
Each command runs in a scratch directory that links the repository's top-level entries except
gpudays.db and out/, so a results database lying in the checkout does not calibrate the plans shown
and nothing is written into the checkout; build/ links the build directory. GPUDAYS_CONFIG_DIR is
unset: the catalog is the checkout's configs/.

Figures measured on a machine (CPU trial timings) cannot be compared; they are marked
`<!-- docs-measured: scripts/NAME ... -->`, and this check verifies that the named script exists.

Usage: scripts/docs-check.py [--build-dir build] [--update] [FILE.md ...]; prints a unified diff
per mismatch and exits 1 when one differs, 0 when all agree. With --update, a differing block is
rewritten with what the command prints now, keeping the shape of a block abridged by one `...`
(as many first and last lines as it showed); the prose around it is not: reread it. Blocks with
several `...` lines are left alone and count as failures.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"^<!--\s*docs-check:\s*(.*?)\s*-->\s*$")
MEASURED = re.compile(r"^<!--\s*docs-measured:\s*([^\s,]+)(.*?)-->\s*$")
ELLIPSIS = "..."


def find_examples(path):
    """Yields (line number, command, expected lines, shown command or None, (first, end) line
    indices of the block's output) per marked block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        mark_line, command = i + 1, m.group(1)
        i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i >= len(lines) or not lines[i].startswith("```"):
            raise SystemExit(f"{path}:{mark_line}: docs-check marker not followed by a fenced block")
        fence = lines[i][: len(lines[i]) - len(lines[i].lstrip("`"))]
        i += 1
        block = []
        while i < len(lines) and lines[i].rstrip() != fence:
            block.append(lines[i])
            i += 1
        if i >= len(lines):
            raise SystemExit(f"{path}:{mark_line}: fenced block not closed")
        shown = None
        first = i - len(block)
        while block and block[0].startswith("$ "):
            shown = block.pop(0)[2:].strip()
            first += 1
        yield mark_line, command, block, shown, (first, i)


def matches(expected, actual):
    """Whether actual fits expected, `...` lines matching any run of lines (greedy, backtracking)."""

    def fit(e, a):
        if e == len(expected):
            return a == len(actual)
        if expected[e] == ELLIPSIS:
            return any(fit(e + 1, k) for k in range(len(actual), a - 1, -1))
        return a < len(actual) and expected[e] == actual[a] and fit(e + 1, a + 1)

    return fit(0, 0)


def scratch_dir(build_dir):
    """A directory that looks like the repository root, without its gpudays.db and out/."""
    tmp = tempfile.mkdtemp(prefix="gpudays-docs-check-")
    for entry in os.listdir(ROOT):
        if entry in ("gpudays.db", "out", "build", ".git"):
            continue
        os.symlink(os.path.join(ROOT, entry), os.path.join(tmp, entry))
    os.symlink(os.path.abspath(build_dir), os.path.join(tmp, "build"))
    return tmp


def run(command, cwd):
    try:
        env = {k: v for k, v in os.environ.items() if k != "GPUDAYS_CONFIG_DIR"}
        result = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                                text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return 124, ["[killed after 300 s]"]
    lines = []
    for text in (result.stdout, result.stderr):
        text = text.replace(ROOT + "/", "").replace(cwd + "/", "").rstrip("\n")
        lines += [line.rstrip() for line in text.split("\n")] if text else []
    return result.returncode, lines


def reshaped(expected, actual):
    """The actual lines in the expected block's shape: all of them, or, for a block abridged by
    one `...`, as many first and last lines as it shows around it."""
    if ELLIPSIS not in expected:
        return actual
    head = expected.index(ELLIPSIS)
    tail = len(expected) - head - 1
    if head + tail >= len(actual):
        return actual
    return actual[:head] + [ELLIPSIS] + (actual[len(actual) - tail:] if tail else [])


def rewrite(path, updates):
    """Replaces the output lines of each (first, end) block span with new lines."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for (first, end), actual in sorted(updates, reverse=True):
        lines[first:end] = actual
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def torch_free(build_dir):
    """True when the build was configured without LibTorch (no train/engine commands)."""
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.exists(cache):
        return False
    with open(cache, encoding="utf-8") as f:
        return any(line.strip() == "GPUDAYS_WITH_TORCH:BOOL=OFF" for line in f)


def lacks_command(actual):
    return any(line.startswith("gpudays: error: unknown command '") for line in actual)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--update", action="store_true",
                        help="rewrite differing blocks that are not abridged")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
        if f.endswith(".md"))
    if not os.path.exists(os.path.join(args.build_dir, "gpudays")):
        print(f"docs-check: {args.build_dir}/gpudays not built (make build-gpudays)", file=sys.stderr)
        return 2
    cwd = scratch_dir(args.build_dir)
    checked = failed = measured = skipped = 0
    without_torch = torch_free(args.build_dir)
    try:
        for path in files:
            rel = os.path.relpath(path, ROOT)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = MEASURED.match(line)
                    if m:
                        measured += 1
                        if not os.path.exists(os.path.join(ROOT, m.group(1))):
                            print(f"{rel}:{number}: docs-measured names {m.group(1)}, which does "
                                  "not exist")
                            failed += 1
            updates = []
            for number, command, expected, shown, span in find_examples(path):
                checked += 1
                expected = [line.rstrip() for line in expected]
                if shown is not None and shown != command.replace("build/gpudays", "gpudays"):
                    print(f"{rel}:{number}: the block shows `{shown}`, the marker runs `{command}`")
                    failed += 1
                    continue
                rc, actual = run(command, cwd)
                if rc != 0:
                    actual.append(f"[exit status {rc}]")
                if without_torch and lacks_command(actual):
                    skipped += 1
                    print(f"{rel}:{number}: `{command}` skipped: this build has no LibTorch")
                    continue
                if not matches(expected, actual):
                    if args.update and expected.count(ELLIPSIS) <= 1:
                        updates.append((span, reshaped(expected, actual)))
                        print(f"{rel}:{number}: `{command}` updated")
                        continue
                    failed += 1
                    print(f"{rel}:{number}: `{command}` prints something else:")
                    sys.stdout.writelines(
                        line + "\n" for line in difflib.unified_diff(
                            expected, actual, f"{rel} (documented)", "printed now", lineterm=""))
            if updates:
                rewrite(path, updates)
    finally:
        shutil.rmtree(cwd)
    print(f"docs-check: {checked - skipped} examples checked ({skipped} need LibTorch, skipped), "
          f"{measured} measured figures name their script; {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
