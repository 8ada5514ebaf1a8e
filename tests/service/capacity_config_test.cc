// Where admission's capacity comes from: nvidia-smi's list, the config's keys and
// the defaults that keep a workstation useful without any configuration.
#include "service/capacity_config.h"

#include <gtest/gtest.h>

#include "format/yaml_json.h"

namespace ty::service {
namespace {

nlohmann::json Yaml(const std::string& text) {
  auto doc = format::ParseYamlOrJson(text);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : nlohmann::json();
}

TEST(CapacityConfigTest, NvidiaSmiNamesBecomeVertexAcceleratorTypes) {
  auto gpus = ParseNvidiaSmiList(
      "GPU 0: Tesla T4 (UUID: GPU-1)\n"
      "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-2)\n"
      "GPU 2: NVIDIA A100-SXM4-40GB (UUID: GPU-3)\n"
      "GPU 3: NVIDIA H100 80GB HBM3 (UUID: GPU-4)\n"
      "GPU 4: NVIDIA L4 (UUID: GPU-5)\n"
      "GPU 5: NVIDIA L40S (UUID: GPU-6)\n"
      "No devices were found\n");
  ASSERT_EQ(gpus.size(), 6u);
  EXPECT_EQ(gpus[0].type, "NVIDIA_TESLA_T4");
  EXPECT_EQ(gpus[1].type, "NVIDIA_A100_80GB");
  EXPECT_EQ(gpus[2].type, "NVIDIA_TESLA_A100");
  EXPECT_EQ(gpus[3].type, "NVIDIA_H100_80GB");
  EXPECT_EQ(gpus[4].type, "NVIDIA_L4");
  EXPECT_EQ(gpus[5].type, "NVIDIA_L40S") << "a model the enum lacks keeps its name";
  EXPECT_EQ(gpus[5].index, 5);
}

// `n` single-replica n1-standard-4 jobs of project p, queued in order.
std::vector<scheduler::JobDemand> StandardJobs(int n) {
  std::vector<scheduler::JobDemand> queue;
  for (int i = 0; i < n; ++i) {
    scheduler::JobDemand j;
    j.uid = std::to_string(i);
    j.project = "p";
    j.queued_since = i;
    j.replicas.push_back({4, 15, "", 0, "f"});
    queue.push_back(j);
  }
  return queue;
}

TEST(CapacityConfigTest, TheDetectedHostIsOvercommittedSoFourStandardJobsFitATwoCoreMachine) {
  HostInventory host{"ws", 2, 24, {}};
  auto o = AdmissionOptionsFromConfig(nlohmann::json(), host);
  ASSERT_TRUE(o.ok());
  const scheduler::Capacity& c = o->capacity;
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_FALSE(c.strict);
  std::vector<scheduler::JobDemand> queue = StandardJobs(5);
  auto d = scheduler::Admit(c, {}, queue, 0);
  EXPECT_EQ(d.admit.size(), 4u) << "at least four n1-standard-4 jobs at once, not ten";
}

TEST(CapacityConfigTest, OnAClusterAdmissionCountsItsNodesWithoutOvercommit) {
  std::vector<HostInventory> nodes = {{"n1", 8, 64, {}}, {"n2", 8, 64, {}}, {"n3", 8, 64, {}}};
  auto o = AdmissionOptionsForCluster(nlohmann::json(), nodes);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  const scheduler::Capacity& c = o->capacity;
  ASSERT_EQ(c.nodes.size(), 3u);
  EXPECT_EQ(c.cpu_overcommit, 1);
  EXPECT_FALSE(c.strict);
  std::vector<scheduler::JobDemand> queue = StandardJobs(8);
  EXPECT_EQ(scheduler::Admit(c, {}, queue, 0).admit.size(), 6u) << "two per 8-CPU node";
  auto quota = AdmissionOptionsForCluster(Yaml("quotas: {p: {jobs: 1}}\n"), nodes);
  ASSERT_TRUE(quota.ok());
  EXPECT_EQ(quota->capacity.quotas.at("p").jobs, 1) << "quotas still apply";
  EXPECT_FALSE(AdmissionOptionsForCluster(nlohmann::json(), {}).ok());
}

TEST(CapacityConfigTest, ADeclaredCapacityIsStrictAndExactUnlessTold) {
  HostInventory host{"ws", 2, 24, {}};
  auto o = AdmissionOptionsFromConfig(
      Yaml("capacity: {cpus: 16, memory_gb: 64, gpus: {NVIDIA_TESLA_T4: 2, NVIDIA_L4: 1}}\n"
           "quotas: {team-a: {jobs: 2, cpus: 8}}\n"
           "machine_types: {custom-box: {cpus: 3, memory_gb: 5}}\n"),
      host);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  const scheduler::Capacity& c = o->capacity;
  EXPECT_TRUE(c.strict);
  EXPECT_EQ(c.cpu_overcommit, 1);
  ASSERT_EQ(c.nodes[0].gpus.size(), 3u);
  EXPECT_EQ(c.nodes[0].gpus[2].index, 2);
  EXPECT_EQ(c.quotas.at("team-a").jobs, 2);
  EXPECT_EQ(c.quotas.at("team-a").cpus, 8);
  EXPECT_EQ(c.quotas.at("team-a").gpus, -1);
  EXPECT_EQ(o->machine_types.at("custom-box").vcpus, 3);

  o = AdmissionOptionsFromConfig(Yaml("overcommit: {cpu: 2}\nstrict: true\n"), host);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->capacity.cpu_overcommit, 2);
  EXPECT_EQ(o->capacity.memory_overcommit, 3);
  EXPECT_TRUE(o->capacity.strict);
}

TEST(CapacityConfigTest, BadValuesNameTheKey) {
  HostInventory host;
  for (const auto& [yaml, message] : std::vector<std::pair<std::string, std::string>>{
           {"capacity: {cpus: 0, memory_gb: 4}", "config: capacity.cpus must be a positive number"},
           {"capacity: {cpus: 4}", "config: capacity needs cpus and memory_gb"},
           {"capacity: {cpus: 4, memory_gb: 4, gpus: {T4: -1}}",
            "config: capacity.gpus.T4 must be an integer from 0 to 64"},
           {"overcommit: {cpus: 2}", "config: overcommit: unknown key \"cpus\""},
           {"strict: maybe", "config: strict must be true or false"},
           {"quotas: {a: {cpus: -1}}", "config: quotas.a.cpus must be a non-negative number"},
           {"machine_types: {x: {cpus: 1}}", "config: machine_types.x needs cpus and memory_gb"},
       }) {
    auto o = AdmissionOptionsFromConfig(Yaml(yaml), host);
    ASSERT_FALSE(o.ok()) << yaml;
    EXPECT_EQ(o.status().message(), message) << yaml;
  }
}

}  // namespace
}  // namespace ty::service
