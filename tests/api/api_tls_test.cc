// TLS options of the API server (ApiServer::Options::tls_*): what is wrong with a
// certificate or key is said at creation, naming the file. Serving HTTPS to real
// clients (the CLI, gcloud): tests/integration/tls_test.cc.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "api/api_fixture.h"

namespace ty::api {
namespace {

class ApiTlsTest : public ApiFixture {
 protected:
  // Two self-signed certificates with their keys, made by openssl.
  void SetUp() override {
    ApiFixture::SetUp();
    dir_ = std::filesystem::temp_directory_path() / ("ty-tls-unit-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    for (const char* name : {"a", "b"}) {
      std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 " +
                        std::string("-keyout ") + (dir_ / (std::string(name) + ".key")).string() +
                        " -out " + (dir_ / (std::string(name) + ".pem")).string() +
                        " >/dev/null 2>&1";
      ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    ApiFixture::TearDown();
  }
  Status CreateWith(const std::string& cert, const std::string& key) {
    ApiServer::Options o;
    o.port = 0;
    o.tls_cert_file = cert.empty() ? "" : (dir_ / cert).string();
    o.tls_key_file = key.empty() ? "" : (dir_ / key).string();
    return ApiServer::Create(service_.get(), o).status();
  }
  std::filesystem::path dir_;
};

TEST_F(ApiTlsTest, ACertificateAndItsKeyAreAcceptedAndMistakesNamed) {
  EXPECT_TRUE(CreateWith("a.pem", "a.key").ok());
  Status mismatched = CreateWith("a.pem", "b.key");
  EXPECT_EQ(mismatched.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mismatched.message().find("b.key"), std::string::npos) << mismatched.message();
  EXPECT_NE(mismatched.message().find("mismatch"), std::string::npos) << mismatched.message();
  Status missing = CreateWith("none.pem", "a.key");
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("none.pem"), std::string::npos) << missing.message();
  Status half = CreateWith("a.pem", "");
  EXPECT_EQ(half.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(half.message().find("--tls-key-file"), std::string::npos) << half.message();
  std::ofstream(dir_ / "garbage.key") << "not a key";
  Status garbage = CreateWith("a.pem", "garbage.key");
  EXPECT_NE(garbage.message().find("garbage.key"), std::string::npos) << garbage.message();
}

}  // namespace
}  // namespace ty::api
