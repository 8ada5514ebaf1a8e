#include "auth/registry_tokens.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "auth/x509_util.h"
#include "common/files.h"

namespace ty::auth {
namespace {

// A path component of a repository name: [a-z0-9] runs joined by '.', '_', '__' or '-'s.
bool IsNameComponent(std::string_view c) {
  if (c.empty()) return false;
  auto alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
  if (!alnum(c.front()) || !alnum(c.back())) return false;
  for (size_t i = 0; i < c.size(); ++i) {
    const char ch = c[i];
    if (alnum(ch)) continue;
    if (ch != '.' && ch != '_' && ch != '-') return false;
    // '.' and '_' stand alone (or "__"); only '-' repeats.
    if (ch == '.' && c[i + 1] == '.') return false;
  }
  return true;
}

bool IsRepositoryName(std::string_view name) {
  if (name.empty() || name.size() > kMaxRegistryNameBytes) return false;
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    if (!IsNameComponent(name.substr(start, slash - start))) return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool IsAction(std::string_view a) {
  return !a.empty() && a.size() <= 16 &&
         std::all_of(a.begin(), a.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '*'; });
}

bool Has(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

Result<RegistryScope> ParseRegistryScope(std::string_view scope) {
  const std::string shown(scope.substr(0, 80));
  const size_t first = scope.find(':');
  const size_t last = scope.rfind(':');
  if (first == std::string_view::npos || first == last) {
    return InvalidArgument("scope \"" + shown + "\" is not TYPE:NAME:ACTIONS");
  }
  RegistryScope out;
  out.type = std::string(scope.substr(0, first));
  out.name = std::string(scope.substr(first + 1, last - first - 1));
  if (out.type.empty() || out.type.size() > 32 || !IsAction(out.type)) {
    return InvalidArgument("scope \"" + shown + "\": the type must be lowercase letters");
  }
  const bool catalog = out.type == "registry" && out.name == "catalog";
  if (!catalog && !IsRepositoryName(out.name)) {
    return InvalidArgument("scope \"" + shown +
                           "\": the name must be lowercase path components of letters, digits, "
                           "'.', '_' and '-', at most 255 bytes");
  }
  std::string_view actions = scope.substr(last + 1);
  while (!actions.empty()) {
    const size_t comma = actions.find(',');
    std::string_view a = actions.substr(0, comma);
    if (!IsAction(a)) return InvalidArgument("scope \"" + shown + "\": bad action");
    if (!Has(out.actions, a)) out.actions.emplace_back(a);
    if (out.actions.size() > 8) return InvalidArgument("scope \"" + shown + "\": too many actions");
    if (comma == std::string_view::npos) break;
    actions.remove_prefix(comma + 1);
  }
  if (out.actions.empty()) return InvalidArgument("scope \"" + shown + "\" names no action");
  return out;
}

std::string RegistryProjectOf(std::string_view repository) {
  return std::string(repository.substr(0, repository.find('/')));
}

std::vector<std::string> GrantedActions(const Principal* who, const RegistryScope& scope,
                                        const std::vector<std::string>& shared) {
  std::vector<std::string> granted;
  const bool admin = who != nullptr && who->RoleIn("") >= Role::kAdmin;
  if (scope.type != "repository") {
    if (admin) granted = scope.actions;
    return granted;
  }
  const std::string project = RegistryProjectOf(scope.name);
  const bool is_shared = Has(shared, project);
  // A repository needs a project and an image below it ("proj/img").
  if (project.size() == scope.name.size()) return granted;
  const Role role = who == nullptr ? Role::kNone : who->RoleIn(project);
  for (const std::string& a : scope.actions) {
    bool ok = false;
    if (a == "pull")
      ok = is_shared || role >= Role::kViewer;
    else if (a == "push")
      ok = is_shared ? admin : role >= Role::kEditor;
    else
      ok = admin;
    if (ok) granted.push_back(a);
  }
  return granted;
}

// ---- Keys ----

struct RegistryTokenIssuer::Keys {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  std::string cert_der_b64;  // Standard base64 (x5c), not base64url.
  ~Keys() {
    EVP_PKEY_free(key);
    X509_free(cert);
  }
};

namespace {

std::string CertDerBase64(X509* cert) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert, &der);
  if (n <= 0) return "";
  std::string out = Base64Encode(std::string(reinterpret_cast<char*>(der), n));
  OPENSSL_free(der);
  return out;
}

// A pair loaded from PEM text, or nullptr when it does not load or match.
std::unique_ptr<RegistryTokenIssuer::Keys> LoadPair(const std::string& key_pem,
                                                    const std::string& cert_pem) {
  auto keys = std::make_unique<RegistryTokenIssuer::Keys>();
  keys->key = internal::KeyFromPem(key_pem).release();
  keys->cert = internal::CertFromPem(cert_pem).release();
  if (keys->key == nullptr || keys->cert == nullptr || EVP_PKEY_id(keys->key) != EVP_PKEY_EC ||
      X509_check_private_key(keys->cert, keys->key) != 1 ||
      X509_cmp_current_time(X509_get0_notAfter(keys->cert)) <= 0) {
    return nullptr;
  }
  keys->cert_der_b64 = CertDerBase64(keys->cert);
  return keys->cert_der_b64.empty() ? nullptr : std::move(keys);
}

Result<std::unique_ptr<RegistryTokenIssuer::Keys>> MakePair() {
  auto keys = std::make_unique<RegistryTokenIssuer::Keys>();
  keys->key = internal::NewP256Key().release();
  keys->cert = internal::NewCertificate(keys->key, "trainyardd registry tokens", 3650).release();
  if (keys->key == nullptr || keys->cert == nullptr) {
    return Internal("registry token key: cannot make a P-256 key");
  }
  X509* c = keys->cert;
  X509_set_issuer_name(c, X509_get_subject_name(c));
  if (X509_sign(c, keys->key, EVP_sha256()) == 0) {
    return Internal("registry token key: cannot sign its certificate");
  }
  keys->cert_der_b64 = CertDerBase64(c);
  return keys;
}

}  // namespace

RegistryTokenIssuer::RegistryTokenIssuer(std::unique_ptr<Keys> keys, std::string cert_path)
    : keys_(std::move(keys)), cert_path_(std::move(cert_path)) {}
RegistryTokenIssuer::~RegistryTokenIssuer() = default;

Result<std::unique_ptr<RegistryTokenIssuer>> RegistryTokenIssuer::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  const std::string key_path = dir + "/token-key.pem";
  const std::string cert_path = dir + "/token-cert.pem";
  std::string replaced;
  // Read back as untrusted daemon state: small regular files only.
  Result<std::string> key_pem = ReadStateFile(key_path, 64 * 1024);
  Result<std::string> cert_pem = ReadStateFile(cert_path, 64 * 1024);
  std::unique_ptr<Keys> keys;
  if (key_pem.ok() && cert_pem.ok()) {
    keys = LoadPair(*key_pem, *cert_pem);
    if (!keys) replaced = key_path + " and " + cert_path + " did not load as a matching pair";
  } else if (key_pem.ok() || cert_pem.ok() || std::filesystem::exists(key_path, ec)) {
    replaced = "half of the pair in " + dir + " was missing or unreadable";
  }
  if (!keys) {
    ASSIGN_OR_RETURN(keys, MakePair());
    ASSIGN_OR_RETURN(std::string new_key, internal::KeyPem(keys->key));
    ASSIGN_OR_RETURN(std::string new_cert, internal::CertPem(keys->cert));
    RETURN_IF_ERROR(WritePrivateFile(key_path, new_key));
    RETURN_IF_ERROR(WritePrivateFile(cert_path, new_cert));
  }
  auto issuer =
      std::unique_ptr<RegistryTokenIssuer>(new RegistryTokenIssuer(std::move(keys), cert_path));
  issuer->replaced_ = std::move(replaced);
  return issuer;
}

