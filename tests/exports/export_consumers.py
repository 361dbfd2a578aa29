"""The exports against their real consumers (tests/CMakeLists.txt runs each check under ctest).

  export_consumers.py GPUDAYS hf        TrainingArguments(**export) for every family x method sets,
                                        at the plan's world size, "auto" DeepSpeed at another one
  export_consumers.py GPUDAYS deepspeed DeepSpeed's own DeepSpeedConfig from every DeepSpeed
                                        export, and its scheduler against the HF schedule
  export_consumers.py GPUDAYS fsdp      accelerate's FSDP2 auto-wrap policy on a tiny model of
                                        each family
  export_consumers.py GPUDAYS hf4       with transformers 4.42 and accelerate 0.32 first on
                                        PYTHONPATH (the reference benchmark's pins): every
                                        `--transformers 4` export, FSDP1's strategy and
                                        auto-wrap, ZeRO, and its warmup_stable_decay

No GPU here: the bf16/TF32 hardware checks of TrainingArguments are patched out, and the world
size is set to the plan's. A missing package is an error, never a skip.
"""
import contextlib
import json
import logging
import math
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import torch
import transformers
import transformers.training_args as training_args
from transformers import TrainingArguments

GPU = "a100-80gb-sxm"
GPUS = 8
# One catalog model per family.
MODELS = {
    "gpt_neox": "pythia-160m",
    "roberta": "roberta",
    "vit": "vit",
    "convnext": "convnext-large-1k",
    "mamba": "mamba",
    "llama": "tinyllama-1.1b",
}
# A spread of pinned method sets (the backend follows from the sharding), each of which fits every
# model above on 8 A100s but one: Mamba-2.8B without sharding and checkpointing needs about 87 GiB
# with the engine's chunked scan on a GPU (docs/models.md), so it is checked with the others.
METHOD_SETS = [
    ["--sharding", "none", "--free-lunch", "on", "--checkpointing", "off"],
    ["--sharding", "none", "--free-lunch", "on", "--checkpointing", "on"],
    ["--sharding", "zero_1", "--free-lunch", "on", "--checkpointing", "off"],
    ["--sharding", "zero_2", "--offloading", "on", "--checkpointing", "on"],
    ["--sharding", "zero_3", "--offloading", "off", "--free-lunch", "on"],
    ["--sharding", "fsdp_shard_grad_op", "--checkpointing", "on", "--free-lunch", "off"],
    ["--sharding", "fsdp_full_shard", "--checkpointing", "on", "--offloading", "on"],
]


NOT_FITTING = {("mamba", ("--sharding", "none", "--free-lunch", "on", "--checkpointing", "off"))}


def cases():
    """(family, model, pins) of every model x method set that fits."""
    return [(family, model, pins) for family, model in MODELS.items() for pins in METHOD_SETS
            if (model, tuple(pins)) not in NOT_FITTING]


EXPORTS = {}  # (model, pins, format, extra flags) -> the parsed export


MAJOR = ["5"]  # the --transformers of every hf export (hf4 sets 4)


