// The registry's HTTPS authority and server certificate (auth/registry_tls.h): what the
// server certificate names, that it chains to the authority, and what a restart keeps or
// makes anew. The real docker-registry serves them in tests/integration/registry_test.cc.
#include "auth/registry_tls.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "common/files.h"

namespace ty::auth {
namespace {

namespace fs = std::filesystem;

std::string Text(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : "";
}

std::unique_ptr<X509, decltype(&X509_free)> ReadCert(const std::string& path) {
  std::string pem = Text(path);
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* c = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  return {c, &X509_free};
}

// True when `leaf` verifies against `ca` alone as a TLS server certificate.
bool ChainsTo(X509* leaf, X509* ca) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok;
}

class RegistryTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ty-registry-tls-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RegistryTlsTest, TheServerCertificateNamesOnlyTheGoogleRegistriesAndItsAddress) {
  Result<RegistryTlsFiles> tls = OpenRegistryTls(dir_.string(), "127.77.0.1");
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  auto ca = ReadCert(tls->ca_cert);
  auto server = ReadCert(tls->cert);
  ASSERT_TRUE(ca && server);
  EXPECT_TRUE(ChainsTo(server.get(), ca.get()));
  for (const char* host : {"gcr.io", "us.gcr.io", "us-central1-docker.pkg.dev"}) {
    EXPECT_EQ(X509_check_host(server.get(), host, 0, 0, nullptr), 1) << host;
  }
  for (const char* host : {"example.com", "pkg.dev.example.com", "a.b.gcr.io"}) {
    EXPECT_NE(X509_check_host(server.get(), host, 0, 0, nullptr), 1) << host;
  }
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.77.0.1", 0), 1);
  EXPECT_NE(X509_check_ip_asc(server.get(), "127.0.0.1", 0), 1);
  // The authority signs certificates; the server certificate does not.
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  EXPECT_EQ(X509_check_ca(server.get()), 0);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "ca.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the authority's key is the daemon's alone";
  EXPECT_EQ(tls->ca_pem, Text(tls->ca_cert));
}

TEST_F(RegistryTlsTest, ARestartKeepsTheAuthorityAndANewAddressGetsANewCertificate) {
  Result<RegistryTlsFiles> first = OpenRegistryTls(dir_.string(), "127.77.0.1");
  ASSERT_TRUE(first.ok());
  const std::string server_pem = Text(first->cert);
  Result<RegistryTlsFiles> again = OpenRegistryTls(dir_.string(), "127.77.0.1");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ca_pem, first->ca_pem) << "clients configured once stay configured";
  EXPECT_EQ(Text(again->cert), server_pem);
  EXPECT_TRUE(again->replaced.empty());

  Result<RegistryTlsFiles> moved = OpenRegistryTls(dir_.string(), "127.77.0.2");
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->ca_pem, first->ca_pem);
  auto server = ReadCert(moved->cert);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.77.0.2", 0), 1);
  EXPECT_TRUE(ChainsTo(server.get(), ReadCert(moved->ca_cert).get()));
}

TEST_F(RegistryTlsTest, ADamagedAuthorityIsMadeAnewAndSaysWhy) {
  ASSERT_TRUE(OpenRegistryTls(dir_.string(), "127.77.0.1").ok());
  std::ofstream(dir_ / "ca.crt", std::ios::trunc) << "not a certificate";
  Result<RegistryTlsFiles> tls = OpenRegistryTls(dir_.string(), "127.77.0.1");
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  EXPECT_FALSE(tls->replaced.empty());
  auto ca = ReadCert(tls->ca_cert);
  ASSERT_TRUE(ca);
  EXPECT_TRUE(ChainsTo(ReadCert(tls->cert).get(), ca.get())) << "the server follows it";
}

}  // namespace
}  // namespace ty::auth
