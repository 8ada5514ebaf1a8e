// `GET /admin/backup` (admins only, as every path of no project): a consistent copy of
// the job store taken while jobs run (SQLite's online backup), streamed from a file so
// that a store of any size costs the daemon no memory. `trainyard admin backup FILE`
// fetches it; docs/operations.md "Backup and restore" says how to put it back.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/endpoints.h"
#include "api/http_status.h"

namespace ty::api::internal {
namespace {

// The copy, already unlinked: it lives as long as its answer is being sent.
class BackupSource : public BodySource {
 public:
  BackupSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~BackupSource() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  Result<std::string> Read(uint64_t offset, size_t n) override {
    std::string out(n, '\0');
    ssize_t got = ::pread(fd_, out.data(), n, static_cast<off_t>(offset));
    if (got < 0) return Internal("read the backup");
    out.resize(static_cast<size_t>(got));
    return out;
  }

 private:
  int fd_;
  uint64_t size_;
};

}  // namespace

HttpResponse Backup(service::JobService* service) {
  Result<std::string> path = service->BackupStore();
  if (!path.ok()) return ErrorResponse(path.status());
  int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
  ::unlink(path->c_str());  // Nothing is left behind, whatever happens to the answer.
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    return ErrorResponse(Internal("the backup could not be read back"));
  }
  HttpResponse r;
  r.content_type = "application/vnd.sqlite3";
  r.headers.push_back({"Content-Disposition", "attachment; filename=\"trainyard.db\""});
  r.source = std::make_shared<BackupSource>(fd, static_cast<uint64_t>(st.st_size));
  return r;
}

}  // namespace ty::api::internal
