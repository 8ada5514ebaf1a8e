// The one Status -> HTTP mapping (docs/style.md §4) and Google's JSON error envelope
// (docs/contracts/ml-v1.md §12, docs/contracts/client-wire.md §6). Pure functions; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "api/http_types.h"
#include "common/status.h"

namespace ty::api {

// HTTP status for a google.rpc code, as googleapis' code.proto maps it. kOk is 200.
int HttpStatusFor(StatusCode code);

// `{"error":{"code":<HTTP>,"message":...,"status":"<NAME>"}}`, plus a
// google.rpc.BadRequest field violation when `status.field()` is set.
// REQUIRES: !status.ok().
HttpResponse ErrorResponse(const Status& status);
// Same envelope with an explicit HTTP status, for transport-level failures that
// have no code of their own (413 payload too large, 431 headers too large).
HttpResponse ErrorResponse(const Status& status, int http_status);

// Serializes `body` as the answer. Invalid UTF-8 (user log lines, labels) is
// replaced with U+FFFD rather than failing the whole response.
HttpResponse JsonResponse(const nlohmann::json& body, int http_status = 200);
std::string DumpJson(const nlohmann::json& value);

}  // namespace ty::api
