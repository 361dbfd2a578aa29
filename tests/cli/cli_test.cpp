// The command line as a user meets it: outputs, formats, and bad input answered with one line and
// exit code 2.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/build_info.h"
#include "process_dir.h"
#include "results/results_db.h"
#include "test_util.h"

namespace gpudays {
namespace {

using test::run_gpudays;

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_input_error(const std::string& args, const std::string& needle) {
  const auto r = run_gpudays(args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos);
}

TEST(Cli, PlanPrintsTheBestConfiguration) {
  const auto r = run_gpudays("plan --model pythia-1b --gpu a100 --gpus-per-node 4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Best: "), std::string::npos);
  EXPECT_NE(r.out.find("MFU"), std::string::npos);
  EXPECT_NE(r.err.find("'a100' means a100-80gb-sxm"), std::string::npos);
}

TEST(Cli, PlanJsonHasTheRowSchema) {
  const auto r = run_gpudays(
      "plan --model pythia-160m --gpu h100 --gpus-per-node 2 --all "
      "--format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["best"].is_object());
  EXPECT_GT(j["rows"].size(), 10u);
  for (const char* key : {"model",
                          "gpu",
                          "num_nodes",
                          "gpus_per_node",
                          "free_lunch",
                          "activation_checkpointing",
                          "sharding",
                          "offloading",
                          "micro_batch_size",
                          "grad_acc_steps",
                          "fits",
                          "peak_memory_bytes",
                          "step_time_s",
                          "tokens_per_s",
                          "training_days",
                          "gpu_days",
                          "mfu",
                          "reason"}) {
    EXPECT_TRUE(j["best"].contains(key)) << key;
    EXPECT_TRUE(j["rows"][0].contains(key)) << key;
  }
  EXPECT_EQ(j["best"]["fits"], true);
}

TEST(Cli, PlanJsonWithoutAllHasEmptyRows) {
  const auto r = run_gpudays("plan --model pythia-70m --gpu rtx-3090 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["rows"].empty());
}

TEST(Cli, NothingFitsSaysWhatWould) {
  const auto r = run_gpudays("plan --model pythia-2.8b --gpu rtx-3090 --methods naive");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Nothing fits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("would fit: --methods all"), std::string::npos) << r.out;
  const auto json =
      run_gpudays("plan --model pythia-2.8b --gpu rtx-3090 --methods naive --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["suggestions"][0]["change"],
            "--methods all (checkpointing, sharding, offloading)");
}

// A mistyped command, at the top or in `data`, is named with the valid ones (CLI11 alone says
// "A subcommand is required").
TEST(Cli, UnknownCommandsAreNamedWithTheValidOnes) {
  expect_input_error("plna", "unknown command 'plna'; valid: models, gpus, plan");
  expect_input_error("data pack-images", "unknown data command 'pack-images'; valid: tokenize");
  expect_input_error("data", "A subcommand is required");
  // The global option's value after `data` is not taken for its command.
  const auto inspect = run_gpudays("data --config-dir " + std::string(GPUDAYS_TEST_DATA_DIR) +
                                   "/../../configs inspect /nonexistent-prefix");
  EXPECT_EQ(inspect.err.find("unknown data command"), std::string::npos) << inspect.err;
}

// Flags that would do nothing are refused: GPU links for the host CPU (plan and bench alike), a
// timing the reference strategy overrides, srun's MPI without srun.
TEST(Cli, FlagsThatWouldDoNothingAreRefused) {
  const std::string model = std::string(GPUDAYS_TEST_DATA_DIR) + "/bench-gpt-neox.toml";
  expect_input_error("plan --model-file " + model + " --device cpu --pair-bridge on",
                     "--pair-bridge names the links between GPUs, not the host CPU's ranks");
  const std::string db = test::write_temp_file("links.db", "");
  std::filesystem::remove(db);
  expect_input_error("bench --model-file " + model + " --device cpu --peer-to-peer off --db " + db,
                     "--peer-to-peer names the links between GPUs");
  EXPECT_FALSE(std::filesystem::exists(db));
  // The reference strategy's own timing, and srun's MPI option without srun.
  expect_input_error("bench --model-file " + model +
                         " --device cpu --strategy reference --timing whole --db " + db,
                     "--timing: --strategy reference times by its own rule");
  expect_input_error("bench --model-file " + model + " --device cpu --srun-mpi pmix --db " + db,
                     "--srun-mpi applies with --launcher srun (or --slurm)");
  // The summary --format json names is of a run here; a Slurm job's rows go to --db.
  expect_input_error(
      "bench --model-file " + model + " --device cpu --slurm --dry-run --format json --db " + db,
      "--format json is the summary of a benchmark run here; with --slurm");
  EXPECT_FALSE(std::filesystem::exists(db));
}

// The planner and the cost model name no flags: the command line adds them to their answers.
TEST(Cli, FlagsInMessagesAreTheCommandLines) {
  expect_input_error("best --model pythia-1b --gpu a100 --db /nonexistent/gpudays.db",
                     "no results database at /nonexistent/gpudays.db (run `gpudays bench` "
                     "first, or give --db)");
  const std::string foreign = test::write_temp_file("foreign.db", "not a database at all");
  expect_input_error("best --model pythia-1b --gpu a100 --db " + foreign,
                     "is not a gpudays results database (not SQLite); left untouched (choose "
                     "another file with --db)");
}

TEST(Cli, HostMemoryLimitsOffloading) {
  const auto r = run_gpudays("plan --model pythia-12b --gpu rtx-3090");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Nothing fits: the configurations that fit in GPU memory offload"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("64.0 GiB (the default"), std::string::npos) << r.out;
  const auto more = run_gpudays("plan --model pythia-12b --gpu rtx-3090 --host-memory-gib 256");
  EXPECT_EQ(more.exit_code, 0) << more.err;
  EXPECT_NE(more.out.find("pinned per node of 256.0 GiB\n"), std::string::npos) << more.out;
  const auto json = run_gpudays("plan --model pythia-1b --gpu a100 --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["host_memory_is_default"], true);
  expect_input_error("plan --model pythia-1b --gpu a100 --host-memory-gib 0", "--host-memory-gib");
  expect_input_error("cost --model pythia-1b --host-memory-gib -5", "--host-memory-gib");
}

// Another stack's code, planned as it runs: mamba-ssm's kernels keep a Mamba model's scan states
// out of memory, the output and JSON say whose code it is and the band widens for it; a code that
// cannot run the model, or torch.compile on the engine, is one line and exit code 2.
TEST(Cli, PlanAnotherStacksModelCode) {
  const auto engine = run_gpudays("plan --model mamba --gpu h100 --format json");
  const auto ssm =
      run_gpudays("plan --model mamba --gpu h100 --model-code mamba_ssm --format json");
  ASSERT_EQ(engine.exit_code, 0) << engine.err;
  ASSERT_EQ(ssm.exit_code, 0) << ssm.err;
  const auto e = nlohmann::json::parse(engine.out);
  const auto s = nlohmann::json::parse(ssm.out);
  EXPECT_EQ(e["model_code"], "engine");
  EXPECT_EQ(s["model_code"], "mamba_ssm");
  EXPECT_EQ(s["compiled"], false);
  EXPECT_NE(s["best"]["error_band_far"].get<std::string>().find("mamba_ssm model code"),
            std::string::npos);
  // The engine's chunked scan needs offloading on one H100; mamba-ssm's fused scan does not.
  EXPECT_EQ(e["best"]["offloading"], true);
  EXPECT_EQ(s["best"]["offloading"], false);
  const auto table = run_gpudays("plan --model mamba --gpu h100 --model-code mamba_ssm");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Model code: mamba_ssm, as that stack runs it"), std::string::npos)
      << table.out;
  const auto compiled = run_gpudays(
      "plan --model tinyllama-1.1b --gpu h100 --model-code llama_reference --compiled --format "
      "json");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_EQ(nlohmann::json::parse(compiled.out)["compiled"], true);
  expect_input_error("plan --model pythia-1b --gpu h100 --model-code mamba_ssm",
                     "mamba_ssm runs Mamba models only");
  expect_input_error("plan --model mamba --gpu h100 --model-code huggingface",
                     "a Mamba model runs as the engine's code or mamba_ssm's");
  expect_input_error("plan --model pythia-1b --gpu h100 --model-code llm_c", "llm_c trains GPT-2");
  expect_input_error("plan --model pythia-1b --gpu h100 --compiled",
                     "--compiled needs --model-code");
  expect_input_error("plan --model pythia-1b --gpu h100 --model-code nope", "--model-code");
}

// `gpudays ARGS --format json`, parsed (a failed command fails the test).
nlohmann::json plan_json_of(const std::string& args) {
  const auto r = run_gpudays(args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return nlohmann::json::parse(r.out);
}

double best_step_s(const nlohmann::json& plan) {
  return plan["best"]["step_time_s"].get<double>();
}

// pythia-1b with free-lunch at micro-batch 8 on one GPU, pinned to one configuration.
std::string pinned_plan(const std::string& gpu) {
  return "plan --model pythia-1b --gpu " + gpu +
         " --free-lunch on --checkpointing off --sharding none --micro-batch-size 8";
}

// The fused attention's kernel: cuDNN's for the engine on an H100 (torch 2.11's SDPA), and
// FlashAttention-2, written for Ampere's instructions, slower there when asked for; before
// Hopper torch's SDPA runs FlashAttention-2 either way, so the two plan the same.
TEST(Cli, PlanNamesTheAttentionKernel) {
  const auto c = plan_json_of(pinned_plan("h100"));
  const auto f = plan_json_of(pinned_plan("h100") + " --attention-kernel flash_attention_2");
  EXPECT_EQ(c["attention_kernel"], "cudnn");
  EXPECT_EQ(f["attention_kernel"], "flash_attention_2");
  EXPECT_GT(best_step_s(f), best_step_s(c));
  EXPECT_EQ(
      plan_json_of("plan --model pythia-1b --gpu h100 --model-code flash_attn")["attention_kernel"],
      "flash_attention_2");
  const auto table = run_gpudays(pinned_plan("h100") + " --attention-kernel flash_attention_2");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Attention kernel: flash_attention_2 (--attention-kernel)"),
            std::string::npos)
      << table.out;
  EXPECT_DOUBLE_EQ(
      best_step_s(plan_json_of(pinned_plan("a100") + " --attention-kernel flash_attention_2")),
      best_step_s(plan_json_of(pinned_plan("a100"))));
  expect_input_error("plan --model pythia-1b --gpu h100 --attention-kernel flash_attention_3",
                     "--attention-kernel");
}

// The peak memory carries its range by the allocator's cache, in the table and in JSON, and
// every row's range holds its prediction.
TEST(Cli, PlanGivesThePeakMemorysRange) {
  const auto table = run_gpudays("plan --model pythia-1b --gpu rtx-3090");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find(" by the allocator's cache) of 24.0 GiB"), std::string::npos)
      << table.out;
  const auto j = plan_json_of("plan --model pythia-160m --gpu h100 --gpus-per-node 2 --all");
  int widened = 0;
  for (const nlohmann::json& row : j["rows"]) {
    const double peak = row["peak_memory_bytes"].get<double>();
    EXPECT_LE(row["least_memory_bytes"].get<double>(), peak);
    EXPECT_GE(row["most_memory_bytes"].get<double>(), peak);
    widened += row["most_memory_bytes"].get<double>() > peak ? 1 : 0;
  }
  EXPECT_GT(widened, 0);
}

// A power limit below the TDP: a slower plan that says so; above the TDP, below a quarter of it
// or on the host CPU, a one-line error.
TEST(Cli, PlanUnderAPowerLimit) {
  const auto c = plan_json_of(pinned_plan("h100") + " --gpu-power-limit-w 500");
  const auto f = plan_json_of(pinned_plan("h100"));
  EXPECT_GT(best_step_s(c), best_step_s(f));
  EXPECT_EQ(c["gpu_power_limit_w"], 500.0);
  EXPECT_NEAR(c["compute_clock_factor"].get<double>(), std::cbrt(500.0 / 700.0), 1e-12);
  EXPECT_TRUE(f["gpu_power_limit_w"].is_null());
  EXPECT_EQ(f["compute_clock_factor"], 1.0);
  const auto table = run_gpudays(pinned_plan("h100") + " --gpu-power-limit-w 500");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Power limit: 500 W of the 700 W TDP: compute at 0.894 of its rate"),
            std::string::npos)
      << table.out;
  expect_input_error(pinned_plan("h100") + " --gpu-power-limit-w 800",
                     "above the h100-sxm's TDP of 700 W");
  expect_input_error(pinned_plan("h100") + " --gpu-power-limit-w 100",
                     "below a quarter of the h100-sxm's");
  expect_input_error("plan --model pythia-14m --device cpu --gpu-power-limit-w 100",
                     "--gpu-power-limit-w applies to a GPU");
  // The same limit as a share of the TDP, as cost, report and fit take it; one of the two.
  const auto share = plan_json_of(pinned_plan("h100") + " --power-limit-fraction 0.5");
  EXPECT_EQ(share["gpu_power_limit_w"], 350.0);
  EXPECT_NEAR(share["compute_clock_factor"].get<double>(), std::cbrt(0.5), 1e-12);
  expect_input_error(pinned_plan("h100") + " --power-limit-fraction 0.5 --gpu-power-limit-w 500",
                     "excludes");
  expect_input_error(pinned_plan("h100") + " --power-limit-fraction 0.2", "--power-limit-fraction");
  expect_input_error("plan --model pythia-14m --device cpu --power-limit-fraction 0.5",
                     "--power-limit-fraction applies to a GPU");
}

// When nothing fits a power-limited GPU, the larger GPU it suggests is planned under the same
// share of its own TDP, and says so.
TEST(Cli, PlanSuggestsLargerGpusUnderTheSamePowerLimit) {
  const std::string request = "plan --model pythia-6.9b --gpu rtx-3090 --gpus-per-node 1";
  const auto capped = plan_json_of(request + " --power-limit-fraction 0.5");
  const auto free = plan_json_of(request);
  const auto larger = [](const nlohmann::json& plan) {
    for (const auto& s : plan["suggestions"]) {
      if (s["change"].get<std::string>().find("more memory") != std::string::npos) return s;
    }
    ADD_FAILURE() << "no larger GPU suggested: " << plan.dump();
    return nlohmann::json{};
  };
  const auto c = larger(capped);
  const auto f = larger(free);
  ASSERT_EQ(c["best"]["gpu"], f["best"]["gpu"]);
  EXPECT_NE(c["change"].get<std::string>().find("limited to 50% of its TDP"), std::string::npos)
      << c["change"];
  EXPECT_EQ(f["change"].get<std::string>().find("limited"), std::string::npos) << f["change"];
  EXPECT_GT(c["best"]["step_time_s"].get<double>(), f["best"]["step_time_s"].get<double>());
}

// Every predicted time carries the range of the planner's validation residuals, in every format.
TEST(Cli, PredictedTimesCarryErrorRanges) {
  const auto table = run_gpudays("plan --model pythia-1b --gpu a100 --gpus-per-node 4");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("  error range    10th-90th percentile of the planner's error on "),
            std::string::npos)
      << table.out;
  const auto json =
      run_gpudays("plan --model pythia-1b --gpu a100 --gpus-per-node 4 --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto best = nlohmann::json::parse(json.out)["best"];
  EXPECT_LE(best["training_days_low"].get<double>(), best["training_days_high"].get<double>());
  EXPECT_LE(best["step_time_low_s"].get<double>(), best["step_time_high_s"].get<double>());
  EXPECT_TRUE(best["error_band_basis"].is_string());
  const auto csv = run_gpudays("plan --model pythia-70m --gpu a100 --format csv");
  EXPECT_NE(csv.out.find(",training_days,training_days_low,training_days_high,"), std::string::npos)
      << csv.out;
  const auto cost = run_gpudays("cost --model pythia-1b --gpus a100 --counts 4 --format json");
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  const auto row = nlohmann::json::parse(cost.out)["rows"][0];
  EXPECT_LT(row["training_days_low"].get<double>(), row["training_days_high"].get<double>());
  const auto cost_table = run_gpudays("cost --model pythia-1b --gpus a100 --counts 4");
  EXPECT_NE(cost_table.out.find("days_range"), std::string::npos);
  const auto cost_csv = run_gpudays("cost --model pythia-1b --gpus a100 --counts 4 --format csv");
  EXPECT_NE(cost_csv.out.find("training_days,training_days_low,training_days_high"),
            std::string::npos);
}

TEST(Cli, CsvHasHeaderAndRows) {
  const auto r = run_gpudays("plan --model pythia-70m --gpu a100 --all --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("model,gpu,num_nodes,gpus_per_node,methods,", 0), 0u);
  EXPECT_GT(count_lines(r.out), 20);
}

TEST(Cli, ModelsAndGpusList) {
  const auto models = run_gpudays("models --format json");
  ASSERT_EQ(models.exit_code, 0);
  const auto rows = nlohmann::json::parse(models.out)["rows"];
  EXPECT_EQ(rows.size(), 19u);
  EXPECT_EQ(rows[0]["params"], 14067712);  // pythia-14m, the smallest
  EXPECT_TRUE(rows[0]["reported_gpus"].is_null());
  const auto gpus = run_gpudays("gpus");
  ASSERT_EQ(gpus.exit_code, 0);
  EXPECT_NE(gpus.out.find("geforce3090"), std::string::npos);
}

TEST(Cli, BadInputIsOneLineAndExitCodeTwo) {
  expect_input_error("plan --model pythia-7b --gpu a100", "pythia-6.9b");
  expect_input_error("plan --model pythia-1b --gpu a200", "a100-80gb-sxm");
  expect_input_error("plan --model pythia-1b --gpu a100 --gpus-per-node 3", "power-of-two");
  expect_input_error("plan --model pythia-1b --gpu v100", "bf16");
  expect_input_error("plan --model pythia-1b --gpu a100 --gpus-per-node 0", "--gpus-per-node");
  expect_input_error("plan --model pythia-1b --gpu a100 --methods fast", "naive, free-lunch");
  expect_input_error("plan --model pythia-1b --gpu a100 --format xml", "--format");
  expect_input_error("plan --gpu a100", "--model is required");
  expect_input_error("plan --model pythia-1b --gpu a100 --gpus-per-node two", "two");
  expect_input_error("plan --model-file /nonexistent.toml --gpu a100", "nonexistent");
  expect_input_error("frobnicate", "frobnicate");
  const std::string bad =
      test::write_temp_file("bad.toml", "name = \"x\"\nfamily = \"gpt_neox\"\n");
  expect_input_error("plan --model-file " + bad + " --gpu a100", "arch");
}

// Numbers are finite and within physical ranges; values past int64 are refused, not saturated.
TEST(Cli, NumbersOutOfRangeAreRefused) {
  expect_input_error("cost --model pythia-1b --power-fraction 50", "--power-fraction");
  expect_input_error("cost --model pythia-1b --power-fraction nan", "'nan' is not a finite number");
  expect_input_error("cost --model pythia-1b --usd-per-kwh -1", "--usd-per-kwh");
  expect_input_error("cost --model pythia-1b --counts 99999999999999999999", "--counts");
  expect_input_error("cost --model pythia-1b --max-days inf", "--max-days");
  expect_input_error("plan --model pythia-1b --gpu a100 --nodes 99999999999999999999", "--nodes");
  expect_input_error("bench --model pythia-1b --gpu a100 --gpus-per-node 100", "--gpus-per-node");
  expect_input_error("plan --model pythia-1b --gpu a100 --inter-node-gb-per-s nan",
                     "--inter-node-gb-per-s");
  expect_input_error("plan --model pythia-1b --gpu a100 --cpu-adam-params-per-s -1",
                     "--cpu-adam-params-per-s");
  expect_input_error("bench --model pythia-14m --device cpu --trial-timeout nan",
                     "--trial-timeout");
  expect_input_error("bench --model pythia-14m --device cpu --memory-limit 1", "1 MiB");
}

// A failed write of an exported file is an error naming it (exit 1), not a silent success.
TEST(Cli, ExportToAFullDeviceFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const auto r = run_gpudays("export --model pythia-160m --gpu a100 --source plan --out /dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write /dev/full"), std::string::npos) << r.err;
}

// Standard output that cannot be written (a full disk, a closed descriptor) is exit 1 with one
// line, never a silent success: `validate --fit > calibration.toml` on a full disk used to exit 0.
TEST(Cli, StandardOutputThatCannotBeWrittenFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const std::string err = test::write_temp_file("stdout-full.err", "");
  for (const std::string& redirect : {std::string(">/dev/full"), std::string(">&-")}) {
    for (const char* args : {"models", "validate --fit", "--help"}) {
      const std::string command =
          std::string(GPUDAYS_BINARY) + " " + args + " " + redirect + " 2>" + err;
      const int status = std::system(command.c_str());
      ASSERT_TRUE(WIFEXITED(status)) << command;
      EXPECT_EQ(WEXITSTATUS(status), 1) << command;
      std::ifstream in(err);
      std::string line, extra;
      std::getline(in, line);
      EXPECT_EQ(line.rfind("gpudays: error: cannot write standard output: ", 0), 0u) << line;
      EXPECT_FALSE(std::getline(in, extra)) << "more than one line: " << extra;
    }
  }
  std::filesystem::remove(err);
}

// The sbatch script's directory that cannot be made (under /dev/full, which is not a directory)
// is an I/O error naming it (exit 1), not an internal error; nothing is submitted.
TEST(Cli, ASlurmDirectoryThatCannotBeMadeIsAnIoError) {
  const std::string data = GPUDAYS_TEST_DATA_DIR;
  const auto r = run_gpudays("bench --model-file " + data +
                             "/slurm-tiny.toml --device cpu --gpus-per-node 2 --cluster " + data +
                             "/slurm-cluster.toml --partition cpu --time 30 --slurm --dry-run "
                             "--slurm-dir /dev/full/gpudays-slurm");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("gpudays: error: cannot create /dev/full/gpudays-slurm"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("#SBATCH"), std::string::npos) << r.out;
}

// Found by the cli_numbers fuzz target: CLI11 alone read integers with base prefixes (010 as 8,
// 0x4 as 4), saturated those past int64 where no range check followed, and took nan for options
// without a range. Every number option now takes decimal integers or finite numbers alone.
TEST(Cli, NumbersAreDecimalAndFinite) {
  expect_input_error("bench --model pythia-14m --device cpu --memory-limit 99999999999999999999",
                     "--memory-limit: '99999999999999999999' is not a decimal integer");
  expect_input_error("bench --model pythia-14m --device cpu --trial-timeout nan",
                     "--trial-timeout: 'nan' is not a finite number");
  expect_input_error("plan --model pythia-1b --gpu a100 --gpus-per-node 0x4",
                     "--gpus-per-node: '0x4' is not a decimal integer");
  expect_input_error("cost --model pythia-1b --counts 4,1e3", "--counts: '1e3'");
  // A leading zero is decimal: 010 GPUs per node are 10 (which pythia-1b's batch does not split
  // over), not 8.
  expect_input_error("plan --model pythia-1b --gpu a100 --gpus-per-node 010", "over 10 GPUs");
}

// A rate or bandwidth near 0 inside a flag's old range printed "inf days" or day counts of 300
// digits: the flags have physical lower bounds; a subnormal is a number out of range, not "not a
// number".
TEST(Cli, PhysicalFlagsHaveSensibleLowerBounds) {
  expect_input_error(
      "plan --model pythia-1b --gpu a100 --offloading on --cpu-adam-params-per-s 1e-300",
      "--cpu-adam-params-per-s: '1e-300' is not in [100000, 1e+13]");
  expect_input_error("plan --model pythia-1b --gpu a100 --nodes 2 --inter-node-gb-per-s 1e-300",
                     "--inter-node-gb-per-s: '1e-300' is not in [0.01, 10000]");
  expect_input_error("plan --model pythia-1b --gpu a100 --nodes 2 --inter-node-gb-per-s 1e-320",
                     "'1e-320' is not in [0.01, 10000]");
  expect_input_error("plan --model pythia-1b --gpu a100 --host-memory-gib 0",
                     "--host-memory-gib: '0' is not in [1, 1e+06]");
  const auto slow = run_gpudays(
      "plan --model pythia-1b --gpu a100 --offloading on --cpu-adam-params-per-s 1e5 --format "
      "json");
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_TRUE(nlohmann::json::parse(slow.out)["best"]["training_days"].is_number()) << slow.out;
}

// Integer flags name their own range, whatever the bad value; CLI11's ranges are worded alike
// (it printed the 309 digits of the largest double).
TEST(Cli, NumberMessagesNameTheFlagsOwnRange) {
  for (const char* value : {"99999999999999999999", "2.5", "''"}) {
    expect_input_error(std::string("plan --model pythia-1b --gpu a100 --gpus-per-node ") + value,
                       "is not a decimal integer in [1, 64]");
  }
  const auto sample = run_gpudays("data inspect --sample -1 /nonexistent");
  EXPECT_EQ(sample.exit_code, 2) << sample.err;
  EXPECT_NE(sample.err.find("'-1' is not a non-negative"), std::string::npos) << sample.err;
  EXPECT_LT(sample.err.size(), 200u) << sample.err;
}

// CLI11 dropped a list's empty items (`--counts 1,,2` read as 1,2; `--gpus ,` as a missing value).
TEST(Cli, ListsHaveNoEmptyItems) {
  expect_input_error("cost --model pythia-1b --gpus a100 --counts 1,,2",
                     "--counts: '1,,2' has an empty item");
  expect_input_error("cost --model pythia-1b --gpus a100,,h100 --counts 1",
                     "--gpus: 'a100,,h100' has an empty item");
  expect_input_error("cost --model pythia-1b --gpus , --counts 1", "--gpus: ',' has an empty item");
  expect_input_error("cost --model pythia-1b --gpus=a100, --counts 1",
                     "--gpus: 'a100,' has an empty item");
}

// One value given twice, an empty name or choice, a name with a newline: one line that says so.
TEST(Cli, RepeatedAndEmptyValuesAreSaid) {
  expect_input_error("plan --model pythia-1b --gpu a100 --gpu h100",
                     "--gpu is given 2 times ('a100', 'h100'); give it once");
  expect_input_error("plan --model pythia-1b --gpu a100 --sharding ''",
                     "--sharding: an empty value");
  expect_input_error("plan --model '' --gpu a100", "--model: an empty name");
  // A newline typed into a name (inside the shell's quotes) is refused as such, in one line.
  expect_input_error("plan --model 'pythia\nbogus' --gpu a100",
                     "--model: a name with a control character (a newline, tab or NUL) in it");
  // Every error is one line, a results database's or a missing tool's too.
  expect_input_error("results --db 'x\ny.db' --model pythia-160m", "x\\ny.db");
  // A byte that is not UTF-8 (a name typed in Latin-1) is escaped; UTF-8 is kept as it is.
  expect_input_error("plan --model 'caf\xe9-\xc3\xa9' --gpu a100",
                     "unknown model 'caf\\xe9-\xc3\xa9'");
  // A flag that only shapes another mode says so rather than being ignored.
  expect_input_error("results --model pythia-1b --methods naive",
                     "--methods chooses the search space of --incomplete");
  // An empty catalog directory is said, not read as "the default one".
  expect_input_error("--config-dir '' models", "--config-dir: the path is empty");
  // --auto writes DeepSpeed's "auto" values; a run file has none to write.
  expect_input_error("export --model pythia-1b --gpu a100 --source plan --format toml --auto",
                     "--auto: \"auto\" values belong to a DeepSpeed configuration");
}

// The image loader's flags are for vision models; a text model has no images to load.
TEST(Cli, ImageInputIsForVisionModels) {
  expect_input_error("plan --model pythia-1b --gpu a100 --image-input jpeg-deit",
                     "--image-input applies to vision models");
  EXPECT_EQ(run_gpudays("plan --model vit --gpu a100 --image-input jpeg-deit").exit_code, 0);
}

// A model name that neither the catalog nor the database knows is unknown, as elsewhere; a catalog
// model without trials on the GPU asked for is an empty list.
TEST(Cli, ResultsRefusesAnUnknownModel) {
  const std::string db = test::fresh_path("results-names.db");
  ResultsDb::open({db, /*read_only=*/false, &test::catalog()})
      .insert(test::pythia_1b_trial(8, 20.0, 20.0));
  expect_input_error("results --model bogus --db " + db, "unknown model 'bogus'");
  const auto known = run_gpudays("results --model pythia-1b --gpu h100 --db " + db);
  EXPECT_EQ(known.exit_code, 0) << known.err;
}

// Without configs/calibration.toml the planner's own constants plan: `plan` says so once.
TEST(Cli, PlanSaysWhenItPlansUncalibrated) {
  namespace fs = std::filesystem;
  const fs::path dir = test::process_temp_dir().fresh_dir("no-calibration");
  for (const char* sub : {"models", "gpus", "measurements"}) {
    fs::copy(fs::path(test::catalog().config_dir()) / sub, dir / sub, fs::copy_options::recursive);
  }
  const auto r = run_gpudays("--config-dir " + dir.string() +
                             " plan --model pythia-160m --gpu a100 --no-calibration");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("planning with the planner's own constants (uncalibrated)"),
            std::string::npos)
      << r.err;
  const auto calibrated = run_gpudays("plan --model pythia-160m --gpu a100 --no-calibration");
  EXPECT_EQ(calibrated.err.find("own constants"), std::string::npos) << calibrated.err;
}

// A configuration directory whose name is not UTF-8 (a Latin-1 file system) lists its models and
// GPUs in JSON with U+FFFD in the path, not an internal error.
TEST(Cli, AConfigDirNamedInLatin1ListsInJson) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(test::process_temp_dir().fresh_dir("latin1")) / "configs-\xe9t\xe9";
  fs::create_directory_symlink(fs::absolute(test::catalog().config_dir()), dir);
  for (const char* listing : {"models", "gpus"}) {
    const auto r = run_gpudays("--config-dir '" + dir.string() + "' " + listing + " --format json");
    ASSERT_EQ(r.exit_code, 0) << listing << ": " << r.err;
    EXPECT_FALSE(nlohmann::json::parse(r.out)["rows"].empty()) << r.out;
  }
}

