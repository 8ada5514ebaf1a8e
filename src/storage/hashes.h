// The two checksums Cloud Storage reports for every object, computed as bytes
// stream by (spec/cloud-storage-v1.md §4): MD5 (gcloud checks it after every
// transfer) and CRC-32C (Castagnoli; Node and Python check it, gcloud slices
// downloads only when it is there). Both are reported base64 encoded, CRC-32C as
// 4 big-endian bytes. Not thread-safe; one per stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace ty::storage {

class ObjectHasher {
 public:
  ObjectHasher();
  ~ObjectHasher();
  ObjectHasher(ObjectHasher&&) noexcept;
  ObjectHasher& operator=(ObjectHasher&&) noexcept;

  void Update(const void* data, size_t n);
  // Base64 digests of everything seen; call once, at the end.
  void Finish(std::string* md5_b64, std::string* crc32c_b64);

 private:
  struct Md5State;
  std::unique_ptr<Md5State> md5_;
  uint32_t crc_ = 0;
};

// CRC-32C of `n` bytes continuing from `crc` (0 to start); hardware instructions
// where the CPU has them.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);

// Hashes the file at `path` whole. Internal on I/O failure.
Status HashFile(const std::string& path, std::string* md5_b64, std::string* crc32c_b64);

}  // namespace ty::storage
