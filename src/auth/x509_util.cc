#include "auth/x509_util.h"

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <functional>

namespace ty::auth::internal {
namespace {

Result<std::string> PemOf(const std::function<int(BIO*)>& write) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr || write(bio) != 1) {
    BIO_free(bio);
    return Internal("cannot encode PEM");
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

}  // namespace

Key NewP256Key() { return Key(EVP_EC_gen("P-256")); }

Cert NewCertificate(EVP_PKEY* key, const std::string& common_name, long days) {
  Cert cert(X509_new());
  if (!cert || key == nullptr) return nullptr;
  X509* c = cert.get();
  X509_set_version(c, 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;  // A positive serial.
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), days * 24 * 3600);
  X509_set_pubkey(c, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(c), "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  return cert;
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return Internal("cannot make the extension " + value);
  const int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return added == 1 ? Status::Ok() : Internal("cannot add the extension " + value);
}

Result<std::string> KeyPem(EVP_PKEY* key) {
  return PemOf([key](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
  });
}

Result<std::string> CertPem(X509* cert) {
  return PemOf([cert](BIO* b) { return PEM_write_bio_X509(b, cert); });
}

Key KeyFromPem(const std::string& pem) {
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  Key key(b == nullptr ? nullptr : PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr));
  BIO_free(b);
  return key;
}

Cert CertFromPem(const std::string& pem) {
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  Cert cert(b == nullptr ? nullptr : PEM_read_bio_X509(b, nullptr, nullptr, nullptr));
  BIO_free(b);
  return cert;
}

}  // namespace ty::auth::internal