// A FIFO given as a model file is refused at once (reading it would wait for a writer).
TEST(Cli, AFifoModelFileIsRefusedRatherThanWaitedOn) {
  const std::string fifo =
      (std::filesystem::path(test::process_temp_dir().fresh_dir("fifo-model")) / "model.toml")
          .string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = run_gpudays("plan --model-file " + fifo + " --gpu a100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpudays: error: " + fifo +
                " is a FIFO (reading it waits for a writer); give a regular file\n");
}

// --db is read for calibration alone on a GPU: with --no-calibration it would be ignored unread.
TEST(Cli, NoCalibrationWithADatabaseIsOneLine) {
  const auto r = run_gpudays("plan --model pythia-160m --gpu a100 --no-calibration --db x.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("which --no-calibration turns off"), std::string::npos) << r.err;
}

TEST(Cli, HelpAndVersion) {
  const auto help = run_gpudays("plan --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--gpus-per-node"), std::string::npos);
  EXPECT_NE(help.out.find("fsdp_full_shard"), std::string::npos);
  EXPECT_EQ(run_gpudays("--version").exit_code, 0);
}

// The commit is stamped at every build, not only when CMake configured the build folder: a binary
// rebuilt after a commit names that commit (its result rows' provenance), "unknown" outside git.
TEST(Cli, VersionNamesTheSourceTreesCommit) {
  const std::string source_dir = std::filesystem::path(kDefaultConfigDir).parent_path().string();
  const std::string out = test::fresh_path("head");
  const int rc = std::system(
      ("git -C '" + source_dir + "' rev-parse --short=12 HEAD >" + out + " 2>/dev/null").c_str());
  std::string head = test::read_file(out);
  while (!head.empty() && head.back() == '\n') head.pop_back();
  const std::string expected = rc == 0 && !head.empty() ? head : "unknown";
  const auto version = run_gpudays("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find(std::string("(") + expected), std::string::npos)
      << version.out << " (git: " << expected << ")";
  EXPECT_EQ(std::string(git_commit()).rfind(expected, 0), 0u) << git_commit();
}

}  // namespace
}  // namespace gpudays
