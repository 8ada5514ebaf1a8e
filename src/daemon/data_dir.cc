#include "daemon/data_dir.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ty::daemon {
namespace {

// Narrows each regular file directly in `dir` (never through a link) to 0600;
// returns how many were wider.
int NarrowFilesIn(const std::string& dir) {
  int narrowed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    struct stat st = {};
    const std::string path = entry.path().string();
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if ((st.st_mode & 077) == 0) continue;
    if (::chmod(path.c_str(), st.st_mode & 0700) == 0) ++narrowed;
  }
  return narrowed;
}

}  // namespace

Status SecureDataDir(const std::string& data_dir) {
  struct stat st = {};
  if (::stat(data_dir.c_str(), &st) != 0) {
    return Internal("cannot read " + data_dir + ": " + std::strerror(errno));
  }
  if ((st.st_mode & 077) != 0) {
    if (::chmod(data_dir.c_str(), 0700) != 0) {
      return Internal("cannot make " + data_dir + " private (0700): " + std::strerror(errno));
    }
    spdlog::warn(
        "data directory {} was mode {:04o}; now 0700 (it holds jobs' environment and logs)",
        data_dir, st.st_mode & 07777);
  }
  int narrowed = 0;
  for (const std::string sub : {"", "/logs", "/storage", "/storage/sessions"}) {
    narrowed += NarrowFilesIn(data_dir + sub);
  }
  if (narrowed > 0) {
    spdlog::warn("{} file(s) of the data directory were readable by others; now 0600", narrowed);
  }
  return Status::Ok();
}

}  // namespace ty::daemon
