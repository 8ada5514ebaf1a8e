// Transport-independent HTTP request/response values passed between the Beast
// session (http_session.h) and the route handlers (handlers.h), so routing and
// wire JSON can be reasoned about without Boost. Plain values; safe to copy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace ty::api {

// Every JSON answer carries this exact type: googleapis only parses a body as JSON
// when the content type says so (docs/contracts/client-wire.md §5).
inline constexpr char kJsonContentType[] = "application/json; charset=UTF-8";

struct HttpRequest {
  std::string method;                        // Upper case: "GET", "POST", "DELETE", ...
  std::string path;                          // Raw path, still percent-encoded, without the query.
  std::map<std::string, std::string> query;  // Decoded names and values; last one wins.
  std::string raw_query;                     // As sent, without the '?'.
  std::string body;                          // Empty for a bodiless request.
  // Header fields by lower-case name (the last one wins).
  std::map<std::string, std::string> headers;
  // Uploads: the body went to this file instead of `body` (Router::SpoolFileFor).
  // A handler that keeps the bytes moves the file away; the session removes what
  // is left when the request is done.
  std::string body_file;
  // The client's address ("10.88.0.5"), which tells a replica's job (api/access.h).
  std::string peer;
  bool tls = false;  // It came over TLS: links back to the daemon are https.

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// A large response body read piece by piece while it is sent (object downloads),
// so a gigabyte never sits in memory.
class BodySource {
 public:
  virtual ~BodySource() = default;
  virtual uint64_t size() const = 0;
  // Up to `n` bytes at `offset` of the body (`offset` < size()).
  virtual Result<std::string> Read(uint64_t offset, size_t n) = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = kJsonContentType;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Extra fields.
  std::shared_ptr<BodySource> source;  // When set, the body (and `body` is unused).
};

}  // namespace ty::api
