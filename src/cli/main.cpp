// gpudays command line: parses the request, runs one subcommand, turns every error into a
// one-line message (exit 2 for bad input, 1 for anything else). No stack traces.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "common/build_info.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "results/results_db.h"

namespace gpudays {

// CLI11 reports an unknown command as "a subcommand is required"; name it and the choices, at
// the top level and in a command of commands (`data`).
void check_subcommand(const CLI::App& app, int argc, char** argv, int from = 1) {
  for (int i = from; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') {
      if (arg == "--config-dir") ++i;  // skip its value (it may follow a command: fallthrough)
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == arg) {
        if (sub->get_require_subcommand_min() > 0) check_subcommand(*sub, argc, argv, i + 1);
        return;
      }
      if (!sub->get_group().empty()) names.push_back(sub->get_name());  // not a hidden one
    }
    const std::string what = from == 1 ? "command" : app.get_name() + " command";
    throw InputError(fmt::format("unknown {} '{}'; valid: {}", what, arg, join_choices(names)));
  }
}

// Output that could not be written is a failure, never a success: a full disk or a closed stdout
// must not leave `validate --fit > calibration.toml` truncated behind an exit 0.
int checked_exit(int code) {
  errno = 0;
  std::cout.flush();
  const bool out_failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  const int out_errno = errno;
  if (out_failed) {
    std::cerr << "gpudays: error: cannot write standard output: "
              << (out_errno != 0 ? std::strerror(out_errno) : "write failed") << "\n";
  }
  std::cerr.flush();
  const bool err_failed = !std::cerr.good() || std::ferror(stderr);
  return (out_failed || err_failed) && code == 0 ? 1 : code;
}

// The length of the well-formed UTF-8 sequence that starts at s[i] (Unicode 15, table 3-7: no
// overlong forms, surrogates or code points past U+10FFFF), or 0.
size_t utf8_length_at(const std::string& s, size_t i) {
  const auto at = [&s](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
  const unsigned char lead = at(i);
  if (lead < 0x80) return 1;
  const auto in = [](unsigned char b, unsigned char lo, unsigned char hi) {
    return b >= lo && b <= hi;
  };
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (in(lead, 0xc2, 0xdf)) length = 2;
  if (in(lead, 0xe0, 0xef)) length = 3;
  if (in(lead, 0xf0, 0xf4)) length = 4;
  if (lead == 0xe0) lo = 0xa0;
  if (lead == 0xed) hi = 0x9f;
  if (lead == 0xf0) lo = 0x90;
  if (lead == 0xf4) hi = 0x8f;
  if (length == 0 || !in(at(i + 1), lo, hi)) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (!in(at(i + k), 0x80, 0xbf)) return 0;
  }
  return length;
}

// A message as one line of text: a control character (a newline in a typed name) or a byte that
// is not UTF-8 (a name typed in Latin-1) written as an escape.
std::string printable_line(const std::string& message) {
  std::string line;
  for (size_t i = 0; i < message.size();) {
    const auto byte = static_cast<unsigned char>(message[i]);
    const size_t length = utf8_length_at(message, i);
    if (byte == '\n') {
      line += "\\n";
    } else if (length == 0 || byte < 0x20 || byte == 0x7f) {
      line += fmt::format("\\x{:02x}", byte);
    } else {
      line.append(message, i, length);
      i += length;
      continue;
    }
    ++i;
  }
  return line;
}

#ifndef GPUDAYS_WITH_TORCH
// Without LibTorch there is no trainer: `gpudays trial` (which bench, sweep and the host-CPU probe
// run as a child) answers so in one line instead of "unknown command 'trial'". Hidden, and with no
// --help of its own, so that `trial --help` fails as in a build without the command.
void add_no_trainer_trial_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("trial", "");
  cmd->group("");
  cmd->set_help_flag();
  cmd->fallthrough(false);
  cmd->allow_extras();
  cmd->callback([] {
    throw InputError(needs_trainer("`gpudays trial` (benchmark trials and the host-CPU probe)"));
  });
}
#endif

int run(int argc, char** argv);

}  // namespace gpudays

int main(int argc, char** argv) {
  return gpudays::checked_exit(gpudays::run(argc, argv));
}

