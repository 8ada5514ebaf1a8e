// Replica credentials (auth/replica_credentials.h): what a token proves, how it
// travels, and the secret file behind it.
#include "auth/replica_credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/files.h"

namespace ty::auth {
namespace {

TEST(ReplicaCredentialsTest, ATokenNamesItsJobAndNoOther) {
  ReplicaCredentials c = ReplicaCredentials::WithSecret(std::string(32, 's'));
  const std::string token = c.TokenFor("1732000000000123456");
  EXPECT_EQ(token.rfind("1732000000000123456.", 0), 0u);
  EXPECT_EQ(c.JobOf(token), "1732000000000123456");
  // Another job's uid with this job's MAC, a MAC cut short or altered, nothing at all.
  const std::string mac = token.substr(token.find('.') + 1);
  EXPECT_FALSE(c.JobOf("1732000000000123457." + mac));
  EXPECT_FALSE(c.JobOf(token.substr(0, token.size() - 1)));
  std::string altered = token;
  altered.back() = altered.back() == '0' ? '1' : '0';
  EXPECT_FALSE(c.JobOf(altered));
  EXPECT_FALSE(c.JobOf(""));
  EXPECT_FALSE(c.JobOf("." + mac));
  // Another daemon's secret makes other tokens.
  EXPECT_FALSE(ReplicaCredentials::WithSecret(std::string(32, 't')).JobOf(token));
}

TEST(ReplicaCredentialsTest, TheCredentialIsABearerTokenOrBasicAuthsPassword) {
  EXPECT_EQ(ReplicaCredential("Bearer abc.123"), "abc.123");
  EXPECT_EQ(ReplicaCredential("bearer  abc.123 "), "abc.123");
  // What requests, Go and curl send for http://replica:abc.123@host: base64("replica:abc.123").
  EXPECT_EQ(ReplicaCredential("Basic " + Base64Encode("replica:abc.123")), "abc.123");
  EXPECT_EQ(BasicUserinfo("Basic " + Base64Encode("replica:abc.123")), "replica:abc.123");
  EXPECT_EQ(ReplicaCredential("Basic " + Base64Encode("no colon")), "");
  EXPECT_EQ(ReplicaCredential("Basic !!!!"), "");
  EXPECT_EQ(ReplicaCredential("Basic abc"), "");  // Not a whole base64 quantum.
  EXPECT_EQ(ReplicaCredential("Digest x"), "");
  EXPECT_EQ(ReplicaCredential(""), "");
}

TEST(ReplicaCredentialsTest, TheEndpointCarriesTheCredentialAsUserinfo) {
  EXPECT_EQ(WithUserinfo("http://10.0.0.1:8000", "replica", "1.ab"),
            "http://replica:1.ab@10.0.0.1:8000");
  EXPECT_EQ(WithUserinfo("http://h:1/x", "a b", "c@d"), "http://a%20b:c%40d@h:1/x");
  EXPECT_EQ(WithUserinfo("no-scheme", "a", "b"), "no-scheme");
}

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-secret-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SecretFileTest, IsMadeOnceOwnerOnlyAndKeptAcrossOpens) {
  const std::string path = (dir_ / "replica-secret").string();
  Result<ReplicaCredentials> first = ReplicaCredentials::Open(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  // A restarted daemon knows the tokens its predecessor gave out.
  Result<ReplicaCredentials> again = ReplicaCredentials::Open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->JobOf(first->TokenFor("7")), "7");
}

TEST_F(SecretFileTest, ASecretOthersCanReadOrOfTheWrongSizeIsRefused) {
  const std::string path = (dir_ / "replica-secret").string();
  ASSERT_TRUE(WriteFileAtomically(path, std::string(32, 'x')).ok());
  chmod(path.c_str(), 0644);
  Result<ReplicaCredentials> open = ReplicaCredentials::Open(path);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("0600"), std::string::npos);
  ASSERT_TRUE(WritePrivateFile(path, "short").ok());
  open = ReplicaCredentials::Open(path);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("holds 5 bytes"), std::string::npos);
}

}  // namespace
}  // namespace ty::auth
