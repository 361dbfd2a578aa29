// Names people type (any case, HuggingFace ids, the reference's flag spellings, --model-file on
// every command naming a model) and outputs people parse (every row-printing command in table,
// JSON, JSONL, CSV and Markdown; `gpudays results`; exit codes).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "catalog/model_loader.h"
#include "common/build_info.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

const std::string kModelFile = std::string(GPUDAYS_TEST_DATA_DIR) + "/bench-gpt-neox.toml";

std::vector<nlohmann::json> jsonl(const std::string& text) {
  std::istringstream lines(text);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, sep);) cells.push_back(cell);
  return cells;
}

// pythia-160m on 4 x a100 (three successful trials, one out of memory) and bench-gpt-neox on the
// host CPU (one successful trial).
std::string db_with_trials() {
  const std::string path = test::write_temp_file("interop.db", "");
  std::filesystem::remove(path);
  ResultsDb db = ResultsDb::open({path, /*read_only=*/false, &test::catalog()});
  for (int64_t micro : {2, 4, 8, 16}) {
    TrialRecord t;
    t.model = "pythia-160m";
    t.gpu = "a100-80gb-sxm";
    t.cluster.gpus_per_node = 4;
    t.config.micro_batch_size = micro;
    t.config.grad_acc_steps = 256 / micro;
    test::set_measured_step(t, 100.0 / micro);
    if (micro == 16) t.measured.status = TrialStatus::kOutOfMemory;
    db.insert(t);
  }
  TrialRecord cpu;
  cpu.model = "bench-gpt-neox";
  cpu.gpu = "cpu";
  cpu.config.micro_batch_size = 8;
  cpu.config.grad_acc_steps = 4;
  test::set_measured_step(cpu, 0.5);
  const ModelSpec bench_model = load_model_file(kModelFile);
  test::derive_figures(cpu, bench_model);
  db.store_model(bench_model);  // not the catalog's: the file keeps it
  db.insert(cpu);
  return path;
}

TEST(InteropNames, GpuAndModelNamesInAnyCaseAndHuggingFaceIds) {
  const auto lower =
      run_gpudays("plan --model pythia-1b --gpu a100 --gpus-per-node 4 --format csv");
  ASSERT_EQ(lower.exit_code, 0) << lower.err;
  for (const char* args : {"--model Pythia-1B --gpu A100",
                           "--model EleutherAI/pythia-1b --gpu a100",
                           "--model eleutherai/PYTHIA-1b --gpu A100-80GB-SXM"}) {
    const auto r = run_gpudays(std::string("plan ") + args + " --gpus-per-node 4 --format csv");
    ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_EQ(r.out, lower.out) << args;
  }
  const auto cost =
      run_gpudays("cost --model Pythia-160M --gpus A100,H100 --counts 1 --format csv");
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  EXPECT_NE(cost.out.find("pythia-160m,a100-80gb-sxm,1,"), std::string::npos) << cost.out;
}

TEST(InteropNames, TheReferencesFlagSpellingsAreAliases) {
  const auto ours = run_gpudays(
      "plan --model pythia-1b --gpu a100 --nodes 2 --gpus-per-node 8 "
      "--format csv");
  const auto theirs = run_gpudays(
      "plan --model pythia-1b --gpu-type a100 --num-nodes 2 "
      "--gpus-per-node 8 --format csv");
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  EXPECT_EQ(theirs.out, ours.out);
  EXPECT_NE(theirs.out.find(",a100-80gb-sxm,2,8,"), std::string::npos) << theirs.out;
  for (const char* command : {"bench", "best", "export", "results"}) {
    const auto help = run_gpudays(std::string(command) + " --help");
    EXPECT_NE(help.out.find("--gpu-type"), std::string::npos) << command;
    EXPECT_NE(help.out.find("--num-nodes"), std::string::npos) << command;
  }
}

TEST(InteropNames, ValidChoicesAreListedOnce) {
  const auto r = run_gpudays("plan --model pythia-1b --gpu a200");
  EXPECT_EQ(r.exit_code, 2);
  const std::string choices = r.err.substr(r.err.find("valid: ") + 7);
  std::vector<std::string> names;
  for (std::string name : split(choices, ',')) {
    name.erase(0, name.find_first_not_of(' '));
    if (name.rfind("or ", 0) == 0) name = name.substr(3);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    names.push_back(name);
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << r.err;
  EXPECT_NE(std::find(names.begin(), names.end(), "a40"), names.end()) << r.err;
  const auto model = run_gpudays("plan --model pythia-7b --gpu a100");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("EleutherAI/pythia-1b"), std::string::npos) << model.err;
}

