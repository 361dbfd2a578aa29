// Sweep: trial identity, child-process execution, recording, progress.
#include "sweep/sweep.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "catalog/model_loader.h"
#include "common/build_info.h"
#include "common/child_process.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_text.h"
#include "common/output_files.h"
#include "common/units.h"
#include "distributed/launcher.h"
#include "sweep/progress.h"
#include "sweep/trial_spec.h"
#include "sweep/trial_store.h"

namespace gpudays {
namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

std::string host_name() {
  char buffer[256] = {};
  gethostname(buffer, sizeof(buffer) - 1);
  return buffer;
}

// Signals another process sends (the OOM killer, a scheduler's pre-emption, kill), as opposed to
// those a failing program raises itself (SIGSEGV, SIGABRT, SIGFPE, SIGBUS).
bool killed_from_outside(int signal) {
  return signal == SIGKILL || signal == SIGTERM || signal == SIGINT || signal == SIGHUP;
}

constexpr const char* kSweepDirPrefix = "gpudays-sweep-";

// A sweep directory <prefix><pid>-XXXXXX whose process is gone (a sweep killed with SIGKILL) and
// that belongs to this user: left behind, never to be used again.
bool stale_sweep_dir(const std::filesystem::directory_entry& entry) {
  const std::string name = entry.path().filename().string();
  if (name.rfind(kSweepDirPrefix, 0) != 0) return false;
  char* end = nullptr;
  const long pid = std::strtol(name.c_str() + std::strlen(kSweepDirPrefix), &end, 10);
  struct stat info {};
  if (pid <= 0 || *end != '-' || ::lstat(entry.path().c_str(), &info) != 0) return false;
  if (!S_ISDIR(info.st_mode) || info.st_uid != ::geteuid()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// The sweep's own directory for its trials' specs and outputs, made once: <base>/gpudays-sweep-
// <pid>-XXXXXX under the work directory, else TMPDIR, else /tmp. It goes with everything in it
// when the sweep ends, also by an error or a SIGINT/SIGTERM (both unwind to here); one that a
// SIGKILL left behind is removed by the next sweep in the same place.
class SweepDirectory {
 public:
  explicit SweepDirectory(const std::string& work_dir) {
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string base =
        !work_dir.empty() ? work_dir : (tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp");
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
      if (stale_sweep_dir(entry)) std::filesystem::remove_all(entry.path(), ec);
    }
    std::string path =
        (std::filesystem::path(base) / fmt::format("{}{}-XXXXXX", kSweepDirPrefix, getpid()))
            .string();
    if (::mkdtemp(path.data()) == nullptr) {
      throw IoError(fmt::format("cannot make the sweep's directory for trial files in {}{}: {}",
                                base,
                                work_dir.empty() ? " (TMPDIR)" : "",
                                std::strerror(errno)));
    }
    path_ = path;
  }
  ~SweepDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  SweepDirectory(const SweepDirectory&) = delete;
  SweepDirectory& operator=(const SweepDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class Sweep {
 public:
  Sweep(const ModelSpec& model,
        const Cluster& cluster,
        const SweepOptions& options,
        ResultsDb& db,
        std::ostream& progress)
      : model_(model),
        cluster_(cluster),
        options_(options),
        db_(db),
        progress_(progress),
        dir_(options.work_dir),
        start_(std::chrono::steady_clock::now()) {}

  // The search's numbering and upper bound for the next trial.
  void on_trial(int trial, int trials_bound) {
    trial_ = trial;
    trials_bound_ = trials_bound;
  }

  TrialOutcome execute(const Configuration& request, const PlanRow& predicted) {
    TrialRecord record = identity(request);
    ++index_;
    progress_ << format_progress(
                     {trial_, trials_bound_, describe(request), seconds_since(start_), finished_s_})
              << std::flush;
    const auto done = reusable(db_, record, options_);
    if (done) {
      ++summary_.trials_reused;
      note_timing_check(request, *done);
      report(*done, "reused");
      return outcome_of(*done);
    }
    const auto started = std::chrono::steady_clock::now();
    fill_outcome(record, run_trial(spec_for(request)), predicted);
    finished_s_.push_back(seconds_since(started));
    note_timing_check(request, record);
    ++summary_.trials_run;
    if (!db_.insert(record)) {  // another run stored this configuration first
      ++summary_.trials_not_stored;
      if (auto stored = db_.find(record.key())) {
        report(record,
               "kept as a repeat: another run stored this configuration first; its "
               "measurement is used");
        return outcome_of(*stored);
      }
    }
    report(record, "");
    return outcome_of(record);
  }

  SweepSummary& summary() { return summary_; }

 private:
  TrialRecord identity(const Configuration& r) const {
    return trial_identity(model_digest_, model_, cluster_, options_, r);
  }

  static double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }

  // A family is a method set: its parts compose the same way whatever the micro-batch. Its first
  // parts-timed trial checks the composition; after a failed check it is timed in whole steps.
  void note_timing_check(const Configuration& r, const TrialRecord& t) {
    const std::string& check = t.measured.timing_check;
    if (!check.empty()) families_.emplace(describe(r.methods), check == "agrees");
  }

  TrialSpec spec_for(const Configuration& r) const {
    TrialSpec spec;
    spec.model = model_.name;
    spec.model_file = options_.model_file;
    spec.device = cluster_.gpu->kind == DeviceKind::kCpu ? "cpu" : "cuda";  // LibTorch's names
    spec.config = r;
    spec.warmup_steps = options_.warmup_steps;
    spec.timed_steps = options_.timed_steps;
    spec.memory_limit_bytes = options_.memory_limit_bytes;
    spec.timing =
        options_.strategy == SearchStrategy::kReference ? StepTiming::kReference : options_.timing;
    if (spec.timing == StepTiming::kParts) {
      const auto family = families_.find(describe(r.methods));
      if (family == families_.end()) spec.check_steps = options_.check_steps;
      if (family != families_.end() && !family->second) spec.timing = StepTiming::kWhole;
    }
    return spec;
  }

  // A spec or output file that cannot be written fails the sweep (IoError), never the trial.
  TrialMeasurement run_trial(const TrialSpec& spec) const {
    const std::string spec_path =
        (std::filesystem::path(dir_.path()) / fmt::format("trial.{}.json", index_)).string();
    write_file_atomically(spec_path, json_text(to_json(spec)));
    std::vector<std::string> argv = options_.trial_command;
    argv.insert(argv.end(), {"--spec", spec_path});
    const ChildResult child = run_child(argv, ChildOptions{options_.trial_timeout_s, dir_.path()});
    keep_stderr(spec, child);
    std::error_code ec;
    std::filesystem::remove(spec_path, ec);
    TrialMeasurement r = interpret(child);
    if (r.status != TrialStatus::kOk) r.timing = spec.timing;  // what it was meant to measure
    return r;
  }

  // The trial's whole stderr, when the options name a folder for it: SWEEP.trial-NNN.stderr (SWEEP
  // the sweep's own directory's unique name, so that another sweep into the folder replaces
  // nothing), headed by the configuration. A file that cannot be written costs a warning, not the
  // trial.
  void keep_stderr(const TrialSpec& spec, const ChildResult& child) const {
    if (options_.stderr_dir.empty()) return;
    const std::string sweep = std::filesystem::path(dir_.path()).filename().string();
    const std::filesystem::path path = std::filesystem::path(options_.stderr_dir) /
                                       fmt::format("{}.trial-{:03d}.stderr", sweep, index_);
    try {
      std::filesystem::create_directories(options_.stderr_dir);
      write_file_atomically(
          path.string(), fmt::format("# {} {}\n{}", model_.name, describe(spec.config), child.err));
    } catch (const std::exception& e) {
      progress_ << fmt::format("warning: trial stderr not kept: {}\n", one_line(e));
    }
  }

  static TrialMeasurement interpret(const ChildResult& child) {
    TrialMeasurement r;
    if (child.timed_out) {
      r.status = TrialStatus::kTimeout;
      r.message = fmt::format("no result after {:.0f} s; killed", child.wall_s);
      return r;
    }
    if (child.signaled) {
      r.status = killed_from_outside(child.signal) ? TrialStatus::kKilled : TrialStatus::kCrash;
      r.message = fmt::format("killed by signal {}: {}", child.signal, error_line(child.err));
      return r;
    }
    try {
      r = parse_trial_output(child.out);
      if (child.exit_code != 0 && r.status == TrialStatus::kOk) r.status = TrialStatus::kCrash;
    } catch (const InputError&) {
      // Exit code 2 is gpudays' "bad input": the trial refused the configuration before running.
      r.status = child.exit_code == 2 ? TrialStatus::kRejected : TrialStatus::kCrash;
      r.message = fmt::format("exit code {}: {}", child.exit_code, error_line(child.err));
    }
    return r;
  }

  // The measurement, provenance, extrapolated days, and utilisation from the planner's FLOPs and
  // peak.
  void fill_outcome(TrialRecord& t, const TrialMeasurement& r, const PlanRow& predicted) const {
    t.measured = r;
    t.gpudays_version = kVersion;
    t.git_commit = git_commit();
    t.hostname = host_name();
    t.created_at = utc_now();
    t.predicted_step_time_s = predicted.step_time_s;
    t.predicted_memory_bytes = static_cast<int64_t>(predicted.memory.least_bytes());
    if (!t.ok()) return;
    const double step = t.step_time_s();
    const StepFigures figures = step_figures(predicted.work, step);
    t.samples_per_s = figures.samples_per_s;
    t.tokens_per_s = figures.tokens_per_s;
    t.training_days = figures.training_days;
    t.gpu_days = figures.gpu_days;
    t.mfu = figures.mfu;
    t.hfu = figures.hfu;
    if (!cluster_.gpu->peaks_known()) {  // the host CPU's stand-in: utilisation unknown
      t.mfu = t.hfu = 0.0;
      return;
    }
    const double executed = predicted.executed_utilisation * predicted.step_time_s / step;
    const double ceiling = predicted.matmul_ceiling_fraction;
    if (executed > ceiling) {
      t.measured.status = TrialStatus::kRejected;
      t.measured.message = fmt::format(
          "MFU {:.1f}% (executed FLOPs at {:.1f}% of peak) exceeds the {} matmul "
          "ceiling {:.1f}%: a timing bug, not a result",
          100 * t.mfu,
          100 * executed,
          cluster_.gpu->name,
          100 * ceiling);
    }
  }

  // Completes the progress line with the trial's outcome.
  void report(const TrialRecord& record, const char* note) {
    const TrialMeasurement& t = record.measured;
    std::string what = t.status == TrialStatus::kOk
                           ? fmt::format("{:.3f} s/step ({}), {}",
                                         t.step_time_median_s,
                                         to_string(t.timing),
                                         format_gib(static_cast<double>(t.peak_memory_bytes)))
                           : fmt::format("{}: {}", to_string(t.status), t.message);
    if (t.timing_check == "agrees") {
      what += fmt::format(", whole step {:.3f} s agrees", t.check_step_time_s);
    }
    progress_ << what << (*note ? fmt::format(" ({})", note) : "") << "\n" << std::flush;
    if (t.status == TrialStatus::kRejected && t.message.rfind("MFU", 0) == 0) {
      progress_ << "REJECTED (timing bug): " << t.message << "\n";
    }
    if (t.timing_check == "disagrees") progress_ << "TIMING CHECK FAILED: " << t.message << "\n";
  }

  const ModelSpec& model_;
  const std::string model_digest_ = model_digest(model_);
  const Cluster& cluster_;
  const SweepOptions& options_;
  ResultsDb& db_;
  std::ostream& progress_;
  SweepDirectory dir_;
  std::chrono::steady_clock::time_point start_;
  SweepSummary summary_;
  int index_ = 0;
  int trial_ = 0;
  int trials_bound_ = 0;
  std::vector<double> finished_s_;        // wall time of each trial run now
  std::map<std::string, bool> families_;  // method set -> its composition check agreed
};

const PlanRow& predicted_row(const PlanResult& prediction, const Configuration& r) {
  for (const PlanRow& row : prediction.rows) {
    if (row.config == r) return row;
  }
  throw std::logic_error("trial outside the planned search space");
}

}  // namespace

SweepSummary run_sweep(const ModelSpec& model,
                       const Cluster& cluster,
                       const PlanOptions& plan_options,
                       const SweepOptions& options,
                       ResultsDb& db,
                       std::ostream& progress) {
  const PlanResult prediction = plan(model, cluster, plan_options);
  const InterruptScope interrupt_scope;  // Ctrl-C stops the running trial and records nothing of it
  db.store_model(model);                 // its trials are re-derived from it when read
  Sweep sweep(model, cluster, options, db, progress);
  SearchOptions search = search_options(cluster, options);
  search.on_trial = [&sweep](int trial, int bound) { sweep.on_trial(trial, bound); };
  auto execute = [&](const Configuration& r) {
    return sweep.execute(r, predicted_row(prediction, r));
  };
  SweepSummary summary = sweep.summary();
  summary.search = run_search(prediction, execute, search);
  summary.rule = measurement_rule(options.strategy);
  summary.trials_reused = sweep.summary().trials_reused;
  summary.trials_run = sweep.summary().trials_run;
  summary.trials_not_stored = sweep.summary().trials_not_stored;
  return summary;
}

}  // namespace gpudays
