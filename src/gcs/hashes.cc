#include "gcs/hashes.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/files.h"  // Base64Encode

namespace ty::gcs {

namespace {

// Reflected Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t kPoly = 0x82F63B78;

std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}

uint32_t Crc32cSoftware(uint32_t crc, const uint8_t* p, size_t n) {
  static const std::array<uint32_t, 256> table = MakeTable();
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(uint32_t crc, const uint8_t* p,
                                                          size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#endif

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  crc = hardware ? Crc32cHardware(crc, p, n) : Crc32cSoftware(crc, p, n);
#else
  crc = Crc32cSoftware(crc, p, n);
#endif
  return ~crc;
}

struct ObjectHasher::Md5State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Md5State() { EVP_MD_CTX_free(ctx); }
};

ObjectHasher::ObjectHasher() : md5_(std::make_unique<Md5State>()) {
  EVP_DigestInit_ex(md5_->ctx, EVP_md5(), nullptr);
}
ObjectHasher::~ObjectHasher() = default;
ObjectHasher::ObjectHasher(ObjectHasher&&) noexcept = default;
ObjectHasher& ObjectHasher::operator=(ObjectHasher&&) noexcept = default;

void ObjectHasher::Update(const void* data, size_t n) {
  EVP_DigestUpdate(md5_->ctx, data, n);
  crc_ = Crc32cExtend(crc_, data, n);
}

void ObjectHasher::Finish(std::string* md5_b64, std::string* crc32c_b64) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(md5_->ctx, digest, &len);
  *md5_b64 = Base64Encode(std::string(reinterpret_cast<char*>(digest), len));
  *crc32c_b64 = Crc32cBase64(crc_);
}

std::optional<uint32_t> Crc32cFromBase64(const std::string& b64) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (b64.size() != 8 || b64.substr(6) != "==") return std::nullopt;
  uint64_t bits = 0;
  for (int i = 0; i < 6; ++i) {
    size_t v = kAlphabet.find(b64[i]);
    if (v == std::string::npos) return std::nullopt;
    bits = (bits << 6) | v;
  }
  return static_cast<uint32_t>(bits >> 4);  // 36 bits hold 32 and 4 zero bits.
}

namespace {

// Multiplies the 32x32 GF(2) matrix `m` (one column per word) by `v`.
uint32_t Gf2Times(const uint32_t* m, uint32_t v) {
  uint32_t sum = 0;
  for (; v != 0; v >>= 1, ++m) {
    if (v & 1) sum ^= *m;
  }
  return sum;
}

void Gf2Square(uint32_t* square, const uint32_t* m) {
  for (int n = 0; n < 32; ++n) square[n] = Gf2Times(m, m[n]);
}

}  // namespace

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  if (length_b == 0) return crc_a;
  // `odd`: the operator for one zero bit; squaring gives 2, 4, 8... bits.
  uint32_t even[32], odd[32];
  odd[0] = kPoly;
  for (int n = 1; n < 32; ++n) odd[n] = uint32_t{1} << (n - 1);
  Gf2Square(even, odd);  // 2 zero bits.
  Gf2Square(odd, even);  // 4 zero bits.
  // Apply length_b zero bytes to crc_a, one bit of the length at a time.
  do {
    Gf2Square(even, odd);
    if (length_b & 1) crc_a = Gf2Times(even, crc_a);
    length_b >>= 1;
    if (length_b == 0) break;
    Gf2Square(odd, even);
    if (length_b & 1) crc_a = Gf2Times(odd, crc_a);
    length_b >>= 1;
  } while (length_b != 0);
  return crc_a ^ crc_b;
}

std::string Crc32cBase64(uint32_t crc) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xff);
  return Base64Encode(bytes);
}

Status HashFile(const std::string& path, std::string* md5_b64, std::string* crc32c_b64) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot read " + path + ": " + std::strerror(errno));
  ObjectHasher hasher;
  std::string buf(1 << 20, '\0');
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return Internal("cannot read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    hasher.Update(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  hasher.Finish(md5_b64, crc32c_b64);
  return Status::Ok();
}

// ---- FollowingHasher ------------------------------------------------------------

FollowingHasher::FollowingHasher(std::string path)
    : path_(std::move(path)), thread_([this] { Run(); }) {}

FollowingHasher::~FollowingHasher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FollowingHasher::Run() {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ObjectHasher hasher;
  std::string buf(1 << 20, '\0');
  uint64_t at = 0;
  int idle_us = 500;
  Status error =
      fd < 0 ? Internal("cannot read " + path_ + ": " + std::strerror(errno)) : Status::Ok();
  while (error.ok()) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = Internal("cannot read " + path_ + ": " + std::strerror(errno));
      break;
    }
    if (n > 0) {
      std::unique_lock<std::mutex> lock(mu_);
      // Never past what Finish asked for (the file may grow further meanwhile).
      uint64_t take = static_cast<uint64_t>(n);
      if (target_ && at + take > *target_) take = *target_ - at;
      lock.unlock();
      hasher.Update(buf.data(), static_cast<size_t>(take));
      at += take;
    }
    std::unique_lock<std::mutex> lock(mu_);
    hashed_ = at;
    if (stop_) break;
    if (target_ && at >= *target_) break;
    if (n == 0) {
      // Caught up with the writer, which does not signal: look again soon, backing
      // off (0.5 to 8 ms) so that idle followers do not keep the CPUs busy.
      cv_.wait_for(lock, std::chrono::microseconds(idle_us));
      idle_us = std::min(idle_us * 2, 8000);
    } else {
      idle_us = 500;
    }
  }
  if (fd >= 0) ::close(fd);
  std::lock_guard<std::mutex> lock(mu_);
  if (error.ok() && !stop_) hasher.Finish(&md5_, &crc_);
  error_ = error;
  done_ = true;
  cv_.notify_all();
}

Result<std::pair<std::string, std::string>> FollowingHasher::Finish(uint64_t size) {
  std::unique_lock<std::mutex> lock(mu_);
  target_ = size;
  cv_.notify_all();
  // A file shorter than promised would leave the thread waiting: bound the wait.
  if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_; })) {
    stop_ = true;
    return Internal("hashing " + path_ + " did not finish");
  }
  if (!error_.ok()) return error_;
  if (hashed_ != size)
    return Internal("hashed " + std::to_string(hashed_) + " of " + std::to_string(size) +
                    " bytes of " + path_);
  return std::make_pair(md5_, crc_);
}

}  // namespace ty::gcs
