#include "auth/tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace ty::auth {

namespace {

constexpr std::array<std::pair<const char*, Role>, 3> kRoles = {
    {{"viewer", Role::kViewer}, {"editor", Role::kEditor}, {"admin", Role::kAdmin}}};

std::string RawSha256(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// 64 hex digits -> 32 bytes; nullopt otherwise.
std::optional<std::string> FromHex(const std::string& hex) {
  if (hex.size() != 64) return std::nullopt;
  std::string raw;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = HexDigit(hex[i]), lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    raw.push_back(static_cast<char>(hi * 16 + lo));
  }
  return raw;
}

Result<std::string> StringOf(const nlohmann::json& entry, const char* field,
                             const std::string& where) {
  auto it = entry.find(field);
  if (it == entry.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return InvalidArgument(where + "." + field + " must be a non-empty string");
  }
  return it->get<std::string>();
}

Result<std::vector<std::string>> ProjectsOf(const nlohmann::json& entry, const std::string& where) {
  auto it = entry.find("projects");
  if (it == entry.end() || !it->is_array() || it->empty()) {
    return InvalidArgument(where +
                           ".projects must be a non-empty list of project ids (\"*\" = all)");
  }
  std::vector<std::string> projects;
  for (const auto& p : *it) {
    if (!p.is_string() || p.get_ref<const std::string&>().empty() ||
        p.get_ref<const std::string&>().find('/') != std::string::npos) {
      return InvalidArgument(where + ".projects: each must be a project id or \"*\"");
    }
    projects.push_back(p.get<std::string>());
  }
  return projects;
}

Result<std::pair<std::string, Principal>> GrantOf(const nlohmann::json& entry,
                                                  const std::string& where) {
  if (!entry.is_object()) return InvalidArgument(where + " must be a mapping");
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    static const char* kKnown[] = {"name", "sha256", "role", "projects"};
    if (std::find_if(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return it.key() == k; }) == std::end(kKnown)) {
      return InvalidArgument(where + ": unknown key \"" + it.key() +
                             "\" (name, sha256, role, projects)");
    }
  }
  Principal who;
  ASSIGN_OR_RETURN(who.name, StringOf(entry, "name", where));
  ASSIGN_OR_RETURN(std::string hex, StringOf(entry, "sha256", where));
  std::optional<std::string> raw = FromHex(hex);
  if (!raw) {
    return InvalidArgument(where + ".sha256 must be the token's SHA-256 as 64 hex digits " +
                           "(never the token itself; `trainyard token create` prints both)");
  }
  ASSIGN_OR_RETURN(std::string role, StringOf(entry, "role", where));
  std::optional<Role> r = RoleNamed(role);
  if (!r) return InvalidArgument(where + ".role must be viewer, editor or admin");
  who.role = *r;
  ASSIGN_OR_RETURN(who.projects, ProjectsOf(entry, where));
  return std::make_pair(*raw, who);
}

}  // namespace

std::optional<Role> RoleNamed(std::string_view name) {
  for (const auto& [n, r] : kRoles) {
    if (name == n) return r;
  }
  return std::nullopt;
}

const char* RoleName(Role role) {
  for (const auto& [n, r] : kRoles) {
    if (role == r) return n;
  }
  return "none";
}

Role Principal::RoleIn(const std::string& project) const {
  bool all = std::find(projects.begin(), projects.end(), "*") != projects.end();
  if (project.empty()) return all && role == Role::kAdmin ? role : Role::kNone;
  if (all || std::find(projects.begin(), projects.end(), project) != projects.end()) return role;
  return Role::kNone;
}

bool Principal::HasBucket(const std::string& bucket) const {
  return !bucket.empty() && std::find(buckets.begin(), buckets.end(), bucket) != buckets.end();
}

Status CheckNeeds(const Principal& who, const std::vector<Need>& needs) {
  for (const Need& need : needs) {
    if (who.HasBucket(need.bucket)) continue;  // A replica's own job's bucket.
    if (static_cast<int>(who.RoleIn(need.project)) >= static_cast<int>(need.role)) continue;
    std::string what =
        need.project.empty() ? std::string("this daemon") : "project \"" + need.project + "\"";
    if (!need.bucket.empty()) what = "bucket \"" + need.bucket + "\" (of " + what + ")";
    return PermissionDenied("Permission denied: \"" + who.name + "\" needs the " +
                            RoleName(need.role) + " role on " + what);
  }
  return Status::Ok();
}

Result<TokenTable> TokenTable::FromConfig(const nlohmann::json& tokens) {
  TokenTable table;
  if (tokens.is_null()) return table;
  if (!tokens.is_array()) return InvalidArgument("config: tokens must be a list");
  for (size_t i = 0; i < tokens.size(); ++i) {
    ASSIGN_OR_RETURN(auto grant, GrantOf(tokens[i], "config: tokens[" + std::to_string(i) + "]"));
    for (const Grant& g : table.grants_) {
      if (g.sha256 == grant.first) {
        return InvalidArgument("config: tokens[" + std::to_string(i) +
                               "] has the same sha256 as \"" + g.who.name + "\"");
      }
    }
    table.grants_.push_back(Grant{grant.first, grant.second});
  }
  return table;
}

std::optional<Principal> TokenTable::Identify(std::string_view token) const {
  if (token.empty()) return std::nullopt;
  const std::string hash = RawSha256(token);
  const Grant* found = nullptr;
  for (const Grant& g : grants_) {  // Every grant compared: the time says nothing.
    if (CRYPTO_memcmp(g.sha256.data(), hash.data(), hash.size()) == 0) found = &g;
  }
  if (found == nullptr) return std::nullopt;
  return found->who;
}

std::string Sha256Hex(std::string_view data) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : RawSha256(data)) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string NewToken() {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  unsigned char bytes[43];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return "";
  std::string token = "ty_";
  for (unsigned char b : bytes) token.push_back(kAlphabet[b & 63]);  // 6 bits each: 258 bits.
  return token;
}

std::string BearerToken(std::string_view authorization) {
  // The scheme is case-insensitive (RFC 7235); gcloud and the Google clients send "Bearer".
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return "";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return "";
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\r' ||
                            token.back() == '\n')) {
    token.remove_suffix(1);
  }
  return std::string(token);
}

}  // namespace ty::auth
