// Parameter counts per family, layer by layer, following the HuggingFace module structure:
// GPTNeoXForCausalLM, RobertaForMaskedLM, ViTForImageClassification,
// ConvNextForImageClassification, MambaForCausalLM, LlamaForCausalLM (Qwen2ForCausalLM,
// OlmoForCausalLM). Weight matrices and their biases are counted
// exactly as those classes hold them.
#include "catalog/param_count.h"

#include <algorithm>

namespace gpudays {
namespace {

int64_t linear(int64_t in, int64_t out, bool bias = true) {
  return in * out + (bias ? out : 0);
}
int64_t layer_norm(int64_t d) {
  return 2 * d;
}

// Attention (q, k, v, o with biases; k and v narrower with grouped-query attention) + MLP
// (d -> d_ffn -> d with biases; a gated MLP has a second input matrix) + two LayerNorms.
int64_t transformer_layer(const ArchSpec& a) {
  const int64_t kv_heads = a.n_kv_heads > 0 ? a.n_kv_heads : a.n_heads;
  const int64_t kv_width = a.n_heads > 0 ? kv_heads * (a.d_model / a.n_heads) : a.d_model;
  return 2 * linear(a.d_model, a.d_model) + 2 * linear(a.d_model, kv_width) +
         (a.gated_ffn ? 2 : 1) * linear(a.d_model, a.d_ffn) + linear(a.d_ffn, a.d_model) +
         2 * layer_norm(a.d_model);
}

ParamCounts gpt_neox(const ArchSpec& a) {
  ParamCounts c;
  c.embedding = a.vocab_size * a.d_model;                                // embed_in
  c.unembedding = a.tie_word_embeddings ? 0 : a.vocab_size * a.d_model;  // embed_out, no bias
  c.largest_block = transformer_layer(a);
  c.total = c.embedding + a.n_layers * c.largest_block + layer_norm(a.d_model) + c.unembedding;
  // query_key_value is one [3d, d] matrix; dense_h_to_4h is [d_ffn, d].
  c.largest_tensor = std::max({c.embedding, 3 * a.d_model * a.d_model, a.d_ffn * a.d_model});
  c.input_only_embedding = a.tie_word_embeddings ? 0 : c.embedding;
  if (a.tie_word_embeddings) c.unembedding = c.embedding;
  return c;
}

ParamCounts roberta(const ArchSpec& a) {
  ParamCounts c;
  c.embedding = (a.vocab_size + a.max_position_embeddings + a.type_vocab_size) * a.d_model;
  const int64_t embeddings = c.embedding + layer_norm(a.d_model);
  // lm_head: dense + LayerNorm + decoder (weight tied to word embeddings; bias of its own).
  const int64_t lm_head = linear(a.d_model, a.d_model) + layer_norm(a.d_model) + a.vocab_size;
  c.unembedding = a.vocab_size * a.d_model;  // shared with the word embeddings
  c.largest_block = transformer_layer(a);
  c.total = embeddings + a.n_layers * c.largest_block + lm_head;
  c.largest_tensor = std::max(a.vocab_size, a.d_ffn) * a.d_model;
  c.input_only_embedding = (a.max_position_embeddings + a.type_vocab_size) * a.d_model;
  return c;
}

ParamCounts vit(const ArchSpec& a) {
  ParamCounts c;
  const int64_t patches = (a.image_size / a.patch_size) * (a.image_size / a.patch_size);
  const int64_t patch_projection = linear(a.num_channels * a.patch_size * a.patch_size, a.d_model);
  c.embedding = a.d_model /*cls token*/ + (patches + 1) * a.d_model /*positions*/;
  c.unembedding = linear(a.d_model, a.num_labels);
  c.largest_block = transformer_layer(a);
  c.total = c.embedding + patch_projection + a.n_layers * c.largest_block + layer_norm(a.d_model) +
            c.unembedding;
  c.largest_tensor = std::max({(patches + 1) * a.d_model,
                               a.num_channels * a.patch_size * a.patch_size * a.d_model,
                               a.d_ffn * a.d_model,
                               a.d_model * a.num_labels});
  c.input_only_embedding = c.embedding;
  return c;
}

// One ConvNeXt block: 7x7 depthwise conv, LayerNorm, pointwise 4x MLP, layer scale.
int64_t convnext_block(int64_t d) {
  return (49 * d + d) + layer_norm(d) + linear(d, 4 * d) + linear(4 * d, d) + d;
}

ParamCounts convnext(const ArchSpec& a) {
  ParamCounts c;
  const int64_t d0 = a.hidden_sizes.front();
  int64_t total = linear(a.num_channels * 16, d0) + layer_norm(d0);  // 4x4 stride-4 stem + LN
  for (size_t s = 0; s < a.depths.size(); ++s) {
    const int64_t d = a.hidden_sizes[s];
    if (s > 0) total += layer_norm(a.hidden_sizes[s - 1]) + linear(4 * a.hidden_sizes[s - 1], d);
    total += a.depths[s] * convnext_block(d);
    c.largest_block = std::max(c.largest_block, convnext_block(d));
    // The block's pointwise [4d, d] matrices and the downsampling 2x2 conv's [d, d_prev, 2, 2].
    const int64_t downsample = s > 0 ? 4 * a.hidden_sizes[s - 1] * d : 0;
    c.largest_tensor = std::max({c.largest_tensor, 4 * d * d, downsample});
  }
  const int64_t d_last = a.hidden_sizes.back();
  c.unembedding = linear(d_last, a.num_labels);
  c.total = total + layer_norm(d_last) + c.unembedding;
  c.largest_tensor = std::max(c.largest_tensor, d_last * a.num_labels);
  return c;
}

// One Mamba block: RMSNorm, in_proj (d -> 2*d_inner), depthwise conv1d, x_proj
// (d_inner -> dt_rank + 2*d_state), dt_proj (dt_rank -> d_inner, bias), A_log, D, out_proj.
int64_t mamba_block(const ArchSpec& a) {
  const int64_t d_inner = a.expand * a.d_model;
  return a.d_model /*RMSNorm*/ + linear(a.d_model, 2 * d_inner, a.proj_bias) +
         (d_inner * a.d_conv + (a.conv_bias ? d_inner : 0)) +
         linear(d_inner, a.dt_rank + 2 * a.d_state, /*bias=*/false) + linear(a.dt_rank, d_inner) +
         d_inner * a.d_state /*A_log*/ + d_inner /*D*/ + linear(d_inner, a.d_model, a.proj_bias);
}

ParamCounts mamba(const ArchSpec& a) {
  ParamCounts c;
  c.embedding = a.vocab_size * a.d_model;
  c.unembedding = c.embedding;  // lm_head tied to the embeddings
  c.largest_block = mamba_block(a);
  c.total = c.embedding + a.n_layers * c.largest_block + a.d_model /*norm_f*/;
  c.largest_tensor = std::max(c.embedding, 2 * a.expand * a.d_model * a.d_model);  // in_proj
  return c;
}

// Attention without biases but Qwen2's on q, k and v; SwiGLU MLP (gate, up, down) without
// biases; two RMSNorm weights (none with OLMo's parameter-free LayerNorm).
int64_t llama_layer(const ArchSpec& a) {
  const int64_t q_width = a.n_heads * a.attention_head_dim();
  const int64_t kv_width = a.key_value_heads() * a.attention_head_dim();
  const int64_t norm = a.parameter_free_layer_norm ? 0 : a.d_model;
  return linear(a.d_model, q_width, a.qkv_bias) + 2 * linear(a.d_model, kv_width, a.qkv_bias) +
         linear(q_width, a.d_model, false) + 2 * linear(a.d_model, a.d_ffn, false) +
         linear(a.d_ffn, a.d_model, false) + 2 * norm;
}

ParamCounts llama(const ArchSpec& a) {
  ParamCounts c;
  c.embedding = a.vocab_size * a.d_model;                                // embed_tokens
  c.unembedding = a.tie_word_embeddings ? 0 : a.vocab_size * a.d_model;  // lm_head, no bias
  c.largest_block = llama_layer(a);
  const int64_t final_norm = a.parameter_free_layer_norm ? 0 : a.d_model;
  c.total = c.embedding + a.n_layers * c.largest_block + final_norm + c.unembedding;
  const int64_t q_width = a.n_heads * a.attention_head_dim();
  c.largest_tensor = std::max({c.embedding, q_width * a.d_model, a.d_ffn * a.d_model});
  c.input_only_embedding = a.tie_word_embeddings ? 0 : c.embedding;
  if (a.tie_word_embeddings) c.unembedding = c.embedding;
  return c;
}

}  // namespace

ParamCounts count_params(const ModelSpec& model) {
  switch (model.family) {
    case Family::kGptNeox:
      return gpt_neox(model.arch);
    case Family::kRoberta:
      return roberta(model.arch);
    case Family::kVit:
      return vit(model.arch);
    case Family::kConvnext:
      return convnext(model.arch);
    case Family::kMamba:
      return mamba(model.arch);
    case Family::kLlama:
      return llama(model.arch);
  }
  return {};
}

}  // namespace gpudays
