// The images a spec names, checked at submit (model/spec_images.h): every field is
// named in the caller's dialect, and with tokens only the job's project's images and
// the shared runtimes' are accepted.
#include "model/spec_images.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace ty::model {
namespace {

TEST(SpecImagesTest, TheSpecsFieldIsNamed) {
  JobSpec spec;
  spec.pools.resize(2);
  spec.pools[0].replica_count = 1;
  spec.pools[0].container = ContainerSpec{"gcr.io/p/ok:1", {}, {}, {}};
  spec.pools[1].replica_count = 1;
  spec.pools[1].container = ContainerSpec{"../images/x", {}, {}, {}};
  Status s = CheckSpecImages(spec);
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.field(), "jobSpec.workerPoolSpecs[1].containerSpec.imageUri");
  spec.dialect = Dialect::kMlV1;
  EXPECT_EQ(CheckSpecImages(spec).field(), "trainingInput.workerConfig.imageUri");
  spec.pools[1].container->image_uri = "gcr.io/p/ok:2";
  EXPECT_TRUE(CheckSpecImages(spec).ok());
  // ml v1 package jobs name no image (runtimeVersion picks it).
  spec.pools[1].container.reset();
  spec.pools[1].python_package = PythonPackageSpec{"", {"gs://b/p.tar.gz"}, "m", {}, {}};
  EXPECT_TRUE(CheckSpecImages(spec).ok());
  spec.dialect = Dialect::kVertex;
  EXPECT_EQ(CheckSpecImages(spec).field(),
            "jobSpec.workerPoolSpecs[1].pythonPackageSpec.executorImageUri");
}

// With tokens a job names only its own project's images and the shared runtimes'.
TEST(SpecImagesTest, AJobNamesOnlyItsProjectsImagesAndTheSharedOnes) {
  JobSpec spec;
  spec.pools.resize(2);
  spec.pools[0].container = ContainerSpec{.image_uri = "gcr.io/mine/img:1"};
  spec.pools[1].python_package =
      PythonPackageSpec{.executor_image_uri = "us-docker.pkg.dev/vertex-ai/training/x:1"};
  EXPECT_TRUE(CheckImageProjects("mine", spec).ok());
  spec.pools[1].container = ContainerSpec{.image_uri = "localhost/anything:1"};
  spec.pools[1].python_package.reset();
  EXPECT_TRUE(CheckImageProjects("mine", spec).ok());
  spec.pools[1].container->image_uri = "europe-west4-docker.pkg.dev/theirs/r/img:1";
  Status s = CheckImageProjects("mine", spec);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("workerPoolSpecs[1].containerSpec.imageUri"));
  EXPECT_THAT(s.message(), ::testing::HasSubstr("is an image of project theirs"));
}

}  // namespace
}  // namespace ty::model