TEST(InteropNames, ModelFileWhereverAModelIsNamed) {
  const std::string db = db_with_trials();
  const auto best =
      run_gpudays("best --model-file " + kModelFile + " --gpu cpu --format json --db " + db);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(nlohmann::json::parse(best.out)["best"]["model"], "bench-gpt-neox");
  const auto exported =
      run_gpudays("export --model-file " + kModelFile + " --gpu cpu --format hf --db " + db);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(nlohmann::json::parse(exported.out)["per_device_train_batch_size"], 8);
  const auto planned =
      run_gpudays("export --model-file " + kModelFile + " --gpu a100 --source plan --format toml");
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const auto cost = run_gpudays("cost --model-file " + kModelFile +
                                " --gpus a100 --counts 1 "
                                "--format jsonl");
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  EXPECT_EQ(jsonl(cost.out).at(0)["model"], "bench-gpt-neox");
  const auto both =
      run_gpudays("best --model pythia-1b --model-file " + kModelFile + " --gpu cpu --db " + db);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  const auto neither = run_gpudays("export --gpu a100 --source plan");
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_NE(neither.err.find("--model-file"), std::string::npos) << neither.err;
}

TEST(InteropOutputs, PlanRowsInEveryFormatWithNumbersAsNumbers) {
  const std::string args = "plan --model pythia-160m --gpu a100 --gpus-per-node 2 --all --format ";
  const auto csv = run_gpudays(args + "csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  const std::vector<std::string> names = split(header, ',');
  const auto mfu = std::find(names.begin(), names.end(), "mfu");
  ASSERT_NE(mfu, names.end()) << header;
  const std::string mfu_cell = split(first, ',').at(mfu - names.begin());
  EXPECT_EQ(mfu_cell.find('%'), std::string::npos) << first;
  EXPECT_LT(std::stod(mfu_cell), 2.0) << first;  // a fraction

  const auto json = nlohmann::json::parse(run_gpudays(args + "json").out);
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["build"]["version"], kVersion);
  EXPECT_EQ(json["build"]["git_commit"], git_commit());
  EXPECT_EQ(json["row_kind"], "plan_row");
  const auto rows = jsonl(run_gpudays(args + "jsonl").out);
  ASSERT_EQ(rows.size(), json["rows"].size());
  EXPECT_EQ(rows.front(), json["rows"].front());
  for (const auto& [key, value] : json["rows"].front().items()) {
    EXPECT_NE(std::find(names.begin(), names.end(), key), names.end()) << key << " not in CSV";
  }
  EXPECT_TRUE(rows.front()["mfu"].is_number());
  EXPECT_TRUE(rows.front()["memory_weights_bytes"].is_number_integer());
  const auto md = run_gpudays(args + "markdown");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.rfind("| methods | micro_batch_size |", 0), 0u) << md.out;
  EXPECT_EQ(std::count(md.out.begin(), md.out.end(), '\n'), static_cast<long>(rows.size() + 2));
}

TEST(InteropOutputs, CostRowsInEveryFormat) {
  const std::string args = "cost --model pythia-160m --gpus a100,v100 --counts 1,8 --format ";
  const auto json = nlohmann::json::parse(run_gpudays(args + "json").out);
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["row_kind"], "cost_row");
  const auto rows = jsonl(run_gpudays(args + "jsonl").out);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows, json["rows"].get<std::vector<nlohmann::json>>());
  const auto csv = run_gpudays(args + "csv");
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 5);
  EXPECT_NE(csv.out.find("on_frontier"), std::string::npos);
  const auto md = run_gpudays(args + "markdown");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.rfind("| gpu | gpu_count |", 0), 0u) << md.out;
}

