// The paper's tables and the summary: every cell equals the planner row or database trial it
// comes from (recomputed here from plan() and the database, not from the report's own data),
// measured cells are marked, the summary picks the fastest and cheapest option under both lines,
// and trials outside the report's models are kept, failures listed.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "report/report.h"
#include "report/report_tables_paper.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::catalog;

ReportDataOptions small_options() {
  ReportDataOptions options;
  options.models = {&catalog().model("pythia-160m"), &catalog().model("pythia-6.9b")};
  options.cost.assumptions = load_cost_assumptions(cost_assumptions_path(catalog().config_dir()));
  for (const char* gpu : {"rtx-3090", "a100"}) {
    for (int64_t n : {1, 8}) options.hardware.push_back({&catalog().gpu(gpu), n});
  }
  options.detail_gpu_count = 8;
  return options;
}

std::optional<PlanRow> best_row(const ModelSpec& m, const GpuSpec& g, int64_t n, MethodPreset p) {
  PlanOptions options;
  options.preset = p;
  return plan(m, Cluster{{1, n}, &g}, options).best;
}

// The days of a cell: "—", or the number before the line break.
std::string cell_days(const std::string& cell) {
  return cell.substr(0, cell.find('\n'));
}

TEST(ReportPaperTables, DaysCellsEqualThePlannersBestRows) {
  const ReportData data = collect_report_data(small_options());
  for (DaysTable which : {DaysTable::kOptimal, DaysTable::kNaive}) {
    const DocTable t = training_days_table(data, which);
    ASSERT_EQ(t.rows.size(), 2u);
    ASSERT_EQ(t.headers.size(), 1u + 2 * 2);
    int dashes = 0;
    for (size_t i = 0; i < data.models.size(); ++i) {
      size_t column = 1;
      for (const GpuSpec* g : data.gpus) {
        for (int64_t n : data.counts) {
          const auto best =
              best_row(*data.models[i],
                       *g,
                       n,
                       which == DaysTable::kOptimal ? MethodPreset::kAll : MethodPreset::kNaive);
          const std::string want = best ? fmt::format("{:.1f}", best->training_days) : kNothingFits;
          EXPECT_EQ(cell_days(t.rows[i][column]), want)
              << data.models[i]->name << " " << g->name << " x" << n;
          dashes += best ? 0 : 1;
          ++column;
        }
      }
    }
    // pythia-6.9b does not fit on one RTX 3090 even with every method: a "—" cell exists.
    EXPECT_GT(dashes, 0);
  }
}

TEST(ReportPaperTables, MemoryMethodCellsAreTheFastestRowOfEachMethodSet) {
  const ReportData data = collect_report_data(small_options());
  const DocTable t = memory_methods_table(data);
  const std::vector<MethodColumn>& columns = memory_saving_columns();
  ASSERT_EQ(t.rows.size(), 4u);  // 2 models x 2 GPUs at 8 GPUs
  size_t r = 0;
  for (const ModelSpec* m : data.models) {
    for (const GpuSpec* g : data.gpus) {
      PlanOptions options;
      const PlanResult result = plan(*m, Cluster{{1, 8}, g}, options);
      for (size_t c = 0; c < columns.size(); ++c) {
        std::optional<double> fastest;
        for (const PlanRow& row : result.rows) {
          if (row.fits && row.config.methods == columns[c].methods)
            fastest = std::min(fastest.value_or(row.training_days), row.training_days);
        }
        const std::string cell = t.rows[r][3 + c];
        if (!fastest) {
          EXPECT_EQ(cell, kNothingFits) << m->name << " " << g->name << " " << columns[c].label;
        } else {
          EXPECT_EQ(
              cell,
              fmt::format("{:.1f} d\n{:.2f}x", *fastest, *fastest / result.best->training_days))
              << m->name << " " << g->name << " " << columns[c].label;
        }
      }
      ++r;
    }
  }
  // pythia-6.9b on 8 RTX 3090s (24 GB) needs sharding: "none" does not fit there.
  EXPECT_EQ(t.rows[2][0], "pythia-6.9b");
  EXPECT_EQ(t.rows[2][3], kNothingFits);
  EXPECT_NE(t.rows[2][2], "none");
}