def run_export(gpudays, key):
    model, pins, fmt, extra = key
    major = ["--transformers", MAJOR[0]] if fmt == "hf" else []
    cmd = [gpudays, "export", "--model", model, "--gpu", GPU, "--gpus-per-node", str(GPUS),
           "--source", "plan", "--format", fmt, *major, *pins, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(cmd)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def prefetch(gpudays, fmt, extra=(), only=lambda pins: True):
    """Runs the exports of every model x method set, two at a time (each plans the search)."""
    keys = [(model, tuple(pins), fmt, tuple(extra))
            for _, model, pins in cases() if only(pins)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        EXPORTS.update(zip(keys, pool.map(lambda key: run_export(gpudays, key), keys)))


def export(gpudays, model, pins, fmt="hf", extra=()):
    key = (model, tuple(pins), fmt, tuple(extra))
    if key not in EXPORTS:
        EXPORTS[key] = run_export(gpudays, key)
    return EXPORTS[key]


class DeprecationLog(logging.Handler):
    """Collects transformers' "deprecated" log lines (its FSDP/field-name warnings log, not warn)."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        if "deprecat" in record.getMessage().lower():
            self.lines.append(record.getMessage())


def training_arguments(args, world_size):
    """TrainingArguments(**args) as on `world_size` Ampere GPUs; fails on deprecated names."""
    log = DeprecationLog()
    logging.getLogger("transformers").addHandler(log)
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(tempfile.TemporaryDirectory())
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        stack.enter_context(mock.patch.object(TrainingArguments, "world_size",
                                              new_callable=mock.PropertyMock,
                                              return_value=world_size))
        stack.enter_context(mock.patch.object(training_args, "is_torch_bf16_gpu_available",
                                              return_value=True))
        stack.enter_context(mock.patch.object(training_args, "is_torch_tf32_available",
                                              return_value=True))
        if hasattr(training_args, "enable_tf32"):  # transformers 5; 4 sets torch's flags itself
            stack.enter_context(mock.patch.object(training_args, "enable_tf32"))
        warnings.simplefilter("always")
        built = TrainingArguments(output_dir=out, **args)
    logging.getLogger("transformers").removeHandler(log)
    deprecated = log.lines + [str(w.message) for w in caught if "deprecat" in str(w.message).lower()]
    if deprecated:
        raise AssertionError(f"deprecated TrainingArguments use: {deprecated}")
    return built


def finalize(built):
    """What the Trainer does with the DeepSpeed configuration once it knows the step count."""
    built.hf_deepspeed_config.trainer_config_finalize(built, None, built.max_steps)
    return built.hf_deepspeed_config.config


def is_zero(pins):
    return pins[1].startswith("zero")


def check_hf(gpudays):
    prefetch(gpudays, "hf")
    prefetch(gpudays, "hf", ["--auto"], only=is_zero)
    count = 0
    for family, model, pins in cases():
        args = export(gpudays, model, pins)
        built = training_arguments(args, GPUS)
        where = f"{model} {' '.join(pins)}"
        assert built.optim.value in ("adamw_torch", "adamw_torch_fused"), where
        assert built.max_steps == args["max_steps"], where
        sharding = pins[1]
        if sharding.startswith("fsdp"):
            plugin = built.fsdp_plugin_args
            assert plugin["fsdp_version"] == 2, where
            assert plugin["transformer_cls_names_to_wrap"], where
            assert plugin["reshard_after_forward"] == (sharding == "fsdp_full_shard"), where
        if sharding.startswith("zero"):
            ds = built.hf_deepspeed_config.config
            assert ds["train_batch_size"] == GPUS * built.per_device_train_batch_size * \
                built.gradient_accumulation_steps, where
            assert ds["zero_optimization"]["stage"] == int(sharding[-1]), where
            # The Trainer's consistency check (trainer_config_finalize): fixed numbers hold at
            # the plan's world size only, "auto" at any.
            finalize(built)
            try:
                finalize(training_arguments(args, GPUS // 2))
                raise AssertionError(f"{where}: fixed DeepSpeed values passed at {GPUS // 2}")
            except ValueError as mismatch:
                assert "train_batch_size" in str(mismatch), mismatch
            auto = export(gpudays, model, pins, extra=["--auto"])
            for world_size in (GPUS, GPUS // 2):
                filled = finalize(training_arguments(auto, world_size))
                assert filled["train_batch_size"] == world_size * \
                    auto["per_device_train_batch_size"] * \
                    auto["gradient_accumulation_steps"], where
                assert filled["optimizer"]["params"]["lr"] == auto["learning_rate"], where
        count += 1
    print(f"hf: {count} TrainingArguments built")
    check_wsd(gpudays)


def check_wsd(gpudays):
    """SmolLM's warmup-stable-decay through the Trainer's scheduler and DeepSpeed's configuration:
    the peak until the last 20% of the steps, then linear to 0 (the engine's schedule_test)."""
    pins = ("--sharding", "zero_1", "--free-lunch", "on", "--checkpointing", "off")
    args = export(gpudays, "smollm-135m", pins)
    built = finalize(training_arguments(args, GPUS))
    assert "scheduler" not in built, "DeepSpeed would replace the Trainer's warmup_stable_decay"
    steps = [0, 1000, 2000, 479999, 480000, 540000, 599999]
    want = [0.0, 1.5e-3, 3e-3, 3e-3, 3e-3, 1.5e-3, 3e-3 / 120000]
    for step, got, expected in zip(steps, hf_learning_rates(args, steps), want):
        assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-15), \
            f"smollm-135m: lr at step {step}: HF {got}, want {expected}"
    print("hf: smollm-135m's warmup_stable_decay matches the recipe")


class DataParallelGroup:
    """The `mpu` DeepSpeedConfig asks for the data-parallel world size."""

    def __init__(self, world_size):
        self.world_size = world_size

    def get_data_parallel_world_size(self):
        return self.world_size


def hf_learning_rates(args, steps):
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=args["learning_rate"])
    schedule = transformers.get_scheduler(args["lr_scheduler_type"], optimizer,
                                          num_warmup_steps=args["warmup_steps"],
                                          num_training_steps=args["max_steps"],
                                          scheduler_specific_kwargs=args["lr_scheduler_kwargs"])
    return [schedule.lr_lambdas[0](step) * args["learning_rate"] for step in steps]


def deepspeed_learning_rates(ds, steps):
    from deepspeed.runtime import lr_schedules

    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=ds["optimizer"]["params"]["lr"])
    schedule = getattr(lr_schedules, ds["scheduler"]["type"])(optimizer, **ds["scheduler"]["params"])
    rates = []
    for step in steps:
        schedule.last_batch_iteration = step
        rates.append(schedule.get_lr()[0])
    return rates


