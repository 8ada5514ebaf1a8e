// Image references are parsed by the OCI / Docker reference grammar at submit: an
// image goes into engine API paths, so anything else is a 400 naming the field.
#include "images/reference.h"

#include <gtest/gtest.h>

#include <string>

namespace ty::images {
namespace {

TEST(ImageReferenceTest, ReferencesUsersWriteAreAccepted) {
  const std::string digest = "sha256:" + std::string(64, 'a');
  for (const std::string& ok :
       {std::string("python:3.11"), std::string("img"), std::string("gcr.io/my-proj/trainer:v1"),
        std::string("us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-12.py310:latest"),
        std::string("localhost:5000/sample/sklearn"), std::string("127.0.0.1:5000/a__b/c-d.e"),
        std::string("registry.example.com/team/img@") + digest, std::string("img:tag@") + digest,
        std::string("a--b/c_d:Tag_1.0-rc")}) {
    EXPECT_TRUE(ParseImageReference(ok).ok())
        << ok << ": " << ParseImageReference(ok).status().ToString();
  }
  auto parsed = ParseImageReference("localhost:5000/team/img:v2");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->domain, "localhost:5000");
  EXPECT_EQ(parsed->path, "team/img");
  EXPECT_EQ(parsed->tag, "v2");
}

TEST(ImageReferenceTest, WhatIsNotAReferenceIsRefused) {
  for (const std::string& bad : {std::string("../containers/json?all=true&x="),
                                 std::string("-v /:/host"),
                                 std::string("$(id)"),
                                 std::string("../info?x="),
                                 std::string("Upper/img"),
                                 std::string("a//b"),
                                 std::string("img:"),
                                 std::string("img:.x"),
                                 std::string("/img"),
                                 std::string("img/"),
                                 std::string("a_-b"),
                                 std::string("img@sha256:abc"),
                                 std::string("-host.io/img"),
                                 std::string("host.io:port/img"),
                                 std::string("img\n"),
                                 std::string(""),
                                 std::string(300, 'a'),
                                 std::string("img:") + std::string(129, 't'),
                                 std::string("a/./b"),
                                 std::string("a/../b")}) {
    Result<ImageReference> r = ParseImageReference(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace ty::images
