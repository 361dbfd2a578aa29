// Parity with HuggingFace transformers (the reference implementation): tiny models built and
// randomised by make_fixtures.py, loaded here from the safetensors transformers wrote. Logits must
// match within 1e-5 absolute and every parameter's gradient within 1e-4 relative (fp32), for each
// attention (or scan) implementation. And a checkpoint saved here must load in transformers
// (config.json against transformers' is in family_behaviour_test.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "family_test_util.h"
#include "models/hf_export.h"
#include "models/safetensors.h"
#include "models/zoo.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

constexpr double kLogitTolerance = 1e-5;  // absolute, fp32
// Gradients: max |g - g_ref| / scale per parameter tensor, where scale is the tensor's largest
// reference entry, floored at kGradScaleFloor times the largest entry of any tensor. The floor
// matters only for tensors whose true gradient is zero and whose reference is rounding noise
// (RoBERTa's key biases: softmax ignores a constant added to every score of a query; ~5e-9).
constexpr double kGradTolerance = 1e-4;
constexpr double kGradScaleFloor = 1e-3;

struct ParityCase {
  std::string name;  // tests/models/data/<name>.toml, fixtures/<name>/
  AttentionKind attention;
  at::DeviceType device = at::kCPU;
};

void PrintTo(const ParityCase& c, std::ostream* out) {
  *out << c.name << " " << to_string(c.attention) << " " << at::DeviceTypeName(c.device, true);
}

std::string case_label(const testing::TestParamInfo<ParityCase>& info) {
  std::string label = info.param.name + "_" + to_string(info.param.attention) +
                      (info.param.device == at::kCUDA ? "_CUDA" : "");
  for (char& c : label) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return label;
}

Batch read_batch(const SafetensorsReader& file) {
  const auto read = [&](const char* name) { return file.contains(name) ? file.read(name) : at::Tensor(); };
  return {read("input_ids"), read("attention_mask"), read("pixel_values"), read("labels")};
}

class Parity : public testing::TestWithParam<ParityCase> {};

TEST_P(Parity, LogitsLossAndEveryGradientMatchTransformers) {
  if (GetParam().device == at::kCUDA) GPUDAYS_SKIP_WITHOUT_CUDA();
  const ModelSpec spec = test::tiny_spec(GetParam().name);
  ZooModel model = make_model(spec, {.attention = GetParam().attention, .param_options = {}});
  load_safetensors(model.module(), test::fixture_path(spec.name, "model.safetensors"),
                   hf_load_options(spec.family));
  model.module().to(GetParam().device);
  model.module().eval();  // no dropout (the tiny recipes have some)
  const SafetensorsReader expected(test::fixture_path(spec.name, "expected.safetensors"));
  const Batch batch = read_batch(expected).to(GetParam().device);

  const at::Tensor logits = model.logits(batch);
  const double logit_diff = test::max_abs_diff(logits, expected.read("logits"));
  EXPECT_LT(logit_diff, kLogitTolerance);
  const at::Tensor loss = model.loss(logits, batch);
  EXPECT_NEAR(loss.item<double>(), expected.read("loss").item<double>(), kLogitTolerance);
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
    const double scale = std::max(test::max_abs(ref), kGradScaleFloor * largest);
    const double diff = test::max_abs_diff(item.value().grad(), ref) / scale;
    EXPECT_LT(diff, kGradTolerance) << item.key();
    if (diff >= worst_grad) std::tie(worst_grad, worst_name) = std::tie(diff, item.key());
    ++checked;
  }
  const auto grads = std::count_if(expected.entries().begin(), expected.entries().end(),
                                   [](const auto& e) { return e.first.starts_with("grad/"); });
  EXPECT_EQ(checked, static_cast<size_t>(grads)) << "every reference gradient is checked";
  std::cout << fmt::format("[parity] {} {} {}: logits max abs diff {:.3g}, gradients max rel diff "
                           "{:.3g} ({})\n",
                           spec.name, to_string(GetParam().attention),
                           at::DeviceTypeName(GetParam().device, /*lower_case=*/true), logit_diff,
                           worst_grad, worst_name);
}

INSTANTIATE_TEST_SUITE_P(
    Tiny,
    Parity,
    testing::Values(ParityCase{"tiny-gpt-neox", AttentionKind::kPlain},
                    ParityCase{"tiny-gpt-neox", AttentionKind::kFused},
                    ParityCase{"tiny-gpt-neox-sequential", AttentionKind::kPlain},
                    ParityCase{"tiny-gpt-neox-sequential", AttentionKind::kFused},
                    ParityCase{"tiny-roberta", AttentionKind::kPlain},
                    ParityCase{"tiny-roberta", AttentionKind::kFused},
                    ParityCase{"tiny-gpt-neox", AttentionKind::kFused, at::kCUDA},
                    ParityCase{"tiny-roberta", AttentionKind::kFused, at::kCUDA}),
    case_label);

// A model saved here (config.json + model.safetensors) loads with from_pretrained and gives our
// logits (tests/models/check_hf_load.py, run in the reference environment).
TEST(HfExport, SavedCheckpointsLoadInTransformers) {
  for (const char* name : {"tiny-gpt-neox", "tiny-roberta"}) {
    const ModelSpec spec = test::tiny_spec(name);
    torch::manual_seed(7);
    ZooModel model = make_model(spec, {});
    model.module().eval();
    const std::string dir = test::scratch_dir(std::string("hf-export-") + name);
    save_pretrained(model.module(), spec, dir);
    const Batch batch = synthetic_batch(spec, {.batch_size = 2});
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
