#!/usr/bin/env python3
"""Parity fixtures from HuggingFace transformers, the reference implementation.

For each tiny catalog file (tests/models/data/*.toml) it builds the transformers model from a
locally constructed config (no hub download), randomises every parameter, saves it with
save_pretrained (model.safetensors + config.json) and writes expected.safetensors: the input
batch, the logits, the loss and the gradient of the loss with respect to every parameter, under
the checkpoint's names ("grad/<name>"). tests/models/parity_test.cpp loads both and compares.
Run by the build (`make test` -> target gpudays_fixtures) in the project venv.
"""
import argparse
import importlib.util
import pathlib
import re
import sys
import tomllib

import torch
import transformers
from safetensors.torch import save_file

SEED = 1234
BATCH = 2


def gpt_neox_config(arch):
    return transformers.GPTNeoXConfig(
        vocab_size=arch["vocab_size"],
        hidden_size=arch["d_model"],
        num_hidden_layers=arch["n_layers"],
        num_attention_heads=arch["n_heads"],
        intermediate_size=arch["d_ffn"],
        max_position_embeddings=arch["max_position_embeddings"],
        rotary_pct=arch["rotary_pct"],
        rotary_emb_base=10000,
        layer_norm_eps=arch["layer_norm_eps"],
        use_parallel_residual=arch["use_parallel_residual"],
        tie_word_embeddings=arch["tie_word_embeddings"],
        hidden_act="gelu",
        hidden_dropout=0.0,
        attention_dropout=0.0,
    )


def gpt_neox_case(arch, generator):
    config = gpt_neox_config(arch)
    config._attn_implementation = "eager"  # the plain reference path
    model = transformers.GPTNeoXForCausalLM(config)
    tokens = torch.randint(0, arch["vocab_size"], (BATCH, arch["seq_len"]), generator=generator)
    inputs = {"input_ids": tokens, "labels": tokens}
    # In memory transformers 5 names the output embedding lm_head; checkpoints say embed_out.
    renames = {"lm_head.weight": "embed_out.weight"}
    return model, inputs, renames


