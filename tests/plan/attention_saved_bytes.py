"""What plain attention keeps for backward per score, against torch's autograd.

The planner counts, per attention score, the bytes its softmax and attention-dropout operations
keep (`gpudays plan --ops --format json`, `saved_gb`). This runs the same chains of torch
operations, as each stack runs them on a GPU, under torch.autograd.graph.saved_tensors_hooks and
adds the bytes of every kept tensor of the scores' shape. The dropout is CUDA's kernel
(aten.native_dropout, which keeps a byte mask; on the CPU, F.dropout keeps a full-size noise
tensor instead), and the casts are autocast's on CUDA (softmax in fp32, products in half).

Usage: attention_saved_bytes.py GPUDAYS_BINARY
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import torch

B, H, T, D = 2, 3, 16, 8
HALF = torch.bfloat16  # fp16's size; fp16 products on the CPU are not needed for a count


def kept_bytes_per_score(chain, dtype):
    """Bytes of the tensors of the scores' size that autograd keeps, per score (the second
    product keeps its operands reshaped to [B * H, T, T])."""
    kept = []

    def pack(t):
        if t.numel() == B * H * T * T:
            kept.append(t.numel() * t.element_size())
        return t

    q, k, v = (torch.randn(B, H, T, D, dtype=dtype, requires_grad=True) for _ in range(3))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        chain(q, k, v)
    return sum(kept) / (B * H * T * T)


def dropout(p):
    return torch.ops.aten.native_dropout(p, 0.1, True)[0]


def engine_half(q, k, v):
    # src/models/attention.cpp attend_plain: scale, causal masked_fill, fp32 softmax, cast back.
    s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    s = s.masked_fill(causal, float("-inf"))
    p = torch.softmax(s, -1, dtype=torch.float32).to(q.dtype)
    return dropout(p) @ v


def gpt2_half(q, k, v):
    # transformers 4.x GPT2Attention._attn under CUDA autocast: the half scores divided and masked
    # by torch.where, softmax to fp32 (autocast's fp32 list), .type(value.dtype), dropout.
    s = (q @ k.transpose(-2, -1)) / torch.full([], math.sqrt(D), dtype=q.dtype)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    s = torch.where(causal, s, torch.tensor(torch.finfo(q.dtype).min, dtype=q.dtype))
    p = torch.softmax(s.float(), -1).type(v.dtype)
    return dropout(p) @ v


def bert_half(q, k, v):
    # transformers' BertSelfAttention under CUDA autocast: the half scores divided, the fp32
    # extended mask added (the sum is fp32), softmax and dropout in fp32, the second product's
    # cast down.
    s = (q @ k.transpose(-2, -1)) / math.sqrt(D)
    s = s + torch.zeros(B, 1, 1, T)
    p = dropout(torch.softmax(s, -1))
    return p.to(q.dtype) @ v


def bert_fp32(q, k, v):
    s = (q @ k.transpose(-2, -1)) / math.sqrt(D) + torch.zeros(B, 1, 1, T)
    return dropout(torch.softmax(s, -1)) @ v


FAMILY_KEYS = {"gpt_neox": "rotary_pct = 0.25\n",
               "roberta": "type_vocab_size = 1\npad_token_id = 1\n"}
RECIPE_KEYS = {"roberta": "mlm_probability = 0.15\n"}


def model_file(directory, family, precision):
    path = os.path.join(directory, f"{family}-{precision}.toml")
    with open(path, "w") as f:
        f.write(
            f'name = "attention-{family}-{precision}"\nfamily = "{family}"\n\n[arch]\n'
            f"n_layers = 2\nd_model = {H * 64}\nn_heads = {H}\nd_ffn = {H * 256}\n"
            "vocab_size = 512\nseq_len = 256\nmax_position_embeddings = 258\n"
            + FAMILY_KEYS[family] + "\n[recipe]\n" + RECIPE_KEYS.get(family, "") +
            f'global_batch = 8\ntrain_steps = 10\nprecision = "{precision}"\n'
            'optimizer = "adamw"\nlr = 0.001\nschedule = "constant"\ndropout = 0.1\n'
        )
    return path


def planned_bytes_per_score(binary, path, model_code, heads, seq_len):
    out = subprocess.run(
        [binary, "plan", "--model-file", path, "--gpu", "a100", "--methods", "naive",
         "--micro-batch-size", "1", "--model-code", model_code, "--ops", "--format", "json"],
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"gpudays plan failed for {path}: {out.stderr.strip()}")
    ops = {op["name"]: op for op in json.loads(out.stdout)["ops"] if op["part"] == "layer"}
    kept = sum(ops[name]["saved_gb"] * 1e9 for name in ("softmax", "attention_dropout"))
    return kept / (ops["softmax"]["count"] * heads * seq_len * seq_len)


def main():
    binary = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        cases = [
            ("engine, half precision", engine_half, HALF, "gpt_neox", "fp16", "engine"),
            ("transformers' GPT-2 attention, autocast", gpt2_half, HALF, "gpt_neox", "fp16",
             "huggingface"),
            ("transformers' BERT, autocast", bert_half, HALF, "roberta", "fp16", "huggingface"),
            ("transformers' BERT, fp32", bert_fp32, torch.float32, "roberta", "fp32",
             "huggingface"),
        ]
        for name, chain, dtype, family, precision, code in cases:
            torch_bytes = kept_bytes_per_score(chain, dtype)
            planned = planned_bytes_per_score(
                binary, model_file(directory, family, precision), code, H, 256)
            ok = abs(planned - torch_bytes) < 1e-6
            failures += 0 if ok else 1
            print(f"{'ok  ' if ok else 'FAIL'} {name}: torch keeps {torch_bytes:g} bytes per "
                  f"score, the planner {planned:g}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
