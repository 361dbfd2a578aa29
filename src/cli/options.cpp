// The options several commands share (--model/--model-file, --gpus-per-node/--nodes, --format)
// and the check of every number option, declared in commands.h; each command adds its own options
// in cmd_NAME.cpp.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "catalog/toml_fields.h"
#include "cli/commands.h"
#include "common/error.h"
#include "search_space/search_space.h"

namespace gpudays {
namespace {

// The range a validator checks, as its message names it: "[1, 64]" of CLI11's Range ("INT in [1 -
// 64]"), "(0, 10000]" of number_check ("NUMBER in (0, 10000]"); "" for any other validator.
std::string range_of(const CLI::Validator& v) {
  const std::string d = v.get_description();
  const size_t in = d.find(" in ");
  const bool typed = d.rfind("INT in [", 0) == 0 || d.rfind("UINT in [", 0) == 0 ||
                     d.rfind("FLOAT in [", 0) == 0 || d.rfind("NUMBER in ", 0) == 0;
  if (!typed || in == std::string::npos) return "";
  std::string range = d.substr(in + 4);
  if (const size_t dash = range.find(" - "); dash != std::string::npos) {
    range.replace(dash, 3, ", ");
  }
  return range;
}

// What an integer option takes, for its messages: "a decimal integer in [1, 64]".
std::string integer_wanted(const std::string& range, const std::string& sign) {
  return fmt::format("a {}decimal integer{}", sign, range.empty() ? "" : " in " + range);
}

// CLI11's own failure messages of its ranges, "Value -1 not in range 0.000000 to 17976931348..."
// (309 digits), reworded as number_check's: "'-1' is not in [1, 64]". Returns what the option's
// integers must be, for integer_check's message ("" when no range says).
std::string reword_ranges(CLI::Option& option) {
  std::string wanted_integer;
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    const std::string d = v->get_description();
    const std::string range = range_of(*v);
    const std::string sign = d == "POSITIVE"      ? "positive "
                             : d == "NONNEGATIVE" ? "non-negative "
                                                  : "";
    if (range.empty() && sign.empty()) continue;
    if (wanted_integer.empty()) wanted_integer = integer_wanted(range, sign);
    if (d.rfind("NUMBER", 0) == 0) continue;  // number_check's own words
    const std::string wanted = sign.empty() ? "in " + range : "a " + sign + "number";
    const CLI::Validator original = *v;
    v->operation([original, wanted](std::string& text) -> std::string {
      return original(text).empty() ? "" : fmt::format("'{}' is not {}", text, wanted);
    });
  }
  return wanted_integer;
}

// "" when `text` is a decimal integer of type T (an optional minus, digits, nothing else), which
// it then holds in its plain form ("010" -> "10", which CLI11 would read as octal 8). The message
// says what the option takes (`wanted`), else the type's range.
template <typename T>
CLI::Validator integer_check(std::string wanted) {
  if (wanted.empty()) {
    wanted = integer_wanted(
        fmt::format("[{}, {}]", std::numeric_limits<T>::min(), std::numeric_limits<T>::max()), "");
  }
  return CLI::Validator(
      [wanted](std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end) return fmt::format("'{}' is not {}", text, wanted);
        text = std::to_string(value);
        return "";
      },
      "");
}

// A decimal number, as integers are (integer_check): no hexadecimal ("0x40", "0x1p6"), no sign but
// a minus, no surrounding spaces; "inf" and "nan" are numbers that real_problem then refuses, and
// one below the smallest normal double (1e-320, a subnormal) is one too, which the option's range
// then judges.
std::optional<double> parse_real(const std::string& text) {
  const char* end = text.data() + text.size();
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (ptr != end || text.empty()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Past the double's range: a decimal number all the same, read as infinity or a subnormal
    // (or zero) for the range to judge.
    return std::strtod(text.c_str(), nullptr);
  }
  if (ec != std::errc()) return std::nullopt;
  return value;
}

std::string real_problem(const std::string& text) {
  const std::optional<double> value = parse_real(text);
  if (!value) return fmt::format("'{}' is not a decimal number", text);
  return std::isfinite(*value) ? "" : fmt::format("'{}' is not a finite number", text);
}

// Whether one argument of a list option has an empty item between, before or after its
// delimiters ("1,,2", ",", "a100,").
bool has_empty_item(const std::string& value, char delimiter) {
  if (value.find(delimiter) == std::string::npos) return false;
  size_t start = 0;
  for (size_t at = value.find(delimiter); at != std::string::npos;
       start = at + 1, at = value.find(delimiter, start)) {
    if (at == start) return true;
  }
  return start == value.size();
}

const CLI::App* subcommand_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