TEST(InteropOutputs, ResultsListsTheStoredTrialsFiltered) {
  const std::string db = db_with_trials();
  const auto all = jsonl(run_gpudays("results --format jsonl --db " + db).out);
  EXPECT_EQ(all.size(), 5u);
  const auto ok =
      jsonl(run_gpudays("results --model Pythia-160M --gpu A100 --gpus-per-node 4 --status ok "
                        "--format jsonl --db " +
                        db)
                .out);
  ASSERT_EQ(ok.size(), 3u);
  for (const auto& row : ok) {
    EXPECT_EQ(row["status"], "ok");
    EXPECT_EQ(row["gpu"], "a100-80gb-sxm");
    EXPECT_GT(row["mfu"].get<double>(), 0.0);  // derived from the step time, a fraction
    EXPECT_LT(row["mfu"].get<double>(), 1.0);
  }
  EXPECT_EQ(jsonl(run_gpudays("results --status oom --format jsonl --db " + db).out).size(), 1u);
  EXPECT_EQ(jsonl(run_gpudays("results --gpu cpu --format jsonl --db " + db).out).size(), 1u);
  EXPECT_EQ(jsonl(run_gpudays("results --num-nodes 2 --format jsonl --db " + db).out).size(), 0u);
  const auto json = nlohmann::json::parse(run_gpudays("results --format json --db " + db).out);
  EXPECT_EQ(json["row_kind"], "trial_row");
  EXPECT_EQ(json["rows"].size(), 5u);
  const auto csv = run_gpudays("results --status ok --gpu a100 --format csv --db " + db);
  EXPECT_EQ(csv.out.rfind("model,model_digest,gpu,device_name,", 0), 0u) << csv.out;
  const auto table = run_gpudays("results --db " + db);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("oom"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("mfu_%"), std::string::npos) << table.out;
  const auto md = run_gpudays(
      "best --model pythia-160m --gpu a100 --gpus-per-node 4 --format "
      "markdown --db " +
      db);
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(std::count(md.out.begin(), md.out.end(), '\n'), 3) << md.out;
  EXPECT_NE(md.out.find("| 8 |"), std::string::npos) << md.out;
  const auto bad = run_gpudays("results --status fine --db " + db);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("ok"), std::string::npos) << bad.err;
}

TEST(InteropOutputs, IncompleteListsTheSearchSpaceNotYetMeasured) {
  const std::string db = db_with_trials();
  const std::string where = " --gpu a100 --gpus-per-node 4 --methods naive --format jsonl --db ";
  const auto planned = jsonl(
      run_gpudays("plan --model pythia-160m --gpu a100 --gpus-per-node 4 --methods naive --all "
                  "--no-calibration --format jsonl")
          .out);
  const auto left = jsonl(run_gpudays("results --incomplete --model pythia-160m" + where + db).out);
  ASSERT_GT(planned.size(), 4u);
  EXPECT_EQ(left.size(), planned.size() - 4);  // micro-batches 2, 4, 8 and 16 (out of memory) ran
  for (const auto& row : left) {
    EXPECT_EQ(row["sharding"], "none");
    EXPECT_NE(row["micro_batch_size"], 8);
    EXPECT_NE(row["micro_batch_size"], 16);
  }
  const auto none_yet =
      jsonl(run_gpudays("results --incomplete --model pythia-160m" + where + db + ".absent").out);
  EXPECT_EQ(none_yet.size(), planned.size());
  const auto unnamed = run_gpudays("results --incomplete --db " + db);
  EXPECT_EQ(unnamed.exit_code, 2);
  EXPECT_NE(unnamed.err.find("--incomplete needs"), std::string::npos) << unnamed.err;
}

TEST(InteropOutputs, CatalogRowsInEveryFormat) {
  const auto gpus = jsonl(run_gpudays("gpus --format jsonl").out);
  ASSERT_EQ(gpus.size(), 16u);
  for (const auto& g : gpus) {
    EXPECT_TRUE(g["memory_bytes"].is_number_integer()) << g;
    EXPECT_FALSE(g["peak_tflops_source"].get<std::string>().empty()) << g;
    if (g["name"] == "rtx-3090") {
      EXPECT_EQ(g["aliases"], "geforce3090,3090");
    }
  }
  const auto models = run_gpudays("models --format csv");
  EXPECT_EQ(models.out.rfind("name,family,hf_name,params,", 0), 0u) << models.out;
  EXPECT_NE(models.out.find("pythia-1b,gpt_neox,EleutherAI/pythia-1b,1011781632,"),
            std::string::npos)
      << models.out;
  const auto md = run_gpudays("gpus --format markdown");
  EXPECT_EQ(md.out.rfind("| name | aliases |", 0), 0u) << md.out;
}

TEST(InteropOutputs, ExitCodesAreDocumented) {
  const auto help = run_gpudays("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit codes: 0 success; 1 a runtime failure"), std::string::npos)
      << help.out;
  EXPECT_NE(help.out.find("2 a usage error"), std::string::npos) << help.out;
  EXPECT_EQ(run_gpudays("results --db /nonexistent/gpudays.db").exit_code, 2);
}

}  // namespace
}  // namespace gpudays
