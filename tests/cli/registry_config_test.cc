#include "cli/registry_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ty::cli
