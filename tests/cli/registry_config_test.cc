#include "cli/registry_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/files.h"

namespace ty::cli {
namespace {

using ::testing::HasSubstr;

TEST(RegistryConfigTest, TheHostsBlockIsAddedReplacedAndRemovedLeavingOtherLines) {
  const std::string original = "127.0.0.1 localhost\n::1 localhost\n";
  std::string once = MergeHostsBlock(original, "127.77.0.1", {"gcr.io", "us-docker.pkg.dev"});
  EXPECT_EQ(once, original + kHostsBlockBegin +
                      "\n127.77.0.1 gcr.io\n127.77.0.1 us-docker.pkg.dev\n" + kHostsBlockEnd +
                      "\n");
  std::string again = MergeHostsBlock(once + "10.0.0.1 later\n", "10.1.1.1", {"gcr.io"});
  EXPECT_EQ(again, original + "10.0.0.1 later\n" + kHostsBlockBegin + "\n10.1.1.1 gcr.io\n" +
                       kHostsBlockEnd + "\n");
  EXPECT_EQ(MergeHostsBlock(again, "", {}), original + "10.0.0.1 later\n");
}

TEST(RegistryConfigTest, TheDropInMarksEachHostPlainHttp) {
  std::string conf = RegistriesConfDropIn({"gcr.io", "eu.gcr.io"});
  EXPECT_THAT(conf, HasSubstr("[[registry]]\nlocation = \"gcr.io\"\ninsecure = true\n"));
  EXPECT_THAT(conf, HasSubstr("location = \"eu.gcr.io\""));
}

TEST(RegistryConfigTest, AuthEntriesAreAddedBesideOthersAndRemovedOnlyIfOurs) {
  Result<std::string> added = MergeAuthFile(
      R"({"auths":{"gcr.io":{"auth":"bWluZQ=="},"quay.io":{"auth":"eA=="}},"credHelpers":{}})",
      {"gcr.io", "eu.gcr.io"}, AuthEntries::kPlaceholder);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  nlohmann::json doc = nlohmann::json::parse(*added);
  EXPECT_EQ(doc["auths"]["gcr.io"]["auth"], "bWluZQ==");  // The user's own stays.
  EXPECT_EQ(doc["auths"]["eu.gcr.io"]["auth"], kRegistryAuth);
  EXPECT_EQ(doc["auths"]["quay.io"]["auth"], "eA==");
  EXPECT_TRUE(doc.contains("credHelpers"));
  nlohmann::json removed =
      nlohmann::json::parse(*MergeAuthFile(*added, {"gcr.io", "eu.gcr.io"}, AuthEntries::kRemove));
  EXPECT_EQ(removed["auths"].size(), 2u);
  EXPECT_FALSE(removed["auths"].contains("eu.gcr.io"));
  EXPECT_TRUE(MergeAuthFile("", {"gcr.io"}, AuthEntries::kPlaceholder).ok());
  EXPECT_FALSE(MergeAuthFile("[1]", {"gcr.io"}, AuthEntries::kPlaceholder).ok());
  EXPECT_FALSE(MergeAuthFile("not json", {"gcr.io"}, AuthEntries::kPlaceholder).ok());
}

// With a token our entries carry it ("trainyard:TOKEN"), replacing our placeholder
// and an older token of ours, never a login of the user's own.
TEST(RegistryConfigTest, ATokenReplacesOurEntriesOnlyAndRemoveTakesThemOut) {
  Result<std::string> placeholder =
      MergeAuthFile(R"({"auths":{"gcr.io":{"auth":"bWluZTpzZWNyZXQ="}}})",
                    {"gcr.io", "eu.gcr.io", "us.gcr.io"}, AuthEntries::kPlaceholder);
  ASSERT_TRUE(placeholder.ok());
  Result<std::string> old =
      MergeAuthFile(*placeholder, {"us.gcr.io"}, AuthEntries::kToken, "ty_old");
  ASSERT_TRUE(old.ok());
  Result<std::string> with_token =
      MergeAuthFile(*old, {"gcr.io", "eu.gcr.io", "us.gcr.io"}, AuthEntries::kToken, "ty_new");
  ASSERT_TRUE(with_token.ok()) << with_token.status().ToString();
  nlohmann::json doc = nlohmann::json::parse(*with_token);
  const std::string ours = Base64Encode("trainyard:ty_new");
  EXPECT_EQ(doc["auths"]["gcr.io"]["auth"], "bWluZTpzZWNyZXQ=");  // "mine:secret" stays.
  EXPECT_EQ(doc["auths"]["eu.gcr.io"]["auth"], ours);             // Placeholder replaced.
  EXPECT_EQ(doc["auths"]["us.gcr.io"]["auth"], ours);             // Old token replaced.
  nlohmann::json removed = nlohmann::json::parse(
      *MergeAuthFile(*with_token, {"gcr.io", "eu.gcr.io", "us.gcr.io"}, AuthEntries::kRemove));
  EXPECT_EQ(removed["auths"].size(), 1u);
  EXPECT_TRUE(removed["auths"].contains("gcr.io"));
}

}  // namespace
}  // namespace ty::cli
