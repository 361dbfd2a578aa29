"""Writes the config.json files of tests/data/hf-configs/ with transformers' own save_pretrained,
one per supported family, with the public configurations' values (the catalog's models).

  .venv/bin/python tests/data/hf-configs/make_configs.py   # from the repository root
"""
import pathlib

import transformers as t

HERE = pathlib.Path(__file__).parent

CONFIGS = {
    # EleutherAI/pythia-160m
    "pythia-160m": t.GPTNeoXConfig(
        vocab_size=50304, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, max_position_embeddings=2048, rotary_pct=0.25,
        rotary_emb_base=10000, use_parallel_residual=True, tie_word_embeddings=False,
        layer_norm_eps=1e-5),
    # roberta-large
    "roberta-large": t.RobertaConfig(
        vocab_size=50265, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
        intermediate_size=4096, max_position_embeddings=514, type_vocab_size=1,
        layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2),
    # google/vit-large-patch16-224-in21k
    "vit-large-patch16-224-in21k": t.ViTConfig(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
        image_size=224, patch_size=16, num_labels=10),  # 10 classes: a small file
    # facebook/convnext-large-224
    "convnext-large-224": t.ConvNextConfig(
        depths=[3, 3, 27, 3], hidden_sizes=[192, 384, 768, 1536], image_size=224,
        num_labels=10, drop_path_rate=0.0),  # 10 classes: a small file
    # state-spaces/mamba-2.8b-hf
    "mamba-2.8b-hf": t.MambaConfig(
        vocab_size=50280, hidden_size=2560, num_hidden_layers=64, state_size=16, expand=2,
        conv_kernel=4),
    # TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T
    "tinyllama-1.1b": t.LlamaConfig(
        vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
        num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048,
        rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2),
    # allenai/OLMo-1B-hf
    "olmo-1b-hf": t.OlmoConfig(
        vocab_size=50304, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=16, max_position_embeddings=2048, tie_word_embeddings=True,
        pad_token_id=1, bos_token_id=None, eos_token_id=50279),
    # HuggingFaceTB/SmolLM-135M (grouped-query attention, tied embeddings)
    "smollm-135m": t.LlamaConfig(
        vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=2048,
        rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True, bos_token_id=0,
        eos_token_id=0),
    # Qwen/Qwen2-0.5B (q/k/v biases, tied embeddings; no catalog model)
    "qwen2-0.5b": t.Qwen2Config(
        vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
        num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
        rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
        use_sliding_window=False, bos_token_id=151643, eos_token_id=151643),
}

for name, config in CONFIGS.items():
    config.save_pretrained(HERE / name)
    print(HERE / name / "config.json")
