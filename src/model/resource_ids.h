// The ids a request names in its path: projects and locations. They key stored rows,
// directories and engine labels, so each is checked to Google's shape before use
// ("..%2f..%2fetc" and "a%00b" once created jobs).
//
// Projects: a project id (a lower-case letter, then lower-case letters, digits and
// hyphens, not ending with a hyphen, at most 30 characters), optionally scoped by a
// domain ("example.com:my-project"), or a project number (up to 20 digits). Google
// creates ids of at least 6 characters; shorter ones ("p") are accepted here because
// local projects are named by their users, and nothing about the length is unsafe.
// Locations: 1-63 lower-case letters, digits and hyphens ("us-central1", "local").
//
// Pure; thread-safe.
#pragma once

#include <string_view>

#include "common/status.h"

namespace ty::model {

// InvalidArgument naming the rule.
Status CheckProjectId(std::string_view project);
Status CheckLocationId(std::string_view location);

}  // namespace ty::model
