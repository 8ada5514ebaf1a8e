// The registry's token service, pure parts and the signer: who gets which actions,
// what a scope may be, and a token whose ES256 signature verifies with the public key
// of the certificate the registry trusts (the real docker-registry takes it in
// tests/integration/registry_auth_test.cc).
#include "auth/registry_tokens.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/files.h"

namespace ty::auth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<std::string> kShared = {"vertex-ai", "deeplearning-platform-release"};

Principal Grant(Role role, std::vector<std::string> projects) {
  Principal p;
  p.name = "t";
  p.role = role;
  p.projects = std::move(projects);
  return p;
}

std::vector<std::string> Granted(const Principal* who, const std::string& scope) {
  Result<RegistryScope> parsed = ParseRegistryScope(scope);
  EXPECT_TRUE(parsed.ok()) << scope << ": " << parsed.status().ToString();
  return parsed.ok() ? GrantedActions(who, *parsed, kShared) : std::vector<std::string>{};
}

TEST(RegistryScopeTest, ParsesTypeNameAndActions) {
  Result<RegistryScope> s = ParseRegistryScope("repository:proj-a/trainer/v2:pull,push,pull");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->type, "repository");
  EXPECT_EQ(s->name, "proj-a/trainer/v2");
  EXPECT_THAT(s->actions, ElementsAre("pull", "push"));  // Each once.
  EXPECT_TRUE(ParseRegistryScope("registry:catalog:*").ok());
  EXPECT_TRUE(ParseRegistryScope("repository:a/b.c_d__e-f--g:pull").ok());
}

TEST(RegistryScopeTest, RefusesWhatNoRepositoryIsNamed) {
  for (const std::string& bad : std::vector<std::string>{
           "repository", "repository:a/b", "repository:A/b:pull", "repository:a//b:pull",
           "repository:/a:pull", "repository:a/b/:pull", "repository:a/.b:pull",
           "repository:a/b..c:pull", "repository:a/b:", "repository:a/b:PULL",
           "repository:a/b:pull,,push", "Repo:a/b:pull", "repository:a/b c:pull",
           "repository:a\x01/b:pull", "repository:" + std::string(300, 'a') + ":pull",
           "repository:a/b:pull,push,a,b,c,d,e,f,g"}) {
    EXPECT_FALSE(ParseRegistryScope(bad).ok()) << bad;
  }
}

TEST(RegistryGrantTest, EditorsPushTheirProjectsViewersPullThem) {
  const Principal editor = Grant(Role::kEditor, {"proj-a"});
  EXPECT_THAT(Granted(&editor, "repository:proj-a/img:pull,push"), ElementsAre("pull", "push"));
  EXPECT_THAT(Granted(&editor, "repository:proj-b/img:pull,push"), IsEmpty());
  EXPECT_THAT(Granted(&editor, "repository:proj-a/img:delete"), IsEmpty());
  const Principal viewer = Grant(Role::kViewer, {"proj-a"});
  EXPECT_THAT(Granted(&viewer, "repository:proj-a/img:pull,push"), ElementsAre("pull"));
  // A project's name alone is no repository of it.
  EXPECT_THAT(Granted(&editor, "repository:proj-a:pull,push"), IsEmpty());
}

TEST(RegistryGrantTest, SharedRuntimesPullForAllPushForAdminsOfEveryProject) {
  EXPECT_THAT(Granted(nullptr, "repository:vertex-ai/training/sklearn:pull,push"),
              ElementsAre("pull"));
  EXPECT_THAT(Granted(nullptr, "repository:proj-a/img:pull"), IsEmpty());
  const Principal editor = Grant(Role::kEditor, {"vertex-ai"});
  EXPECT_THAT(Granted(&editor, "repository:vertex-ai/training/x:push"), IsEmpty());
  const Principal narrow_admin = Grant(Role::kAdmin, {"proj-a"});
  EXPECT_THAT(Granted(&narrow_admin, "repository:vertex-ai/training/x:push"), IsEmpty());
  EXPECT_THAT(Granted(&narrow_admin, "registry:catalog:*"), IsEmpty());
  const Principal admin = Grant(Role::kAdmin, {"*"});
  EXPECT_THAT(Granted(&admin, "repository:vertex-ai/training/x:push"), ElementsAre("push"));
  EXPECT_THAT(Granted(&admin, "repository:proj-z/x:pull,push,delete"),
              ElementsAre("pull", "push", "delete"));
  EXPECT_THAT(Granted(&admin, "registry:catalog:*"), ElementsAre("*"));
}

