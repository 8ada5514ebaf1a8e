// TFRecord framing, as TensorBoard's event files use it: each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
//   `length` bytes of data        | uint32 masked CRC-32C of the data
// (mask: rotate right by 15, add 0xa282ead8). A trainer appends to its file while the
// daemon reads it, so a scan stops before a record that is not whole yet and says
// where to start next time.
//
// The files are a replica's: anything may be in them. A record whose data fails its
// CRC is skipped and counted; a length that fails its CRC, or is longer than
// kMaxRecordBytes, leaves nothing after it that can be trusted: the scan marks the
// file corrupt there and never reads past that point.
//
// Pure functions over an open descriptor; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ty::tensorboard {

// Longer records are treated as damage: TensorBoard's own summaries are far smaller,
// and a reader must not be made to buffer what a hostile length field asks for.
inline constexpr uint64_t kMaxRecordBytes = 16 << 20;

uint32_t MaskedCrc32c(std::string_view bytes);

// One record framed as a writer frames it (tests and tools write event files with it).
std::string FrameRecord(std::string_view data);

struct RecordScan {
  std::vector<std::string> records;
  uint64_t next_offset = 0;  // Where the next scan starts.
  uint64_t bad_crc = 0;      // Records skipped: their data failed its CRC.
  // A length failed its CRC or was too long at `next_offset`: nothing after it is read.
  bool corrupt = false;
};

// Reads whole records from `fd` starting at `offset`, stopping once `max_bytes` of the
// file are behind it (the record that crosses it is whole) or before the first record
// that is not whole yet. Internal on a read error.
Result<RecordScan> ScanRecords(int fd, uint64_t offset, uint64_t max_bytes);

}  // namespace ty::tensorboard
