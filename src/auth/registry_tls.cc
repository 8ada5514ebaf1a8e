#include "auth/registry_tls.h"

#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>

#include "auth/x509_util.h"
#include "common/files.h"

namespace ty::auth {
namespace {

constexpr long kAuthorityDays = 3650;
constexpr long kServerDays = 365;
constexpr long kRenewWithinSeconds = 30L * 24 * 3600;
constexpr size_t kMaxTlsPemBytes = 64 * 1024;

// True when `cert` is valid past the renewal margin.
bool Lasts(X509* cert) {
  time_t horizon = time(nullptr) + kRenewWithinSeconds;
  return X509_cmp_time(X509_get0_notAfter(cert), &horizon) > 0;
}

struct TlsPair {
  internal::Key key;
  internal::Cert cert;
};

// The pair stored at `key_path` / `cert_path` when both load, match and last.
TlsPair LoadTlsPair(const std::string& key_path, const std::string& cert_path) {
  Result<std::string> key_pem = ReadStateFile(key_path, kMaxTlsPemBytes);
  Result<std::string> cert_pem = ReadStateFile(cert_path, kMaxTlsPemBytes);
  if (!key_pem.ok() || !cert_pem.ok()) return {};
  TlsPair p{internal::KeyFromPem(*key_pem), internal::CertFromPem(*cert_pem)};
  if (!p.key || !p.cert || X509_check_private_key(p.cert.get(), p.key.get()) != 1 ||
      !Lasts(p.cert.get())) {
    return {};
  }
  return p;
}

Status StoreTlsPair(const TlsPair& p, const std::string& key_path, const std::string& cert_path) {
  ASSIGN_OR_RETURN(std::string key_pem, internal::KeyPem(p.key.get()));
  ASSIGN_OR_RETURN(std::string cert_pem, internal::CertPem(p.cert.get()));
  RETURN_IF_ERROR(WritePrivateFile(key_path, key_pem));
  return WritePrivateFile(cert_path, cert_pem);
}

Result<TlsPair> MakeAuthority() {
  TlsPair ca{internal::NewP256Key(), nullptr};
  ca.cert = internal::NewCertificate(ca.key.get(), "trainyardd registry authority", kAuthorityDays);
  if (!ca.cert) return Internal("registry TLS: cannot make a P-256 key");
  X509* c = ca.cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  RETURN_IF_ERROR(internal::AddExtension(c, c, NID_basic_constraints, "critical,CA:TRUE"));
  RETURN_IF_ERROR(internal::AddExtension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign"));
  RETURN_IF_ERROR(internal::AddExtension(c, c, NID_subject_key_identifier, "hash"));
  if (X509_sign(c, ca.key.get(), EVP_sha256()) == 0) {
    return Internal("registry TLS: cannot sign the authority's certificate");
  }
  return ca;
}

std::string AltNames(const std::string& ip) {
  std::string names;
  for (const std::string& n : RegistryTlsNames()) names += (names.empty() ? "DNS:" : ",DNS:") + n;
  return names + ",IP:" + ip;
}

Result<TlsPair> MakeServer(const TlsPair& ca, const std::string& ip) {
  TlsPair server{internal::NewP256Key(), nullptr};
  server.cert = internal::NewCertificate(server.key.get(), "trainyardd registry", kServerDays);
  if (!server.cert) return Internal("registry TLS: cannot make a P-256 key");
  X509* c = server.cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(ca.cert.get()));
  X509* issuer = ca.cert.get();
  RETURN_IF_ERROR(internal::AddExtension(c, issuer, NID_basic_constraints, "critical,CA:FALSE"));
  RETURN_IF_ERROR(internal::AddExtension(c, issuer, NID_key_usage, "critical,digitalSignature"));
  RETURN_IF_ERROR(internal::AddExtension(c, issuer, NID_ext_key_usage, "serverAuth"));
  RETURN_IF_ERROR(internal::AddExtension(c, issuer, NID_authority_key_identifier, "keyid"));
  RETURN_IF_ERROR(internal::AddExtension(c, issuer, NID_subject_alt_name, AltNames(ip)));
  if (X509_sign(c, ca.key.get(), EVP_sha256()) == 0) {
    return Internal("registry TLS: cannot sign the server certificate");
  }
  return server;
}

// True when `server` was signed by `ca` and names `ip` (so the same names and address).
bool FitsAuthority(const TlsPair& server, const TlsPair& ca, const std::string& ip) {
  if (!server.cert || X509_verify(server.cert.get(), ca.key.get()) != 1) return false;
  return X509_check_ip_asc(server.cert.get(), ip.c_str(), 0) == 1;
}

}  // namespace

const std::vector<std::string>& RegistryTlsNames() {
  static const std::vector<std::string> kNames = {"gcr.io", "*.gcr.io", "*.pkg.dev"};
  return kNames;
}

Result<RegistryTlsFiles> OpenRegistryTls(const std::string& dir, const std::string& ip) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  RegistryTlsFiles files{dir + "/ca.crt", dir + "/server.crt", dir + "/server.key", "", ""};
  const std::string ca_key = dir + "/ca.key";
  TlsPair ca = LoadTlsPair(ca_key, files.ca_cert);
  if (!ca.key) {
    if (std::filesystem::exists(files.ca_cert, ec)) {
      files.replaced = files.ca_cert + " did not load, match its key or last 30 more days";
    }
    ASSIGN_OR_RETURN(ca, MakeAuthority());
    RETURN_IF_ERROR(StoreTlsPair(ca, ca_key, files.ca_cert));
  }
  TlsPair server = LoadTlsPair(files.key, files.cert);
  if (!FitsAuthority(server, ca, ip)) {
    ASSIGN_OR_RETURN(server, MakeServer(ca, ip));
    RETURN_IF_ERROR(StoreTlsPair(server, files.key, files.cert));
  }
  ASSIGN_OR_RETURN(files.ca_pem, internal::CertPem(ca.cert.get()));
  return files;
}

}  // namespace ty::auth