def check_deepspeed(gpudays):
    import deepspeed.comm
    from deepspeed.runtime.config import DeepSpeedConfig

    prefetch(gpudays, "deepspeed", only=is_zero)
    prefetch(gpudays, "hf", only=is_zero)
    count = 0
    for family, model, pins in cases():
        if not is_zero(pins):
            continue
        where = f"{model} {' '.join(pins)}"
        ds = export(gpudays, model, pins, fmt="deepspeed")
        with mock.patch.object(deepspeed.comm, "get_rank", return_value=0):
            config = DeepSpeedConfig(ds, mpu=DataParallelGroup(GPUS))
        assert config.world_size == GPUS, where
        assert config.train_batch_size == ds["train_batch_size"], where
        assert config.zero_optimization_stage == int(pins[1][-1]), where
        assert config.optimizer_name == "adamw", where  # every family's recipe: decoupled
        assert config.scheduler_name == ds["scheduler"]["type"], where
        args = export(gpudays, model, pins)
        total = args["max_steps"]
        warmup = args["warmup_steps"]
        steps = [0, warmup // 2, warmup, (warmup + total) // 2, total - 1]
        ours = deepspeed_learning_rates(ds, steps)
        # DeepSpeed's cosine counts decay steps from 1 (lr_schedules.py, real_last_step):
        # after warm-up it runs one step ahead of HuggingFace's.
        ahead = 1 if ds["scheduler"]["type"] == "WarmupCosineLR" else 0
        theirs = hf_learning_rates(args, [s + ahead if s > warmup else s for s in steps])
        for step, a, b in zip(steps, ours, theirs):
            assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12), \
                f"{where}: lr at step {step}: DeepSpeed {a}, HF {b}"
        count += 1
    print(f"deepspeed: {count} DeepSpeed configurations built, schedules match HF's")


def tiny_models():
    """One tiny transformers model per family, and its number of repeated blocks."""
    t = transformers
    text = dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64)
    return {
        "gpt_neox": (t.GPTNeoXForCausalLM(t.GPTNeoXConfig(**text)), 2),
        "roberta": (t.RobertaForMaskedLM(t.RobertaConfig(**text, max_position_embeddings=66)), 2),
        "vit": (t.ViTForImageClassification(t.ViTConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            image_size=32, patch_size=8, num_labels=10)), 2),
        "convnext": (t.ConvNextForImageClassification(t.ConvNextConfig(
            depths=[1, 1, 2, 1], hidden_sizes=[8, 16, 32, 64], num_labels=10, image_size=32)), 5),
        "mamba": (t.MambaForCausalLM(t.MambaConfig(vocab_size=128, hidden_size=32,
                                                   num_hidden_layers=2, state_size=4)), 2),
        "llama": (t.LlamaForCausalLM(t.LlamaConfig(**text, num_key_value_heads=2)), 2),
    }


def pinned_on(pins, flag):
    return flag in pins and pins[pins.index(flag) + 1] == "on"