TEST(ReportPaperTables, RelativeSpeedIsTheMeanOfAnalyticOverTierDays) {
  const ReportData data = collect_report_data(small_options());
  const DocTable t = relative_speed_table(data);
  ASSERT_EQ(t.rows.size(), kReportTierCount + 1);
  // The all-GPU average of preset all, recomputed from the planner's rows: analytic days =
  // recipe model FLOPs / (GPUs x peak) = days x MFU of the best row of preset all.
  double sum = 0.0;
  int cells = 0;
  for (const ModelSpec* m : data.models) {
    for (const GpuSpec* g : data.gpus) {
      for (int64_t n : data.counts) {
        const auto best = best_row(*m, *g, n, MethodPreset::kAll);
        if (!best) continue;
        sum += best->mfu;  // analytic days / its own days
        ++cells;
      }
    }
  }
  EXPECT_EQ(t.rows[kReportTierCount - 1].back(),
            fmt::format("{:.2f}\n({} cells)", sum / cells, cells));
  EXPECT_EQ(t.rows.back().back(), "1.00");
  // The naive tier is never faster than the tier that includes it.
  EXPECT_LE(std::stod(t.rows[0].back()), std::stod(t.rows[kReportTierCount - 1].back()));
}

TEST(ReportPaperTables, MeasuredCellsComeFromTheDatabaseAndAreMarked) {
  constexpr double kStepS = 1.95;  // 3.23 days of pythia-160m's 143,000 steps
  const std::string db_path = test::write_temp_file("paper_measured.db", "");
  std::filesystem::remove(db_path);
  {
    ResultsDb db = ResultsDb::open({db_path, /*read_only=*/false, &test::catalog()});
    TrialRecord t;
    t.model = "pythia-160m";
    t.gpu = "a100-80gb-sxm";
    t.cluster = {1, 8};
    t.config.micro_batch_size = 8;
    t.config.grad_acc_steps = 16;  // pythia-160m's global batch of 1024
    test::set_measured_step(t, kStepS);
    t.predicted_step_time_s = 1.5;
    t.created_at = "2026-11-30T07:00:00Z";
    db.insert(t);
  }
  ReportDataOptions options = small_options();
  options.results_path = db_path;
  options.catalog = &catalog();
  const ReportData data = collect_report_data(options);
  const DocTable optimal = training_days_table(data, DaysTable::kOptimal);
  EXPECT_EQ(optimal.rows[0][4], "3.2\nmeasured");  // pythia-160m, a100 x8
  EXPECT_NE(optimal.caption.find(db_path), std::string::npos);
  // The naive table stays predicted; every other cell too.
  EXPECT_EQ(training_days_table(data, DaysTable::kNaive).rows[0][4].find("measured"),
            std::string::npos);
  EXPECT_EQ(optimal.rows[0][3].find("measured"), std::string::npos);
  const std::string csv = training_days_csv(data);
  EXPECT_NE(
      csv.find(fmt::format("pythia-160m,a100-80gb-sxm,8,optimal,true,{:g},,,measured,\"fastest "
                           "of 1 trials",
                           143000 * kStepS / 86400.0)),
      std::string::npos)
      << csv;
  EXPECT_NE(csv.find("pythia-160m,a100-80gb-sxm,8,naive,true"), std::string::npos) << csv;
}

// bench --strategy reference's trials beside gpudays' on the same cell: the reference keeps the
// largest micro-batch that fits (16, slower), gpudays the fastest (8).
TEST(ReportPaperTables, TheReferenceRuleIsShownBesideGpudaysRule) {
  const std::string db_path = test::write_temp_file("paper_rules.db", "");
  std::filesystem::remove(db_path);
  {
    ResultsDb db = ResultsDb::open({db_path, /*read_only=*/false, &test::catalog()});
    auto trial = [](int64_t micro, double step_s, MeasurementRule rule) {
      TrialRecord t;
      t.model = "pythia-160m";
      t.gpu = "a100-80gb-sxm";
      t.cluster = {1, 8};
      t.rule = rule;
      t.config.micro_batch_size = micro;
      t.config.grad_acc_steps = 128 / micro;  // pythia-160m's global batch of 1024 over 8
      test::set_measured_step(t, step_s);
      t.predicted_step_time_s = 1.5;
      t.created_at = "2026-12-02T07:00:00Z";
      return t;
    };
    db.insert(trial(8, 1.95, MeasurementRule::kGpudays));
    db.insert(trial(16, 2.50, MeasurementRule::kGpudays));
    db.insert(trial(8, 1.95, MeasurementRule::kReference));
    db.insert(trial(16, 2.50, MeasurementRule::kReference));
  }
  ReportDataOptions options = small_options();
  const ReportData without = collect_report_data(options);
  EXPECT_FALSE(measurement_rules_table(without).has_value());
  options.results_path = db_path;
  options.catalog = &catalog();
  const ReportData data = collect_report_data(options);
  const std::optional<DocTable> t = measurement_rules_table(data);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->rows.size(), 1u);
  const std::vector<std::string>& row = t->rows[0];
  EXPECT_EQ(row[0], "pythia-160m");
  EXPECT_EQ(row[1], "8 x a100-80gb-sxm");
  EXPECT_EQ(row[2].substr(0, row[2].find('\n')), fmt::format("{:.1f} days", 143000 * 1.95 / 86400));
  EXPECT_NE(row[2].find("micro-batch 8"), std::string::npos) << row[2];
  EXPECT_EQ(row[3].substr(0, row[3].find('\n')), fmt::format("{:.1f} days", 143000 * 2.5 / 86400));
  EXPECT_NE(row[3].find("micro-batch 16"), std::string::npos) << row[3];
  EXPECT_EQ(row[4], fmt::format("{:.2f}", 2.5 / 1.95));
  EXPECT_EQ(t->name, "measured_rules");
}

