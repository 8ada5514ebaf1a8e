// Internal to executor/: what a Python package archive holds, as one digest.
//
// gcloud's `--package-path` (and the SDK's local scripts) build a new sdist on every
// submit: the same files, new archive bytes (each member's mtime, the gzip header's
// time), under a new staging path. Keyed by those bytes, the installed-packages cache
// (package_images.h) never hit. The digest here is over what the archive holds: each
// member's name, kind (file, link), executable bit and contents (SHA-256), in name order
// (members of one name kept in archive order, since the last one wins on extraction).
// Owner, times, compression and member order do not count; anything pip could see
// differently does.
//
// Read as untrusted: sdists (.tar.gz, .tgz, .tar: ustar, pax and GNU long names) and
// wheels (.whl, .zip: stored and deflated members). An archive that is none of these,
// uses what is not read here (zip64, other compression, device members), or holds more
// than kMaxContentBytes uncompressed or kMaxMembers members, is digested by its bytes:
// the cache still hits for the same file, as before.
//
// Pure apart from reading `path`; thread-safe.
#pragma once

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ty::executor::internal {

inline constexpr uint64_t kMaxContentBytes = 8ULL << 30;
inline constexpr size_t kMaxMembers = 200000;

// SHA-256, streamed: Add what is digested, then Hex() once.
class Sha256 {
 public:
  Sha256();
  void Add(const void* data, size_t size);
  void Add(std::string_view s) { Add(s.data(), s.size()); }
  std::string Hex();

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

// "content:<hex>" for an archive read member by member, "bytes:<hex>" for one digested
// by its bytes. NotFound when `path` cannot be opened.
Result<std::string> PackageDigest(const std::string& path);

}  // namespace ty::executor::internal