std::string RegistryTokenIssuer::Issue(const std::string& issuer, const std::string& service,
                                       const std::string& subject,
                                       const std::vector<RegistryGrant>& grants, int64_t now_s,
                                       int64_t ttl_s) const {
  nlohmann::json access = nlohmann::json::array();
  for (const RegistryGrant& g : grants) {
    if (g.scope.actions.empty()) continue;
    access.push_back(
        {{"type", g.scope.type}, {"name", g.scope.name}, {"actions", g.scope.actions}});
  }
  unsigned char jti[16];
  RAND_bytes(jti, sizeof jti);
  const nlohmann::json header = {{"typ", "JWT"}, {"alg", "ES256"}, {"x5c", {keys_->cert_der_b64}}};
  const nlohmann::json claims = {
      {"iss", issuer},
      {"sub", subject},
      {"aud", service},
      {"exp", now_s + ttl_s},
      {"nbf", now_s - 1},
      {"iat", now_s},
      {"jti", Base64UrlEncode(std::string(reinterpret_cast<const char*>(jti), sizeof jti), false)},
      {"access", access}};
  // dump() escapes nothing a JWT needs escaped; invalid UTF-8 in a subject is replaced.
  const std::string signing_input =
      Base64UrlEncode(header.dump(), false) + "." +
      Base64UrlEncode(claims.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), false);
  // ES256: ECDSA over SHA-256, the signature as raw r || s (32 bytes each), not DER.
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t der_len = 0;
  std::string der;
  if (EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, keys_->key) == 1 &&
      EVP_DigestSign(ctx, nullptr, &der_len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) == 1) {
    der.resize(der_len);
    if (EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(der.data()), &der_len,
                       reinterpret_cast<const unsigned char*>(signing_input.data()),
                       signing_input.size()) != 1) {
      der.clear();
    }
    der.resize(der_len);
  }
  EVP_MD_CTX_free(ctx);
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  std::string raw(64, '\0');
  if (sig != nullptr) {
    BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
    ECDSA_SIG_free(sig);
  }
  return signing_input + "." + Base64UrlEncode(raw, false);
}

}  // namespace ty::auth
