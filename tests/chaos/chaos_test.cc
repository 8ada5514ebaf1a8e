// Chaos on the container engine (issue 19): the mixed load of chaos_load.h while the
// daemon is killed -9 at random moments ten times, the container engine is
// unreachable for 20 s once, and (issue 31, as root) the data disk is full for 8 s
// with a kill and a restart inside. Then every job must end as it would have without faults
// (chaos_load.h says what that means). Last, SIGTERM takes under a second and leaves a
// running job running.
//
// Real podman and the real daemon; a few minutes. The seed is printed, and taken from
// $TY_CHAOS_SEED to replay a run's kill moments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include "chaos/chaos_load.h"

namespace ty::testing {
namespace {

class ChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EngineAnswers()) {
      ASSERT_EQ(std::getenv("TRAINYARD_REQUIRE_ENGINE"), nullptr) << "the engine does not answer";
      GTEST_SKIP() << "no container engine answers on " << EngineSocket();
    }
    const char* seed = std::getenv("TY_CHAOS_SEED");
    seed_ = seed ? std::stoul(seed) : std::random_device{}();
    std::cout << "chaos seed " << seed_ << " (TY_CHAOS_SEED replays it)\n";
    rng_.seed(seed_);
    real_socket_ = EngineSocket();
    link_ = std::filesystem::temp_directory_path() /
            ("ty-chaos-engine-" + std::to_string(::getpid()) + ".sock");
    std::filesystem::remove(link_);
    std::filesystem::create_symlink(real_socket_, link_);
    ::setenv("TRAINYARD_ENGINE_SOCKET", link_.c_str(), 1);
    config_ = std::filesystem::temp_directory_path() /
              ("ty-chaos-" + std::to_string(::getpid()) + ".yaml");
    // Four one-vCPU replicas (n1-standard-1) at once: the rest queue.
    std::ofstream(config_) << "capacity: {cpus: 4, memory_gb: 16}\n";
    args_ = {"--config", config_.string(), "--stop-grace", "2"};
    daemon_ = std::make_unique<Daemon>(args_, Daemon::DataDirArg::kOwnDisk);
    if (!daemon_->own_disk()) std::cout << "chaos: not root, so no full-disk phase\n";
  }
  void TearDown() override {
    if (link_.empty()) return;
    if (!std::filesystem::is_symlink(link_)) std::filesystem::create_symlink(real_socket_, link_);
    if (HasFailure() && daemon_) std::cerr << "daemon log (tail):\n" << LogTail();
    daemon_.reset();
    ::setenv("TRAINYARD_ENGINE_SOCKET", real_socket_.c_str(), 1);
    std::filesystem::remove(link_);
    std::filesystem::remove(config_);
  }

  std::string LogTail() const {
    std::string log = daemon_->Log();
    return log.size() > 20000 ? log.substr(log.size() - 20000) : log;
  }

  unsigned seed_ = 0;
  std::mt19937 rng_;
  std::string real_socket_;
  std::filesystem::path link_, config_;
  std::vector<std::string> args_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ChaosTest, EveryJobEndsAsWithoutFaults) {
  chaos::Load load = chaos::SubmitLoad(*daemon_);
  ASSERT_FALSE(HasFailure()) << "the load was not accepted";
  chaos::RunFaults(*daemon_, rng_, args_, load, [this] {
    std::filesystem::remove(link_);  // The engine is gone for 20 s.
    std::this_thread::sleep_for(std::chrono::seconds(20));
    std::filesystem::create_symlink(real_socket_, link_);
  });
  chaos::CheckEnds(*daemon_, load);
  chaos::CheckSigtermLeavesJobsRunning(*daemon_, args_);
}

}  // namespace
}  // namespace ty::testing
