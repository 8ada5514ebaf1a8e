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

#include <cstdint>
#include <string>

#include "common/status.h"

namespace ty::executor::internal {

inline constexpr uint64_t kMaxContentBytes = 8ULL << 30;
inline constexpr size_t kMaxMembers = 200000;

// "content:<hex>" for an archive read member by member, "bytes:<hex>" for one digested
// by its bytes. NotFound when `path` cannot be opened.
Result<std::string> PackageDigest(const std::string& path);

}  // namespace ty::executor::internal
