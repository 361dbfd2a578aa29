// The sbatch script of a SlurmJob (its srun line from distributed/launcher.h), and Slurm's time
// format.
#include "slurm/slurm_job.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "common/build_info.h"
#include "common/error.h"
#include "distributed/launcher.h"

namespace gpudays {
namespace {

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

// The options render_sbatch_script writes, and where a user sets each.
struct OwnOption {
  const char* name;
  const char* set_by;
};
constexpr OwnOption kOwnOptions[] = {
    {"job-name", "gpudays"},
    {"partition", "--partition (a cluster file's slurm_partition)"},
    {"account", "--account or the cluster file's account"},
    {"qos", "--qos or the cluster file's qos"},
    {"reservation", "--reservation or the partition's reservation"},
    {"constraint", "--constraint or the partition's constraint"},
    {"nodelist", "--nodelist or the partition's nodelist"},
    {"nodes", "--nodes"},
    {"ntasks-per-node", "--gpus-per-node"},
    {"cpus-per-task", "--cpus-per-task"},
    {"gres", "the partition's gpus_per_node and [launcher] gres_name"},
    {"mem", "--mem-per-node-gib"},
    {"time", "--time"},
    {"signal", "train's --term-before-limit"},
    {"output", "--slurm-dir"},
};

bool has_control_character(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    return std::iscntrl(static_cast<unsigned char>(c)) != 0;
  });
}

// The text with its control characters written out (\n, \t, \xNN), for a one-line message.
std::string escape_control(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (std::iscntrl(static_cast<unsigned char>(c)) != 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

void check_job(const SlurmJob& job) {
  if (job.command.empty()) throw InputError("a Slurm job needs a command");
  const std::pair<const char*, const std::string*> values[] = {{"partition", &job.partition},
                                                               {"account", &job.account},
                                                               {"qos", &job.qos},
                                                               {"reservation", &job.reservation},
                                                               {"constraint", &job.constraint},
                                                               {"nodelist", &job.nodelist}};
  for (const auto& [option, value] : values) {
    if (value->empty()) continue;
    if (const std::string problem = sbatch_value_problem(*value); !problem.empty()) {
      throw InputError(fmt::format("--{}: {}", option, problem));
    }
  }
  for (const std::string& line : job.sbatch_lines) {
    if (const std::string problem = sbatch_line_problem(line); !problem.empty()) {
      throw InputError(fmt::format("#SBATCH line: {}", problem));
    }
  }
  for (const auto& [name, value] : job.environment_defaults) {
    if (value.empty() || shell_quote(value) != value) {
      throw InputError(fmt::format("default {}={}: not a plain word", name, value));
    }
  }
  if (job.nodes < 1 || job.tasks_per_node < 1 || job.cpus_per_task < 1) {
    throw InputError(fmt::format("a Slurm job of {} nodes x {} tasks x {} CPUs: each must be >= 1",
                                 job.nodes,
                                 job.tasks_per_node,
                                 job.cpus_per_task));
  }
}

int64_t field(const std::string& text, const std::string& whole) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 9) {
    throw InputError(fmt::format(
        "time limit '{}' is not a Slurm time (M, H:M:S, D-H, D-H:M or D-H:M:S)", whole));
  }
  return std::stoll(text);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

}  // namespace

std::string sbatch_value_problem(const std::string& value) {
  if (value.empty()) return "empty";
  if (has_control_character(value) || value.find(' ') != std::string::npos) {
    return fmt::format("'{}' has a space or a control character (newline, tab) in it",
                       escape_control(value));
  }
  return "";
}

std::string sbatch_line_problem(const std::string& line) {
  if (has_control_character(line)) {
    return fmt::format(
        "'{}' has a newline or other control character in it; give one option per line",
        escape_control(line));
  }
  const size_t name_end = line.find_first_of("= ", 2);
  const std::string name = line.substr(2, name_end == std::string::npos ? name_end : name_end - 2);
  const bool long_option =
      line.rfind("--", 0) == 0 && !name.empty() &&
      std::islower(static_cast<unsigned char>(name[0])) &&
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
  if (!long_option) {
    return fmt::format(
        "'{}' is not an sbatch long option such as \"--exclusive\" or "
        "\"--mail-type=END\" (written after \"#SBATCH \")",
        line);
  }
  for (const OwnOption& own : kOwnOptions) {
    if (name == own.name) {
      return fmt::format(
          "'{}': gpudays writes --{} itself; set it with {}", line, name, own.set_by);
    }
  }
  return "";
}

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789_-+=./:,@%") == std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

// Where the ranks of each step meet (c10d's TCP store, distributed/rendezvous.h): the first node by
// the address Slurm reaches it at (its NodeAddr, the node name unless slurm.conf says otherwise),
// so that node names that are not host names work too.
std::string store_address_lines() {
  return "# Where the ranks meet: the first node's address as Slurm knows it "
         "(distributed/rendezvous.h).\n"
         "if [ -z \"${MASTER_ADDR:-}\" ]; then\n"
         "  first_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
         "  MASTER_ADDR=$(scontrol show node \"$first_node\" | sed -n 's/.*NodeAddr=\\([^ "
         "]*\\).*/\\1/p')\n"
         "  export MASTER_ADDR=${MASTER_ADDR:-$first_node}\n"
         "  export MASTER_PORT=${MASTER_PORT:-$((20000 + SLURM_JOB_ID % 20000))}\n"
         "fi\n";
}

}  // namespace

