#include "service/disk_reserve.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ty::service {
namespace {

std::string Mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

uint64_t ReserveBytes(const DiskSpace& disk, std::optional<uint64_t> configured) {
  if (configured) return *configured;
  constexpr uint64_t kMost = 256ULL << 20;
  return std::min(kMost, disk.total_bytes / 20);
}

Status CheckReserve(const DiskSpace& disk, uint64_t reserve) {
  if (disk.free_bytes >= reserve) return Status::Ok();
  return ResourceExhausted("the data disk has " + Mib(disk.free_bytes) +
                           " free, below its reserve of " + Mib(reserve) +
                           " (data_reserve_mb): new work waits until there is room, so that "
                           "running jobs can finish");
}

Result<DiskSpace> MeasureDisk(const std::string& path) {
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) {
    return Internal("statvfs " + path + ": " + std::strerror(errno));
  }
  DiskSpace disk;
  disk.free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  disk.total_bytes = static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
  return disk;
}

}  // namespace ty::service
