// Parity with HuggingFace transformers (the reference implementation) for every family: tiny models
// built and randomised by make_fixtures.py, loaded here from the safetensors transformers wrote.
// Logits must match within 1e-5 absolute and every parameter's gradient within 1e-4 relative
// (fp32), for each attention (or scan) implementation. And a checkpoint saved here must load in
// transformers (config.json against transformers' is in family_config_test.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "family_test_util.h"
#include "models/hf_export.h"
#include "models/safetensors.h"
#include "models/zoo.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

constexpr double kLogitTolerance = 1e-5;  // absolute, fp32
// Gradients: max |g - g_ref| / scale per parameter tensor, where scale is the tensor's largest
// reference entry, floored (transformer families) at kGradScaleFloor times the largest entry of
// any tensor. The floor matters only for tensors whose true gradient is zero and whose reference is
// rounding noise (RoBERTa's key biases: softmax ignores a constant added to every score of a query;
// ~5e-9). Mamba has no such tensors and takes no floor.
constexpr double kGradTolerance = 1e-4;
constexpr double kGradScaleFloor = 1e-3;

struct ParityCase {
  std::string name;            // tests/models/data/<name>.toml, fixtures/<name>/
  std::string implementation;  // the attention or scan, as its to_string
  ZooOptions options;
  at::DeviceType device = at::kCPU;
  double grad_scale_floor = kGradScaleFloor;
};

ParityCase attention_case(const std::string& name,
                          AttentionKind kind,
                          at::DeviceType device = at::kCPU) {
  return {name, to_string(kind), {.attention = kind, .param_options = {}}, device, kGradScaleFloor};
}

ParityCase scan_case(const std::string& name, ScanKind kind, at::DeviceType device = at::kCPU) {
  return {name, to_string(kind), {.param_options = {}, .scan = kind}, device, /*floor=*/0.0};
}

void PrintTo(const ParityCase& c, std::ostream* out) {
  *out << c.name << " " << c.implementation << " " << at::DeviceTypeName(c.device, true);
}

std::string case_label(const testing::TestParamInfo<ParityCase>& info) {
  std::string label = info.param.name + "_" + info.param.implementation +
                      (info.param.device == at::kCUDA ? "_CUDA" : "");
  for (char& c : label) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return label;
}

Batch read_batch(const SafetensorsReader& file) {
  const auto read = [&](const char* name) {
    return file.contains(name) ? file.read(name) : at::Tensor();
  };
  return {read("input_ids"), read("attention_mask"), read("pixel_values"), read("labels")};
}

class Parity : public testing::TestWithParam<ParityCase> {};

