// The executor contract (executor.h) for the Slurm executor on a real 3-host cluster
// (slurm_cluster_env.cc): the same tests the container and process executors pass.
#include <iostream>

#include "executor/executor_contract_suite.h"
#include "executor/slurm/slurm_executor.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

class SlurmBackend : public Backend {
 public:
  SlurmBackend() {
    char tmpl[] = "/tmp/ty-slurm-contract-XXXXXX";  // /tmp: every host sees it.
    state_dir_ = mkdtemp(tmpl);
  }
  ~SlurmBackend() override {
    std::error_code ec;
    std::filesystem::remove_all(state_dir_, ec);
  }
  std::string Name() const override { return "Slurm"; }
  bool NeedsEngine() const override { return true; }
  Result<std::unique_ptr<executor::Executor>> MakeExecutor(logs::LogSink* sink) override {
    executor::SlurmExecutor::Options o;
    o.clock = SystemClock::Get();
    o.state_dir = state_dir_;
    o.launcher = std::string(TY_BINARY_DIR) + "/bin/ty-slurm-launch";
    o.log_sink = sink;
    o.stop_grace_s = 2;
    ASSIGN_OR_RETURN(auto ex, executor::SlurmExecutor::Create(o));
    return std::unique_ptr<executor::Executor>(std::move(ex));
  }
  void SetScript(executor::ReplicaLaunch* r, const std::string& script) override {
    r->image = kTestImage;
    r->command = {"/bin/sh", "-c", script};
  }
  // Its attempt directories, a Slurm job not ended, a container on any host.
  bool Leftovers(const std::string& job_uid) override {
    for (const auto& entry : std::filesystem::directory_iterator(state_dir_)) {
      if (entry.path().filename().string().rfind(job_uid + "-", 0) == 0) {
        std::cerr << "still there: " << entry.path() << "\n";
        return true;
      }
    }
    ProcessRun jobs = RunProcess({"squeue", "-h", "-t", "PD,R,CG,S", "-o", "%i %j %T"});
    if (jobs.out.find("ty-" + job_uid + "-") != std::string::npos) {
      std::cerr << "still in Slurm: " << jobs.out;
      return true;
    }
    for (const std::string& c : ContainersOf(job_uid))
      std::cerr << "still there: container " << c << "\n";
    return !ContainersOf(job_uid).empty();
  }
  void ForceClean(const std::string& job_uid) override {
    for (int attempt = 1; attempt <= 2; ++attempt) {
      RunProcess({"scancel", "-n", "ty-" + job_uid + "-" + std::to_string(attempt)});
    }
    for (const std::string& name : ContainersOf(job_uid)) RunProcess({"podman", "rm", "-f", name});
  }

 private:
  static std::vector<std::string> ContainersOf(const std::string& job_uid) {
    ProcessRun ps = RunProcess(
        {"podman", "ps", "-a", "--filter", "name=ty-" + job_uid + "-", "--format", "{{.Names}}"});
    std::vector<std::string> out;
    std::istringstream lines(ps.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) out.push_back(line);
    }
    return out;
  }

  std::string state_dir_;
};

INSTANTIATE_TEST_SUITE_P(
    Slurm, ExecutorContractTest,
    ::testing::Values(BackendFactory{"Slurm", [] { return std::make_unique<SlurmBackend>(); }}),
    [](const ::testing::TestParamInfo<BackendFactory>& info) { return info.param.name; });

}  // namespace
}  // namespace ty::testing
