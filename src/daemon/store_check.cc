#include "daemon/store_check.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ty::daemon {
namespace {

constexpr size_t kLostJobsNamed = 10;  // Named in the message; the rest counted.

uint64_t SizeOf(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size)
                                                              : 0;
}

std::string NotWritable(const std::string& data_dir) {
  struct statvfs fs {};
  if (statvfs(data_dir.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0) {
    return "the data directory " + data_dir + " is on a read-only filesystem";
  }
  if (access(data_dir.c_str(), W_OK) != 0 && errno != ENOENT) {
    return "the data directory " + data_dir + " cannot be written (" + std::strerror(errno) + ")";
  }
  return "";
}

std::string LostList(const std::vector<std::string>& lost) {
  std::string out;
  for (size_t i = 0; i < lost.size() && i < kLostJobsNamed; ++i) out += (i ? ", " : "") + lost[i];
  if (lost.size() > kLostJobsNamed)
    out += " and " + std::to_string(lost.size() - kLostJobsNamed) + " more";
  return out;
}

}  // namespace

Status JudgeStore(const StoreFindings& f, bool accept_loss) {
  if (!f.not_writable.empty()) {
    return FailedPrecondition(f.not_writable +
                              ": nothing could be recorded; make it writable (or give "
                              "--data-dir a writable one) and start again");
  }
  std::vector<std::string> found;
  if (f.orphan_wal_bytes > 0) {
    found.push_back("trainyard.db is empty but its write-ahead log holds " +
                    std::to_string(f.orphan_wal_bytes) +
                    " bytes of jobs (the database file was truncated or replaced)");
  }
  if (!f.damage.empty()) found.push_back("SQLite finds trainyard.db damaged: " + f.damage);
  if (!f.lost_jobs.empty()) {
    found.push_back(std::to_string(f.lost_jobs.size()) +
                    " jobs have logs but no record in the store (" + LostList(f.lost_jobs) + ")");
  }
  if (found.empty() || accept_loss) return Status::Ok();
  std::string message = "the job store cannot be trusted: ";
  for (size_t i = 0; i < found.size(); ++i) message += (i ? "; " : "") + found[i];
  return FailedPrecondition(message +
                            ". Restore a backup (`trainyard admin backup`; docs/operations.md: "
                            "Backup and restore) into the data directory, or start with "
                            "--accept-store-loss to go on without what is lost (its files are "
                            "kept aside, not deleted)");
}

StoreFindings CheckBeforeOpen(const std::string& data_dir, bool accept_loss) {
  StoreFindings f;
  f.not_writable = NotWritable(data_dir);
  const std::string db = data_dir + "/trainyard.db", wal = db + "-wal";
  const uint64_t wal_bytes = SizeOf(wal);
  // A database has at least its first page; without it SQLite ignores the WAL and
  // deletes it at the first checkpoint.
  if (wal_bytes > 0 && SizeOf(db) < 512) {
    f.orphan_wal_bytes = wal_bytes;
    if (accept_loss) {
      const std::string aside = wal + ".lost-" + std::to_string(time(nullptr));
      if (rename(wal.c_str(), aside.c_str()) == 0) {
        spdlog::warn("store: the write-ahead log of an empty database was kept as {}", aside);
      }
    }
  }
  return f;
}

WalCopy::WalCopy(const std::string& data_dir) {
  const std::string wal = data_dir + "/trainyard.db-wal";
  if (SizeOf(wal) == 0) return;
  std::error_code ec;
  const std::string copy = wal + ".at-start";
  std::filesystem::copy_file(wal, copy, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    std::filesystem::remove(copy, ec);
    return;
  }
  copy_ = copy;
}

WalCopy::~WalCopy() {
  std::error_code ec;
  if (!copy_.empty()) std::filesystem::remove(copy_, ec);
}

std::string WalCopy::Keep() {
  if (copy_.empty()) return "";
  const std::string kept = copy_.substr(0, copy_.size() - std::string(".at-start").size()) +
                           ".damaged-" + std::to_string(time(nullptr));
  if (rename(copy_.c_str(), kept.c_str()) != 0) return "";
  copy_.clear();
  return kept;
}

Result<StoreFindings> CheckAfterOpen(jobstore::SqliteJobStore* store, const std::string& logs_dir,
                                     DurationMicros budget, bool accept_loss) {
  StoreFindings f;
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(jobstore::SqliteJobStore::QuickCheck check, store->CheckIntegrity(budget));
  if (!check.ok) f.damage = check.detail;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!check.finished) {
    spdlog::warn("store: quick_check stopped after {:.1f} s (nothing wrong found so far)", seconds);
  }
  ASSIGN_OR_RETURN(jobstore::SqliteJobStore::KnownUids known, store->ListKnownUids());
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(logs_dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".ndjson") continue;
    const std::string uid = entry.path().stem().string();
    if (known.jobs.count(uid) > 0) continue;
    if (known.deleted.count(uid) > 0) {
      // Deleted: the record went, the log's removal did not happen (a crash between).
      std::filesystem::remove(entry.path(), ec);
      continue;
    }
    f.lost_jobs.push_back(uid);
  }
  std::sort(f.lost_jobs.begin(), f.lost_jobs.end());
  if (accept_loss && !f.lost_jobs.empty()) {
    std::filesystem::create_directories(logs_dir + "/lost", ec);
    for (const std::string& uid : f.lost_jobs) {
      std::filesystem::rename(logs_dir + "/" + uid + ".ndjson",
                              logs_dir + "/lost/" + uid + ".ndjson", ec);
    }
    spdlog::warn("store: {} jobs are lost (--accept-store-loss): {}; their logs are in {}/lost",
                 f.lost_jobs.size(), LostList(f.lost_jobs), logs_dir);
  }
  return f;
}

}  // namespace ty::daemon
