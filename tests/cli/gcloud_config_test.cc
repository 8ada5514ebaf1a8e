// What `trainyard config gcloud` writes into a gcloud configuration file.
#include "cli/gcloud_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ty::cli {
namespace {

using ::testing::HasSubstr;

TEST(GcloudConfigTest, SettingsPointEveryApiAtTheDaemonWithATrailingSlash) {
  std::vector<GcloudSetting> s = TrainyardSettings("http://127.0.0.1:8080", "p", "local");
  std::string ini = MergeIni("", s);
  for (const char* api : {"aiplatform", "ml", "logging", "storage"}) {
    EXPECT_THAT(ini, HasSubstr(std::string(api) + " = http://127.0.0.1:8080/\n"));
  }
  EXPECT_THAT(ini, HasSubstr("[auth]\ndisable_credentials = True\n"));
  EXPECT_THAT(ini, HasSubstr("[core]\nproject = p\n"));
  EXPECT_THAT(ini, HasSubstr("[ai]\nregion = local\n"));
  // Logs stream within a second of being written, not gcloud's 60 s polls.
  EXPECT_THAT(ini, HasSubstr("[ml_engine]\npolling_interval = 1\n"));
}

TEST(GcloudConfigTest, WithATokenFileGcloudSendsItsToken) {
  std::string ini = MergeIni(
      "", TrainyardSettings("http://127.0.0.1:8080", "p", "local", "/home/u/.trainyard-token"));
  EXPECT_THAT(ini, HasSubstr("[auth]\ndisable_credentials = False\n"
                             "access_token_file = /home/u/.trainyard-token\n"));
  // And without one, a file set before is cleared (gcloud treats "" as unset).
  EXPECT_THAT(MergeIni(ini, TrainyardSettings("http://127.0.0.1:8080", "p", "local")),
              HasSubstr("[auth]\ndisable_credentials = True\naccess_token_file = \n"));
}

TEST(GcloudConfigTest, MergeReplacesOursAndKeepsEverythingElse) {
  const std::string before =
      "; a comment\n"
      "[core]\n"
      "account = someone@example.com\n"
      "project = old\n"
      "\n"
      "[api_endpoint_overrides]\n"
      "compute = http://elsewhere/\n";
  std::string after = MergeIni(before, {{"core/project", "new"},
                                        {"api_endpoint_overrides/ml", "http://h:1/"},
                                        {"auth/disable_credentials", "True"}});
  EXPECT_EQ(after,
            "; a comment\n"
            "[core]\n"
            "account = someone@example.com\n"
            "project = new\n"
            "\n"
            "[api_endpoint_overrides]\n"
            "compute = http://elsewhere/\n"
            "ml = http://h:1/\n"
            "[auth]\n"
            "disable_credentials = True\n");
  // Applying it again changes nothing.
  EXPECT_EQ(MergeIni(after, {{"core/project", "new"},
                             {"api_endpoint_overrides/ml", "http://h:1/"},
                             {"auth/disable_credentials", "True"}}),
            after);
}

TEST(GcloudConfigTest, ConfigurationNamesAsGcloudAllowsThem) {
  EXPECT_TRUE(CheckConfigurationName("trainyard").ok());
  EXPECT_TRUE(CheckConfigurationName("ty-2").ok());
  for (const char* bad : {"", "Trainyard", "2ty", "a/b", "../x", "a b"}) {
    Status s = CheckConfigurationName(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("--configuration")) << bad;
  }
}

}  // namespace
}  // namespace ty::cli
