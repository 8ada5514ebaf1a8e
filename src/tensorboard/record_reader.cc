#include "tensorboard/record_reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gcs/hashes.h"

namespace ty::tensorboard {

namespace {

constexpr uint32_t kMaskDelta = 0xa282ead8u;
constexpr size_t kHeaderBytes = 12;  // Length and its CRC.
constexpr size_t kFooterBytes = 4;   // The data's CRC.
constexpr size_t kChunkBytes = 1 << 20;

uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint64_t LoadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint32_t LoadLe32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void AppendLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads ahead in chunks so a file of small records costs few system calls; Need(n)
// makes n bytes from the cursor available, or says the file has fewer.
class Window {
 public:
  Window(int fd, uint64_t offset) : fd_(fd), start_(offset) {}

  // True when n bytes from the cursor are buffered; false at the end of the file.
  Result<bool> Need(size_t n) {
    while (buf_.size() - pos_ < n) {
      if (pos_ > 0) {
        buf_.erase(0, pos_);
        start_ += pos_;
        pos_ = 0;
      }
      const size_t want = std::max(kChunkBytes, n - buf_.size());
      const size_t had = buf_.size();
      buf_.resize(had + want);
      ssize_t got;
      do {
        got = pread(fd_, buf_.data() + had, want, static_cast<off_t>(start_ + had));
      } while (got < 0 && errno == EINTR);
      if (got < 0) {
        buf_.resize(had);
        return Internal(std::string("reading an event file: ") + std::strerror(errno));
      }
      buf_.resize(had + static_cast<size_t>(got));
      if (got == 0) return false;
    }
    return true;
  }
  const char* at() const { return buf_.data() + pos_; }
  void Skip(size_t n) { pos_ += n; }
  uint64_t offset() const { return start_ + pos_; }

 private:
  const int fd_;
  uint64_t start_;
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace

uint32_t MaskedCrc32c(std::string_view bytes) {
  return Mask(gcs::Crc32cExtend(0, bytes.data(), bytes.size()));
}

std::string FrameRecord(std::string_view data) {
  std::string out;
  AppendLe(data.size(), 8, &out);
  AppendLe(MaskedCrc32c(out), 4, &out);
  out.append(data);
  AppendLe(MaskedCrc32c(data), 4, &out);
  return out;
}

Result<RecordScan> ScanRecords(int fd, uint64_t offset, uint64_t max_bytes) {
  RecordScan scan;
  Window w(fd, offset);
  // Bytes read, not records kept: a file of damaged records costs a pass no more.
  while (w.offset() - offset < max_bytes) {
    ASSIGN_OR_RETURN(bool header, w.Need(kHeaderBytes));
    if (!header) break;
    const uint64_t length = LoadLe64(w.at());
    if (MaskedCrc32c(std::string_view(w.at(), 8)) != LoadLe32(w.at() + 8) ||
        length > kMaxRecordBytes) {
      scan.corrupt = true;
      break;
    }
    ASSIGN_OR_RETURN(bool whole, w.Need(kHeaderBytes + length + kFooterBytes));
    if (!whole) break;
    std::string_view data(w.at() + kHeaderBytes, length);
    if (MaskedCrc32c(data) == LoadLe32(w.at() + kHeaderBytes + length)) {
      scan.records.emplace_back(data);
    } else {
      ++scan.bad_crc;
    }
    w.Skip(kHeaderBytes + length + kFooterBytes);
  }
  scan.next_offset = w.offset();
  return scan;
}

}  // namespace ty::tensorboard
