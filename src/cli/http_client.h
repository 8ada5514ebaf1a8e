// The CLI's only door to the daemon: HTTP+JSON requests against the REST API
// (docs/design.md §7), behind a narrow interface so command logic is unit-tested with a
// scripted fake instead of a server (docs/style.md §6.1).
//
// `CurlHttpClient` is the real one (libcurl, blocking). An instance is used by one
// thread at a time; it is not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/files.h"  // UrlEncode
#include "common/status.h"

namespace ty::cli {

struct HttpResponse {
  long status = 0;   // HTTP status code.
  std::string body;  // Whole body (JSON for this API).
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;

  // One request; `body` is sent as application/json when non-empty. Returns the
  // response for every HTTP status; Unavailable when the server cannot be reached
  // (the message names the URL and how to start the daemon).
  virtual Result<HttpResponse> Send(const std::string& method, const std::string& url,
                                    const std::string& body) = 0;

  // GET whose body is a stream of newline-terminated records (chunked NDJSON);
  // `on_line` gets each line without its newline as it arrives and returns false to
  // stop early. On a 2xx status the lines are delivered and the response's `body` is
  // empty; on any other status nothing is delivered and `body` holds the error.
  // Unavailable if the connection fails or drops mid-stream (the caller resumes
  // from its last cursor).
  virtual Result<HttpResponse> StreamLines(
      const std::string& url, const std::function<bool(std::string_view)>& on_line) = 0;
};

class CurlHttpClient : public HttpClient {
 public:
  CurlHttpClient();
  ~CurlHttpClient() override;

  // Sends `Authorization: Bearer TOKEN` with every request ("" = none).
  void SetBearerToken(std::string token) { token_ = std::move(token); }
  // PEM CA certificates that an https:// daemon's certificate must chain to ("" = the
  // system's).
  void SetCaFile(std::string file) { ca_file_ = std::move(file); }

  Result<HttpResponse> Send(const std::string& method, const std::string& url,
                            const std::string& body) override;
  Result<HttpResponse> StreamLines(const std::string& url,
                                   const std::function<bool(std::string_view)>& on_line) override;

 private:
  void* curl_;  // CURL*; kept opaque so callers need no curl header.
  std::string token_;
  std::string ca_file_;
};

}  // namespace ty::cli
