// Block runners of every zoo family: the trunk sends each repeated block through the runner once
// per forward, in order; block_parameters() partitions exactly the blocks' parameters; and each
// block's closure touches only its own group (what stage-3 gathering per block relies on).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/randn_like.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/utils.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/zoo.h"
#include "torch_test_util.h"

namespace gpudays::models {
namespace {

const char* const kFamilies[] = {
    "tiny-gpt-neox", "tiny-roberta", "tiny-vit", "tiny-convnext", "tiny-mamba", "tiny-llama"};

// The checkpoint-name prefix of each repeated block, in the order the trunk runs them.
std::vector<std::string> block_prefixes(const ModelSpec& spec) {
  std::vector<std::string> prefixes;
  const auto numbered = [&](const char* pattern, int64_t n) {
    for (int64_t i = 0; i < n; ++i) prefixes.push_back(fmt::format(fmt::runtime(pattern), i));
  };
  switch (spec.family) {
    case Family::kGptNeox:
      numbered("gpt_neox.layers.{}.", spec.arch.n_layers);
      break;
    case Family::kRoberta:
      numbered("roberta.encoder.layer.{}.", spec.arch.n_layers);
      break;
    case Family::kVit:
      numbered("vit.encoder.layer.{}.", spec.arch.n_layers);
      break;
    case Family::kMamba:
      numbered("backbone.layers.{}.", spec.arch.n_layers);
      break;
    case Family::kLlama:
      numbered("model.layers.{}.", spec.arch.n_layers);
      break;
    case Family::kConvnext:
      for (size_t s = 0; s < spec.arch.depths.size(); ++s) {
        for (int64_t m = 0; m < spec.arch.depths[s]; ++m) {
          prefixes.push_back(fmt::format("convnext.encoder.stages.{}.layers.{}.", s, m));
        }
      }
      break;
  }
  return prefixes;
}

// A batch of 2; roberta's second sample has 3 padding tokens (the mask is captured by the blocks).
Batch test_batch(const ModelSpec& spec) {
  Batch b = synthetic_batch(
      spec, {.batch_size = 2, .generator = at::make_generator<at::CPUGeneratorImpl>(5)});
  if (spec.family == Family::kRoberta) {
    b.attention_mask = at::ones_like(b.input_ids);
    b.attention_mask[1].narrow(0, spec.arch.seq_len - 3, 3).zero_();
  }
  return b;
}

std::map<const void*, std::string> names_by_tensor(ZooModel& model) {
  std::map<const void*, std::string> names;
  for (const auto& p : model.module().named_parameters()) {
    names[p.value().unsafeGetTensorImpl()] = p.key();
  }
  return names;
}

TEST(BlockRunner, EachBlockRunsOncePerForwardInOrder) {
  for (const char* name : kFamilies) {
    const ModelSpec spec = test::tiny_spec(name);
    torch::manual_seed(0);
    ZooModel model = make_model(spec, {});
    ASSERT_TRUE(model.has_block_runner()) << name;
    std::vector<int64_t> seen;
    model.set_block_runner([&](int64_t index, const Block& block, const at::Tensor& hidden) {
      seen.push_back(index);
      return block(hidden);
    });
    const Batch batch = test_batch(spec);
    model.logits(batch);
    model.logits(batch);
    const auto n = static_cast<int64_t>(block_prefixes(spec).size());
    ASSERT_EQ(static_cast<int64_t>(seen.size()), 2 * n) << name;
    for (int64_t i = 0; i < 2 * n; ++i) EXPECT_EQ(seen[i], i % n) << name << " call " << i;
    EXPECT_EQ(static_cast<int64_t>(model.block_parameters().size()), n) << name;
  }
}

// A runner may call a block again later (recomputation): a runner that runs each block twice and
// keeps the second result gives the logits of no runner, bit for bit (eval mode: no dropout).
TEST(BlockRunner, BlocksCanBeCalledAgainWithTheSameResult) {
  for (const char* name : kFamilies) {
    const ModelSpec spec = test::tiny_spec(name);
    torch::manual_seed(0);
    ZooModel model = make_model(spec, {});
    model.module().eval();
    const Batch batch = test_batch(spec);
    const at::Tensor plain = model.logits(batch);
    model.set_block_runner([](int64_t, const Block& block, const at::Tensor& hidden) {
      block(hidden);
      return block(hidden);
    });
    EXPECT_TRUE(at::equal(model.logits(batch), plain)) << name;
  }
}

TEST(BlockRunner, BlockParametersPartitionExactlyTheBlocksParameters) {
  for (const char* name : kFamilies) {
    const ModelSpec spec = test::tiny_spec(name);
    ZooModel model = make_model(spec, {});
    const auto names = names_by_tensor(model);
    const std::vector<std::string> prefixes = block_prefixes(spec);
    const BlockParameters groups = model.block_parameters();
    ASSERT_EQ(groups.size(), prefixes.size()) << name;
    std::set<const void*> grouped;
    for (size_t i = 0; i < groups.size(); ++i) {
      EXPECT_FALSE(groups[i].empty()) << name << " block " << i;
      for (const at::Tensor& p : groups[i]) {
        const auto it = names.find(p.unsafeGetTensorImpl());
        ASSERT_NE(it, names.end()) << name << ": block " << i << " holds a non-parameter";
        EXPECT_EQ(it->second.rfind(prefixes[i], 0), 0u)
            << name << ": block " << i << " holds " << it->second;
        EXPECT_TRUE(grouped.insert(p.unsafeGetTensorImpl()).second)
            << name << ": " << it->second << " is in two blocks";
      }
    }
    // Every parameter under a block's prefix is in a group; nothing else is.
    for (const auto& [impl, param_name] : names) {
      bool in_block = false;
      for (const std::string& prefix : prefixes) in_block |= param_name.rfind(prefix, 0) == 0;
      EXPECT_EQ(grouped.count(impl) == 1, in_block) << name << ": " << param_name;
    }
  }
}

// With the runner cutting the graph before block i (its input detached), the gradient of a random
// projection of block i's output is non-zero for most of group i and zero everywhere else: the
// closure uses its own parameters and no other trainable tensor.
TEST(BlockRunner, EachBlockUsesOnlyItsOwnParameters) {
  for (const char* name : kFamilies) {
    const ModelSpec spec = test::tiny_spec(name);
    torch::manual_seed(0);
    ZooModel model = make_model(spec, {});
    const auto names = names_by_tensor(model);
    const BlockParameters groups = model.block_parameters();
    const std::vector<at::Tensor> params = model.module().parameters();
    const Batch batch = test_batch(spec);
    for (int64_t i = 0; i < static_cast<int64_t>(groups.size()); ++i) {
      at::Tensor output;
      model.set_block_runner([&](int64_t index, const Block& block, const at::Tensor& hidden) {
        if (index != i) return block(hidden);
        output = block(hidden.detach());
        return output;
      });
      model.logits(batch);
      ASSERT_TRUE(output.defined()) << name << " block " << i;
      const at::Tensor objective = (output * at::randn_like(output)).sum();
      const auto grads = torch::autograd::grad({objective},
                                               params,
                                               /*grad_outputs=*/{},
                                               /*retain_graph=*/false,
                                               /*create_graph=*/false,
                                               /*allow_unused=*/true);
      std::set<const void*> own;
      for (const at::Tensor& p : groups[i]) own.insert(p.unsafeGetTensorImpl());
      int64_t own_nonzero = 0;
      for (size_t j = 0; j < params.size(); ++j) {
        const bool nonzero = grads[j].defined() && grads[j].ne(0).any().item<bool>();
        if (own.count(params[j].unsafeGetTensorImpl()) == 1) {
          own_nonzero += nonzero ? 1 : 0;
        } else {
          EXPECT_FALSE(nonzero) << name << ": block " << i << " uses "
                                << names.at(params[j].unsafeGetTensorImpl());
        }
      }
      // Some own gradients may be zero by the maths (attention key biases), not most of them.
      EXPECT_GE(2 * own_nonzero, static_cast<int64_t>(groups[i].size())) << name << " block " << i;
    }
  }
}

}  // namespace
}  // namespace gpudays::models
