#include "images/google_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ty::images {
namespace {

using ::testing::Contains;

TEST(RegistryNamesTest, GoogleHostsAreGcrIoAndPkgDevOnly) {
  for (const char* host : {"gcr.io", "eu.gcr.io", "us-central1-docker.pkg.dev", "us-docker.pkg.dev",
                           "europe-west4-python.pkg.dev"}) {
    EXPECT_TRUE(IsGoogleRegistryHost(host)) << host;
  }
  for (const char* host : {"localhost", "127.0.0.1:5000", "docker.io", "quay.io", "gcr.io.evil",
                           "notgcr.io", "pkg.dev", "evil.com/gcr.io"}) {
    EXPECT_FALSE(IsGoogleRegistryHost(host)) << host;
  }
}

TEST(RegistryNamesTest, TheMirrorReferenceDropsTheHostAndKeepsTagAndDigest) {
  EXPECT_EQ(MirrorReference("gcr.io/p/img:t", "127.77.0.1:80"), "127.77.0.1:80/p/img:t");
  EXPECT_EQ(MirrorReference("us-central1-docker.pkg.dev/p/r/img", "10.0.0.5:80"),
            "10.0.0.5:80/p/r/img");
  EXPECT_EQ(MirrorReference("gcr.io/p/img@sha256:abc", "h:80"), "h:80/p/img@sha256:abc");
  EXPECT_EQ(MirrorReference("localhost/trainyard/busybox:latest", "h:80"), std::nullopt);
  EXPECT_EQ(MirrorReference("busybox", "h:80"), std::nullopt);
  EXPECT_EQ(MirrorReference("gcr.io/", "h:80"), std::nullopt);
  EXPECT_EQ(MirrorReference("gcr.io/p/img", ""), std::nullopt);
  EXPECT_EQ(GoogleRegistryHostOf("eu.gcr.io/p/img:1"), "eu.gcr.io");
}

TEST(RegistryNamesTest, AnImagesProjectIsItsFirstComponentAfterTheHost) {
  EXPECT_EQ(GoogleImageProject("gcr.io/p/img:t"), "p");
  EXPECT_EQ(GoogleImageProject("us-docker.pkg.dev/p/repo/img@sha256:00"), "p");
  EXPECT_EQ(GoogleImageProject("gcr.io/p:t"), "p");
  EXPECT_EQ(GoogleImageProject("localhost/p/img"), std::nullopt);
}

TEST(RegistryNamesTest, TheHostListCoversTheGuidesNamesAndOnlyGoogleHosts) {
  std::vector<std::string> hosts = GoogleRegistryHosts();
  EXPECT_THAT(hosts, Contains("gcr.io"));
  EXPECT_THAT(hosts, Contains("us-central1-docker.pkg.dev"));
  EXPECT_THAT(hosts, Contains("us-docker.pkg.dev"));  // Vertex's prebuilt images.
  for (const std::string& h : hosts) EXPECT_TRUE(IsGoogleRegistryHost(h)) << h;
}

}  // namespace
}  // namespace ty::images
