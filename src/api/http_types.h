// Transport-independent HTTP request/response values passed between the Beast
// session (http_session.h) and the route handlers (handlers.h), so routing and
// wire JSON can be reasoned about without Boost. Plain values; safe to copy.
#pragma once

#include <map>
#include <string>

namespace ty::api {

// Every JSON answer carries this exact type: googleapis only parses a body as JSON
// when the content type says so (client-wire.md §5).
inline constexpr char kJsonContentType[] = "application/json; charset=UTF-8";

struct HttpRequest {
  std::string method;                        // Upper case: "GET", "POST", "DELETE", ...
  std::string path;                          // Raw path, still percent-encoded, without the query.
  std::map<std::string, std::string> query;  // Decoded names and values; last one wins.
  std::string body;                          // Empty for a bodiless request.
};

struct HttpResponse {
  int status = 200;
  std::string content_type = kJsonContentType;
  std::string body;
};

}  // namespace ty::api
