#!/usr/bin/env python3
"""Loads a directory written by `gpudays export-hf` with transformers' from_pretrained and checks
that no tensor is missing, unexpected or mis-shaped, that the weights have config.json's dtype, and
that the logits on the stored inputs equal gpudays' (expected.safetensors beside it) within the
tolerance: computed in fp32 (the default), or with "native" in the weights' own dtype (a bf16 export
run in bf16). Exit 0 when all hold. Run by tests/trainer/hf_handoff_test.cpp in the reference
environment."""
import sys

import torch
import transformers
from safetensors.torch import load_file


def main(directory, expected_path, tolerance, mode="fp32"):
    config = transformers.AutoConfig.from_pretrained(directory)
    model_class = getattr(transformers, config.architectures[0])
    model, info = model_class.from_pretrained(
        directory, attn_implementation="eager", output_loading_info=True, dtype="auto")
    problems = {k: v for k, v in info.items() if v}
    if problems:
        print(f"check_hf_handoff: loading problems {problems}")
        return 1
    dtypes = {p.dtype for p in model.parameters()}
    print(f"check_hf_handoff: parameter dtypes {dtypes}, config dtype {config.dtype}")
    if dtypes != {config.dtype}:
        return 1
    expected = load_file(expected_path)
    with torch.no_grad():
        model = model if mode == "native" else model.float()
        logits = model.eval()(input_ids=expected["input_ids"]).logits.float()
    diff = (logits - expected["logits"]).abs().max().item()
    print(f"check_hf_handoff: {mode} logits max abs diff {diff:.3g} (largest logit "
          f"{expected['logits'].abs().max().item():.3g}, tolerance {tolerance:g})")
    return 0 if diff <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), *sys.argv[4:5]))
