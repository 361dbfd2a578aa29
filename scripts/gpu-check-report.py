#!/usr/bin/env python3
"""Writes the GPU check's report (scripts/gpu-check.sh): first what failed and why (one line per
failed stage: its first error line, the missing libraries, the failed or crashed tests, each failed
trial's first error line), then the size of what the device tool carries, every stage with its
outcome, the ldd check, the *_CUDA tests (the graph test in its own invocation), the direct trials,
the sweep trials' stderr, and per model and preset the planner's predicted best configuration
against the fastest measured one (step time, peak memory, MFU), then every trial with its own
prediction. Reads the check's work folder (stages.tsv, size.txt, ldd.tsv, machine.txt, the gtest
XML files, plan-MODEL-PRESET.json, direct-PRESET.*, stderr/), its logs and the results database.
Standard library only (runs under the GPU machine's python3)."""
import argparse
import glob
import json
import os
import re
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

# Lines that are never the error itself: backtraces and their headers.
NOISE = re.compile(r"^(frame #\d+|Exception raised from|#\d+ |\[ *\d+/\d+\] )")
ERROR_PATTERNS = [
    re.compile(r"^gpudays: .*error", re.I),  # main.cpp's one line
    re.compile(r": (fatal )?error: |CMake Error|undefined reference|^MISSING |TOO LARGE"
               r"|^no binaries"),
    re.compile(r"error|exception|what\(\)|terminate called|abort|segmentation fault|out of memory"
               r"|not found|missing|killed|no such file", re.I),
]


