// Mamba-1 forward pass and initialisation, following HuggingFace's modeling_mamba (slow path,
// MambaMixer.torch_forward without a cache): RMSNorm in >= fp32, causal depthwise conv, selective
// scan in >= fp32, D skip, SiLU gate; initialisation as MambaPreTrainedModel._init_weights.
#include "models/mamba.h"

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/conv1d.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/log.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/softplus.h>
#include <c10/core/ScalarType.h>
#include <fmt/format.h>

#include <cmath>

#include "catalog/model_loader.h"
#include "common/error.h"

namespace gpudays::models {
namespace {

// dt_proj.bias = softplus^-1(dt), dt log-uniform in [time_step_min, time_step_max], floored
// (HF init_mamba_weights), drawn in fp32 as HF does. -> [d_inner]
at::Tensor dt_bias_init(const MambaOptions& o) {
  const at::TensorOptions f32 = o.param_options.dtype(at::kFloat);
  const double log_min = std::log(o.time_step_min);
  const double log_max = std::log(o.time_step_max);
  const at::Tensor dt = at::exp(at::rand({o.d_inner()}, f32) * (log_max - log_min) + log_min)
                            .clamp_min(o.time_step_floor);
  return (dt + at::log(-at::expm1(-dt))).to(o.param_options.dtype());
}

}  // namespace

MambaOptions mamba_options(const ModelSpec& spec, const at::TensorOptions& param_options) {
  if (spec.family != Family::kMamba) {
    throw InputError(
        fmt::format("model '{}' is a {} model, not mamba", spec.name, to_string(spec.family)));
  }
  validate_model(spec);  // positive sizes, ...
  const ArchSpec& a = spec.arch;
  MambaOptions o;
  o.n_layers = a.n_layers;
  o.d_model = a.d_model;
  o.vocab_size = a.vocab_size;
  o.d_state = a.d_state;
  o.d_conv = a.d_conv;
  o.expand = a.expand;
  o.dt_rank = a.dt_rank;
  o.conv_bias = a.conv_bias;
  o.proj_bias = a.proj_bias;
  o.layer_norm_eps = a.layer_norm_eps;
  o.init_std = a.initializer_range;
  o.time_step_min = a.time_step_min;
  o.time_step_max = a.time_step_max;
  o.time_step_floor = a.time_step_floor;
  o.time_step_scale = a.time_step_scale;
  o.param_options = param_options;
  return o;
}

MambaConv1dImpl::MambaConv1dImpl(int64_t channels,
                                 int64_t kernel_size,
                                 bool bias,
                                 const at::TensorOptions& options)
    : kernel_size_(kernel_size) {
  // kaiming_uniform_(a=sqrt(5)) with fan_in = kernel_size: U(-1/sqrt(K), 1/sqrt(K)).
  const double bound = 1.0 / std::sqrt(static_cast<double>(kernel_size));
  weight_ = register_parameter(
      "weight", at::empty({channels, 1, kernel_size}, options).uniform_(-bound, bound));
  if (bias) bias_ = register_parameter("bias", at::empty({channels}, options).zero_());
}

at::Tensor MambaConv1dImpl::forward(const at::Tensor& x) {
  const at::Tensor out = at::conv1d(x,
                                    weight_,
                                    bias_,
                                    /*stride=*/1,
                                    /*padding=*/kernel_size_ - 1,
                                    /*dilation=*/1,
                                    /*groups=*/x.size(1));
  return out.narrow(/*dim=*/2, /*start=*/0, /*length=*/x.size(2));  // causal: drop the look-ahead
}

MambaMixerImpl::MambaMixerImpl(const MambaOptions& options)
    : d_state_(options.d_state), dt_rank_(options.dt_rank), scan_(options.scan) {
  const auto& p = options.param_options;
  const int64_t d_inner = options.d_inner();
  // S4D-real initialisation: A = -(1, 2, ..., N) in every channel; D = 1.
  A_log_ = register_parameter("A_log",
                              at::log(at::arange(1, options.d_state + 1, p.dtype(at::kFloat)))
                                  .expand({d_inner, options.d_state})
                                  .contiguous()
                                  .to(p.dtype()));
  D_ = register_parameter("D", at::ones({d_inner}, p));
  conv1d_ = register_module("conv1d", MambaConv1d(d_inner, options.d_conv, options.conv_bias, p));
  in_proj_ = register_module("in_proj", Linear(options.d_model, 2 * d_inner, options.proj_bias, p));
  x_proj_ = register_module(
      "x_proj", Linear(d_inner, options.dt_rank + 2 * options.d_state, /*bias=*/false, p));
  dt_proj_ = register_module("dt_proj", Linear(options.dt_rank, d_inner, /*bias=*/true, p));
  out_proj_ = register_module("out_proj", Linear(d_inner, options.d_model, options.proj_bias, p));
  init_weights(options);
}

void MambaMixerImpl::init_weights(const MambaOptions& options) {
  at::NoGradGuard no_grad;
  // Every Linear N(0, initializer_range), bias 0 (as Linear starts)...
  in_proj_->weight().normal_(0, options.init_std);
  x_proj_->weight().normal_(0, options.init_std);
  // ...then init_mamba_weights for dt_proj ("random" scheme) and kaiming_uniform_(a=sqrt(5)) for
  // out_proj: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  const double dt_std =
      std::pow(static_cast<double>(options.dt_rank), -0.5) * options.time_step_scale;
  dt_proj_->weight().uniform_(-dt_std, dt_std);
  dt_proj_->bias().copy_(dt_bias_init(options));
  const double out_bound = 1.0 / std::sqrt(static_cast<double>(options.d_inner()));
  out_proj_->weight().uniform_(-out_bound, out_bound);
}

at::Tensor MambaMixerImpl::forward(const at::Tensor& x) {
  // in_proj -> [B, 2 * d_inner, T]: the SSM input and the gate z.
  const std::vector<at::Tensor> xz = in_proj_(x).transpose(1, 2).chunk(2, /*dim=*/1);
  const at::Tensor u = at::silu(conv1d_(xz[0]));  // [B, d_inner, T]
  // x_proj -> delta (low rank), B, C: [B, T, dt_rank], [B, T, N], [B, T, N].
  const std::vector<at::Tensor> dbc =
      x_proj_(u.transpose(1, 2)).split_with_sizes({dt_rank_, d_state_, d_state_}, /*dim=*/-1);
  const at::ScalarType wide = at_least_fp32(x.scalar_type());
  // dt_proj as HF writes it: W [d_inner, dt_rank] @ dt^T, bias added in the scan's precision.
  const at::Tensor dt = at::matmul(dt_proj_->weight(), dbc[0].transpose(1, 2));  // [B, d_inner, T]
  const at::Tensor delta = at::softplus(dt.to(wide) + dt_proj_->bias().to(wide).unsqueeze(-1));
  const at::Tensor A = -at::exp(A_log_.to(wide));  // [d_inner, N]
  const at::Tensor u_wide = u.to(wide);
  at::Tensor y = selective_scan(u_wide, delta, A, dbc[1].to(wide), dbc[2].to(wide), scan_);
  y = (y + u_wide * D_.to(wide).unsqueeze(-1)) * at::silu(xz[1]);  // D skip, SiLU gate
  return out_proj_(y.transpose(1, 2).to(x.scalar_type()));         // [B, T, d_model]
}

MambaBlockImpl::MambaBlockImpl(const MambaOptions& options)
    : residual_in_fp32_(options.residual_in_fp32) {
  norm_ = register_module("norm",
                          RmsNorm(options.d_model, options.layer_norm_eps, options.param_options));
  mixer_ = register_module("mixer", MambaMixer(options));
}

at::Tensor MambaBlockImpl::forward(const at::Tensor& x) {
  const at::Tensor mixed = mixer_(norm_(x.to(norm_->weight().scalar_type())));
  const at::Tensor residual = residual_in_fp32_ ? x.to(at_least_fp32(x.scalar_type())) : x;
  return residual + mixed;
}

MambaModelImpl::MambaModelImpl(const MambaOptions& options) {
  const auto& p = options.param_options;
  embeddings_ = register_module("embeddings", Embedding(options.vocab_size, options.d_model, p));
  {
    at::NoGradGuard no_grad;
    embeddings_->weight().normal_(0, options.init_std);  // initializer_range: 0.1 by default
  }
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.n_layers; ++i) layers_->push_back(MambaBlock(options));
  norm_f_ = register_module("norm_f", RmsNorm(options.d_model, options.layer_norm_eps, p));
}

