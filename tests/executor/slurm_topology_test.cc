// The launcher's arithmetic: Slurm's host lists, task counts and reserved ports, and
// each task's pool, index and peers from a task environment like the ones Slurm 22.05
// gives.
#include "executor/slurm/slurm_topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace ty::executor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

EnvLookup From(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// 1 chief + 2 workers + 1 ps as a heterogeneous job on hosts n1..n3.
std::map<std::string, std::string> HetJob(int rank) {
  return {{"TY_SLURM_POOLS", "0:1,1:2,2:1"},
          {"SLURM_HET_SIZE", "3"},
          {"SLURM_JOB_NODELIST_HET_GROUP_0", "n1"},
          {"SLURM_TASKS_PER_NODE_HET_GROUP_0", "1"},
          {"SLURM_JOB_NODELIST_HET_GROUP_1", "n[2-3]"},
          {"SLURM_TASKS_PER_NODE_HET_GROUP_1", "1(x2)"},
          {"SLURM_JOB_NODELIST_HET_GROUP_2", "n1"},
          {"SLURM_TASKS_PER_NODE_HET_GROUP_2", "1"},
          {"SLURM_STEP_RESV_PORTS", "12000-12003"},
          {"SLURM_PROCID", std::to_string(rank)}};
}

TEST(SlurmTopologyTest, HostListsExpandAsSlurmWritesThem) {
  EXPECT_THAT(*ExpandHostList("n[1-3,5],gpu07,x[08-10]"),
              ElementsAre("n1", "n2", "n3", "n5", "gpu07", "x08", "x09", "x10"));
  EXPECT_THAT(*ExpandHostList("vm"), ElementsAre("vm"));
  EXPECT_THAT(*ExpandHostList("rack[1-2]-ib"), ElementsAre("rack1-ib", "rack2-ib"));
  for (const char* bad : {"", "n[1-3", "n[3-1]", "n[a-b]", "n[1-99999999]"}) {
    EXPECT_FALSE(ExpandHostList(bad).ok()) << bad;
  }
}

TEST(SlurmTopologyTest, TaskCountsAndPortsExpand) {
  EXPECT_THAT(*ExpandTasksPerNode("2(x3),1"), ElementsAre(2, 2, 2, 1));
  EXPECT_THAT(*ExpandPorts("12000-12002,12007"), ElementsAre(12000, 12001, 12002, 12007));
  for (const char* bad : {"", "2(x", "x", "2(x99999999)"}) {
    EXPECT_FALSE(ExpandTasksPerNode(bad).ok()) << bad;
  }
  for (const char* bad : {"", "0", "70000", "12003-12001", "1-99999999"}) {
    EXPECT_FALSE(ExpandPorts(bad).ok()) << bad;
  }
}

TEST(SlurmTopologyTest, EachTaskOfAHetJobKnowsItsPoolIndexPortAndPeers) {
  const std::vector<std::vector<std::string>> cluster = {
      {"n1:12000"}, {"n2:12001", "n3:12002"}, {"n1:12003"}};
  const int want[][3] = {{0, 0, 12000}, {1, 0, 12001}, {1, 1, 12002}, {2, 0, 12003}};
  for (int rank = 0; rank < 4; ++rank) {
    Result<SlurmTopology> t = TopologyFromSlurmEnv(From(HetJob(rank)));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->addresses, cluster);
    EXPECT_EQ(t->pool, want[rank][0]) << rank;
    EXPECT_EQ(t->index, want[rank][1]) << rank;
    EXPECT_EQ(t->port, want[rank][2]) << rank;
  }
}

// A cluster too small for one host per component: one job, pools by rank ranges; a
// pool with no replicas (Vertex allows an empty middle pool) has no addresses.
TEST(SlurmTopologyTest, AHomogeneousJobSplitsRanksIntoPools) {
  Result<SlurmTopology> t = TopologyFromSlurmEnv(From({{"TY_SLURM_POOLS", "0:1,2:3"},
                                                       {"SLURM_JOB_NODELIST", "vm,w2"},
                                                       {"SLURM_TASKS_PER_NODE", "3,1"},
                                                       {"SLURM_STEP_RESV_PORTS", "13000-13003"},
                                                       {"SLURM_PROCID", "3"}}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->addresses, (std::vector<std::vector<std::string>>{
                              {"vm:13000"}, {}, {"vm:13001", "vm:13002", "w2:13003"}}));
  EXPECT_EQ(t->pool, 2);
  EXPECT_EQ(t->index, 2);
}

TEST(SlurmTopologyTest, DisagreementsAreErrorsNamingWhatDisagrees) {
  auto error = [](std::map<std::string, std::string> env) {
    Result<SlurmTopology> t = TopologyFromSlurmEnv(From(std::move(env)));
    return t.ok() ? std::string("ok") : t.status().message();
  };
  auto job = HetJob(0);
  job.erase("SLURM_STEP_RESV_PORTS");
  EXPECT_THAT(error(job), HasSubstr("SLURM_STEP_RESV_PORTS is not set"));
  job = HetJob(0);
  job["SLURM_STEP_RESV_PORTS"] = "12000-12002";
  EXPECT_THAT(error(job), HasSubstr("3 ports for 4 tasks"));
  job = HetJob(0);
  job["TY_SLURM_POOLS"] = "0:1,1:3,2:1";
  EXPECT_THAT(error(job), HasSubstr("component 1 has 2 tasks, pool 1 3 replicas"));
  job = HetJob(0);
  job["TY_SLURM_POOLS"] = "0:1,1:2";
  EXPECT_THAT(error(job), HasSubstr("SLURM_HET_SIZE is 3"));
  job = HetJob(0);
  job["TY_SLURM_POOLS"] = "0:1,0:2,2:1";
  EXPECT_THAT(error(job), HasSubstr("pool 0 twice"));
  job = HetJob(4);
  EXPECT_THAT(error(job), HasSubstr("past the last task"));
  job = HetJob(0);
  job["SLURM_TASKS_PER_NODE_HET_GROUP_1"] = "1";
  EXPECT_THAT(error(job), HasSubstr("SLURM_TASKS_PER_NODE_HET_GROUP_1 has 1 hosts"));
  job = HetJob(0);
  job.erase("SLURM_JOB_NODELIST_HET_GROUP_2");
  EXPECT_THAT(error(job), HasSubstr("SLURM_JOB_NODELIST_HET_GROUP_2 is not set"));
}

}  // namespace
}  // namespace ty::executor
