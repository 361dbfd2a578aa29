// Compute-optimal language models of one family (Chinchilla, Hoffmann et al. 2022): a ladder of
// architectures scaled from a catalog template, each trained on a fixed number of tokens per
// parameter with the template's recipe. Torch-free; the planner predicts them like any model.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/model_spec.h"

namespace gpudays {

// Hoffmann et al. 2022, "Training Compute-Optimal Large Language Models" (arXiv:2203.15556),
// Table 3: compute-optimal training uses about 20 tokens per parameter (e.g. 1B parameters on
// 20.2B tokens, 10B on 205.1B).
inline constexpr double kChinchillaTokensPerParam = 20.0;

// Hoffmann et al. 2022, Eq. 10 (Approach 3's fit): loss L(N, D) = E + A / N^alpha + B / D^beta.
struct ChinchillaLossFit {
  double e = 1.69;
  double a = 406.4;
  double b = 410.7;
  double alpha = 0.34;
  double beta = 0.28;
};
double chinchilla_loss(double params, double tokens, const ChinchillaLossFit& fit = {});

struct ComputeOptimalOptions {
  double tokens_per_param = kChinchillaTokensPerParam;
  // Width per layer: d_model = layers x this (Pythia-1B 2048/16, Pythia-6.9B 4096/32).
  int64_t d_model_per_layer = 128;
  int64_t head_dim = 128;       // attention heads = d_model / head_dim
  int64_t d_model_step = 128;   // rungs of the ladder
  int64_t max_d_model = 32768;  // the last rung
};

struct ComputeOptimalModel {
  ModelSpec model;  // the template's recipe, its train_steps set from the token count
  int64_t params = 0;
  double tokens = 0.0;  // train_steps x global batch x sequence length
};

// The model whose recipe and shape a family's ladder scales: a family name (gpt_neox: Pythia-1B's
// recipe, roberta: RoBERTa's, llama: TinyLlama-1.1B's) or any catalog transformer language model.
// Throws InputError naming the valid families for an empty or unknown name and for a catalog model
// of another kind (vit, convnext, mamba).
const ModelSpec& compute_optimal_template(const Catalog& catalog, const std::string& family);

// The template's architecture at `d_model` (layers, heads and FFN width from the options; vocab,
// sequence length and the recipe from the template), with train_steps = ceil(tokens_per_param x
// params / tokens per step). Throws InputError for a template that is not a transformer language
// model (gpt_neox, roberta, llama) or a d_model the options do not divide.
ComputeOptimalModel compute_optimal_model(const ModelSpec& family_template,
                                          int64_t d_model,
                                          const ComputeOptimalOptions& options = {});

// Every rung from the smallest (d_model = 2 steps) to max_d_model, smallest first.
std::vector<int64_t> compute_optimal_ladder(const ComputeOptimalOptions& options = {});

}  // namespace gpudays