at::Tensor MambaModelImpl::forward(const at::Tensor& tokens) {
  TORCH_CHECK(tokens.dim() == 2, "mamba: tokens must be [B, T], got ", tokens.sizes());
  at::Tensor h = embeddings_(tokens);
  for (size_t i = 0; i < layers_->size(); ++i) {
    auto* impl = layers_[i]->as<MambaBlockImpl>();
    const Block block = [impl](const at::Tensor& x) { return impl->forward(x); };
    h = run_block(block_runner_, static_cast<int64_t>(i), block, h);
  }
  return norm_f_(h);
}

BlockParameters MambaModelImpl::block_parameters() const {
  BlockParameters blocks;
  for (const auto& layer : *layers_) blocks.push_back(layer->parameters());
  return blocks;
}

void MambaModelImpl::set_scan(ScanKind kind) {
  for (const auto& layer : *layers_) layer->as<MambaBlockImpl>()->mixer()->set_scan(kind);
}

MambaForCausalLMImpl::MambaForCausalLMImpl(const MambaOptions& options) : options_(options) {
  backbone_ = register_module("backbone", MambaModel(options));
}

void MambaForCausalLMImpl::set_scan(ScanKind kind) {
  options_.scan = kind;
  backbone_->set_scan(kind);
}

at::Tensor MambaForCausalLMImpl::forward(const at::Tensor& tokens) {
  const at::Tensor& weight = backbone_->embeddings()->weight();  // lm_head tied to the embeddings
  const at::Tensor logits = at::linear(backbone_(tokens).to(weight.scalar_type()), weight);
  return logits.to(at_least_fp32(logits.scalar_type()));
}

}  // namespace gpudays::models
