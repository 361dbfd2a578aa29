#!/usr/bin/env python3
"""How much of a source's planned step is arithmetic and how much memory traffic, as its GPUs see it.

For each trusted, timed case of the named validation sources (configs/measurements), this runs
`gpudays validate --case SOURCE/NAME --ops --format json` and splits the planned micro-step into
its arithmetic-bound kernels (GEMMs, fused attention) and its memory-bound ones, as the planner
classes them; the rest of the planned step (host, communication, optimizer) is kept as planned.
It then fits one factor for each part, common to all of the source's cases, by least squares on
the published figures: predicted / published = (a * arithmetic + m * memory + rest) / step. A
source whose GPUs differ in arithmetic-to-bandwidth ratio separates the two factors; a
single-GPU source's factors are not well determined, and two cases fit exactly, saying nothing.
Recomputation (activation checkpointing) is not in the operation list: it stays in the rest, so a
checkpointed case's factors mean less. A diagnostic for docs/planner.md ("What the
nine GPUs of one source say"): nothing it prints is used by the planner.

Usage: scripts/split-gemm-memory.py [--gpudays build/gpudays] [--arithmetic OP,OP] SOURCE ...
  --arithmetic  memory-bound operations to count as arithmetic-bound instead (e.g.
                attention_qk,attention_av: plain attention's batched products)
Exits 2 with one line when a source has fewer than two timed cases.
"""

import argparse
import json
import subprocess
import sys


def run_json(gpudays, args):
    out = subprocess.run([gpudays, "validate", "--format", "json", *args],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def case_split(gpudays, source, name, arithmetic_ops):
    """The case's planned step, its published-equivalent step and the two kernel parts."""
    case = run_json(gpudays, ["--ops", "--case", f"{source}/{name}"])["cases"][0]
    arithmetic_s = memory_s = 0.0
    for op in case["ops"]:
        seconds = (op["forward_ms"] + op["backward_ms"]) / 1e3
        if op["memory_bound"] and op["name"] not in arithmetic_ops:
            memory_s += seconds
        else:
            arithmetic_s += seconds
    micro_steps = case["grad_acc_steps"]
    step_s = case["plan_row"]["step_time_s"]
    return {
        "name": name,
        "error": case["error"],
        "step_s": step_s,
        # error = predicted throughput / published - 1, so the published step is step x (1 + e)
        "published_step_s": step_s * (1.0 + case["error"]),
        "arithmetic_s": arithmetic_s * micro_steps,
        "memory_s": memory_s * micro_steps,
    }


def fit_factors(cases):
    """Least squares of a * A/T + m * M/T = 1 - R/T over the cases (T: the published step)."""
    rows = []
    for c in cases:
        rest_s = c["step_s"] - c["arithmetic_s"] - c["memory_s"]
        t = c["published_step_s"]
        rows.append((c["arithmetic_s"] / t, c["memory_s"] / t, 1.0 - rest_s / t))
    s_aa = sum(a * a for a, _, _ in rows)
    s_am = sum(a * m for a, m, _ in rows)
    s_mm = sum(m * m for _, m, _ in rows)
    s_ay = sum(a * y for a, _, y in rows)
    s_my = sum(m * y for _, m, y in rows)
    det = s_aa * s_mm - s_am * s_am
    if abs(det) < 1e-12:
        return None
    return (s_ay * s_mm - s_my * s_am) / det, (s_aa * s_my - s_am * s_ay) / det


def report(gpudays, source, arithmetic_ops, validation):
    names = [c["case"] for c in validation["cases"]
             if c["source"] == source and not c["skipped"] and c["trusted"]
             and not c.get("memory_only")]
    if len(names) < 2:
        print(f"split-gemm-memory: source '{source}' has {len(names)} timed trusted cases; "
              "two or more are needed", file=sys.stderr)
        sys.exit(2)
    cases = [case_split(gpudays, source, n, arithmetic_ops) for n in names]
    factors = fit_factors(cases)
    if factors is None:
        print(f"{source}: the cases do not separate the two parts (one mix for all)")
        return
    a, m = factors
    print(f"{source}: arithmetic x {a:.3f}, memory-bound x {m:.3f}")
    mape_planned = mape_fitted = 0.0
    for c in cases:
        rest_s = c["step_s"] - c["arithmetic_s"] - c["memory_s"]
        fitted_s = a * c["arithmetic_s"] + m * c["memory_s"] + rest_s
        fitted_error = c["published_step_s"] / fitted_s - 1.0
        share = c["memory_s"] / (c["arithmetic_s"] + c["memory_s"])
        mape_planned += abs(c["error"])
        mape_fitted += abs(fitted_error)
        print(f"  {c['name']:<40} memory-bound share {share:4.2f}  planned {c['error']:+7.1%}"
              f"  with the factors {fitted_error:+7.1%}")
    n = len(cases)
    print(f"  MAPE planned {mape_planned / n:.1%}, with the factors {mape_fitted / n:.1%}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpudays", default="build/gpudays")
    parser.add_argument("--arithmetic", default="")
    parser.add_argument("sources", nargs="+")
    args = parser.parse_args()
    arithmetic_ops = {op for op in args.arithmetic.split(",") if op}
    validation = run_json(args.gpudays, [])
    for source in args.sources:
        report(args.gpudays, source, arithmetic_ops, validation)


if __name__ == "__main__":
    main()
