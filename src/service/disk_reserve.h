// Room on the data disk (issue 31 item 3): below a reserve, new work is refused with
// a 429 before the disk is actually full, so the jobs already running keep the room
// their records and logs need to end; /healthz says the disk is low.
//
// The decisions are pure; MeasureDisk is the one side effect (statvfs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace ty::service {

struct DiskSpace {
  uint64_t free_bytes = 0;   // What an unprivileged writer may still use (f_bavail).
  uint64_t total_bytes = 0;  // The filesystem's size.
};

// The configured reserve in bytes, or by default the smaller of 256 MiB and 5 % of the
// disk (a 64 GiB disk keeps 256 MiB; a 1 GiB test filesystem 51 MiB).
uint64_t ReserveBytes(const DiskSpace& disk, std::optional<uint64_t> configured);

// OK while the free space is at least the reserve; ResourceExhausted saying both
// otherwise (the API answers 429).
Status CheckReserve(const DiskSpace& disk, uint64_t reserve);

// The space of the filesystem holding `path`. Internal when it cannot be told.
Result<DiskSpace> MeasureDisk(const std::string& path);

}  // namespace ty::service
