// The two checksums Cloud Storage reports for every object, computed as bytes
// stream by (docs/contracts/cloud-storage-v1.md §4): MD5 (gcloud checks it after every
// transfer) and CRC-32C (Castagnoli; Node and Python check it, gcloud slices
// downloads only when it is there). Both are reported base64 encoded, CRC-32C as
// 4 big-endian bytes. Not thread-safe; one per stream.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "common/status.h"

namespace ty::gcs {

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
// As the API reports it: the 4 bytes big-endian, base64.
std::string Crc32cBase64(uint32_t crc);
// The inverse; nullopt for anything but 4 bytes of base64.
std::optional<uint32_t> Crc32cFromBase64(const std::string& b64);
// CRC-32C of A followed by B from CRC(A), CRC(B) and B's length, without the
// bytes (the GF(2) matrix method zlib uses for its CRC-32): composing objects.
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

// Hashes the file at `path` whole. Internal on I/O failure.
Status HashFile(const std::string& path, std::string* md5_b64, std::string* crc32c_b64);

}  // namespace ty::gcs

namespace ty::gcs {

// Hashes a file while another party is still writing it (an upload arriving), so
// the digests are ready when the last byte is: a thread reads what has been
// written so far and waits for more. Finish(size) waits until `size` bytes were
// hashed and returns the digests. Dropping the hasher without Finish stops it.
class FollowingHasher {
 public:
  explicit FollowingHasher(std::string path);
  ~FollowingHasher();
  FollowingHasher(const FollowingHasher&) = delete;
  FollowingHasher& operator=(const FollowingHasher&) = delete;

  // Base64 MD5 and CRC-32C of the file's first `size` bytes; Internal when the file
  // cannot be read (or is shorter).
  Result<std::pair<std::string, std::string>> Finish(uint64_t size);

 private:
  void Run();

  std::string path_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<uint64_t> target_;  // Set by Finish.
  bool stop_ = false;
  bool done_ = false;
  Status error_;
  uint64_t hashed_ = 0;
  std::string md5_, crc_;
  std::thread thread_;
};

}  // namespace ty::gcs
