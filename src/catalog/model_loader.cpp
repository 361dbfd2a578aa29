// Model catalog file parsing and validation.
#include "catalog/model_loader.h"

#include <fmt/format.h>

#include "catalog/toml_fields.h"
#include "common/error.h"

namespace gpudays {
namespace {

void read_transformer_core(const TomlFields& t, ArchSpec& a) {
  a.n_layers = t.get_int("n_layers");
  a.d_model = t.get_int("d_model");
  a.n_heads = t.get_int("n_heads");
  a.d_ffn = t.get_int("d_ffn");
  a.layer_norm_eps = t.get_double_or("layer_norm_eps", 1e-5);
}

// Defaults of the optional keys are transformers' (configuration_<family>.py).
void read_gpt_neox(const TomlFields& t, ArchSpec& a) {
  read_transformer_core(t, a);
  a.vocab_size = t.get_int("vocab_size");
  a.seq_len = t.get_int("seq_len");
  a.rotary_pct = t.get_double("rotary_pct");
  a.rotary_emb_base = t.get_double_or("rotary_emb_base", 10000.0);
  a.max_position_embeddings = t.get_int_or("max_position_embeddings", a.seq_len);
  a.tie_word_embeddings = t.get_bool_or("tie_word_embeddings", false);
  a.use_parallel_residual = t.get_bool_or("use_parallel_residual", true);
}

void read_roberta(const TomlFields& t, ArchSpec& a) {
  read_transformer_core(t, a);
  a.vocab_size = t.get_int("vocab_size");
  a.seq_len = t.get_int("seq_len");
  a.max_position_embeddings = t.get_int("max_position_embeddings");
  a.type_vocab_size = t.get_int_or("type_vocab_size", 1);
  a.pad_token_id = t.get_int_or("pad_token_id", 1);
  a.bos_token_id = t.get_int_or("bos_token_id", 0);
  a.eos_token_id = t.get_int_or("eos_token_id", 2);
}

void read_vit(const TomlFields& t, ArchSpec& a) {
  read_transformer_core(t, a);
  a.image_size = t.get_int("image_size");
  a.patch_size = t.get_int("patch_size");
  a.num_channels = t.get_int_or("num_channels", 3);
  a.num_labels = t.get_int("num_labels");
  a.seq_len = t.get_int_or("seq_len", 0);
  a.attention_probs_dropout_prob = t.get_double_or("attention_probs_dropout_prob", 0.0);
}

void read_convnext(const TomlFields& t, ArchSpec& a) {
  a.depths = t.get_int_array("depths");
  a.hidden_sizes = t.get_int_array("hidden_sizes");
  a.image_size = t.get_int("image_size");
  a.num_channels = t.get_int_or("num_channels", 3);
  a.num_labels = t.get_int("num_labels");
  a.layer_norm_eps = t.get_double_or("layer_norm_eps", 1e-12);  // HF ConvNextConfig default
  a.drop_path_rate = t.get_double_or("drop_path_rate", 0.0);
  a.layer_scale_init_value = t.get_double_or("layer_scale_init_value", 1e-6);
}

void read_mamba(const TomlFields& t, ArchSpec& a) {
  a.n_layers = t.get_int("n_layers");
  a.d_model = t.get_int("d_model");
  a.vocab_size = t.get_int("vocab_size");
  a.seq_len = t.get_int("seq_len");
  a.d_state = t.get_int("d_state");
  a.d_conv = t.get_int("d_conv");
  a.expand = t.get_int("expand");
  a.dt_rank = t.get_int("dt_rank");
  a.conv_bias = t.get_bool_or("conv_bias", true);
  a.proj_bias = t.get_bool_or("proj_bias", false);
  a.layer_norm_eps = t.get_double_or("layer_norm_eps", 1e-5);
  a.time_step_min = t.get_double_or("time_step_min", 0.001);
  a.time_step_max = t.get_double_or("time_step_max", 0.1);
  a.time_step_floor = t.get_double_or("time_step_floor", 1e-4);
  a.time_step_scale = t.get_double_or("time_step_scale", 1.0);
}

ArchSpec read_arch(const TomlFields& t, Family family) {
  ArchSpec a;
  switch (family) {
    case Family::kGptNeox:
      read_gpt_neox(t, a);
      break;
    case Family::kRoberta:
      read_roberta(t, a);
      break;
    case Family::kVit:
      read_vit(t, a);
      break;
    case Family::kConvnext:
      read_convnext(t, a);
      break;
    case Family::kMamba:
      read_mamba(t, a);
      break;
  }
  // Every family's init draws from a normal of this std (MambaConfig's default is 0.1).
  a.initializer_range = t.get_double_or("initializer_range", family == Family::kMamba ? 0.1 : 0.02);
  t.get_string_or("source", "");
  t.check_all_used();
  return a;
}

ScheduleKind parse_schedule(const TomlFields& t) {
  const std::string s = t.get_string("schedule");
  if (s == "cosine") return ScheduleKind::kCosine;
  if (s == "linear") return ScheduleKind::kLinear;
  if (s == "constant") return ScheduleKind::kConstant;
  t.fail("schedule", fmt::format("'{}' is not one of cosine, linear or constant", s));
}

OptimizerKind parse_optimizer(const TomlFields& t) {
  const std::string s = t.get_string("optimizer");
  if (s == "adam") return OptimizerKind::kAdam;
  if (s == "adamw") return OptimizerKind::kAdamW;
  t.fail("optimizer", fmt::format("'{}' is not one of adam or adamw", s));
}

RecipeSpec read_recipe(const TomlFields& t) {
  RecipeSpec r;
  r.global_batch = t.get_int("global_batch");
  r.train_steps = t.get_int("train_steps");
  const std::string precision = t.get_string("precision");
  try {
    r.precision = parse_precision(precision);
  } catch (const InputError& e) {
    t.fail("precision", e.what());
  }
  r.optimizer = parse_optimizer(t);
  r.lr = t.get_double("lr");
  r.beta1 = t.get_double_or("beta1", 0.9);
  r.beta2 = t.get_double_or("beta2", 0.999);
  r.eps = t.get_double_or("eps", 1e-8);
  r.weight_decay = t.get_double_or("weight_decay", 0.0);
  r.schedule = parse_schedule(t);
  r.warmup_steps = t.get_int_or("warmup_steps", 0);
  r.min_lr = t.get_double_or("min_lr", 0.0);
  r.clip_grad_norm = t.get_double_or("clip_grad_norm", 0.0);
  r.dropout = t.get_double_or("dropout", 0.0);
  r.mlm_probability = t.get_double_or("mlm_probability", 0.0);
  t.get_string_or("source", "");
  t.check_all_used();
  return r;
}

std::optional<ReportedRun> read_reported(const TomlFields& root) {
  auto t = root.table_or_none("reported");
  if (!t) return std::nullopt;
  ReportedRun run;
  run.gpus = t->get_int("gpus");
  run.days = t->get_double("days");
  run.gpu = t->get_string_or("gpu", "");
  run.accelerator = t->get_string_or("accelerator", "");
  run.source = t->get_string("source");
  t->check_all_used();
  return run;
}

}  // namespace

ModelSpec load_model_file(const std::string& path) {
  TomlFields root = TomlFields::parse_file(path);
  ModelSpec m;
  m.source_path = path;
  m.name = root.get_string("name");
  const std::string family = root.get_string("family");
  try {
    m.family = parse_family(family);
  } catch (const InputError& e) {
    root.fail("family", e.what());
  }
  m.hf_name = root.get_string_or("hf_name", "");
  m.arch = read_arch(root.table("arch"), m.family);
  m.recipe = read_recipe(root.table("recipe"));
  m.reported = read_reported(root);
  root.check_all_used();
  validate_model(m);  // first: the sizes below are then bounded, so their product is exact
  if (m.family == Family::kVit) {
    const int64_t side = m.arch.image_size / m.arch.patch_size;
    const int64_t derived = side * side + 1;
    if (m.arch.seq_len != 0 && m.arch.seq_len != derived) {
      throw InputError(fmt::format("{} [arch]: seq_len: {} but (image_size/patch_size)^2 + 1 = {}",
                                   path,
                                   m.arch.seq_len,
                                   derived));
    }
    m.arch.seq_len = derived;
  }
  return m;
}

}  // namespace gpudays
