#!/usr/bin/env python3
"""Loads a checkpoint written by gpudays (save_pretrained: config.json + model.safetensors) with
transformers' from_pretrained (the class named in config.json's "architectures") and checks its
logits on the stored inputs against the ones gpudays computed (expected.safetensors). Exit 0 when
within the tolerance. Every family here has its class: gpt_neox, roberta, mamba, vit, convnext
and the llama family's LlamaForCausalLM, Qwen2ForCausalLM and OlmoForCausalLM.
Run by tests/models/parity_test.cpp in the reference environment."""
import sys

import torch
import transformers
from safetensors.torch import load_file


def main(directory, tolerance):
    config = transformers.AutoConfig.from_pretrained(directory)
    model_class = getattr(transformers, config.architectures[0])
    model = model_class.from_pretrained(directory, attn_implementation="eager").eval()
    expected = load_file(f"{directory}/expected.safetensors")
    inputs = {k: v for k, v in expected.items() if k != "logits"}
    with torch.no_grad():
        logits = model(**inputs).logits
    diff = (logits - expected["logits"]).abs().max().item()
    print(f"check_hf_load: {model_class.__name__} from {directory}: logits max abs diff {diff:.3g}")
    return 0 if diff <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2])))
