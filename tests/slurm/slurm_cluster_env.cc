// Every test of slurm_tests runs on one real 3-host Slurm cluster
// (scripts/slurm-cluster), brought up before the first test and down after the last;
// the variables `slurm-cluster env` prints (SLURM_CONF; podman's registry files on
// the hosts) are set for the tests and the daemons they start.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "integration/subprocess.h"

namespace ty::testing {
namespace {

const std::string kCluster = std::string(TY_SOURCE_DIR) + "/scripts/slurm-cluster";

class SlurmClusterEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ProcessRun up = RunProcess({kCluster, "up", "3"}, {}, 120);
    ASSERT_EQ(up.rc, 0) << up.err;
    ProcessRun env = RunProcess({kCluster, "env"});
    std::regex assignment("([A-Z_]+)=(\\S+)");
    for (std::sregex_iterator it(env.out.begin(), env.out.end(), assignment), end; it != end;
         ++it) {
      setenv((*it)[1].str().c_str(), (*it)[2].str().c_str(), 1);
    }
    ASSERT_NE(std::getenv("SLURM_CONF"), nullptr) << env.out << env.err;
  }
  void TearDown() override { RunProcess({kCluster, "down"}, {}, 120); }
};

[[maybe_unused]] ::testing::Environment* const kSlurmCluster =
    ::testing::AddGlobalTestEnvironment(new SlurmClusterEnvironment);

}  // namespace
}  // namespace ty::testing
