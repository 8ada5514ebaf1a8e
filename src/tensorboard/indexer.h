// Indexes a job's TensorBoard log directory (AIP_TENSORBOARD_LOG_DIR) into a
// tensorboard: one experiment per job (or per tuning job), one run per directory
// holding event files, one time series per scalar tag. Each pass reads only what was
// appended since the last (offsets kept in the store), so it runs every second while
// the job runs and once more when it ends.
//
// The directory is in a bucket a replica writes: every name in it is untrusted. The
// walk opens each component with O_NOFOLLOW from the bucket root, never follows a
// link, reads only regular files whose names hold "tfevents", and stops at depth,
// file and byte budgets, so no file a replica makes can point the daemon elsewhere,
// block it (a FIFO) or make it read without end.
//
// Thread-compatible: one pass at a time per target (IndexingLoop runs them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "tensorboard/store.h"

namespace ty::tensorboard {

struct IndexTarget {
  ResourcePath experiment;  // The tensorboard and the experiment's id.
  std::string experiment_display_name;
  std::string bucket_root;  // The daemon's bucket directory (trusted).
  std::string log_dir;      // Below it: "BUCKET/path/logs" (untrusted components).
  // Run ids start with it ("3" for trial 3: runs "3", "3-train"); "" for a job, whose
  // files directly in the log directory form the run "default".
  std::string run_prefix;

  // What identifies the target between passes.
  std::string key() const { return experiment.name() + "|" + log_dir + "|" + run_prefix; }
};

struct IndexBudget {
  int max_depth = 6;
  size_t max_files = 1000;
  size_t max_dirs = 256;                  // Directories held open during a pass.
  uint64_t max_bytes_per_file = 8 << 20;  // Per pass; the rest waits for the next.
  uint64_t max_bytes = 64 << 20;          // Per pass, all files together.
};

struct IndexStats {
  size_t files = 0;
  uint64_t bytes = 0;    // Read this pass.
  uint64_t records = 0;  // Whole records read.
  uint64_t points = 0;   // Scalars stored.
  uint64_t bad_records = 0;
  size_t corrupt_files = 0;
};

// A run's id for a directory of event files, relative to the log directory: lower-case
// letters, digits and '-' (Vertex's rule for run ids), after `prefix`.
std::string RunIdFor(const std::string& prefix, const std::string& relative_dir);

// One pass. A log directory that does not exist yet is no error (the trainer has not
// written). NotFound when the tensorboard is gone; Internal on store errors.
Result<IndexStats> IndexOnce(Store* store, const IndexTarget& target,
                             const IndexBudget& budget = {});

}  // namespace ty::tensorboard
