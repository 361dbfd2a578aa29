// jobs.jsonl: one submitted job per line, appended with O_APPEND (one write per line).
#include "slurm/jobs_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/input_files.h"
#include "common/json_errors.h"
#include "common/json_fields.h"
#include "common/json_text.h"

namespace gpudays {
namespace {

nlohmann::json to_json(const SubmittedJob& j) {
  return {{"job_id", j.job_id},
          {"kind", j.kind},
          {"name", j.name},
          {"submitted_at", j.submitted_at},
          {"script", j.script},
          {"log", j.log},
          {"db", j.db},
          {"run_dir", j.run_dir},
          {"model", j.model},
          {"gpu", j.gpu},
          {"nodes", j.nodes},
          {"tasks_per_node", j.tasks_per_node},
          {"partition", j.partition}};
}

SubmittedJob from_json(const nlohmann::json& o) {
  SubmittedJob j;
  j.job_id = o.at("job_id").get<std::string>();
  j.kind = o.at("kind").get<std::string>();
  j.name = o.at("name").get<std::string>();
  j.submitted_at = o.at("submitted_at").get<std::string>();
  j.script = o.at("script").get<std::string>();
  j.log = o.at("log").get<std::string>();
  j.db = o.at("db").get<std::string>();
  j.run_dir = o.value("run_dir", "");  // absent in the records of earlier versions
  j.model = o.at("model").get<std::string>();
  j.gpu = o.at("gpu").get<std::string>();
  j.nodes = json_int64_value(o.at("nodes"), "nodes");
  j.tasks_per_node = json_int64_value(o.at("tasks_per_node"), "tasks_per_node");
  j.partition = o.at("partition").get<std::string>();
  return j;
}

}  // namespace

std::string jobs_file_path(const std::string& slurm_dir) {
  return (std::filesystem::path(slurm_dir) / "jobs.jsonl").string();
}

void append_submitted_job(const std::string& path, const SubmittedJob& job) {
  const std::string line = json_text(to_json(job)) + "\n";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0)
    throw EnvironmentError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  const ssize_t written = write(fd, line.data(), line.size());
  close(fd);
  if (written != static_cast<ssize_t>(line.size())) {
    throw EnvironmentError(fmt::format("cannot write {}", path));
  }
}

namespace {

// The Slurm directory holding `path` is a directory (a missing one: nothing submitted yet).
void check_slurm_dir(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    throw InputError(fmt::format("--slurm-dir {} is not a directory", dir.string()));
  }
}

}  // namespace

std::vector<SubmittedJob> read_submitted_jobs(const std::string& path) {
  check_slurm_dir(path);
  std::error_code is_dir;
  if (std::filesystem::is_directory(path, is_dir)) {
    throw InputError(fmt::format("{} is a directory, not the jobs file", path));
  }
  check_input_file(path, std::uintmax_t{1} << 30, "jobs files");
  std::vector<SubmittedJob> jobs;
  errno = 0;
  std::ifstream in(path);
  std::error_code ec;
  if (!in && std::filesystem::exists(path, ec)) {
    throw InputError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      jobs.push_back(from_json(nlohmann::json::parse(line)));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}:{}: not a submitted job: the line {}",
                                   path,
                                   number,
                                   json_problem(e, /*one_line=*/true)));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}:{}: not a submitted job ({})", path, number, e.what()));
    }
  }
  return jobs;
}

}  // namespace gpudays
