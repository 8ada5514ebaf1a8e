// Chaos on Slurm (issue 21): the mixed load of chaos/chaos_load.h on the 3-host cluster
// while the daemon is killed -9 at random moments ten times and the Slurm controller
// is gone for 15 s once (stopped and started again, as a restart or a failover does).
// Every job must end as it would have without faults: nothing lost, nothing submitted
// or run twice, real exit codes, every log line once and in order.
//
// The seed is printed, and taken from $TY_CHAOS_SEED to replay a run's kill moments.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <thread>
#include <vector>

#include "chaos/chaos_load.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

TEST(SlurmChaosTest, EveryJobEndsAsWithoutFaults) {
  ASSERT_TRUE(EngineHasImage(kTestImage)) << kTestImage << " missing (scripts/build-test-image)";
  const char* seed_env = std::getenv("TY_CHAOS_SEED");
  const unsigned seed = seed_env ? std::stoul(seed_env) : std::random_device{}();
  std::cout << "chaos seed " << seed << " (TY_CHAOS_SEED replays it)\n";
  std::mt19937 rng(seed);
  const std::vector<std::string> args = {"--executor", "slurm",        "--slurm-daemon-host",
                                         "10.201.0.1", "--stop-grace", "2"};
  Daemon d(args);
  // Lines a second apart: the jobs run through the kills and the outage (Slurm
  // starts every job at once here, where the engine's test queues them).
  chaos::Load load = chaos::SubmitLoad(d, 10, "1");
  ASSERT_FALSE(::testing::Test::HasFailure()) << "the load was not accepted";
  const std::string cluster = std::string(TY_SOURCE_DIR) + "/scripts/slurm-cluster";
  std::vector<chaos::Expected> during;  // Submitted while the controller is gone.
  chaos::RunFaults(d, rng, args, load, [&] {
    EXPECT_EQ(RunProcess({cluster, "controller", "stop"}).rc, 0);
    for (int i = 0; i < 2; ++i) {
      during.push_back(chaos::SubmitSingle(d, "during-outage-" + std::to_string(i), 0, "0.2"));
    }
    std::this_thread::sleep_for(std::chrono::seconds(15));
    EXPECT_EQ(RunProcess({cluster, "controller", "start"}).rc, 0);
  });
  load.expected.insert(load.expected.end(), during.begin(), during.end());
  chaos::Figures f = chaos::CheckEnds(d, load);
  if (::testing::Test::HasFailure()) {
    std::string log = d.Log();
    std::cerr << "daemon log (tail):\n"
              << (log.size() > 20000 ? log.substr(log.size() - 20000) : log);
  }
  // Each attempt went to Slurm once: one "is Slurm job" line per job and trial attempt.
  std::string log = d.Log();
  std::map<std::string, int> submitted;
  const std::string mark = " is Slurm job ";
  for (size_t at = log.find(mark); at != std::string::npos; at = log.find(mark, at + 1)) {
    size_t line = log.rfind("slurm: job ", at);
    ++submitted[log.substr(line, at - line)];
  }
  EXPECT_GE(submitted.size(), load.expected.size());  // Every job, and each trial.
  for (const auto& [attempt, n] : submitted) EXPECT_EQ(n, 1) << attempt << " submitted " << n;
  EXPECT_EQ(f.lost + f.wrong + f.rerun + f.lines_lost + f.lines_doubled, 0);
}

}  // namespace
}  // namespace ty::testing