TEST_P(Parity, LogitsLossAndEveryGradientMatchTransformers) {
  const ParityCase& c = GetParam();
  if (c.device == at::kCUDA) GPUDAYS_SKIP_WITHOUT_CUDA();
  const ModelSpec spec = test::tiny_spec(c.name);
  ZooModel model = make_model(spec, c.options);
  load_safetensors(model.module(),
                   test::fixture_path(spec.name, "model.safetensors"),
                   hf_load_options(spec.family));
  model.module().to(c.device);
  model.module().eval();  // no dropout (the tiny recipes have some)
  const SafetensorsReader expected(test::fixture_path(spec.name, "expected.safetensors"));
  const Batch batch = read_batch(expected).to(c.device);

  const at::Tensor logits = model.logits(batch);
  const double logit_diff = test::max_abs_diff(logits, expected.read("logits"));
  EXPECT_LT(logit_diff, kLogitTolerance);
  const at::Tensor loss = model.loss(logits, batch);
  const double loss_diff = std::abs(loss.item<double>() - expected.read("loss").item<double>());
  EXPECT_LT(loss_diff, kLogitTolerance);
  loss.backward();

  double largest = 0;
  for (const auto& [name, entry] : expected.entries()) {
    if (name.starts_with("grad/")) largest = std::max(largest, test::max_abs(expected.read(name)));
  }
  double worst_grad = 0;
  std::string worst_name;
  size_t checked = 0;
  for (const auto& item : model.module().named_parameters()) {
    const at::Tensor ref = expected.read("grad/" + item.key());
    double scale = std::max(test::max_abs(ref), c.grad_scale_floor * largest);
    if (c.grad_scale_floor == 0 && scale == 0) scale = 1;  // as test::max_rel_diff
    const double diff = test::max_abs_diff(item.value().grad(), ref) / scale;
    EXPECT_LT(diff, kGradTolerance) << item.key();
    if (diff >= worst_grad) std::tie(worst_grad, worst_name) = std::tie(diff, item.key());
    ++checked;
  }
  const auto grads = std::count_if(expected.entries().begin(),
                                   expected.entries().end(),
                                   [](const auto& e) { return e.first.starts_with("grad/"); });
  EXPECT_EQ(checked, static_cast<size_t>(grads)) << "every reference gradient is checked";
  std::cout << fmt::format(
      "[parity] {} {} {}: logits max abs diff {:.3g}, loss diff {:.3g}, gradients max rel diff "
      "{:.3g} ({})\n",
      spec.name,
      c.implementation,
      at::DeviceTypeName(c.device, /*lower_case=*/true),
      logit_diff,
      loss_diff,
      worst_grad,
      worst_name);
}

// Mamba: transformers' MambaForCausalLM slow path, for both scans. The llama family: its three
// transformers classes (grouped-query Llama, Qwen2 with biases and one key/value head, OLMo with
// its parameter-free LayerNorm), eager attention as the reference for both of ours.
INSTANTIATE_TEST_SUITE_P(
    Tiny,
    Parity,
    testing::Values(attention_case("tiny-gpt-neox", AttentionKind::kPlain),
                    attention_case("tiny-gpt-neox", AttentionKind::kFused),
                    attention_case("tiny-gpt-neox-sequential", AttentionKind::kPlain),
                    attention_case("tiny-gpt-neox-sequential", AttentionKind::kFused),
                    attention_case("tiny-roberta", AttentionKind::kPlain),
                    attention_case("tiny-roberta", AttentionKind::kFused),
                    attention_case("tiny-gpt-neox", AttentionKind::kFused, at::kCUDA),
                    attention_case("tiny-roberta", AttentionKind::kFused, at::kCUDA),
                    scan_case("tiny-mamba", ScanKind::kPlain),
                    scan_case("tiny-mamba", ScanKind::kFused),
                    scan_case("tiny-mamba-bias", ScanKind::kPlain),
                    scan_case("tiny-mamba-bias", ScanKind::kFused),
                    scan_case("tiny-mamba", ScanKind::kPlain, at::kCUDA),
                    attention_case("tiny-llama", AttentionKind::kPlain),
                    attention_case("tiny-llama", AttentionKind::kFused),
                    attention_case("tiny-qwen2", AttentionKind::kPlain),
                    attention_case("tiny-qwen2", AttentionKind::kFused),
                    attention_case("tiny-olmo", AttentionKind::kPlain),
                    attention_case("tiny-olmo", AttentionKind::kFused),
                    attention_case("tiny-llama", AttentionKind::kPlain, at::kCUDA),
                    attention_case("tiny-llama", AttentionKind::kFused, at::kCUDA)),
    case_label);

// The image classifiers, through test::compare_with_fixture: the fixture loads all-or-nothing
// (no hub extras skipped), and gradients that are zero in exact arithmetic are judged apart.
struct ImageParityCase {
  std::string label;
  std::string name;  // fixtures/<name>/
  std::function<test::ImageModel()> build;
  at::DeviceType device = at::kCPU;
  test::IsExactlyZero exactly_zero = nullptr;
};

void PrintTo(const ImageParityCase& c, std::ostream* out) {
  *out << c.label;
}

class ImageParity : public testing::TestWithParam<ImageParityCase> {};