std::string render_sbatch_script(const SlurmJob& job) {
  check_job(job);
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# Written by gpudays {} ({}).\n", kVersion, git_commit());
  if (!job.description.empty()) s += fmt::format("# {}\n", job.description);
  s += "# Edit it if your cluster needs more; submit it with: sbatch --parsable THIS_FILE\n";
  auto line = [&s](const std::string& option) { s += "#SBATCH " + option + "\n"; };
  line("--job-name=" + shell_quote(job.name));
  if (!job.partition.empty()) line("--partition=" + shell_quote(job.partition));
  if (!job.account.empty()) line("--account=" + shell_quote(job.account));
  if (!job.qos.empty()) line("--qos=" + shell_quote(job.qos));
  if (!job.reservation.empty()) line("--reservation=" + shell_quote(job.reservation));
  line(fmt::format("--nodes={}", job.nodes));
  if (!job.nodelist.empty()) line("--nodelist=" + shell_quote(job.nodelist));
  line(fmt::format("--ntasks-per-node={}", job.tasks_per_node));
  line(fmt::format("--cpus-per-task={}", job.cpus_per_task));
  if (job.gpus_per_node > 0) line(fmt::format("--gres={}:{}", job.gres_name, job.gpus_per_node));
  if (!job.constraint.empty()) line("--constraint=" + shell_quote(job.constraint));
  if (job.memory_per_node_bytes > 0) {
    line(fmt::format(
        "--mem={}M",
        static_cast<int64_t>(std::ceil(job.memory_per_node_bytes / (1024.0 * 1024.0)))));
  }
  if (job.time_limit_s > 0) line("--time=" + format_slurm_time(job.time_limit_s));
  if (job.term_before_limit_s > 0) line(fmt::format("--signal=TERM@{}", job.term_before_limit_s));
  if (!job.log_dir.empty()) line("--output=" + shell_quote(job.log_dir + "/%x-%j.out"));
  for (const std::string& extra : job.sbatch_lines) line(extra);
  s += "\nset -euo pipefail\n";
  for (const std::string& setup : job.setup) s += setup + "\n";
  for (const auto& [name, value] : job.environment) {
    s += fmt::format("export {}={}\n", name, shell_quote(value));
  }
  for (const auto& [name, value] : job.environment_defaults) {
    s += fmt::format("export {0}=\"${{{0}:-{1}}}\"  # unless already set\n", name, value);
  }
  s += store_address_lines();
  s += "echo \"gpudays job $SLURM_JOB_ID on $SLURM_JOB_NODELIST started $(date -u +%FT%TZ)\"\n";
  if (job.launch == JobLaunch::kEveryTask) {
    LaunchOptions step;
    step.ranks = job.nodes * job.tasks_per_node;
    step.launcher = Launcher::kSrun;
    step.srun = {job.nodes, job.srun_mpi, job.srun_args};
    step.program = job.command;
    s += joined(launch_argv(step));
  } else {
    s += "# The command runs once here and starts each step's ranks with srun itself.\n";
    s += joined(job.command);
  }
  return s + "\n";
}

double parse_slurm_time_s(const std::string& text) {
  if (text == "infinite" || text == "UNLIMITED" || text == "INFINITE") return 0.0;
  int64_t days = 0;
  std::string rest = text;
  const size_t dash = text.find('-');
  if (dash != std::string::npos) {
    days = field(text.substr(0, dash), text);
    rest = text.substr(dash + 1);
  }
  const std::vector<std::string> parts = split(rest, ':');
  if (parts.empty() || parts.size() > 3) field("", text);
  int64_t seconds = 0;
  if (dash != std::string::npos) {  // D-H, D-H:M, D-H:M:S
    const int64_t scale[] = {3600, 60, 1};
    for (size_t i = 0; i < parts.size(); ++i) seconds += field(parts[i], text) * scale[i];
  } else if (parts.size() == 1) {  // M
    seconds = field(parts[0], text) * 60;
  } else if (parts.size() == 2) {  // M:S
    seconds = field(parts[0], text) * 60 + field(parts[1], text);
  } else {  // H:M:S
    seconds = field(parts[0], text) * 3600 + field(parts[1], text) * 60 + field(parts[2], text);
  }
  const double total_s = static_cast<double>(days * 86400 + seconds);
  if (total_s <= 0) throw InputError(fmt::format("time limit '{}' is not above zero", text));
  return total_s;
}

std::string format_slurm_time(double seconds) {
  const int64_t minutes = static_cast<int64_t>(std::ceil(seconds / 60.0 - 1e-9));
  return fmt::format("{}-{:02}:{:02}:00", minutes / 1440, minutes % 1440 / 60, minutes % 60);
}

}  // namespace gpudays
