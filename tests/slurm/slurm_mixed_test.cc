// One daemon, two executors (issue 21's per-project choice): `executor: container`
// with `project_executors: {it-slurm: slurm}` runs project it-slurm's jobs on the
// 3-host Slurm cluster (slurm_cluster_env.cc) and every other project's in podman on
// this machine, side by side, each replica reaching the Storage API its own way, and
// a daemon killed -9 meanwhile re-attaches to both.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

constexpr char kImage[] = "localhost/trainyard/sklearn-digits:latest";
const std::vector<std::string> kTerminal = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                                            "JOB_STATE_CANCELLED"};

// Says where it runs and how it reaches the Storage API, then writes an object there.
constexpr char kScript[] = R"SH(
U="$STORAGE_EMULATOR_HOST"
echo "HOST $(hostname)"
case "$U" in
  http://replica:*@10.201.0.1:*) echo "ENDPOINT credential" ;;
  http://host.containers.internal:*) echo "ENDPOINT address" ;;
  *) echo "ENDPOINT unexpected" ;;
esac
echo "hello from $(hostname)" > /tmp/f
curl -sf -X POST --data-binary @/tmp/f -H 'Content-Type: text/plain' \
  "$U/upload/storage/v1/b/$BUCKET/o?uploadType=media&name=out.txt" >/dev/null && echo UPLOADED
sleep 6
echo "LAST LINE"
)SH";

std::string Base(const std::string& project) {
  return "/v1/projects/" + project + "/locations/local/customJobs";
}

std::string Submit(Daemon& d, const std::string& project, const std::string& bucket) {
  nlohmann::json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
                         {"replicaCount", "1"},
                         {"containerSpec",
                          {{"imageUri", kImage},
                           {"command", {"sh", "-c", kScript}},
                           {"env", {{{"name", "BUCKET"}, {"value", bucket}}}}}}};
  nlohmann::json body = {
      {"displayName", "mixed"},
      {"jobSpec",
       {{"workerPoolSpecs", {pool}},
        {"baseOutputDirectory", {{"outputUriPrefix", "gs://" + bucket + "/run/"}}}}}};
  HttpReply r = d.Post(Base(project), body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  return IdOf(r.Json());
}

TEST(MixedDaemonTest, ARoutedProjectRunsOnSlurmTheOthersHereAndARestartKeepsBoth) {
  if (RunProcess({"podman", "image", "exists", kImage}).rc != 0) GTEST_SKIP() << kImage;
  const std::filesystem::path config =
      std::filesystem::temp_directory_path() / ("ty-mixed-" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(config);
    out << "executor: container\nslurm_daemon_host: 10.201.0.1\n"
           "project_executors:\n  it-slurm: slurm\n";
  }
  Daemon d({"--config", config.string()});
  const std::string here = Submit(d, "it", "mixed-here");
  const std::string there = Submit(d, "it-slurm", "mixed-there");
  // While both run: Slurm has the routed job and only that one.
  auto logs_of = [&](const std::string& project, const std::string& id) {
    return d.Get(Base(project) + "/" + id + "/logs").body;
  };
  for (int i = 0; i < 600; ++i) {
    if (logs_of("it", here).find("UPLOADED") != std::string::npos &&
        logs_of("it-slurm", there).find("UPLOADED") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto in_slurm = [](const std::string& id) {
    return RunProcess({"squeue", "-h", "-n", "ty-" + id + "-1", "-o", "%i"}).out;
  };
  EXPECT_NE(in_slurm(there), "");
  EXPECT_EQ(in_slurm(here), "");
  d.Kill();
  d.Start({"--config", config.string()});
  nlohmann::json here_job = d.WaitForField(Base("it") + "/" + here, "state", kTerminal, 120);
  nlohmann::json there_job =
      d.WaitForField(Base("it-slurm") + "/" + there, "state", kTerminal, 120);
  const std::string here_logs = logs_of("it", here);
  const std::string there_logs = logs_of("it-slurm", there);
  ASSERT_EQ(here_job.value("state", ""), "JOB_STATE_SUCCEEDED") << here_logs << d.Log();
  ASSERT_EQ(there_job.value("state", ""), "JOB_STATE_SUCCEEDED") << there_logs << d.Log();

  // The routed project's replica ran on a Slurm host and carried its credential; the
  // other ran in a container here, known by its address.
  EXPECT_NE(there_logs.find("ENDPOINT credential"), std::string::npos) << there_logs;
  EXPECT_TRUE(there_logs.find("HOST n1") != std::string::npos ||
              there_logs.find("HOST n2") != std::string::npos ||
              there_logs.find("HOST n3") != std::string::npos)
      << there_logs;
  EXPECT_NE(here_logs.find("ENDPOINT address"), std::string::npos) << here_logs;
  EXPECT_EQ(here_logs.find("HOST n"), std::string::npos) << here_logs;
  EXPECT_NE(here_logs.find("UPLOADED"), std::string::npos) << here_logs;
  EXPECT_NE(there_logs.find("UPLOADED"), std::string::npos) << there_logs;
  // Both lived through the restart, every line once.
  for (const std::string* logs : {&here_logs, &there_logs}) {
    const size_t last = logs->find("LAST LINE");
    EXPECT_NE(last, std::string::npos) << *logs;
    EXPECT_EQ(logs->find("LAST LINE", last + 1), std::string::npos) << *logs;
    const size_t uploaded = logs->find("UPLOADED");
    EXPECT_EQ(logs->find("UPLOADED", uploaded + 1), std::string::npos) << *logs;
  }
  EXPECT_EQ(d.Get("/storage/v1/b/mixed-here/o/out.txt?alt=media").status, 200);
  EXPECT_EQ(d.Get("/storage/v1/b/mixed-there/o/out.txt?alt=media").status, 200);
  EXPECT_NE(d.Log().find("projects on the slurm executor: it-slurm"), std::string::npos);
  std::filesystem::remove(config);
}

}  // namespace
}  // namespace ty::testing
