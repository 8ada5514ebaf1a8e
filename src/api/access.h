// What a request needs, in roles on projects (auth/tokens.h), read from the access of
// the route it matched (routes.h) and its typed parameters; and the gate every request
// passes before its route runs. Storage needs come from the bucket's owner
// (ObjectStore::BucketOwner): a bucket no project owns needs an admin; one that does
// not exist needs nothing here (its route answers 404). A request no row takes needs
// an admin (then 404); one whose path a row takes with another method needs that
// row's access (then 404 in that row's dialect).
//
// Pure; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/http_types.h"
#include "api/routes.h"
#include "auth/tokens.h"

namespace ty::api {

// The owner of an existing bucket ("" = none); nullopt when there is no such bucket.
using BucketOwnerFn = std::function<std::optional<std::string>(const std::string& bucket)>;

std::vector<auth::Need> NeedsOf(const RouteMatch& match, const HttpRequest& request,
                                const BucketOwnerFn& owner_of);

// Who may use a listener. Without tokens and without `replica` the gate is open (a
// loopback-only daemon, as before tokens existed).
struct AccessGate {
  const auth::TokenTable* tokens = nullptr;  // Not owned; null or empty = no tokens.
  // The replica listener: a request speaks for the job whose replica connects from
  // its peer address, or whose credential it carries (auth/replica_credentials.h;
  // "" = none); nullopt: no replica of ours, refused.
  std::function<std::optional<auth::Principal>(const std::string& peer,
                                               const std::string& credential)>
      replica;

  bool open() const { return (tokens == nullptr || tokens->empty()) && !replica; }
};

// The principal of `request`, or Unauthenticated (401) saying what was missing.
Result<auth::Principal> Authenticate(const AccessGate& gate, const HttpRequest& request);

// The admitted principal (an admin "anyone" where the gate is open), whose `only_job`
// narrows what a route shows; or the status to answer: 401 for no or an unknown token,
// 403 naming the role and project for a principal that lacks one. A Scope::kAnyone
// route admits everyone, as whoever the request proves to be (else a role-less
// "nobody"), so /healthz can tell an admin from a passer-by.
Result<auth::Principal> Admit(const AccessGate& gate, const RouteMatch& match,
                              const HttpRequest& request, const BucketOwnerFn& owner_of);

}  // namespace ty::api
