// The options several commands share (--model/--model-file, --gpus-per-node/--nodes, --format)
// and the check of every number option, declared in commands.h; each command adds its own options
// in cmd_NAME.cpp.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "catalog/toml_fields.h"
#include "cli/commands.h"
#include "common/error.h"
#include "search_space/search_space.h"

namespace gpudays {
namespace {

// "" when `text` is a decimal integer of type T (an optional minus, digits, nothing else), which
// it then holds in its plain form ("010" -> "10", which CLI11 would read as octal 8).
template <typename T>
std::string integer_problem(std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return fmt::format("'{}' is not a decimal integer in [{}, {}]",
                       text,
                       std::numeric_limits<T>::min(),
                       std::numeric_limits<T>::max());
  }
  text = std::to_string(value);
  return "";
}

std::string real_problem(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return fmt::format("'{}' is not a number", text);
  }
  return std::isfinite(value) ? "" : fmt::format("'{}' is not a finite number", text);
}

}  // namespace

void check_number_options(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name().substr(0, option->get_type_name().find(':'));
    // First, before the option's own checks (transform); no description: --help stays as it was.
    if (type == "INT") option->transform(CLI::Validator(integer_problem<int64_t>, ""));
    if (type == "UINT") option->transform(CLI::Validator(integer_problem<uint64_t>, ""));
    if (type == "FLOAT") option->transform(CLI::Validator(real_problem, ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_number_options(*sub);
}

void check_name_options(CLI::App& app) {
  // The options that name a model, a GPU or a partition (each item of a list).
  static const std::set<std::string> kNameOptions = {
      "--model", "--models", "--gpu", "--gpus", "--partition"};
  for (CLI::Option* option : app.get_options()) {
    const bool text = option->get_type_name().rfind("TEXT", 0) == 0;
    if (!text || kNameOptions.count("--" + option->get_single_name()) == 0) continue;
    option->check(
        CLI::Validator([](const std::string& name) { return name_length_problem(name); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_name_options(*sub);
}

void add_model_options(CLI::App& cmd, std::string& model, std::string& model_file) {
  cmd.add_option(
      "--model", model, "Catalog model name or HuggingFace id, any case (see `gpudays models`)");
  cmd.add_option("--model-file", model_file, "A model TOML file (schema: docs/catalog.md)")
      ->check(CLI::ExistingFile);
}

void add_gpu_option(CLI::App& cmd, std::string& gpu, const std::string& help) {
  cmd.add_option("--gpu,--gpu-type", gpu, help);
}

void add_cluster_options(CLI::App& cmd,
                         int64_t& gpus_per_node,
                         int64_t& nodes,
                         const std::string& gpus_per_node_help) {
  cmd.add_option("--gpus-per-node", gpus_per_node, gpus_per_node_help)
      ->check(CLI::Range(int64_t{1}, kMaxGpusPerNode))
      ->capture_default_str();
  cmd.add_option("--nodes,--num-nodes", nodes, "Nodes (ranks = nodes x gpus-per-node)")
      ->check(CLI::Range(int64_t{1}, kMaxNodes))
      ->capture_default_str();
}

void add_link_options(CLI::App& cmd, LinkSettings& links) {
  cmd.add_option_function<std::string>(
         "--pair-bridge",
         [&links](const std::string& v) { links.pair_bridge = v == "on"; },
         "on or off: whether the two GPUs of a node are joined by their NVLink bridge (default: "
         "a --cluster partition's where one is read, else the GPU file's: off for GeForce and "
         "workstation cards)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd.add_option_function<std::string>(
         "--peer-to-peer",
         [&links](const std::string& v) { links.peer_to_peer = v == "on"; },
         "on or off: whether the GPUs reach each other's memory directly; off plans collectives "
         "through host memory and gives the ranks NCCL_P2P_DISABLE=1 unless the environment sets "
         "it (default: a --cluster partition's where one is read, else the GPU file's: off for the "
         "RTX 4090)")
      ->check(CLI::IsMember({"on", "off"}));
}

CLI::Option* add_format_option(CLI::App& cmd,
                               std::string& format,
                               const std::vector<std::string>& choices) {
  return cmd.add_option("--format", format, "Output format")
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

CLI::Validator number_check(double low, double high, bool low_open) {
  const std::string range = fmt::format("{}{:g}, {:g}]", low_open ? "(" : "[", low, high);
  return CLI::Validator(
      [low, high, low_open, range](std::string& text) -> std::string {
        double value = 0.0;
        try {
          size_t used = 0;
          value = std::stod(text, &used);
          if (used != text.size()) return "'" + text + "' is not a number";
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        const bool above_low = low_open ? value > low : value >= low;
        if (!std::isfinite(value) || !above_low || value > high) {
          return fmt::format("'{}' is not in {}", text, range);
        }
        return "";
      },
      "NUMBER in " + range);
}

ConfigurationPin PinFlags::pin() const {
  ConfigurationPin pin;
  const std::span<const MethodField> fields = method_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!methods[i].empty()) pin.pin_text(fields[i], methods[i]);
  }
  if (micro_batch_size > 0) pin.micro_batch_size = micro_batch_size;
  return pin;
}

void add_pin_options(CLI::App& cmd, PinFlags& flags) {
  const std::span<const MethodField> fields = method_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const MethodField& f = fields[i];
    const bool flag = f.kind() == MethodKind::kFlag;
    const std::string choices = flag ? "on or off" : join_choices(f.choices());
    CLI::Option* option = cmd.add_option(
        fmt::format("--{}", f.label), flags.methods[i], fmt::format("Pin {}: {}", f.help, choices));
    if (flag) option->check(CLI::IsMember({"on", "off"}));
  }
  cmd.add_option("--micro-batch-size",
                 flags.micro_batch_size,
                 "Pin the micro-batch per GPU (a power of two up to the per-GPU batch)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
}

}  // namespace gpudays