int gpudays::run(int argc, char** argv) {
  using namespace gpudays;
  CLI::App app{
      "gpudays: can you pre-train model M on N GPUs of type G, with which settings, in how many "
      "days, at what cost?"};
  app.name("gpudays");
  GlobalOptions global;
#ifndef GPUDAYS_WITH_TORCH
  global.has_trainer = false;
#endif
  app.set_version_flag("--version", [&global] {
    const ConfigDirChoice catalog = choose_config_dir({global.config_dir});
    return fmt::format(
        "gpudays {} ({}); catalog {} ({})", kVersion, git_commit(), catalog.path, catalog.origin);
  });
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--config-dir",
                 global.config_dir,
                 "Catalog directory with models/ and gpus/ (default: $GPUDAYS_CONFIG_DIR, else "
                 "share/gpudays beside an installed binary, else the source tree's configs/)")
      ->check(CLI::Validator(
          [](const std::string& dir) { return dir.empty() ? "the path is empty" : std::string(); },
          "DIR"));
  add_catalog_commands(app, global);
  add_plan_command(app, global);
  add_results_commands(app, global);
  add_bench_command(app, global);
  add_sweep_command(app, global);
#ifdef GPUDAYS_WITH_TORCH
  add_trial_command(app, global);
  add_train_command(app, global);
  add_export_hf_command(app, global);
#else
  add_no_trainer_trial_command(app);
#endif
  add_cost_command(app, global);
  add_report_command(app, global);
  app.footer(
      "Exit codes: 0 success; 1 a runtime failure (a file that cannot be written, a missing tool "
      "such as gnuplot or mpirun, a benchmark in which nothing ran); 2 a usage error (a bad flag "
      "or value, an unknown model or GPU, a malformed input file, a results database that cannot "
      "be "
      "written, refused before any trial); 128+N stopped by signal N.\n"
      "Machine-readable output: --format json|jsonl|csv|markdown on the commands that print rows "
      "(plan, cost, results, best, models, gpus, paper, fit); JSON documents carry schema_version "
      "and build.");
  add_validate_command(app, global);
  add_paper_command(app, global);
  add_fit_command(app, global);
  add_jobs_command(app, global);
  add_data_commands(app, global);
  check_number_options(app);
  check_name_options(app);
  if (argc == 1) {
    std::cout << app.help();
    return 0;
  }
  try {
    check_subcommand(app, argc, argv);
    check_list_arguments(app, argc, argv);
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ArgumentMismatch& e) {
    const std::string repeated = repeated_option_problem(app);
    std::cerr << "gpudays: error: " << printable_line(repeated.empty() ? e.what() : repeated)
              << " (see --help)\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpudays: error: " << printable_line(e.what()) << " (see --help)\n";
    return 2;
  } catch (const ResultsFileError& e) {  // the library names the file's fault; here, the flag
    std::cerr << fmt::format("gpudays: error: {} ({})\n",
                             printable_line(e.what()),
                             e.kind() == ResultsFileError::Kind::kMissing
                                 ? "run `gpudays bench` first, or give --db"
                                 : "choose another file with --db");
    return 2;
  } catch (const InputError& e) {
    std::cerr << "gpudays: error: " << printable_line(e.what()) << "\n";
    return 2;
  } catch (const Interrupted& e) {
    // `train` checkpoints before it stops (its own line names the step); `data` leaves its outputs
    // as they were; the benchmark's commands stop the running trial and record nothing of it.
    // By name: a build without LibTorch has no `train` command, and CLI11 throws on an unknown one.
    const auto ran = [&app](std::string_view name) {
      for (const CLI::App* sub : app.get_subcommands()) {
        if (sub->get_name() == name) return true;
      }
      return false;
    };
    std::cerr << (ran("train")
                      ? fmt::format("gpudays: interrupted by signal {}; training stopped after its "
                                    "checkpoint; continue with --resume\n",
                                    e.signal())
                  : ran("data") || ran("report")
                      ? fmt::format("gpudays: interrupted by signal {}; nothing was written (any "
                                    "earlier outputs are as they were)\n",
                                    e.signal())
                      : fmt::format(
                            "gpudays: interrupted by signal {}; the running trial was stopped "
                            "and nothing of it was recorded\n",
                            e.signal()));
    return 128 + e.signal();
  } catch (const EnvironmentError& e) {
    std::cerr << "gpudays: error: " << printable_line(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "gpudays: internal error: " << printable_line(one_line(e)) << "\n";
    return 1;
  }
}
