// Measures the communicator of this launch on CPU buffers: the median time of all-reduce,
// reduce-scatter and all-gather (fp32) at the engine's bucket sizes, from a 4-byte flag to a 32 MiB
// unit. A measurement, not a test. Usage: mpirun -np N gpudays_collectives_bench [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "distributed/communicator.h"
#include "distributed/world.h"

namespace gpudays {
namespace {

double median_s(Communicator& comm, int repetitions, const std::function<void()>& body) {
  body();  // warm-up: connections, first-touch of the buffers
  std::vector<double> times_s;
  for (int i = 0; i < repetitions; ++i) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    body();
    times_s.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times_s.begin(), times_s.end());
  return times_s[times_s.size() / 2];
}

int run(int repetitions) {
  const std::unique_ptr<Communicator> comm = make_communicator(RankDevice::kCpu, 0);
  const size_t ranks = static_cast<size_t>(comm->size());
  if (comm->rank() == 0) {
    std::printf("engine %s, %zu ranks, median of %d\n", comm->engine().c_str(), ranks, repetitions);
    std::printf(
        "%12s %14s %18s %14s\n", "bytes", "all_reduce_us", "reduce_scatter_us", "all_gather_us");
  }
  for (size_t bytes :
       {size_t{4}, size_t{4} << 10, size_t{256} << 10, size_t{4} << 20, size_t{32} << 20}) {
    const size_t count = std::max<size_t>(ranks, bytes / 4) / ranks * ranks;
    std::vector<float> full(count, 1.0f), part(count / ranks, 1.0f);
    const double reduce_s = median_s(*comm, repetitions, [&] {
      comm->all_reduce(full.data(), count, DType::kFloat32, ReduceOp::kSum);
    });
    const double scatter_s = median_s(*comm, repetitions, [&] {
      comm->reduce_scatter(full.data(), part.data(), part.size(), DType::kFloat32, ReduceOp::kSum);
    });
    const double gather_s = median_s(*comm, repetitions, [&] {
      comm->all_gather(part.data(), full.data(), part.size(), DType::kFloat32);
    });
    if (comm->rank() == 0) {
      std::printf("%12zu %14.1f %18.1f %14.1f\n",
                  count * 4,
                  reduce_s * 1e6,
                  scatter_s * 1e6,
                  gather_s * 1e6);
    }
  }
  return 0;
}

}  // namespace
}  // namespace gpudays

int main(int argc, char** argv) {
  return gpudays::run(argc > 1 ? std::atoi(argv[1]) : 20);
}
