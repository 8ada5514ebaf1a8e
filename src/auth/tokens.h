// Access tokens and roles: who a request speaks for, and what each role may do.
//
// Tokens live in the daemon's config as SHA-256 hashes, never in clear:
//   tokens:
//     - name: ci-bot              # shown in logs and in 403 messages, never the token
//       sha256: 9f86d081...       # 64 hex digits (`trainyard token create` prints it)
//       role: editor              # viewer | editor | admin
//       projects: [team-a]        # "*" = every project
// Roles are ordered: a viewer reads (get, list, logs, objects), an editor also
// creates, cancels, deletes and writes objects, an admin also reads what belongs to
// no project (/metrics, buckets no project owns, Logging beyond projects/).
//
// Pure apart from hashing (OpenSSL) and NewToken's randomness.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ty::auth {

enum class Role { kNone = 0, kViewer = 1, kEditor = 2, kAdmin = 3 };

std::optional<Role> RoleNamed(std::string_view name);  // "viewer", "editor", "admin".
const char* RoleName(Role role);

// Who a request speaks for: a token's grant, or a replica's job (its buckets only).
struct Principal {
  std::string name;                   // For messages and logs.
  Role role = Role::kNone;            // Within `projects`.
  std::vector<std::string> projects;  // "*" = every project.
  // Buckets this principal may read and write whoever owns them (a replica's job's).
  std::vector<std::string> buckets;
  // A replica's job uid: its Logging reads see that job's entries only ("" = any job
  // its role lets it see).
  std::string only_job;

  // This principal's role in `project` ("" = daemon-wide: only a "*" admin has one).
  Role RoleIn(const std::string& project) const;
  bool HasBucket(const std::string& bucket) const;
};

// One thing a request needs. `project` "" means something no project owns.
struct Need {
  std::string project;
  Role role = Role::kViewer;
  std::string bucket;  // When the need comes from a bucket (a replica may hold it).
};

// Ok when `who` may do all of `needs`; PermissionDenied naming the first it may not.
Status CheckNeeds(const Principal& who, const std::vector<Need>& needs);

class TokenTable {
 public:
  // From the config's `tokens` list (null = no tokens). InvalidArgument naming the
  // entry and field for anything malformed (a clear token where a hash belongs
  // included: 64 hex digits only).
  static Result<TokenTable> FromConfig(const nlohmann::json& tokens);

  bool empty() const { return grants_.empty(); }
  size_t size() const { return grants_.size(); }
  // The grant of `token`; nullopt for an unknown one. Compares hashes in constant time.
  std::optional<Principal> Identify(std::string_view token) const;

 private:
  struct Grant {
    std::string sha256;  // 32 raw bytes.
    Principal who;
  };
  std::vector<Grant> grants_;
};

std::string Sha256Hex(std::string_view data);
// A new random token: "ty_" and 43 URL-safe characters (256 bits).
std::string NewToken();
// The bearer token of an `Authorization` header value; "" when it is not one.
std::string BearerToken(std::string_view authorization);

}  // namespace ty::auth
