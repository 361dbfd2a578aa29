// Fuzz target: the run file (trainer/run_file.h), as `gpudays train --config` reads it: parse it,
// split its global batch over a few rank counts, apply its schedule overrides to a recipe. A bug is
// any escape other than InputError, any sanitizer report (UBSan aborts on signed overflow), an
// accepted split whose micro-batch x accumulation x ranks is not the global batch, or accepted
// overrides that leave no room for the warm-up or put min_lr above lr.
#include "fuzz_util.h"
#include "trainer/run_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudays;
  const std::string path = fuzz::write_input(data, size, "run.toml");
  RunFile run;
  if (!fuzz::accepts([&] { run = read_run_file(path); })) return 0;
  for (const int64_t world : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{1} << 40}) {
    fuzz::accepts([&] {
      const Configuration c = configuration_on(run, world);
      int64_t per_rank = 0;
      if (c.micro_batch_size < 1 || c.grad_acc_steps < 1 ||
          __builtin_mul_overflow(c.micro_batch_size, c.grad_acc_steps, &per_rank) ||
          run.global_batch % world != 0 || per_rank != run.global_batch / world) {
        fuzz::fail("an accepted split is not micro-batch x accumulation x ranks = global batch");
      }
    });
  }
  RecipeSpec recipe;
  recipe.train_steps = 1000;
  recipe.warmup_steps = 10;
  recipe.lr = 1e-3;
  recipe.min_lr = 1e-4;
  fuzz::accepts([&] {
    const RecipeSpec r = apply_overrides(recipe, run.schedule, path);
    if (r.warmup_steps >= r.train_steps || r.min_lr > r.lr) {
      fuzz::fail("accepted overrides leave no warm-up room or put min_lr above lr");
    }
  });
  return 0;
}