def first_error_line(text, limit=300, fallback="first"):
    """The line of TEXT that says what went wrong: gpudays' own error line, else a compiler's,
    CMake's or the check's own, else the first line that looks like an error (backtrace frames
    skipped); failing those, the first non-empty line (fallback "first"), the last ("last") or
    nothing ("none")."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    lines = [line for line in lines if not NOISE.match(line)]
    for pattern in ERROR_PATTERNS:
        for line in lines:
            if pattern.search(line):
                return line[:limit]
    if not lines or fallback == "none":
        return ""
    return (lines[-1] if fallback == "last" else lines[0])[:limit]


def cell(text):
    return (text or "").replace("\n", " ").replace("|", "/")


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


def read_text(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def read_trials(db_path):
    if not os.path.exists(db_path):
        return []
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM trials ORDER BY created_at")]


def read_plan(work, model, preset):
    try:
        with open(os.path.join(work, f"plan-{model}-{preset}.json")) as f:
            return json.load(f)["best"]
    except (OSError, ValueError, KeyError):
        return None


def read_stages(work):
    """(name, status, seconds, log) per stage, in order."""
    stages = []
    for row in read_text(os.path.join(work, "stages.tsv")).splitlines():
        name, status, seconds, log = (row.split("\t") + ["", "", ""])[:4]
        stages.append((name, status, seconds, log))
    return stages


def log_section(logs, log, name):
    """What stage NAME wrote into LOG: the lines between its '== NAME (budget' and '== NAME:'."""
    if not log:
        return ""
    text = read_text(os.path.join(logs, log))
    begin = text.rfind(f"== {name} (budget")
    if begin < 0:
        return ""
    begin = text.find("\n", begin) + 1
    end = text.find(f"\n== {name}: ", begin)
    return text[begin:end if end >= 0 else len(text)]


def crash_site(section):
    """'; crash site: pc ...; on the stack ...' from the test binary's crash report
    (tests/models/crash_traces.cpp), or ''."""
    m = re.search(r"^fatal signal [^\n]*\n((?:  [^\n]*\n?){1,3})", section, re.M)
    if not m:
        return ""
    return "; crash site: " + "; ".join(cell(l.strip()) for l in m.group(1).splitlines())


def gtest_outcome(work, logs, xml_name, stage, stage_status):
    """(rows, problems) of one gtest invocation: rows (name, result, seconds, message); problems,
    one line per failed test or for a run that left no XML (crashed or killed)."""
    try:
        root = ET.parse(os.path.join(work, xml_name)).getroot()
    except (OSError, ET.ParseError):
        if stage_status.startswith("skipped") or not stage_status:
            return [], []
        section = log_section(logs, "tests.log", stage)
        started = re.findall(r"^\[ RUN      \] (\S+)", section, re.M)
        ended = set(re.findall(r"^\[ +(?:OK|FAILED|SKIPPED) +\] (\S+)", section, re.M))
        running = [t for t in started if t not in ended]
        where = f"while {running[-1]} ran" if running else "before or after the tests"
        line = first_error_line(section[-4000:]) or "no output"
        return [], [f"{stage}: no results ({stage_status}) {where}; {line}{crash_site(section)}"]
    rows, problems = [], []
    for case in root.iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        failure = case.find("failure")
        skipped = case.find("skipped") is not None or case.get("result") == "skipped"
        result = "FAILED" if failure is not None else ("skipped" if skipped else "passed")
        message = ""
        if failure is not None:
            message = cell(failure.get("message") or failure.text or "")[:300]
            problems.append(f"{name} failed: {message}")
        elif skipped:
            s = case.find("skipped")
            message = cell((s.get("message") if s is not None else "") or "")[:160]
        rows.append((name, result, case.get("time"), message))
    return rows, problems


def direct_trials(work, presets):
    """Per preset: (spec, result, exit status, stderr's first error line)."""
    out = []
    for preset in presets:
        base = os.path.join(work, f"direct-{preset}")
        if not os.path.exists(base + ".spec.json"):
            continue
        try:
            spec = json.loads(read_text(base + ".spec.json"))
        except ValueError:
            spec = {}
        result = None
        lines = [line for line in read_text(base + ".out").splitlines() if line.strip()]
        if lines:
            try:
                result = json.loads(lines[-1])
            except ValueError:
                result = None
        rc = read_text(base + ".rc").strip()
        stderr = read_text(os.path.join(work, "stderr", f"direct-{preset}.stderr"))
        out.append((preset, spec, result, rc, first_error_line(stderr)))
    return out


def explain_failures(stages, work, logs, test_problems, direct, trials):
    """One line (or a few) per failed stage: why."""
    lines = []
    for name, status, _, log in stages:
        if not (status.startswith("failed") or status.startswith("timeout")):
            continue
        if name == "ldd":
            missing = [row.split("\t") for row in read_text(os.path.join(work, "ldd.tsv")).splitlines()
                       if "\tMISSING\t" in row]
            why = "; ".join(f"{b}: {libs} not found" for b, _, libs in missing) or \
                first_error_line(log_section(logs, log, name))
        elif name in test_problems:
            why = "; ".join(test_problems[name]) or first_error_line(log_section(logs, log, name))
        elif name.startswith("trial "):
            preset = name.split()[-1]
            found = [d for d in direct if d[0] == preset]
            if found:
                _, _, result, rc, err = found[0]
                status_text = result["status"] if result else f"no result (exit {rc or 'none'})"
                message = (result or {}).get("message", "")
                why = f"{status_text}: {err or first_error_line(message) or 'no stderr'}"
            else:
                why = first_error_line(log_section(logs, log, name))
        elif name.startswith("bench "):
            model, preset = name.split()[1:3]
            mine = [t for t in trials if t["model"].startswith(model + "-gb")
                    and PRESET_FILTERS.get(preset, lambda r: True)(t) and t["status"] != "ok"]
            why = first_error_line(log_section(logs, log, name), fallback="last")
            if mine:
                why += f" ({len(mine)} trials not ok; first: {mine[0]['status']}: " \
                       f"{first_error_line(mine[0]['message'])})"
        else:
            why = first_error_line(log_section(logs, log, name), fallback="last") or "(no output)"
        lines.append(f"- **{name}** ({status}, {log or 'no log'}): {cell(why)}")
    return lines


def stages_section(stages):
    lines = ["## Stages", "", "| stage | outcome | seconds | log |", "| --- | --- | --- | --- |"]
    for name, status, seconds, log in stages:
        lines.append(f"| {name} | {status} | {seconds} | {log} |")
    if not stages:
        lines.append("| (no stage record) | | | |")
    return lines + [""]


def ldd_section(work):
    lines = ["## Binaries (`ldd`, in the stages' environment)", ""]
    rows = [r.split("\t") for r in read_text(os.path.join(work, "ldd.tsv")).splitlines()]
    if not rows:
        return lines + ["No ldd record (no binaries, or the stage did not run).", ""]
    lines += ["| binary | libraries | missing |", "| --- | --- | --- |"]
    for binary, status, missing in ((r + ["", ""])[:3] for r in rows):
        lines.append(f"| {binary} | {status} | {missing} |")
    return lines + [""]


def listed_cuda_tests(work):
    """The *_CUDA tests `gpudays_torch_tests --gtest_list_tests` named (the load stage)."""
    names, suite = [], ""
    for line in read_text(os.path.join(work, "tests.list")).splitlines():
        if line and not line.startswith(" "):
            suite = line.split()[0]
        elif line.strip().split() and line.strip().split()[0].endswith("_CUDA"):
            names.append(suite + line.strip().split()[0])
    return names


def tests_section(invocations, work):
    lines = ["## GPU tests (`gpudays_torch_tests`, `*_CUDA`; the graph test last, alone)", ""]
    listed = listed_cuda_tests(work)
    if listed:
        lines += [f"The test binary holds {len(listed)} `*_CUDA` tests: "
                  + ", ".join(f"`{n}`" for n in listed) + ".", ""]
    for title, status, rows, problems in invocations:
        lines.append(f"{title}: {status or 'not run'}.")
        lines.append("")
        if rows:
            lines += ["| test | result | seconds | message |", "| --- | --- | --- | --- |"]
            lines += [f"| {n} | {r} | {s} | {m} |" for n, r, s, m in rows]
            lines.append("")
        for p in problems:
            if not rows:
                lines += [p, ""]
    return lines


def probe_lines(work, gpu):
    """The device probe's figures beside the catalog's for GPU (probe.json, gpus.json), or []."""
    try:
        with open(os.path.join(work, "probe.json")) as f:
            probe = json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return []
    try:
        with open(os.path.join(work, "gpus.json")) as f:
            catalog = next(g for g in json.load(f)["rows"] if g.get("name") == gpu)
    except (OSError, ValueError, KeyError, StopIteration):
        catalog = {}

    def versus(key, unit, scale=1.0):
        if catalog.get(key) is None:
            return ""
        return f" of the catalog's {catalog[key] * scale:,.1f} {unit}"

    ceiling = catalog.get("matmul_ceiling_fraction")
    bf16_ceiling = (f", measured ceiling {ceiling * catalog['peak_bf16_tflops']:,.1f}"
                    if ceiling and catalog.get("peak_bf16_tflops") else "")
    return [f"Device probe (`gpudays trial --probe-device cuda`, {cell(probe.get('device_name', '?'))}): "
            f"bf16 matmul {probe.get('matmul_bf16_tflops', 0):,.1f} TFLOP/s"
            f"{versus('peak_bf16_tflops', 'TFLOP/s dense peak')}{bf16_ceiling}; "
            f"fp32 matmul (TF32 off) {probe.get('matmul_fp32_tflops', 0):,.1f} TFLOP/s"
            f"{versus('peak_fp32_tflops', 'TFLOP/s peak')}; copy bandwidth "
            f"{probe.get('memory_bandwidth_gb_per_s', 0):,.0f} GB/s"
            f"{versus('memory_bandwidth_gb_per_s', 'GB/s')}.", ""]


def profile_section(work, model, presets, top=15):
    """The profiled direct trials' longest GPU rows (trial/kernel_profile.h's summary)."""
    lines = []
    for preset in presets:
        rows = []
        summary = read_text(os.path.join(work, f"profile-{preset}.json.kernels.tsv")).splitlines()
        for row in summary[1:]:
            fields = row.split("\t")
            if len(fields) == 5 and fields[0].startswith("gpu_"):
                rows.append((fields[1], int(fields[2]), float(fields[4])))
        if not rows:
            if len(summary) > 1:  # host rows only: the GPU's activity was not recorded
                lines += [f"### {model}, {preset}: no GPU activity recorded (where the trial "
                          "replayed a CUDA graph, CUPTI 13.0 may not trace its kernels: "
                          "pytorch/kineto#1165)", ""]
            continue
        busy_ms = sum(r[2] for r in rows) / 1e3
        lines += [f"### {model}, {preset}: {busy_ms:,.1f} ms of GPU activity per step, "
                  f"the {min(top, len(rows))} longest of {len(rows)} kernels and copies", "",
                  "| kernel | per step | ms per step | share |", "| --- | --- | --- | --- |"]
        steps = 2  # profile_trial's timed steps
        lines += [f"| {cell(name)[:120]} | {count // steps} | {us / 1e3:,.3f} | "
                  f"{us / 1e3 / busy_ms:.1%} |" for name, count, us in rows[:top]]
        lines.append("")
    if not lines:
        return []
    return ["## Where the direct trials' GPU time went (`profile` stages: torch's profiler over 2 "
            "timed steps of the same specification, in a run of its own)", ""] + lines


def direct_section(direct, work, skipped_status):
    lines = ["## Direct trials (`gpudays trial --spec`, whole steps)", ""]
    if not direct:
        return lines + [f"None ran: {skipped_status or 'see the stages'}.", ""]
    lines += ["| preset | configuration | status | step s (min-max) | peak GiB (reserved) | CUDA graph "
              "| pred. step s | pred. GiB | exit | first error line |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for preset, spec, result, rc, err in direct:
        config = (f"{methods(spec)} mb {spec.get('micro_batch_size')} x {spec.get('grad_acc_steps')}"
                  if spec else "-")
        plan = read_plan(work, os.path.basename(spec.get("model_file", "")).split("-gb")[0], preset) \
            if spec else None
        same = plan and plan.get("fits") and all(
            plan.get(k) == spec.get(k) for k in ("free_lunch", "activation_checkpointing",
                                                  "micro_batch_size", "grad_acc_steps"))
        pred = (f"{plan['step_time_s']:.3f}", f"{plan['peak_memory_bytes'] / GIB:.1f}") if same \
            else ("-", "-")
        if result:
            status = result.get("status", "?")
            step = (f"{result['step_time_median_s']:.3f} ({result['step_time_min_s']:.3f}-"
                    f"{result['step_time_max_s']:.3f})" if status == "ok" else "-")
            peak = f"{result.get('peak_memory_bytes', 0) / GIB:.1f}"
            if result.get("peak_reserved_bytes"):
                peak += f" ({result['peak_reserved_bytes'] / GIB:.1f})"
            graph = result.get("cuda_graph", "") or "-"
            message = result.get("message", "")
        else:
            status, step, peak, graph, message = "no result", "-", "-", "-", ""
        why = "" if status == "ok" else (err or first_error_line(message))
        lines.append(f"| {preset} | {config} | {status} | {step} | {peak} | {graph} | {pred[0]} "
                     f"| {pred[1]} | {rc or 'none'} | {cell(why)} |")
    lines += ["", "The direct trial of `all` has activation checkpointing on (the planner's best "
              "configuration of the preset otherwise); predictions are shown where the trial ran "
              "the planner's best configuration. Full stderr: trials-stderr.log.", ""]
    return lines


def sweep_stderr_section(work):
    dirs = sorted(d for d in glob.glob(os.path.join(work, "stderr", "sweep-*")) if os.path.isdir(d))
    if not dirs:
        return []
    lines = ["## Sweep trials' stderr (`GPUDAYS_TRIAL_STDERR_DIR`)", ""]
    for d in dirs:
        files = sorted(glob.glob(os.path.join(d, "*")))
        name = os.path.basename(d)[len("sweep-"):]
        if not files:
            lines += [f"{name}: no stderr files (this gpudays does not write them, or no trial "
                      "ran); the trials' messages are below.", ""]
            continue
        errors = []
        for path in files:
            text = read_text(path)
            # `gpudays bench --trial-stderr` heads each file with "# MODEL CONFIGURATION".
            head, _, rest = text.partition("\n") if text.startswith("#") else ("", "", text)
            error = first_error_line(rest, fallback="none")
            if error:
                errors.append((os.path.basename(path), head.lstrip("# ").strip(), error))
        lines.append(f"{name}: {len(files)} files, {len(errors)} with an error line:")
        lines.append("")
        if errors:
            lines += ["| file | trial | first error line |", "| --- | --- | --- |"]
            lines += [f"| {f} | {cell(t)} | {cell(e)} |" for f, t, e in errors]
        lines.append("")
    return lines


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
    if not rows:
        return lines + ["", "No trials of this model.", ""]
    lines += ["", "Every trial (a failed one's message is its first error line):", "",
              "| methods | micro-batch x acc | status | step s (min-max) | timing | CUDA graph "
              "| predicted s | peak GiB (reserved) | predicted GiB | MFU | message |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in rows:
        message = cell(first_error_line(t["message"] or "", 200))
        step = (f"{t['step_time_median_s']:.3f} ({t['step_time_min_s']:.3f}-{t['step_time_max_s']:.3f})"
                if t["status"] == "ok" else "-")
        peak = f"{t['peak_memory_bytes'] / GIB:.1f}"
        if t.get("peak_reserved_bytes"):
            peak += f" ({t['peak_reserved_bytes'] / GIB:.1f})"
        lines.append(
            f"| {methods(t)} | {t['micro_batch_size']} x {t['grad_acc_steps']} | {t['status']} | {step} "
            f"| {t.get('timing', '')} | {t.get('cuda_graph') or '-'} "
            f"| {t['predicted_step_time_s']:.3f} | {peak} "
            f"| {t['predicted_memory_bytes'] / GIB:.1f} | {100 * t['mfu']:.1f}% | {message} |")
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--logs", required=True, help="the folder of the check's logs ($OUT)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--global-batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--presets", nargs="+", required=True)
    ap.add_argument("--trial-model", default="pythia-160m")
    ap.add_argument("--no-gpu", default="",
                    help="why the GPU stages were skipped; empty: they ran")
    a = ap.parse_args()

    trials = read_trials(a.db)
    stages = read_stages(a.work)
    status = {name: s for name, s, _, _ in stages}
    devices = sorted({f"{t['device_name']} (driver {t['driver']}, torch {t['torch_version']}, "
                      f"gpudays {t['git_commit']})" for t in trials if t["device_name"]})
    machine = "; ".join(line.strip() for line in read_text(os.path.join(a.work, "machine.txt"))
                        .splitlines() if line.strip()) or "unknown"
    invocations = []
    test_problems = {}
    for title, xml_name, stage in (("All `*_CUDA` tests but the graph test", "cuda-tests.xml",
                                    "cuda-tests"),
                                   ("The tests a crash of that run left unstarted, run again",
                                    "cuda-tests-after-crash.xml", "cuda-tests-after-crash"),
                                   ("The CUDA graph test (`*Graph*_CUDA`), alone",
                                    "cuda-graph-tests.xml", "cuda-graph-test")):
        if stage == "cuda-tests-after-crash" and stage not in status:
            continue  # no crash, or nothing left to run
        rows, problems = gtest_outcome(a.work, a.logs, xml_name, stage, status.get(stage, ""))
        invocations.append((title, status.get(stage, ""), rows, problems))
        test_problems[stage] = problems
    direct = direct_trials(a.work, a.presets)

    lines = ["# GPU check", "",
             f"Written {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC by scripts/gpu-check.sh on: "
             f"{machine}. Trials ran on: {'; '.join(devices) or '(no trial recorded its device)'}.", ""]
    if a.no_gpu:
        lines += [f"**GPU stages skipped: {a.no_gpu}.** This run shows that the script parses, finds "
                  "its binaries, that they load with every library (ldd), that the planner answers "
                  "and that the report is written; nothing below was measured on a GPU.", ""]
    lines += [f"Models are the catalog's with a global batch of {a.global_batch} sequences "
              f"(train_steps scaled so the days still count the recipe's tokens); each trial times "
              f"{a.steps} optimizer steps after its warm-up. Measured peak memory is the caching "
              "allocator's peak; the prediction also counts the CUDA context and workspaces "
              "(docs/bench.md).", ""]
    size = read_text(os.path.join(a.work, "size.txt")).strip()
    if size:
        lines += [f"What the device tool carries: {cell(size)}.", ""]
    lines += probe_lines(a.work, a.gpu)
    failures = explain_failures(stages, a.work, a.logs, test_problems, direct, trials)
    lines += ["## What failed, and why", ""] + (failures or ["Nothing failed."]) + [""]
    lines += stages_section(stages) + ldd_section(a.work) + tests_section(invocations, a.work)
    trial_status = status.get(f"trial {a.trial_model} {a.presets[0]}", "")
    lines += direct_section(direct, a.work, trial_status)
    lines += profile_section(a.work, a.trial_model, a.presets)
    lines += sweep_stderr_section(a.work)
    for model in a.models:
        lines += model_section(model, a.global_batch, a.presets, trials, a.work, a.gpu)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