def roberta_case(arch, generator):
    config = transformers.RobertaConfig(
        vocab_size=arch["vocab_size"],
        hidden_size=arch["d_model"],
        num_hidden_layers=arch["n_layers"],
        num_attention_heads=arch["n_heads"],
        intermediate_size=arch["d_ffn"],
        max_position_embeddings=arch["max_position_embeddings"],
        type_vocab_size=arch["type_vocab_size"],
        pad_token_id=arch["pad_token_id"],
        layer_norm_eps=arch["layer_norm_eps"],
        hidden_act="gelu",
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    config._attn_implementation = "eager"
    model = transformers.RobertaForMaskedLM(config)
    vocab, seq, pad = arch["vocab_size"], arch["seq_len"], arch["pad_token_id"]
    tokens = torch.randint(4, vocab - 1, (BATCH, seq), generator=generator)
    attention_mask = torch.ones(BATCH, seq, dtype=torch.long)
    tokens[1, -5:] = pad  # the second sequence is padded: positions and the key mask matter
    attention_mask[1, -5:] = 0
    selected = (torch.rand(BATCH, seq, generator=generator) < 0.3) & attention_mask.bool()
    selected[:, 1] = True
    targets = torch.randint(0, vocab, (BATCH, seq), generator=generator)
    labels = torch.where(selected, targets, torch.full_like(targets, -100))
    inputs = {"input_ids": tokens, "attention_mask": attention_mask, "labels": labels}
    return model, inputs, {}


CASES = {"gpt_neox": gpt_neox_case, "roberta": roberta_case}


# Vision families: random images and labels; the loss is HF's single-label cross-entropy.
def vision_inputs(arch, generator):
    side, channels = arch["image_size"], arch.get("num_channels", 3)
    pixel_values = torch.randn(BATCH, channels, side, side, generator=generator)
    labels = torch.randint(0, arch["num_labels"], (BATCH,), generator=generator)
    return {"pixel_values": pixel_values, "labels": labels}


# transformers 5 renames ViT's modules in memory; checkpoints keep the names below (gpudays').
VIT_CHECKPOINT_NAMES = [
    (r"^vit\.layers\.(\d+)\.", r"vit.encoder.layer.\1."),
    (r"\.attention\.q_proj\.", ".attention.attention.query."),
    (r"\.attention\.k_proj\.", ".attention.attention.key."),
    (r"\.attention\.v_proj\.", ".attention.attention.value."),
    (r"\.attention\.o_proj\.", ".attention.output.dense."),
    (r"\.mlp\.fc1\.", ".intermediate.dense."),
    (r"\.mlp\.fc2\.", ".output.dense."),
]


def vit_checkpoint_name(name):
    for pattern, replacement in VIT_CHECKPOINT_NAMES:
        name = re.sub(pattern, replacement, name)
    return name


def vit_case(arch, generator):
    config = transformers.ViTConfig(
        hidden_size=arch["d_model"],
        num_hidden_layers=arch["n_layers"],
        num_attention_heads=arch["n_heads"],
        intermediate_size=arch["d_ffn"],
        image_size=arch["image_size"],
        patch_size=arch["patch_size"],
        num_channels=arch.get("num_channels", 3),
        num_labels=arch["num_labels"],
        layer_norm_eps=arch["layer_norm_eps"],
        hidden_act="gelu",
        qkv_bias=True,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    config._attn_implementation = "eager"
    model = transformers.ViTForImageClassification(config)
    renames = {name: vit_checkpoint_name(name) for name, _ in model.named_parameters()}
    return model, vision_inputs(arch, generator), renames


def convnext_case(arch, generator):
    config = transformers.ConvNextConfig(
        num_channels=arch.get("num_channels", 3),
        patch_size=4,
        num_stages=len(arch["depths"]),
        depths=arch["depths"],
        hidden_sizes=arch["hidden_sizes"],
        image_size=arch["image_size"],
        num_labels=arch["num_labels"],
        layer_norm_eps=arch["layer_norm_eps"],
        hidden_act="gelu",
        layer_scale_init_value=1e-6,
        drop_path_rate=0.0,
    )
    model = transformers.ConvNextForImageClassification(config)
    return model, vision_inputs(arch, generator), {}


CASES["vit"] = vit_case
CASES["convnext"] = convnext_case


def mamba_case(arch, generator):
    # The slow path (torch_forward, sequential scan) is the reference: no kernel package may be
    # installed that transformers would pick instead.
    for package in ("mamba_ssm", "causal_conv1d", "mambapy", "kernels"):
        assert importlib.util.find_spec(package) is None, f"{package} would replace the slow path"
    config = transformers.MambaConfig(
        vocab_size=arch["vocab_size"],
        hidden_size=arch["d_model"],
        num_hidden_layers=arch["n_layers"],
        state_size=arch["d_state"],
        conv_kernel=arch["d_conv"],
        expand=arch["expand"],
        time_step_rank=arch["dt_rank"],
        use_conv_bias=arch.get("conv_bias", True),
        use_bias=arch.get("proj_bias", False),
        layer_norm_epsilon=arch["layer_norm_eps"],
        tie_word_embeddings=True,
        use_mambapy=False,
        use_associative_scan=False,
        use_cache=False,
    )
    model = transformers.MambaForCausalLM(config)
    tokens = torch.randint(0, arch["vocab_size"], (BATCH, arch["seq_len"]), generator=generator)
    return model, {"input_ids": tokens, "labels": tokens}, {}


CASES["mamba"] = mamba_case


# The llama family's three transformers classes: Qwen2 has q, k, v biases, OLMo a parameter-free
# LayerNorm (tests/models/data/tiny-{llama,qwen2,olmo}.toml; catalog/family_llama.cpp).
def llama_variant(arch):
    if arch.get("attention_bias", False):
        return transformers.Qwen2Config, transformers.Qwen2ForCausalLM
    if arch.get("parameter_free_layer_norm", False):
        return transformers.OlmoConfig, transformers.OlmoForCausalLM
    return transformers.LlamaConfig, transformers.LlamaForCausalLM


def llama_case(arch, generator):
    config_class, model_class = llama_variant(arch)
    heads = arch["n_heads"]
    config = config_class(
        vocab_size=arch["vocab_size"],
        hidden_size=arch["d_model"],
        num_hidden_layers=arch["n_layers"],
        num_attention_heads=heads,
        num_key_value_heads=arch.get("n_kv_heads", heads),
        head_dim=arch.get("head_dim", 0) or arch["d_model"] // heads,
        intermediate_size=arch["d_ffn"],
        max_position_embeddings=arch["max_position_embeddings"],
        rope_parameters={"rope_type": "default", "rope_theta": arch.get("rope_theta", 10000.0)},
        rms_norm_eps=arch.get("rms_norm_eps", 1e-6),
        tie_word_embeddings=arch["tie_word_embeddings"],
        hidden_act="silu",
        attention_dropout=0.0,
        bos_token_id=arch.get("bos_token_id", 1),
        eos_token_id=arch.get("eos_token_id", 2),
        pad_token_id=None,  # OLMo's default (1) would give the embedding a padding row
    )
    if config_class is transformers.Qwen2Config:
        config.use_sliding_window = False
    config._attn_implementation = "eager"  # the plain reference path: repeat_kv, then matmuls
    model = model_class(config)
    tokens = torch.randint(0, arch["vocab_size"], (BATCH, arch["seq_len"]), generator=generator)
    return model, {"input_ids": tokens, "labels": tokens}, {}


CASES["llama"] = llama_case


def randomise(model, generator):
    """Every parameter random, so that swapped or skipped tensors cannot go unnoticed:
    norm weights around 1, biases and norm shifts around 0, matrices with std 0.1."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=generator)
            if name.endswith("bias"):
                p.copy_(0.1 * noise)
            elif p.dim() == 1:
                p.copy_(1.0 + 0.1 * noise)
            else:
                p.copy_(0.1 * noise)


def write_case(spec_path, out_root):
    spec = tomllib.loads(spec_path.read_text())
    generator = torch.Generator().manual_seed(SEED)
    model, inputs, renames = CASES[spec["family"]](spec["arch"], generator)
    randomise(model, generator)
    model.float().eval()
    out = model(**inputs)
    out.loss.backward()
    case_dir = out_root / spec["name"]
    model.save_pretrained(case_dir)
    expected = {k: v.clone().contiguous() for k, v in inputs.items()}
    expected["logits"] = out.logits.detach().contiguous()
    expected["loss"] = out.loss.detach().reshape(1)
    for name, p in model.named_parameters():
        expected["grad/" + renames.get(name, name)] = p.grad.contiguous()
    save_file(expected, case_dir / "expected.safetensors", metadata={
        "torch": torch.__version__, "transformers": transformers.__version__})
    print(f"make_fixtures: {spec['name']}: loss {out.loss.item():.6f}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("specs", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True)
    for spec_path in args.specs:
        write_case(spec_path, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
