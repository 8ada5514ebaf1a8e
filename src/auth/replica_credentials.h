// Job credentials for replicas the replica listener cannot know by their address.
//
// A container replica is known by the address it connects from (its job's network).
// A Slurm replica runs on its host's network, so every job on a host shares one
// address; it proves its job with a credential instead. Google's Storage clients
// send no token to an emulator host, but they do send a URL's userinfo as Basic
// auth (Python requests, Go net/http, libcurl), so the credential travels inside
// STORAGE_EMULATOR_HOST itself: http://replica:TOKEN@HOST:PORT.
//
// TOKEN is "<job uid>.<HMAC-SHA256(secret, job uid), first 128 bits, hex>": nothing
// is stored per job, a restarted daemon recognises the tokens of replicas that
// outlived it, and no token can be made for another job without the daemon's
// secret (32 random bytes in a 0600 file of the data directory, which no replica
// mounts). The token is only as good as the job is alive: the listener checks that.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ty::auth {

class ReplicaCredentials {
 public:
  // The secret in `path`, made (O_EXCL, mode 0600) when the file does not exist.
  // Internal when it cannot be read or made, or holds anything but 32 bytes.
  static Result<ReplicaCredentials> Open(const std::string& path);
  // For tests: a fixed secret.
  static ReplicaCredentials WithSecret(std::string secret) {
    return ReplicaCredentials(std::move(secret));
  }

  // The token of `job_uid`'s replicas.
  std::string TokenFor(const std::string& job_uid) const;
  // The job a token speaks for; nullopt for anything this daemon did not make.
  std::optional<std::string> JobOf(std::string_view token) const;

 private:
  explicit ReplicaCredentials(std::string secret) : secret_(std::move(secret)) {}
  std::string Mac(std::string_view job_uid) const;  // 32 hex digits.

  std::string secret_;
};

// "user:password" of a Basic Authorization header; "" for any other header.
std::string BasicUserinfo(std::string_view authorization);

// The credential an Authorization header carries: a Bearer token, or the password of
// Basic auth (what a URL's userinfo becomes). "" when there is neither.
std::string ReplicaCredential(std::string_view authorization);

}  // namespace ty::auth
