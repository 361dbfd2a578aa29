// The files of a checkpoint directory, torch-free: OUT/checkpoints/step-N/ holds the files its
// writers put in a staging directory and a manifest.json (the step, the run state, each file's
// checksum). A checkpoint is committed atomically (each file fsynced, the manifest written last,
// the staging directory renamed into place, then the parent directory fsynced); one whose files
// are missing, truncated or corrupted is detected and skipped for the one before it. What goes
// into the files is trainer/train_state.h's.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "trainer/run_state.h"

namespace gpudays {

// FNV-1a (64 bit) of a file's bytes, as 16 hex digits. Throws IoError when it cannot be read.
std::string file_checksum(const std::string& path);

// Flushes a file or a directory to disk (fsync). Throws IoError.
void fsync_path(const std::string& path);

// The steps of the committed checkpoints (step-N directories, N a count of 64 bits written as
// checkpoint_dir writes it), newest first; their contents unchecked (latest_checkpoint checks
// them). Other entries named step-* (step-abc, step--3, step-99999999999999999999, step-007) are
// not checkpoints: their names go to `junk` when given.
std::vector<int64_t> committed_steps(const std::string& checkpoints_dir,
                                     std::vector<std::string>* junk = nullptr);

std::string checkpoint_dir(const std::string& checkpoints_dir, int64_t step);  // .../step-N
std::string staging_checkpoint_dir(const std::string& checkpoints_dir, int64_t step);

// Creates (empty) the staging directory of step N (removing a stale one).
void begin_checkpoint(const std::string& checkpoints_dir, int64_t step);
// Checksums and fsyncs every file of the staging directory, writes manifest.json (`state` under
// "state", plus "step" and "files"), and renames the directory to step-N.
void commit_checkpoint(const std::string& checkpoints_dir, int64_t step, const RunState& state);

struct FoundCheckpoint {
  std::string dir;
  int64_t step = 0;
  RunState state;
};
// The newest checkpoint whose manifest and files check out; each one skipped, and each entry
// named step-* that is not a checkpoint, is reported on `messages` with its reason. None: nullopt.
std::optional<FoundCheckpoint> latest_checkpoint(const std::string& checkpoints_dir,
                                                 std::ostream& messages);
// Checks one checkpoint directory: its manifest (the step, its state field by field, each file
// named plainly) and each file's checksum; throws InputError naming the problem. A directory
// named step-N must hold the manifest of step N.
FoundCheckpoint read_checkpoint(const std::string& dir);

// Test-only hook (docs/train.md): when the environment variable GPUDAYS_TEST_STALL_CHECKPOINT is
// N, the writer of checkpoint step-N stops half-way (its weights in the staging directory, the
// optimizer files and the manifest not yet), prints "gpudays: test hook: stalled writing
// checkpoint step-N" on standard error and sleeps, so that a test's SIGKILL lands mid-write.
void test_hook_stall_in_checkpoint(int64_t step);

// Removes all but the newest `keep` checkpoints, and stale staging directories.
void prune_checkpoints(const std::string& checkpoints_dir, int64_t keep);

}  // namespace gpudays