TEST_P(ImageParity, LogitsLossAndEveryGradientMatchTransformers) {
  const ImageParityCase& c = GetParam();
  if (c.device == at::kCUDA) GPUDAYS_SKIP_WITHOUT_CUDA();
  const test::ImageModel model = c.build();
  const test::ParityReport r =
      test::compare_with_fixture(*model.module, model.classify, c.name, c.device, c.exactly_zero);
  EXPECT_LT(r.logit_diff, 1e-5);
  EXPECT_LT(r.loss_diff, 1e-5);
  EXPECT_LT(r.worst_grad, 1e-4) << r.worst_grad_name;
  EXPECT_LT(r.worst_zero_grad, 1e-6) << "exactly-zero gradients are rounding noise on both sides";
  EXPECT_EQ(r.checked, r.reference_grads) << "every reference gradient is checked";
  std::cout << fmt::format(
      "[parity] {}: logits max abs diff {:.3g}, loss diff {:.3g}, gradients max rel diff {:.3g} "
      "({}), exactly-zero gradients {:.3g} of the largest\n",
      c.label,
      r.logit_diff,
      r.loss_diff,
      r.worst_grad,
      r.worst_grad_name,
      r.worst_zero_grad);
}

std::function<test::ImageModel()> vit(AttentionKind attention) {
  return [attention] {
    VitOptions options = vit_options(test::tiny_spec("tiny-vit"), at::TensorOptions());
    options.attention = attention;
    return test::image_model(VitForImageClassification(options));
  };
}

// ViT's key biases add q.b_k to every score of a query: softmax ignores it, their exact gradient
// is 0.
bool vit_key_bias(const std::string& name) {
  return name.ends_with("attention.attention.key.bias");
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    ImageParity,
    testing::Values(
        ImageParityCase{
            "tiny_vit_plain", "tiny-vit", vit(AttentionKind::kPlain), at::kCPU, vit_key_bias},
        ImageParityCase{
            "tiny_vit_fused", "tiny-vit", vit(AttentionKind::kFused), at::kCPU, vit_key_bias},
        ImageParityCase{
            "tiny_vit_fused_CUDA", "tiny-vit", vit(AttentionKind::kFused), at::kCUDA, vit_key_bias},
        ImageParityCase{"tiny_convnext",
                        "tiny-convnext",
                        [] { return test::image_model(test::tiny_convnext()); }},
        ImageParityCase{"tiny_convnext_CUDA",
                        "tiny-convnext",
                        [] { return test::image_model(test::tiny_convnext()); },
                        at::kCUDA}),
    test::case_label);

// A model saved here (config.json + model.safetensors) loads with from_pretrained and gives our
// logits (tests/models/check_hf_load.py, run in the reference environment).
TEST(HfExport, SavedCheckpointsLoadInTransformers) {
  for (const char* name :
       {"tiny-gpt-neox", "tiny-roberta", "tiny-llama", "tiny-qwen2", "tiny-olmo"}) {
    const ModelSpec spec = test::tiny_spec(name);
    torch::manual_seed(7);
    ZooModel model = make_model(spec, {});
    model.module().eval();
    const std::string dir = test::scratch_dir(std::string("hf-export-") + name);
    save_pretrained(model.module(), spec, dir);
    SyntheticOptions two_samples;
    two_samples.batch_size = 2;
    const Batch batch = synthetic_batch(spec, two_samples);
    NamedTensors inputs = {{"logits", model.logits(batch).detach()}};
    if (batch.input_ids.defined()) inputs.emplace_back("input_ids", batch.input_ids);
    if (batch.pixel_values.defined()) inputs.emplace_back("pixel_values", batch.pixel_values);
    write_safetensors(dir + "/expected.safetensors", inputs);
    std::string command;
    EXPECT_TRUE(test::transformers_loads(dir, kLogitTolerance, &command)) << command;
  }
}

}  // namespace
}  // namespace gpudays::models
