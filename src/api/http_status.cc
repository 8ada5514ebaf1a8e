#include "api/http_status.h"

#include <nlohmann/json.hpp>

namespace ty::api {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kUnknown:
    case StatusCode::kInternal:
    case StatusCode::kDataLoss:
      return 500;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
  }
  return 500;
}

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse JsonResponse(const nlohmann::json& body, int http_status) {
  HttpResponse response;
  response.status = http_status;
  response.body = DumpJson(body);
  return response;
}

HttpResponse ErrorResponse(const Status& status) {
  return ErrorResponse(status, HttpStatusFor(status.code()));
}

HttpResponse ErrorResponse(const Status& status, int http_status) {
  nlohmann::json error = {
      {"code", http_status},
      {"message", status.message()},
      {"status", StatusCodeName(status.code())},
  };
  if (!status.field().empty()) {
    // Google's rule text after "Field: <path> Error: " is the violation's description.
    std::string description = status.message();
    const std::string prefix = "Field: " + status.field() + " Error: ";
    if (description.rfind(prefix, 0) == 0) description = description.substr(prefix.size());
    error["details"] = nlohmann::json::array(
        {{{"@type", "type.googleapis.com/google.rpc.BadRequest"},
          {"fieldViolations",
           nlohmann::json::array({{{"field", status.field()}, {"description", description}}})}}});
  }
  return JsonResponse({{"error", std::move(error)}}, http_status);
}

}  // namespace ty::api
