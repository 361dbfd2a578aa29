// RunState to and from the manifest's JSON, every field checked on the way in.
#include "trainer/run_state.h"

#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_fields.h"
#include "common/json_text.h"

namespace gpudays {
namespace {

// Reads the fields of one JSON object, naming the document and the field in every error.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& j, std::string what) : j_(j), what_(std::move(what)) {
    if (!j_.is_object()) throw InputError(fmt::format("{}: state is not a JSON object", what_));
  }

  const nlohmann::json& at(const std::string& key) const {
    if (!j_.contains(key)) throw InputError(fmt::format("{}: state has no {}", what_, key));
    return j_.at(key);
  }

  int64_t count(const std::string& key, int64_t low, int64_t high) const {
    const std::optional<int64_t> v = json_int64(at(key));
    if (!v || *v < low || *v > high) {
      throw InputError(fmt::format("{}: state.{} is {}, not an integer from {} to {}",
                                   what_,
                                   key,
                                   json_text(at(key)),
                                   low,
                                   high));
    }
    return *v;
  }

  double number(const std::string& key, double low) const {
    const nlohmann::json& v = at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < low) {
      throw InputError(fmt::format(
          "{}: state.{} is {}, not a finite number of at least {}", what_, key, json_text(v), low));
    }
    return v.get<double>();
  }

  bool flag(const std::string& key) const {
    if (!at(key).is_boolean()) {
      throw InputError(
          fmt::format("{}: state.{} is {}, not true or false", what_, key, json_text(at(key))));
    }
    return at(key).get<bool>();
  }

  std::vector<int64_t> counts(const nlohmann::json& list, const std::string& key) const {
    if (!list.is_array()) throw InputError(fmt::format("{}: state.{} is not a list", what_, key));
    std::vector<int64_t> out;
    for (const nlohmann::json& v : list) {
      const std::optional<int64_t> i = json_int64(v);
      if (!i || *i < 0) {
        throw InputError(
            fmt::format("{}: state.{} holds {}, not a count of 64 bits", what_, key, json_text(v)));
      }
      out.push_back(*i);
    }
    return out;
  }

 private:
  const nlohmann::json& j_;
  std::string what_;
};

constexpr int64_t kMaxCount = INT64_MAX;

}  // namespace

nlohmann::json run_state_json(const RunState& s) {
  nlohmann::json j = {{"step", s.step},
                      {"samples_seen", s.samples_seen},
                      {"world_size", s.world_size},
                      {"replicated_optimizer", s.replicated_optimizer},
                      {"slot_numels", s.slot_numels},
                      {"optimizer_steps", s.optimizer_steps},
                      {"optimizer_step_count", s.optimizer_step_count},
                      {"loss_scale", s.loss_scale},
                      {"loss_scale_clean_steps", s.loss_scale_clean_steps},
                      {"loss_scale_skipped", s.loss_scale_skipped},
                      {"extra", s.extra}};
  if (s.slot_parameters) j["slot_parameters"] = *s.slot_parameters;
  return j;
}

RunState parse_run_state(const nlohmann::json& j, const std::string& what) {
  const FieldReader f(j, what);
  RunState s;
  s.step = f.count("step", 0, kMaxCount);
  s.samples_seen = f.count("samples_seen", 0, kMaxCount);
  s.world_size = f.count("world_size", 1, kMaxCheckpointRanks);
  s.replicated_optimizer = f.flag("replicated_optimizer");
  s.slot_numels = f.counts(f.at("slot_numels"), "slot_numels");
  if (j.contains("slot_parameters")) {
    if (!j.at("slot_parameters").is_array()) {
      throw InputError(fmt::format("{}: state.slot_parameters is not a list", what));
    }
    s.slot_parameters.emplace();
    for (const nlohmann::json& slot : j.at("slot_parameters")) {
      s.slot_parameters->push_back(f.counts(slot, "slot_parameters"));
    }
  }
  s.optimizer_steps = f.count("optimizer_steps", 0, kMaxCount);
  s.optimizer_step_count = f.number("optimizer_step_count", 0.0);
  s.loss_scale = f.number("loss_scale", 0.0);
  s.loss_scale_clean_steps = f.count("loss_scale_clean_steps", 0, kMaxCount);
  s.loss_scale_skipped = f.count("loss_scale_skipped", 0, kMaxCount);
  s.extra = f.at("extra");
  if (!s.extra.is_object()) throw InputError(fmt::format("{}: state.extra is not an object", what));
  return s;
}

}  // namespace gpudays
