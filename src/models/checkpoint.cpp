// Checkpoint loading (validate everything first, then copy) and saving.
#include "models/checkpoint.h"

#include <ATen/core/grad_mode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "common/error.h"

namespace gpudays::models {
namespace {

struct Mismatches {
  std::vector<std::string> missing;
  std::vector<std::string> unexpected;
  std::vector<std::string> misshaped;

  bool empty() const { return missing.empty() && unexpected.empty() && misshaped.empty(); }
  std::string describe(const std::string& path) const {
    std::string text = fmt::format("{}: does not match the model:", path);
    if (!missing.empty()) text += fmt::format(" missing [{}];", fmt::join(missing, ", "));
    if (!unexpected.empty()) text += fmt::format(" unexpected [{}];", fmt::join(unexpected, ", "));
    if (!misshaped.empty()) text += fmt::format(" wrong shape [{}];", fmt::join(misshaped, ", "));
    text.pop_back();
    return text;
  }
};

// Module name -> file name for every module tensor, and every problem found on the way.
std::map<std::string, std::string> match_names(const NamedTensors& state,
                                               const SafetensorsReader& file,
                                               const LoadOptions& options,
                                               Mismatches& problems) {
  std::map<std::string, std::string> module_to_file;
  for (const auto& [file_name, entry] : file.entries()) {
    if (options.ignored.count(file_name)) continue;
    const auto alias = options.aliases.find(file_name);
    const std::string module_name = alias == options.aliases.end() ? file_name : alias->second;
    if (module_to_file.count(module_name)) {
      problems.unexpected.push_back(file_name + " (duplicate of " + module_to_file[module_name] +
                                    ")");
    } else {
      module_to_file[module_name] = file_name;
    }
  }
  std::set<std::string> used;
  for (const auto& [name, tensor] : state) {
    const auto it = module_to_file.find(name);
    if (it == module_to_file.end()) {
      problems.missing.push_back(name);
      continue;
    }
    used.insert(it->first);
    const auto& shape = file.entries().at(it->second).shape;
    if (shape != tensor.sizes().vec()) {
      problems.misshaped.push_back(fmt::format("{} is [{}], model needs [{}]",
                                               it->second,
                                               fmt::join(shape, ", "),
                                               fmt::join(tensor.sizes(), ", ")));
    }
  }
  for (const auto& [module_name, file_name] : module_to_file) {
    if (!used.count(module_name)) problems.unexpected.push_back(file_name);
  }
  return module_to_file;
}

}  // namespace

NamedTensors named_state(const torch::nn::Module& module) {
  NamedTensors state;
  for (const auto& item : module.named_parameters()) state.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) state.emplace_back(item.key(), item.value());
  return state;
}

void load_safetensors(torch::nn::Module& module,
                      const std::string& path,
                      const LoadOptions& options) {
  const SafetensorsReader file(path);
  const NamedTensors state = named_state(module);
  Mismatches problems;
  const auto module_to_file = match_names(state, file, options, problems);
  if (!problems.empty()) throw InputError(problems.describe(path));
  at::NoGradGuard no_grad;
  for (const auto& [name, tensor] : state) {
    at::Tensor target = tensor;  // shares storage with the module's tensor
    target.copy_(file.read(module_to_file.at(name)));
  }
}

void save_safetensors(const torch::nn::Module& module, const std::string& path) {
  write_safetensors(path, named_state(module));
}

}  // namespace gpudays::models
