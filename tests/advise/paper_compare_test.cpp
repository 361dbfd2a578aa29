// The paper comparison: the paper's cells parse with their citations, the implied MFU of the
// headline cell matches a hand computation, the impossible cells are flagged with their reason,
// and gpudays' column agrees with the planner for the same cell.
#include <gtest/gtest.h>

#include <algorithm>

#include "advise/paper_compare.h"
#include "catalog/catalog.h"
#include "common/error.h"
#include "report/paper_section.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

std::vector<PaperCell> cells() {
  const auto source = make_time_source({});
  return compare_with_paper(catalog(), *source);
}

// A copy: callers pass the temporary cells().
PaperCell cell(const std::vector<PaperCell>& all, const std::string& name) {
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const PaperCell& c) { return c.name == name; });
  if (it == all.end()) throw std::runtime_error("no cell " + name);
  return *it;
}

TEST(PaperCompare, CellsParseWithTheirCitations) {
  const std::vector<PaperCell> all = cells();
  const PaperCell headline = cell(all, "pythia-1b-4xa100");
  EXPECT_EQ(headline.kind, PaperCellKind::kBenchmark);
  EXPECT_EQ(headline.model, "pythia-1b");
  EXPECT_EQ(headline.gpu, "a100-80gb-sxm");
  EXPECT_EQ(headline.layout, (ClusterShape{1, 4}));
  EXPECT_DOUBLE_EQ(headline.published_days, 17.571102);
  EXPECT_NE(headline.citation.find("17.571102"), std::string::npos);
  EXPECT_EQ(headline.published_settings, "free-lunch, zero_1, micro-batch 16, accumulation 16");
  const PaperCell footnote = cell(all, "pythia-1b-2xrtx3090");
  EXPECT_DOUBLE_EQ(footnote.published_days, 108.0);
  EXPECT_NE(footnote.citation.find("footnote"), std::string::npos);
  // Table 1's original runs come from the catalog's [reported] tables.
  const PaperCell original = cell(all, "pythia-1b-original");
  EXPECT_EQ(original.kind, PaperCellKind::kOriginalRun);
  EXPECT_EQ(original.layout, (ClusterShape{8, 8}));
  EXPECT_DOUBLE_EQ(original.published_days, 3.0);
  for (const PaperCell& c : all) EXPECT_FALSE(c.citation.empty()) << c.name;
}

// What a published run did, in the planner's words: offloading and a selective policy are said.
TEST(PaperCompare, PublishedSettingsSayOffloadingAndSelectiveCheckpointing) {
  Measurement m;
  m.sharding = "zero_2";
  m.offloading = true;
  m.activation_checkpointing = "full";
  m.micro_batch_size = 10;
  EXPECT_EQ(published_settings(m), "zero_2, offloading, checkpointing, micro-batch 10");
  m.offloading = false;
  m.activation_checkpointing = "selective_op";
  EXPECT_EQ(published_settings(m), "zero_2, checkpointing (selective_op), micro-batch 10");
  m.activation_checkpointing = "none";
  m.sharding.clear();
  m.micro_batch_size.reset();
  EXPECT_EQ(published_settings(m), "");
}

// By hand, Pythia-1B (16 layers, d 2048, vocabulary 50,304, 2048 tokens): forward FLOPs per token
// = 2 x 12 x 16 x 2048^2 (QKV, output and MLP GEMMs) + 4 x 16 x 2048 x 2048 (scores and weighted
// sum, attention counted whole) + 2 x 2048 x 50,304 (head) = 2.0851e9; x 3 for the backward pass.
// Run: 143,000 x 1024 x 2048 tokens. Capacity: 17.571102 days x 86,400 s x 4 x 312e12 FLOP/s
// (A100 bf16 dense peak). MFU = 0.9901: above the A100's matmul ceiling, so impossible.
TEST(PaperCompare, HeadlineCellImpliesNinetyNinePercentMfu) {
  const double forward_per_token =
      2.0 * 12 * 16 * 2048.0 * 2048 + 4.0 * 16 * 2048 * 2048 + 2.0 * 2048 * 50304;
  const double run_flops = 3.0 * forward_per_token * 143000.0 * 1024 * 2048;
  const double by_hand = run_flops / (17.571102 * 86400 * 4 * 312e12);
  EXPECT_NEAR(by_hand, 0.990, 0.001);
  const PaperCell headline = cell(cells(), "pythia-1b-4xa100");
  EXPECT_NEAR(headline.implied.mfu, by_hand, 1e-3 * by_hand);
  EXPECT_NEAR(headline.implied.model_flops_per_token, 3.0 * forward_per_token, 1e-3 * 6.3e9);
  EXPECT_DOUBLE_EQ(headline.implied.peak_flops_per_gpu, 312e12);
  EXPECT_TRUE(headline.implied.impossible);
  EXPECT_NE(headline.verdict.find("without synchronising the GPU"), std::string::npos);
  EXPECT_NE(headline.verdict.find("99.0% MFU"), std::string::npos);
}

TEST(PaperCompare, OnlyCellsAboveTheCeilingAreImpossible) {
  for (const PaperCell& c : cells()) {
    EXPECT_EQ(c.implied.impossible, c.implied.mfu > c.implied.matmul_ceiling) << c.name;
    EXPECT_EQ(c.verdict.empty(), !c.implied.impossible) << c.name;
  }
  // The original Pythia-1B run (64 x A100 40GB, 3 days) implies about 36%: possible.
  const PaperCell original = cell(cells(), "pythia-1b-original");
  EXPECT_NEAR(original.implied.mfu, 0.990 * (17.571102 * 4) / (3.0 * 64), 0.002);
  EXPECT_FALSE(original.implied.impossible);
}

TEST(PaperCompare, OursIsThePlannersBestRowForTheSameCell) {
  const PaperCell headline = cell(cells(), "pythia-1b-4xa100");
  const PlanResult plan_result = plan(catalog().model("pythia-1b"),
                                      Cluster{{1, 4}, &catalog().gpu("a100-80gb-sxm")},
                                      PlanOptions{});
  ASSERT_TRUE(headline.ours.fits && plan_result.best);
  EXPECT_DOUBLE_EQ(headline.ours.training_days, plan_result.best->training_days);
  EXPECT_LT(headline.ours.mfu, headline.implied.matmul_ceiling);
}

TEST(PaperCompare, MissingPaperFileIsAnInputError) {
  const auto source = make_time_source({});
  EXPECT_THROW(compare_with_paper(catalog(), {}, *source), InputError);
  EXPECT_THROW(implied_utilisation(catalog().model("pythia-1b"), catalog().gpu("a100"), 4, 0.0),
               InputError);
}

TEST(PaperCompare, ReportSectionShowsTheCellsAndTheirReasons) {
  Document doc;
  add_paper_section(doc, cells());
  const std::string md = render_markdown(doc);
  for (const char* needle : {"The paper's numbers beside ours",
                             "| pythia-1b (benchmark) | 4 x a100-80gb-sxm | 17.5711 | free-lunch, "
                             "zero\\_1, micro-batch 16, "
                             "accumulation 16 | 99.0% |",
                             "impossible",
                             "without synchronising the GPU",
                             "arXiv:2410.23261v1"}) {
    EXPECT_NE(md.find(needle), std::string::npos) << needle << "\n" << md;
  }
  Document empty;
  add_paper_section(empty, {});
  EXPECT_NE(render_markdown(empty).find("No published cells"), std::string::npos);
}

}  // namespace
}  // namespace gpudays
