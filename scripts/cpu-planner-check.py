#!/usr/bin/env python3
"""The planner against real kernels on this machine's CPU (docs/planner.md, "The machine at hand").

For each model file of configs/cpu-check/ (five families, two sizes each): plan it on the measured
host CPU (`gpudays plan --device cpu`, which probes the CPU once), take the planner's best
configuration, time that configuration with a real trial (`gpudays trial`), and compare. Prints one
row per model and the mean absolute percentage error. One thread (OMP_NUM_THREADS=1 unless set),
so that other work on the machine disturbs it less.

usage: scripts/cpu-planner-check.py [--gpudays build/gpudays] [--steps N] [--json FILE]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(argv, env):
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"cpu-planner-check: {' '.join(argv)} failed: {done.stderr.strip()}")
    return done.stdout


def plan_best(gpudays, model_file, db, env):
    out = run([gpudays, "plan", "--model-file", model_file, "--device", "cpu", "--methods",
               "naive", "--no-calibration", "--format", "json", "--db", db], env)
    best = json.loads(out)["best"]
    if not best:
        sys.exit(f"cpu-planner-check: nothing fits for {model_file}")
    return best


def trial_step_s(gpudays, model_file, best, steps, workdir, env):
    spec = {"model": best["model"], "model_file": model_file, "device": "cpu",
            "free_lunch": best["free_lunch"],
            "activation_checkpointing": best["activation_checkpointing"],
            "sharding": best["sharding"], "offloading": best["offloading"],
            "micro_batch_size": best["micro_batch_size"], "grad_acc_steps": best["grad_acc_steps"],
            "warmup_steps": 1, "timed_steps": steps, "memory_limit_bytes": 0, "timing": "whole",
            "check_steps": 0}
    path = os.path.join(workdir, "spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    out = run([gpudays, "trial", "--spec", path], env)
    result = json.loads(out.strip().splitlines()[-1])
    if result["status"] != "ok":
        sys.exit(f"cpu-planner-check: trial of {model_file}: {result['status']}: "
                 f"{result['message']}")
    return result["step_time_median_s"], result.get("device_name", "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpudays", default=os.path.join(ROOT, "build", "gpudays"))
    parser.add_argument("--steps", type=int, default=5, help="timed steps per trial")
    parser.add_argument("--json", help="also write the rows and the MAPE to this file")
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpudays-cpu-check.") as workdir:
        db = os.path.join(workdir, "check.db")  # its probe cache sits next to it
        for model_file in sorted(glob.glob(os.path.join(ROOT, "configs", "cpu-check", "*.toml"))):
            best = plan_best(args.gpudays, model_file, db, env)
            measured_s, device = trial_step_s(args.gpudays, model_file, best, args.steps,
                                              workdir, env)
            rows.append({"model": best["model"], "micro_batch_size": best["micro_batch_size"],
                         "grad_acc_steps": best["grad_acc_steps"],
                         "predicted_s": best["step_time_s"], "measured_s": measured_s,
                         "error": best["step_time_s"] / measured_s - 1.0})
            r = rows[-1]
            print(f"{r['model']:<22} mb {r['micro_batch_size']:>3} x acc {r['grad_acc_steps']:<3} "
                  f"predicted {r['predicted_s']:8.4f} s  measured {r['measured_s']:8.4f} s  "
                  f"error {100 * r['error']:+6.1f}%", flush=True)
    mape = sum(abs(r["error"]) for r in rows) / len(rows)
    bias = sum(r["error"] for r in rows) / len(rows)
    print(f"{len(rows)} models on {device}, OMP_NUM_THREADS={env['OMP_NUM_THREADS']}: "
          f"MAPE {100 * mape:.1f}%, mean error {100 * bias:+.1f}% (negative: predicted faster)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "rows": rows, "mape": mape, "mean_error": bias}, f,
                      indent=2)


if __name__ == "__main__":
    main()
