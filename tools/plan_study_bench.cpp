// Measures how long the planner takes to plan the whole reference study: every catalog model x
// {RTX 3090, RTX A6000, A100, H100} x {1, 2, 4, 8} GPUs x every method combination and
// micro-batch. Prints the median and spread of several repetitions (a measurement, not a test).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "catalog/catalog.h"
#include "common/error.h"
#include "plan/planner.h"

int main(int argc, char** argv) {
  using namespace gpudays;
  const int repetitions = argc > 1 ? std::atoi(argv[1]) : 7;
  const Catalog catalog = Catalog::load({});
  std::vector<double> seconds;
  size_t rows = 0, requests = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    rows = requests = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const ModelSpec& model : catalog.models()) {
      for (const char* gpu : {"rtx-3090", "rtx-a6000", "a100", "h100"}) {
        for (int64_t count : {1, 2, 4, 8}) {
          const Cluster cluster{{1, count}, &catalog.gpu(gpu)};
          rows += plan(model, cluster, PlanOptions{}).rows.size();
          ++requests;
        }
      }
    }
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("planned %zu requests, %zu configurations\n", requests, rows);
  std::printf("whole study: median %.3f s, min %.3f s, max %.3f s over %d repetitions\n",
              seconds[seconds.size() / 2],
              seconds.front(),
              seconds.back(),
              repetitions);
  std::printf("per configuration: %.2f us (median)\n", seconds[seconds.size() / 2] / rows * 1e6);
  return 0;
}
