// The data directory is the daemon's own: jobs' records hold their environment
// (secrets included), logs hold their output, storage/ who owns which bucket and the
// upload sessions. No other local user may read any of it.
#pragma once

#include <string>

#include "common/status.h"

namespace ty::daemon {

// Makes `data_dir` 0700 and the daemon's files in it 0600: the files at its top
// (trainyard.db and its WAL, the instance id, the replica secret, ...), the job logs
// and storage/'s owners and session files. Buckets, trials and sandboxes are left as
// they are: replicas read and write them through their own uids. What was wider is
// narrowed and said once in the log, with how many files. Internal when the directory
// itself cannot be changed.
Status SecureDataDir(const std::string& data_dir);

}  // namespace ty::daemon