std::string FromBase64Url(std::string text) {
  for (char& c : text) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (text.size() % 4 != 0) text += '=';
  std::string out(text.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  while (!text.empty() && text.back() == '=') {
    text.pop_back();
    out.pop_back();
  }
  return out;
}

// ES256 over `input` by the key of the PEM certificate at `cert_path`.
bool Verifies(const std::string& cert_path, const std::string& input, const std::string& raw) {
  FILE* f = fopen(cert_path.c_str(), "r");
  if (f == nullptr) return false;
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  fclose(f);
  if (cert == nullptr || raw.size() != 64) return false;
  ECDSA_SIG* sig = ECDSA_SIG_new();
  ECDSA_SIG_set0(sig, BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), 32, nullptr),
                 BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()) + 32, 32, nullptr));
  unsigned char* der = nullptr;
  const int der_len = i2d_ECDSA_SIG(sig, &der);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, X509_get0_pubkey(cert)) == 1 &&
      EVP_DigestVerify(ctx, der, der_len, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  OPENSSL_free(der);
  ECDSA_SIG_free(sig);
  X509_free(cert);
  return ok;
}

class RegistryIssuerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-regtok-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(RegistryIssuerTest, ATokenHoldsItsGrantsAndVerifiesWithTheCertificate) {
  auto issuer = RegistryTokenIssuer::Open(dir_.string());
  ASSERT_TRUE(issuer.ok()) << issuer.status().ToString();
  RegistryGrant pushes{{"repository", "proj-a/img", {"pull", "push"}}};
  RegistryGrant nothing{{"repository", "proj-b/img", {}}};
  const std::string token =
      (*issuer)->Issue("trainyardd", "trainyard-registry", "ea", {pushes, nothing}, 1000, 300);
  const size_t dot1 = token.find('.'), dot2 = token.rfind('.');
  ASSERT_NE(dot1, dot2);
  nlohmann::json header = nlohmann::json::parse(FromBase64Url(token.substr(0, dot1)));
  nlohmann::json claims =
      nlohmann::json::parse(FromBase64Url(token.substr(dot1 + 1, dot2 - dot1 - 1)));
  EXPECT_EQ(header["alg"], "ES256");
  ASSERT_EQ(header["x5c"].size(), 1u);
  EXPECT_EQ(claims["iss"], "trainyardd");
  EXPECT_EQ(claims["aud"], "trainyard-registry");
  EXPECT_EQ(claims["sub"], "ea");
  EXPECT_EQ(claims["exp"], 1300);
  EXPECT_LE(claims["nbf"].get<int64_t>(), 1000);
  ASSERT_EQ(claims["access"].size(), 1u);  // The grant of nothing is left out.
  EXPECT_EQ(claims["access"][0]["name"], "proj-a/img");
  EXPECT_EQ(claims["access"][0]["actions"], nlohmann::json({"pull", "push"}));
  EXPECT_TRUE(Verifies((*issuer)->cert_path(), token.substr(0, dot2),
                       FromBase64Url(token.substr(dot2 + 1))));
  // Not a signature over anything else.
  EXPECT_FALSE(Verifies((*issuer)->cert_path(), token.substr(0, dot2) + "x",
                        FromBase64Url(token.substr(dot2 + 1))));
}

TEST_F(RegistryIssuerTest, TheKeyOutlivesARestartInPrivateFilesAndADamagedOneIsReplaced) {
  auto first = RegistryTokenIssuer::Open(dir_.string());
  ASSERT_TRUE(first.ok());
  Result<std::string> cert = ReadFile((*first)->cert_path());
  ASSERT_TRUE(cert.ok());
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "token-key.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = RegistryTokenIssuer::Open(dir_.string());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->replaced().empty());
  EXPECT_EQ(*ReadFile((*again)->cert_path()), *cert);  // The registry trusts it still.
  std::ofstream(dir_ / "token-key.pem", std::ios::trunc) << "-----BEGIN PRIVATE KEY-----\nx\n";
  auto damaged = RegistryTokenIssuer::Open(dir_.string());
  ASSERT_TRUE(damaged.ok()) << damaged.status().ToString();
  EXPECT_THAT((*damaged)->replaced(), HasSubstr("did not load"));
  EXPECT_NE(*ReadFile((*damaged)->cert_path()), *cert);
  const std::string token = (*damaged)->Issue("i", "s", "x", {}, 1, 60);
  const size_t dot = token.rfind('.');
  EXPECT_TRUE(Verifies((*damaged)->cert_path(), token.substr(0, dot),
                       FromBase64Url(token.substr(dot + 1))));
}

}  // namespace
}  // namespace ty::auth
