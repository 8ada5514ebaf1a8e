// A TensorBoard event file as a replica may write it (tensorboard/record_reader.h,
// event_decoder.h): framing, CRCs and Event protobufs, all of it untrusted.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "tensorboard/event_decoder.h"
#include "tensorboard/record_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("events", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  uint64_t offset = 0;
  for (int pass = 0; pass < 64; ++pass) {  // Small budgets: many passes over one file.
    ty::Result<ty::tensorboard::RecordScan> scan = ty::tensorboard::ScanRecords(fd, offset, 64);
    if (!scan.ok()) break;
    std::vector<ty::tensorboard::ScalarPoint> points;
    for (const std::string& record : scan->records) {
      (void)ty::tensorboard::DecodeScalars(record, &points);
    }
    if (scan->corrupt || scan->next_offset == offset) break;
    offset = scan->next_offset;
  }
  close(fd);
  return 0;
}
