// Small helpers every module needs, in one place: durable file replacement, URL
// and base64 encoding. std and POSIX only; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/time.h"

namespace ty {

// Writes `data` to `path` through `path`.tmp and a rename, so a reader never sees a
// half-written file (LevelDB's CURRENT, docs/style.md §6.5). Internal on any failure.
Status WriteFileAtomically(const std::string& path, const std::string& data);

// The same for a file only its owner may read, from the first byte on (a secret).
Status WritePrivateFile(const std::string& path, const std::string& data);

// The whole file. NotFound when it does not exist, Internal on other failures.
Result<std::string> ReadFile(const std::string& path);

// A file of the daemon's own state read back as untrusted: only a regular file (never
// through a link, never a FIFO, which would block the reader for ever), at most
// `max_bytes` (DataLoss past it, read no further). NotFound when it does not exist.
Result<std::string> ReadStateFile(const std::string& path, size_t max_bytes);

// When the file was last written (its mtime), never through a link; 0 when it cannot be
// told. A replica's exit file is written as it ends: its time is the end's.
TimeMicros FileModifiedAt(const std::string& path);

// Percent-encodes everything but RFC 3986 unreserved characters, for one path
// segment or query value.
std::string UrlEncode(std::string_view value);

// `url` ("http://host:port[/...]") with `user`:`password`, each percent-encoded, as
// its userinfo; `url` unchanged when it has no scheme.
std::string WithUserinfo(const std::string& url, const std::string& user,
                         const std::string& password);

// Standard base64 (RFC 4648 §4, with padding) of `bytes`.
std::string Base64Encode(const std::string& bytes);
// The URL-safe alphabet ('-' and '_'), with or without the '=' padding (JWTs have none;
// Docker's X-Registry-Auth has it).
std::string Base64UrlEncode(const std::string& bytes, bool padded);

}  // namespace ty
