// HTTPS on the main listener (issue 19, item 4): a daemon started with
// --tls-cert-file/--tls-key-file speaks only TLS; the trainyard CLI (--ca-file,
// $TRAINYARD_CA_FILE) and the real gcloud (core/custom_ca_certs_file, written by
// `trainyard config gcloud --ca-file`) reach it and trust its certificate through the
// CA file; without it both refuse the certificate, and plain HTTP gets no answer.
#include <gmock/gmock.h>

#include <fstream>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

using ::testing::HasSubstr;

// A self-signed certificate for 127.0.0.1 (its own CA) and its key, made by openssl.
std::filesystem::path MakeCertificate() {
  static int counter = 0;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ty-tls-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  ProcessRun made =
      RunProcess({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                  "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                  (dir / "key.pem").string(), "-out", (dir / "cert.pem").string()},
                 {}, 60);
  EXPECT_EQ(made.rc, 0) << made.err;
  return dir;
}

class TlsDaemonTest : public ::testing::Test {
 protected:
  TlsDaemonTest()
      : dir_(MakeCertificate()),
        daemon_({"--executor", "process", "--tls-cert-file", (dir_ / "cert.pem").string(),
                 "--tls-key-file", (dir_ / "key.pem").string()}) {
    https_ = "https://" + daemon_.base().substr(std::string("http://").size());
  }
  ~TlsDaemonTest() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  ProcessRun Cli(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(),
                {BinaryDir() + "/bin/trainyard", "--api-endpoint", https_, "--project", "tls-p"});
    env.emplace("TRAINYARD_CA_FILE", "");
    env.emplace("TRAINYARD_TOKEN", "");
    return RunProcess(args, env, 60);
  }

  std::filesystem::path dir_;
  Daemon daemon_;
  std::string https_;
};

const std::vector<std::string> kList = {"ai", "custom-jobs", "list", "--region", "us-central1"};

TEST_F(TlsDaemonTest, TheCliReachesAnHttpsDaemonThroughItsCaFile) {
  ProcessRun untrusted = Cli(kList);
  EXPECT_NE(untrusted.rc, 0);
  EXPECT_THAT(untrusted.err, HasSubstr("certificate")) << untrusted.err;

  ProcessRun by_flag = Cli({"--ca-file", (dir_ / "cert.pem").string(), "ai", "custom-jobs",
                            "create", "--region", "us-central1", "--display-name", "over-tls",
                            "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,"
                            "container-image-uri=localhost/x:1"});
  EXPECT_EQ(by_flag.rc, 0) << by_flag.err;
  ProcessRun by_env = Cli(kList, {{"TRAINYARD_CA_FILE", (dir_ / "cert.pem").string()}});
  EXPECT_EQ(by_env.rc, 0) << by_env.err;
  EXPECT_THAT(by_env.out, HasSubstr("over-tls"));

  // Plain HTTP to the TLS port: no HTTP answer (the handshake fails), never a job list.
  HttpReply plain = daemon_.Get("/v1/projects/tls-p/locations/us-central1/customJobs");
  EXPECT_NE(plain.status, 200);
  EXPECT_THAT(plain.body, ::testing::Not(HasSubstr("over-tls")));
}

// Links back to the daemon (the discovery document's rootUrl, Cloud Storage's
// selfLink and mediaLink) name the scheme the request came over.
TEST_F(TlsDaemonTest, LinksBackToTheDaemonAreHttps) {
  ProcessRun doc = RunProcess({"curl", "-sS", "--cacert", (dir_ / "cert.pem").string(),
                               https_ + "/discovery/v1/apis/ml/v1/rest"},
                              {}, 60);
  ASSERT_EQ(doc.rc, 0) << doc.err;
  nlohmann::json parsed = nlohmann::json::parse(doc.out, nullptr, false);
  EXPECT_EQ(parsed.value("rootUrl", ""), https_ + "/") << doc.out;
}

TEST_F(TlsDaemonTest, GcloudConfiguredWithTheCaFileListsJobsAndReadsLogs) {
  const std::string gcloud_dir = (dir_ / "gcloud").string();
  ProcessRun configured =
      RunProcess({BinaryDir() + "/bin/trainyard", "config", "gcloud", "--api-endpoint", https_,
                  "--project", "tls-p", "--ca-file", (dir_ / "cert.pem").string()},
                 {{"CLOUDSDK_CONFIG", gcloud_dir}, {"TRAINYARD_TOKEN", ""}});
  ASSERT_EQ(configured.rc, 0) << configured.err;
  EXPECT_THAT(configured.out,
              HasSubstr("core/custom_ca_certs_file = " + (dir_ / "cert.pem").string()));
  // Unset (""): the environment's property would win over the configuration's, and
  // Python's requests prefers the two bundles to gcloud's property.
  const std::map<std::string, std::string> env = {{"CLOUDSDK_CONFIG", gcloud_dir},
                                                  {"CLOUDSDK_CORE_DISABLE_PROMPTS", "1"},
                                                  {"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", ""},
                                                  {"REQUESTS_CA_BUNDLE", ""},
                                                  {"CURL_CA_BUNDLE", ""}};
  std::vector<std::string> create = {"gcloud",
                                     "ai",
                                     "custom-jobs",
                                     "create",
                                     "--region",
                                     "us-central1",
                                     "--display-name",
                                     "gcloud-tls",
                                     "--worker-pool-spec=machine-type=n1-standard-4,replica-"
                                     "count=1,container-image-uri=localhost/x:1"};
  ProcessRun created = RunProcess(create, env, 120);
  EXPECT_EQ(created.rc, 0) << created.err;
  std::vector<std::string> list = {"gcloud"};
  list.insert(list.end(), kList.begin(), kList.end());
  ProcessRun listed = RunProcess(list, env, 120);
  EXPECT_EQ(listed.rc, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("gcloud-tls"));
  ProcessRun logs =
      RunProcess({"gcloud", "logging", "read", "resource.type=ml_job", "--limit", "1"}, env, 120);
  EXPECT_EQ(logs.rc, 0) << logs.err;

  // Without the CA file gcloud refuses the certificate.
  std::map<std::string, std::string> untrusting = env;
  untrusting["CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE"] = "/etc/ssl/certs/ca-certificates.crt";
  ProcessRun refused = RunProcess(list, untrusting, 120);
  EXPECT_NE(refused.rc, 0);
  EXPECT_THAT(refused.err, HasSubstr("CERTIFICATE_VERIFY_FAILED")) << refused.err;
}

}  // namespace
}  // namespace ty::testing
