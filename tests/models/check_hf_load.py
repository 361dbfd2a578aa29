#!/usr/bin/env python3
"""Loads a checkpoint written by gpudays (save_pretrained: config.json + model.safetensors) with
transformers' AutoModelForCausalLM.from_pretrained and checks its logits on the stored input
against the ones gpudays computed (expected.safetensors). Exit 0 when within the tolerance.
Run by tests/models/parity_test.cpp in the reference environment."""
import sys

import torch
import transformers
from safetensors.torch import load_file


def main(directory, tolerance):
    model = transformers.AutoModelForCausalLM.from_pretrained(directory, attn_implementation="eager")
    expected = load_file(f"{directory}/expected.safetensors")
    with torch.no_grad():
        logits = model(input_ids=expected["input_ids"]).logits
    diff = (logits - expected["logits"]).abs().max().item()
    print(f"check_hf_load: {type(model).__name__} from {directory}: logits max abs diff {diff:.3g}")
    return 0 if diff <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2])))