def check_fsdp(gpudays):
    from accelerate.utils import FullyShardedDataParallelPlugin
    from accelerate.utils.fsdp_utils import fsdp2_prepare_auto_wrap_policy

    models = tiny_models()
    for family, model, pins in cases():
        if not pins[1].startswith("fsdp"):
            continue
        where = f"{model} {' '.join(pins)}"
        built = training_arguments(export(gpudays, model, pins), GPUS)
        plugin = FullyShardedDataParallelPlugin(**built.fsdp_plugin_args)
        tiny, blocks = models[family]
        plugin.set_auto_wrap_policy(tiny)
        policy = fsdp2_prepare_auto_wrap_policy(plugin, tiny)
        wrapped = sum(1 for module in tiny.modules() if policy(module))
        assert wrapped == blocks, f"{where}: {wrapped} FSDP units, want {blocks}"
        assert plugin.activation_checkpointing == pinned_on(pins, "--checkpointing"), where
        print(f"fsdp: {family}: {blocks} units of {type(next(m for m in tiny.modules() if policy(m))).__name__}")


def check_hf4(gpudays):
    """transformers 4's TrainingArguments (FSDP1 through accelerate's environment variables,
    gradient_checkpointing) from every `--transformers 4` export."""
    import accelerate.utils.dataclasses as accelerate_dataclasses
    from accelerate.utils import FullyShardedDataParallelPlugin

    assert transformers.__version__.startswith("4."), \
        f"transformers {transformers.__version__}: PYTHONPATH lacks .venv/transformers4"
    MAJOR[0] = "4"
    prefetch(gpudays, "hf")
    models = tiny_models()
    count = 0
    for family, model, pins in cases():
        where = f"{model} {' '.join(pins)}"
        args = export(gpudays, model, pins)
        built = training_arguments(args, GPUS)
        sharding = pins[1]
        checkpointing = pinned_on(pins, "--checkpointing")
        if sharding.startswith("fsdp"):
            options = {option.value for option in built.fsdp}
            want = {sharding[len("fsdp_"):], "auto_wrap"} | (
                {"offload"} if pinned_on(pins, "--offloading") else set())
            assert options == want, f"{where}: fsdp {options}, want {want}"
            # From the Trainer's environment variables; its sync_module_states asks for a GPU.
            with mock.patch.object(accelerate_dataclasses, "is_cuda_available", return_value=True), \
                    mock.patch.object(torch.cuda, "current_device", return_value=0):
                plugin = FullyShardedDataParallelPlugin()
            assert plugin.sharding_strategy.name == sharding[len("fsdp_"):].upper(), where
            tiny, blocks = models[family]
            plugin.set_auto_wrap_policy(tiny)
            wrapped = sum(1 for m in tiny.modules()
                          if plugin.auto_wrap_policy(module=m, recurse=False, nonwrapped_numel=0))
            assert wrapped == blocks, f"{where}: {wrapped} FSDP1 units, want {blocks}"
            assert built.fsdp_config["activation_checkpointing"] == checkpointing, where
            assert not built.gradient_checkpointing, where  # transformers 4 refuses both
        else:
            assert not built.fsdp, where
            expected = checkpointing and family != "convnext"
            assert built.gradient_checkpointing == expected, where
        if sharding.startswith("zero"):
            assert finalize(built)["zero_optimization"]["stage"] == int(sharding[-1]), where
        count += 1
    print(f"hf4: {count} transformers {transformers.__version__} TrainingArguments built")
    check_wsd4(gpudays)


def check_wsd4(gpudays):
    """SmolLM's warmup-stable-decay through transformers 4's scheduler: the same warm-up and
    stable phase; a cosine decay (half-way at the decay's middle) where 5's is linear."""
    pins = ("--sharding", "zero_1", "--free-lunch", "on", "--checkpointing", "off")
    args = export(gpudays, "smollm-135m", pins)
    steps = [0, 1000, 2000, 479999, 480000, 540000]
    want = [0.0, 1.5e-3, 3e-3, 3e-3, 3e-3, 1.5e-3]
    for step, got, expected in zip(steps, hf_learning_rates(args, steps), want):
        assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-15), \
            f"smollm-135m: lr at step {step}: HF 4 {got}, want {expected}"
    print("hf4: smollm-135m's warmup_stable_decay matches the recipe up to its decay's shape")


def main():
    gpudays, consumer = sys.argv[1], sys.argv[2]
    {"hf": check_hf, "deepspeed": check_deepspeed, "fsdp": check_fsdp,
     "hf4": check_hf4}[consumer](gpudays)


if __name__ == "__main__":
    main()
