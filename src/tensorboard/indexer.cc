#include "tensorboard/indexer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <utility>

#include "common/unique_fd.h"
#include "tensorboard/event_decoder.h"
#include "tensorboard/record_reader.h"

namespace ty::tensorboard {

namespace {

UniqueFd OpenDirAt(int parent, const std::string& name) {
  return UniqueFd(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// The log directory, one component at a time below the trusted root; -1 when any
// component is missing, a link or not a directory.
UniqueFd OpenLogDir(const std::string& root, const std::string& rel) {
  UniqueFd dir(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  size_t start = 0;
  while (dir.get() >= 0 && start < rel.size()) {
    size_t slash = rel.find('/', start);
    if (slash == std::string::npos) slash = rel.size();
    const std::string part = rel.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return UniqueFd();
    dir = OpenDirAt(dir.get(), part);
  }
  return dir;
}

struct EventFile {
  std::string rel_dir;   // "" for the log directory itself.
  std::string rel_path;  // rel_dir/name.
  int dir_fd;            // Borrowed from the walk's open directories.
  std::string name;
};

// Walks below `dir`, collecting event files, within the budget. Open directories are
// kept in `open` for the reads that follow.
void Walk(int dir, const std::string& rel, int depth, const IndexBudget& budget,
          std::vector<UniqueFd>* open, std::vector<EventFile>* files) {
  int dup_fd = dup(dir);
  if (dup_fd < 0) return;
  DIR* d = fdopendir(dup_fd);
  if (d == nullptr) {
    close(dup_fd);
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || files->size() >= budget.max_files) continue;
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      subdirs.push_back(name);
    } else if (S_ISREG(st.st_mode) && name.find("tfevents") != std::string::npos) {
      files->push_back({rel, rel.empty() ? name : rel + "/" + name, dir, name});
    }
  }
  closedir(d);
  if (depth >= budget.max_depth) return;
  std::sort(subdirs.begin(), subdirs.end());
  for (const std::string& s : subdirs) {
    if (open->size() >= budget.max_dirs) return;
    UniqueFd child = OpenDirAt(dir, s);
    if (child.get() < 0) continue;
    const int fd = child.get();
    open->push_back(std::move(child));
    Walk(fd, rel.empty() ? s : rel + "/" + s, depth + 1, budget, open, files);
  }
}

// Reads what is new in one file into `points`; records its progress in `batch`.
Status ReadFile(const Store& store, const IndexTarget& target, const EventFile& f,
                uint64_t max_bytes, IndexBatch* batch, std::vector<ScalarPoint>* points,
                IndexStats* stats) {
  const std::string key = target.experiment.experiment + "/" + target.run_prefix + "/" + f.rel_path;
  ASSIGN_OR_RETURN(FileState state, store.GetFileState(target.experiment, key));
  if (state.corrupt) return Status::Ok();
  UniqueFd fd(openat(f.dir_fd, f.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Status::Ok();
  // A file rewritten shorter than what was read is read again from its start.
  uint64_t offset = static_cast<uint64_t>(st.st_size) < state.offset ? 0 : state.offset;
  if (static_cast<uint64_t>(st.st_size) == offset) return Status::Ok();
  ASSIGN_OR_RETURN(RecordScan scan, ScanRecords(fd.get(), offset, max_bytes));
  for (const std::string& record : scan.records) {
    if (!DecodeScalars(record, points)) ++scan.bad_crc;
  }
  stats->bytes += scan.next_offset - offset;
  stats->records += scan.records.size();
  stats->bad_records += scan.bad_crc;
  if (scan.corrupt) ++stats->corrupt_files;
  batch->files.push_back({key, scan.next_offset, scan.bad_crc, scan.corrupt});
  return Status::Ok();
}

}  // namespace

std::string RunIdFor(const std::string& prefix, const std::string& relative_dir) {
  std::string id = prefix;
  bool dash = !id.empty();
  for (char c : relative_dir) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (dash && !id.empty()) id.push_back('-');
      id.push_back(c);
      dash = false;
    } else {
      dash = true;
    }
  }
  if (id.empty()) id = "default";
  if (id.size() > 128) id.resize(128);
  while (id.back() == '-') id.pop_back();
  return id;
}

Result<IndexStats> IndexOnce(Store* store, const IndexTarget& target, const IndexBudget& budget) {
  IndexStats stats;
  UniqueFd root = OpenLogDir(target.bucket_root, target.log_dir);
  if (root.get() < 0) return stats;
  std::vector<UniqueFd> open;
  std::vector<EventFile> files;
  Walk(root.get(), "", 0, budget, &open, &files);
  IndexBatch batch;
  batch.experiment = target.experiment;
  batch.experiment_display_name = target.experiment_display_name;
  std::map<std::string, size_t> run_of_dir;
  for (const EventFile& f : files) {
    if (stats.bytes >= budget.max_bytes) break;
    auto [it, added] = run_of_dir.emplace(f.rel_dir, batch.runs.size());
    if (added) {
      batch.runs.push_back(
          {RunIdFor(target.run_prefix, f.rel_dir), f.rel_dir.empty() ? "." : f.rel_dir, {}});
    }
    const uint64_t room = std::min(budget.max_bytes_per_file, budget.max_bytes - stats.bytes);
    RETURN_IF_ERROR(
        ReadFile(*store, target, f, room, &batch, &batch.runs[it->second].points, &stats));
    ++stats.files;
  }
  for (const IndexBatch::RunPoints& r : batch.runs) stats.points += r.points.size();
  if (batch.files.empty()) return stats;
  RETURN_IF_ERROR(store->ApplyIndexBatch(batch));
  return stats;
}

}  // namespace ty::tensorboard
