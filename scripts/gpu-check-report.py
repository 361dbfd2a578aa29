#!/usr/bin/env python3
"""Writes the GPU check's report (scripts/gpu-check.sh): the stages, the *_CUDA tests, and per model
and preset the planner's predicted best configuration against the fastest measured one (step time,
peak memory, MFU), then every trial with its own prediction. Reads the results database, the
uncalibrated plans (plan-MODEL-PRESET.json) and the gtest XML from the check's work folder.
Standard library only (runs under the GPU machine's python3)."""
import argparse
import json
import os
import sqlite3
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

GIB = 2**30

# Which measured rows belong to a preset (the method sets `gpudays bench --methods` tries).
PRESET_FILTERS = {
    "naive": lambda r: not r["free_lunch"] and not r["activation_checkpointing"]
    and r["sharding"] == "none" and not r["offloading"],
    "free-lunch": lambda r: r["free_lunch"] and not r["activation_checkpointing"]
    and r["sharding"] == "none" and not r["offloading"],
    "all": lambda r: True,
}


def methods(r):
    parts = []
    if r["free_lunch"]:
        parts.append("free-lunch")
    if r["activation_checkpointing"]:
        parts.append("checkpointing")
    if r["sharding"] != "none":
        parts.append(r["sharding"])
    if r["offloading"]:
        parts.append("offload")
    return "+".join(parts) or "naive"


def ratio(measured, predicted):
    return f"{measured / predicted:.2f}" if predicted else "-"


def read_trials(db_path):
    if not os.path.exists(db_path):
        return []
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM trials ORDER BY created_at")]


def read_plan(work, model, preset):
    path = os.path.join(work, f"plan-{model}-{preset}.json")
    try:
        with open(path) as f:
            return json.load(f)["best"]
    except (OSError, ValueError, KeyError):
        return None


def stages_section(work):
    lines = ["## Stages", "", "| stage | outcome | seconds |", "| --- | --- | --- |"]
    try:
        with open(os.path.join(work, "stages.tsv")) as f:
            for row in f:
                name, status, seconds = (row.rstrip("\n").split("\t") + ["", ""])[:3]
                lines.append(f"| {name} | {status} | {seconds} |")
    except OSError:
        lines.append("| (no stage record) | | |")
    return lines


def tests_section(work):
    lines = ["## GPU tests (`gpudays_torch_tests --gtest_filter='*_CUDA'`)", ""]
    path = os.path.join(work, "cuda-tests.xml")
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return lines + ["No test results (the build or the test binary failed: build.log, tests.log).", ""]
    lines += ["| test | result | seconds |", "| --- | --- | --- |"]
    for case in root.iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        failure = case.find("failure")
        skipped = case.find("skipped") is not None or case.get("result") == "skipped"
        result = "FAILED" if failure is not None else ("skipped" if skipped else "passed")
        lines.append(f"| {name} | {result} | {case.get('time')} |")
        if failure is not None:
            message = (failure.get("message") or "").replace("\n", " ").replace("|", "/")[:300]
            lines.append(f"| | {message} | |")
    return lines + [""]


def model_section(model, global_batch, presets, trials, work, gpu):
    name = f"{model}-gb{global_batch}"
    rows = [t for t in trials if t["model"] == name]
    lines = [f"## {name} on 1 x {gpu}", ""]
    lines += ["Predicted: `gpudays plan --no-calibration`; measured: the fastest `ok` trial of the "
              "preset's method sets; ratios are measured / predicted for that same configuration.", ""]
    lines += ["| preset | predicted best | pred. step s | pred. memory GiB | pred. MFU | measured best "
              "| step s | peak GiB | MFU | step ratio | memory ratio | trials (ok/oom/other) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for preset in presets:
        plan = read_plan(work, model, preset)
        if plan and plan.get("fits"):
            pred = (f"{methods(plan)} mb {plan['micro_batch_size']} x {plan['grad_acc_steps']}",
                    f"{plan['step_time_s']:.3f}", f"{plan['peak_memory_bytes'] / GIB:.1f}",
                    f"{100 * plan['mfu']:.1f}%")
        else:
            pred = ("(no plan)", "-", "-", "-")
        mine = [t for t in rows if PRESET_FILTERS[preset](t)]
        ok = [t for t in mine if t["status"] == "ok"]
        counts = (f"{len(ok)}/{sum(t['status'] == 'oom' for t in mine)}/"
                  f"{sum(t['status'] not in ('ok', 'oom') for t in mine)}")
        if ok:
            b = min(ok, key=lambda t: t["step_time_median_s"])
            meas = (f"{methods(b)} mb {b['micro_batch_size']} x {b['grad_acc_steps']}",
                    f"{b['step_time_median_s']:.3f}", f"{b['peak_memory_bytes'] / GIB:.1f}",
                    f"{100 * b['mfu']:.1f}%",
                    ratio(b["step_time_median_s"], b["predicted_step_time_s"]),
                    ratio(b["peak_memory_bytes"], b["predicted_memory_bytes"]))
        else:
            meas = ("(none measured)", "-", "-", "-", "-", "-")
        lines.append(f"| {preset} | " + " | ".join(pred + meas) + f" | {counts} |")
    lines += ["", "Every trial:", "",
              "| methods | micro-batch x acc | status | step s (min-max) | predicted s | peak GiB "
              "| predicted GiB | MFU | message |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in rows:
        message = (t["message"] or "").replace("\n", " ").replace("|", "/")[:160]
        step = (f"{t['step_time_median_s']:.3f} ({t['step_time_min_s']:.3f}-{t['step_time_max_s']:.3f})"
                if t["status"] == "ok" else "-")
        lines.append(
            f"| {methods(t)} | {t['micro_batch_size']} x {t['grad_acc_steps']} | {t['status']} | {step} "
            f"| {t['predicted_step_time_s']:.3f} | {t['peak_memory_bytes'] / GIB:.1f} "
            f"| {t['predicted_memory_bytes'] / GIB:.1f} | {100 * t['mfu']:.1f}% | {message} |")
    if not rows:
        lines.append("| (no trials) | | | | | | | | |")
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--global-batch", type=int, required=True)
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--presets", nargs="+", required=True)
    a = ap.parse_args()

    trials = read_trials(a.db)
    devices = sorted({f"{t['device_name']} (driver {t['driver']}, torch {t['torch_version']}, "
                      f"gpudays {t['git_commit']})" for t in trials if t["device_name"]})
    try:
        with open(os.path.join(a.work, "machine.txt")) as f:
            machine = "; ".join(line.strip() for line in f if line.strip())
    except OSError:
        machine = "unknown"
    lines = ["# GPU check", "",
             f"Written {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC by scripts/gpu-check.sh on: "
             f"{machine}. Trials ran on: {'; '.join(devices) or '(no trial recorded its device)'}.", "",
             f"Models are the catalog's with a global batch of {a.global_batch} sequences "
             f"(train_steps scaled so the days still count the recipe's tokens); each trial times 3 "
             "optimizer steps after a warm-up. Measured peak memory is the caching allocator's peak; "
             "the prediction also counts the CUDA context and workspaces (docs/bench.md).", ""]
    lines += stages_section(a.work) + [""] + tests_section(a.work)
    for model in a.models:
        lines += model_section(model, a.global_batch, a.presets, trials, a.work, a.gpu)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
