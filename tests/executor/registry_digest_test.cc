#include "executor/container/registry_digest.h"

#include <gtest/gtest.h>

namespace ty::executor::internal {
namespace {

TEST(RegistryDigestTest, ABearerChallengeGivesItsParameters) {
  auto c = BearerChallenge(
      R"(Bearer realm="http://127.0.0.1:8080/registry/token",service="trainyard-registry",scope="repository:p/t:pull")");
  EXPECT_EQ(c["realm"], "http://127.0.0.1:8080/registry/token");
  EXPECT_EQ(c["service"], "trainyard-registry");
  EXPECT_EQ(c["scope"], "repository:p/t:pull");
  EXPECT_TRUE(BearerChallenge("Basic realm=\"x\"").empty());
  EXPECT_TRUE(BearerChallenge("").empty());
  EXPECT_EQ(BearerChallenge("Bearer realm=unquoted, service=s")["service"], "s");
  EXPECT_TRUE(BearerChallenge("Bearer realm=\"never closed").empty());
}

TEST(RegistryDigestTest, AReferenceWithoutATagIsRefusedBeforeAnyRequest) {
  EXPECT_EQ(RegistryManifestDigest("no-slash", {}, 100).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ty::executor::internal