const CLI::Option* option_named(const std::vector<const CLI::App*>& scope,
                                const std::string& name) {
  for (auto it = scope.rbegin(); it != scope.rend(); ++it) {
    if (const CLI::Option* option = (*it)->get_option_no_throw(name)) return option;
  }
  return nullptr;
}

void check_list_argument(const std::string& name, const std::string& value, char delimiter) {
  if (!has_empty_item(value, delimiter)) return;
  throw InputError(fmt::format(
      "{}: '{}' has an empty item (give the items separated by '{}')", name, value, delimiter));
}

}  // namespace

void check_number_options(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name().substr(0, option->get_type_name().find(':'));
    const std::string wanted_integer = reword_ranges(*option);
    // First, before the option's own checks (transform); no description: --help stays as it was.
    if (type == "INT") option->transform(integer_check<int64_t>(wanted_integer));
    if (type == "UINT") option->transform(integer_check<uint64_t>(wanted_integer));
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
    option->check(CLI::Validator(
        [](const std::string& name) {
          // An empty name is no name: `validate --gpu ''` read as every GPU.
          return name.empty() ? std::string("an empty name") : name_problem(name);
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_name_options(*sub);
}

void check_list_arguments(const CLI::App& app, int argc, char** argv) {
  std::vector<const CLI::App*> scope = {&app};  // the app and the subcommands named so far
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (const CLI::App* sub = subcommand_named(*scope.back(), arg)) scope.push_back(sub);
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const CLI::Option* option = option_named(scope, name);
    if (option == nullptr || option->get_delimiter() == '\0') continue;
    if (equals != std::string::npos) {
      check_list_argument(name, arg.substr(equals + 1), option->get_delimiter());
      continue;
    }
    while (i + 1 < argc && argv[i + 1][0] != '-') {  // a list takes the arguments up to an option
      check_list_argument(name, argv[++i], option->get_delimiter());
    }
  }
}

std::string repeated_option_problem(CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    const bool once = option->get_items_expected_max() == 1 &&
                      option->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw;
    if (!once || option->count() < 2) continue;
    return fmt::format("{} is given {} times ('{}'); give it once",
                       option->get_name(),
                       option->count(),
                       fmt::join(option->results(), "', '"));
  }
  for (CLI::App* sub : app.get_subcommands()) {
    if (std::string problem = repeated_option_problem(*sub); !problem.empty()) return problem;
  }
  return "";
}

std::string needs_trainer(const std::string& what) {
  return fmt::format(
      "this build has no trainer (built without LibTorch); {} needs the LibTorch build", what);
}

void rethrow_probe_failure(const GlobalOptions& global, const InputError& e) {
  // measure_host_cpu's words (sweep/host_probe.h) for a probe that ran and failed: in a build
  // without the trainer, `gpudays trial` is not there to run it.
  const bool probe_failed = std::string_view(e.what()).starts_with("cannot measure the host CPU (");
  if (global.has_trainer || !probe_failed) throw;  // the exception being handled, as it was
  throw InputError("cannot measure the host CPU: " + needs_trainer("the host-CPU probe"));
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
        const std::optional<double> value = parse_real(text);
        if (!value) return "'" + text + "' is not a decimal number";
        const bool above_low = low_open ? *value > low : *value >= low;
        if (!std::isfinite(*value) || !above_low || *value > high) {
          return fmt::format("'{}' is not in {}", text, range);
        }
        // Above an open bound by less than the smallest normal double (1e-320 over 0): a value
        // no computation can tell from the bound (a day count of 1e-320 divides to infinity).
        if (low_open && *value - low < std::numeric_limits<double>::min()) {
          return fmt::format(
              "'{}' cannot be told from {:g}; give a number in {}", text, low, range);
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
    if (!flag) {  // empty is what "not pinned" holds: `--sharding ''` must not read as unpinned
      option->check(CLI::Validator(
          [choices](const std::string& v) {
            return v.empty() ? fmt::format("an empty value; give {}", choices) : std::string();
          },
          ""));
    }
  }
  cmd.add_option("--micro-batch-size",
                 flags.micro_batch_size,
                 "Pin the micro-batch per GPU (a power of two up to the per-GPU batch)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
}

void refuse_links_on_cpu(const LinkSettings& links) {
  if (links.pair_bridge || links.peer_to_peer) {
    throw InputError(fmt::format("{} names the links between GPUs, not the host CPU's ranks",
                                 links.pair_bridge ? "--pair-bridge" : "--peer-to-peer"));
  }
}

void refuse_db_without_bench(const CLI::Option* db_option, const std::string& source) {
  if (source == "plan" && db_option->count() > 0) {
    throw InputError(
        "--db gives measured trials to --source bench; --source plan (the default) reads none");
  }
}

}  // namespace gpudays