CostRow option(const char* gpu, int64_t n, double days, double usd, bool fits = true) {
  CostRow r;
  r.gpu = gpu;
  r.layout = {1, n};
  r.time.fits = fits;
  r.time.training_days = days;
  r.purchase.gpus_usd = usd;
  return r;
}

TEST(ReportSummary, FastestAndCheapestUnderBothLines) {
  CostAnalysis a;
  a.rows = {option("a", 1, 150.0, 5000.0),          // over 100 days
            option("a", 8, 20.0, 120000.0),         // over $100K
            option("b", 2, 60.0, 30000.0),          // cheapest within
            option("b", 4, 30.0, 60000.0),          // fastest within
            option("b", 8, 30.0, 60000.0, false)};  // cannot run
  const SummaryRow s = summarise(a);
  ASSERT_TRUE(s.fastest && s.cheapest);
  EXPECT_EQ(*s.fastest, 3u);
  EXPECT_EQ(*s.cheapest, 2u);
  a.rows.resize(2);
  EXPECT_FALSE(summarise(a).fastest);
}

TEST(ReportSummary, TableNamesOptionsAndWhatDoesNotFit) {
  const ReportData data = collect_report_data(small_options());
  const DocTable t = summary_table(data);
  ASSERT_EQ(t.rows.size(), 2u);
  const SummaryRow s = summarise(data.costs[0]);
  ASSERT_TRUE(s.fastest);
  const CostRow& f = data.costs[0].rows[*s.fastest];
  EXPECT_EQ(t.rows[0][1].find(fmt::format(
                "{} x {}: {:.1f} days", f.layout.world_size(), f.gpu, f.time.training_days)),
            0u);
  EXPECT_EQ(t.rows[0][3], "fits on every option");  // pythia-160m
  EXPECT_NE(t.rows[1][3].find("rtx-3090 (1"), std::string::npos) << t.rows[1][3];
  // pythia-6.9b: nothing under both lines on these options; the fastest that runs is named.
  EXPECT_EQ(t.rows[1][1].find("nothing under both lines; fastest at all: 8 x "), 0u)
      << t.rows[1][1];
  EXPECT_NE(t.caption.find("Predicted"), std::string::npos);
}

TEST(ReportData, TrialsOutsideTheReportAreKeptAndFailuresListed) {
  ReportData data = collect_report_data(small_options());
  TrialRecord outside;
  outside.model = "my-own-model";  // not in the catalog
  outside.gpu = "a100-80gb-sxm";
  test::set_measured_step(outside, 4.0);
  outside.predicted_step_time_s = 5.0;
  TrialRecord failed = outside;
  failed.measured.status = TrialStatus::kOutOfMemory;
  TrialRecord unpredicted = outside;
  unpredicted.predicted_step_time_s = 0.0;
  add_measurements(data, {outside, failed, unpredicted}, "x.db");
  ASSERT_EQ(data.measurements.size(), 1u);
  EXPECT_EQ(data.measurements[0].model, "my-own-model");
  EXPECT_NE(data.measurements[0].source.find("outside this report's models"), std::string::npos);
  ASSERT_EQ(data.measurements_left_out.size(), 2u);
  EXPECT_NE(data.measurements_left_out[0].find("status oom"), std::string::npos)
      << data.measurements_left_out[0];
  EXPECT_NE(data.measurements_left_out[1].find("without a recorded prediction"), std::string::npos);
}

TEST(ReportData, ViTsReportedRunIsOnTpuCoresNotGpus) {
  const ModelSpec& vit = catalog().model("vit");
  ASSERT_TRUE(vit.reported);
  EXPECT_EQ(vit.reported->accelerator, "TPUv3 cores");
  EXPECT_FALSE(vit.reported->on_gpus());
  EXPECT_EQ(vit.reported_gpu_days(), 0.0);
  EXPECT_EQ(catalog().model("pythia-1b").reported_gpu_days(), 64 * 3.0);
}

}  // namespace
}  // namespace gpudays
