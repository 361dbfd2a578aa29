// A stand-in for `gpudays trial` in sweep tests: reads the trial specification and answers with a
// deterministic result (time falls with the micro-batch, free-lunch is faster, checkpointing slower
// and leaner; out-of-memory above the memory limit), or crashes or hangs when the environment asks
// it to for a given sharding. With parts timing it reports parts that compose into the same step,
// and a whole-step check that agrees (or is 20% slower when FAKE_DISAGREE is set). Not a model of
// anything; it exercises the sweep's machinery.
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "sweep/trial_spec.h"

int main(int argc, char** argv) {
  using namespace gpudays;
  if (argc != 3 || std::string(argv[1]) != "--spec") return 64;
  std::ifstream in(argv[2]);
  const TrialSpec spec = trial_spec_from_json(nlohmann::json::parse(in));
  const std::string sharding = to_string(spec.config.methods.sharding);
  if (const char* crash = std::getenv("FAKE_CRASH_SHARDING"); crash && sharding == crash) {
    std::abort();
  }
  // As an uncaught c10::Error ends a process (a CUDA error in a destructor, NCCL's watchdog):
  // the exception's message, then c10's backtrace, then SIGABRT.
  if (const char* crash = std::getenv("FAKE_C10_CRASH_SHARDING"); crash && sharding == crash) {
    std::cerr << "terminate called after throwing an instance of 'c10::Error'\n"
              << "  what():  CUDA error: an illegal memory access was encountered\n"
              << "Exception raised from c10_cuda_check_implementation at "
                 "/pytorch/c10/cuda/CUDAException.cpp:44 (most recent call first):\n"
              << "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98\n"
              << "frame #1: <unknown function> + 0x1234 (0x7f in libc10_cuda.so)\n"
              << std::flush;
    std::abort();
  }
  if (const char* pid_file = std::getenv("FAKE_PID_FILE")) std::ofstream(pid_file) << getpid();
  if (const char* hang = std::getenv("FAKE_HANG_SHARDING"); hang && sharding == hang) sleep(3600);
  if (const char* killed = std::getenv("FAKE_KILL_SHARDING"); killed && sharding == killed) {
    raise(SIGKILL);  // as the OOM killer or a pre-emption would
  }
  if (const char* pause = std::getenv("FAKE_SLEEP_S")) usleep(std::atof(pause) * 1e6);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double memory = spec.config.micro_batch_size * gib *
                        (spec.config.methods.activation_checkpointing ? 0.5 : 1.0);
  TrialMeasurement r;
  r.device_name = "fake device";
  r.torch_version = "none";
  if (spec.memory_limit_bytes > 0 && memory > spec.memory_limit_bytes) {
    r.status = TrialStatus::kOutOfMemory;
    r.message = "fake out of memory";
  } else {
    r.status = TrialStatus::kOk;
    // Tens of seconds: pythia-70m's global batch on the sweep tests' 2 x RTX 3090 at a plausible
    // MFU (the results database refuses rows above 100%).
    const double step = 20.0 * (1.0 + 8.0 / spec.config.micro_batch_size) *
                        (spec.config.methods.free_lunch ? 0.7 : 1.0) *
                        (spec.config.methods.activation_checkpointing ? 1.3 : 1.0);
    r.steps_timed = spec.timed_steps;
    r.step_time_median_s = step;
    r.step_time_min_s = step * 0.99;
    r.step_time_max_s = step * 1.01;
    r.peak_memory_bytes = static_cast<int64_t>(memory);
    r.timing = spec.timing;
    if (spec.timing == StepTiming::kParts) {
      r.optimizer_time_s = 0.1 * step;
      r.last_micro_step_time_s = 0.9 * step / static_cast<double>(spec.config.grad_acc_steps);
      r.micro_step_time_s = spec.config.grad_acc_steps > 1 ? r.last_micro_step_time_s : 0.0;
    }
    if (spec.timing == StepTiming::kParts && spec.check_steps > 0) {
      r.check_step_time_s = std::getenv("FAKE_DISAGREE") ? 1.2 * step : step;
      r.timing_check = std::getenv("FAKE_DISAGREE") ? "disagrees" : "agrees";
    }
  }
  std::cout << "some log line\n" << to_json(r).dump() << "\n";
  return 0;
}
