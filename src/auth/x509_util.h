// Internal to auth/: the few OpenSSL steps the daemon's own keys and certificates share
// (the registry's token-signing pair, the registry's TLS authority and server
// certificate). P-256 keys, SHA-256 signatures.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace ty::auth::internal {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

Key NewP256Key();
// A version-3 certificate of `key` named CN=`common_name`, valid from an hour ago for
// `days`, with a random serial; its issuer and signature are the caller's to set.
Cert NewCertificate(EVP_PKEY* key, const std::string& common_name, long days);
// Adds an X.509v3 extension in OpenSSL's config syntax ("critical,CA:TRUE"), with
// `issuer` as the issuing certificate (itself when self-signed).
Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value);

Result<std::string> KeyPem(EVP_PKEY* key);
Result<std::string> CertPem(X509* cert);
Key KeyFromPem(const std::string& pem);    // Null when it does not parse.
Cert CertFromPem(const std::string& pem);  // Null when it does not parse.

}  // namespace ty::auth::internal
