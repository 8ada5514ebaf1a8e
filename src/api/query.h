// URL pieces: percent-decoding, path segments and query parameters.
//
// googleapis percent-encodes with space as `%20` and never sends `+` for a space
// (docs/contracts/client-wire.md §2), so `+` is kept as a literal plus: decoding it as a space (the
// HTML form convention) would corrupt filters such as `createTime>2017-01-15T19:00:00+01:00`.
// A malformed escape (`%zz`, a trailing `%`) is kept literally rather than rejected.
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ty::api {

std::string PercentDecode(std::string_view text);

// Splits "/v1/projects/p/jobs/x%3Acancel" into decoded segments
// {"v1", "projects", "p", "jobs", "x:cancel"}. Empty segments are dropped.
std::vector<std::string> SplitPath(std::string_view path);

// Parses "a=1&b=x%20y" (no leading '?'). A name without '=' gets "". Repeated
// names keep the last value.
// `plus_is_space`: HTML-form decoding, for the Cloud Storage routes, whose clients
// (gcloud's apitools, Python) build query strings with urlencode: a space in an
// object name or prefix arrives as `+`, a real plus as `%2B`.
std::map<std::string, std::string> ParseQuery(std::string_view query, bool plus_is_space = false);

// Every value of a repeated parameter ("timeSeries=a&timeSeries=b"), decoded, in order.
std::vector<std::string> QueryValues(std::string_view query, std::string_view name);

}  // namespace ty::api
