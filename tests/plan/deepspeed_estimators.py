"""The planner's model-state memory against DeepSpeed's own estimators (a cross-check by code
nobody here wrote: deepspeed.runtime.zero's estimate_zero2/3_model_states_mem_needs).

  deepspeed_estimators.py GPUDAYS

For pythia-1b on 8 A100s, pinned to ZeRO stage 2 and 3 with and without offloading, it checks the
relations docs/planner.md states, exactly (in bytes, DeepSpeed's buffer factor set to 1):
  - stage 3 offloaded (parameters too): host memory per node = DeepSpeed's 18 bytes per parameter;
  - stage 2 offloaded: the planner's 16 bytes per parameter of the node's shards (fp32 weights,
    moments, gradients) is DeepSpeed's steady-state term; its max(4 x GPUs, 16) adds every
    process's fp32 copy of the whole model while it loads (here 4 x 8 = 32);
  - stage 2 on the GPU: DeepSpeed's 2 + 18/N also counts an fp32 gradient partition (4/N) that the
    ZeRO paper's 2 + (2 + 12)/N (the planner's) leaves out.
A missing package is an error, never a skip.
"""
import json
import subprocess
import sys

from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

MODEL = "pythia-1b"
GPU = "a100-80gb-sxm"
GPUS = 8


def gpudays_json(gpudays, *args):
    done = subprocess.run([gpudays, *args, "--format", "json"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"FAILED: gpudays {' '.join(args)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def parameters(gpudays):
    rows = gpudays_json(gpudays, "models")["rows"]
    return next(r["params"] for r in rows if r["name"] == MODEL)


def best_row(gpudays, sharding, offloading):
    plan = gpudays_json(gpudays, "plan", "--model", MODEL, "--gpu", GPU, "--gpus-per-node",
                        str(GPUS), "--sharding", sharding, "--offloading", offloading)
    return plan["best"]


def model_state(row):
    return (row["memory_weights_bytes"] + row["memory_gradients_bytes"] +
            row["memory_optimizer_state_bytes"])


def check(name, ours, theirs, expected_difference):
    difference = theirs - ours
    print(f"{name}: gpudays {ours / 2**30:.2f} GiB, DeepSpeed {theirs / 2**30:.2f} GiB, "
          f"difference {difference / 2**30:.2f} GiB (expected {expected_difference / 2**30:.2f})")
    assert abs(difference - expected_difference) <= 16, \
        f"{name}: DeepSpeed - gpudays = {difference}, expected {expected_difference}"


def main():
    gpudays = sys.argv[1]
    p = parameters(gpudays)
    host3, _, _ = estimate_zero3_model_states_mem_needs(
        p, 0, num_gpus_per_node=GPUS, cpu_offload=True, cpu_offload_params=True,
        additional_buffer_factor=1.0)
    check("zero_3 offloaded, host per node", best_row(gpudays, "zero_3", "on")
          ["memory_host_per_node_bytes"], host3, 0)
    host2, _ = estimate_zero2_model_states_mem_needs(
        p, num_gpus_per_node=GPUS, cpu_offload=True, additional_buffer_factor=1.0)
    check("zero_2 offloaded, host per node", best_row(gpudays, "zero_2", "on")
          ["memory_host_per_node_bytes"], host2, (4 * GPUS - 16) * p)
    _, gpu2 = estimate_zero2_model_states_mem_needs(
        p, num_gpus_per_node=GPUS, cpu_offload=False, additional_buffer_factor=1.0)
    check("zero_2 model states on a GPU", model_state(best_row(gpudays, "zero_2", "off")), gpu2,
          int(18 * p / GPUS) - int(14 * p / GPUS))


if __name__ == "__main__":
    main()
