// FakeExecutor: an in-memory Executor for unit tests of the logic above it.
//
// Launch records the attempt and, unless told otherwise, reports kAttemptStarted
// at once (synchronously, from the caller's thread). Tests then drive replica exits
// with Exit(). Stop() reports every still-running replica as exited with 143
// (SIGTERM), as an engine would. Thread-safe.
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "executor/executor.h"

namespace ty::testing {

class FakeExecutor : public executor::Executor {
 public:
  void SetEventCallback(executor::EventCallback callback) override;
  Status Launch(const executor::AttemptSpec& attempt) override;
  Status Stop(const std::string& job_uid, int attempt, DurationMicros grace) override;
  Status RestartReplica(const std::string& job_uid, int attempt, int pool, int index) override;
  Status Cleanup(const std::string& job_uid, int attempt) override;
  Result<std::vector<executor::ObservedReplica>> Recover() override;
  std::string ReplicaBucketRoot() const override { return bucket_root_; }
  std::string DaemonHostForReplicas() const override { return daemon_host_; }
  bool ReplicasNeedCredential() const override { return needs_credential_; }
  bool HoldsRuntime(const std::string& local_image) override {
    std::lock_guard<std::mutex> lock(mu_);
    return missing_runtimes_.count(local_image) == 0;
  }

  // Test controls.
  void FailNextLaunch(std::string message);  // Next Launch reports kLaunchFailed.
  void HoldLaunches(bool hold);              // Launch records but reports nothing.
  void CompleteHeldLaunch(const std::string& job_uid, int attempt);
  // Reports kReplicaExited for a running replica.
  void Exit(const std::string& job_uid, int attempt, int pool, int index, int exit_code,
            std::optional<int> signal = std::nullopt);
  void SetRecovered(std::vector<executor::ObservedReplica> replicas);
  void SetReplicaBucketRoot(std::string root) { bucket_root_ = std::move(root); }
  // HoldsRuntime answers false for this runtime image (never built here).
  void SetRuntimeMissing(std::string local_image) {
    std::lock_guard<std::mutex> lock(mu_);
    missing_runtimes_.insert(std::move(local_image));
  }
  // How its replicas reach the daemon (as Slurm's: a host name and a credential).
  void SetDaemonHost(std::string host, bool needs_credential) {
    daemon_host_ = std::move(host);
    needs_credential_ = needs_credential;
  }

  std::vector<executor::AttemptSpec> launches() const;
  std::optional<executor::AttemptSpec> LastLaunchOf(const std::string& job_uid) const;
  int stop_calls() const;
  int restart_calls() const;
  std::set<std::string> cleaned() const;  // "uid/attempt"
  bool IsRunning(const std::string& job_uid, int attempt, int pool, int index) const;

 private:
  void Emit(const executor::ExecutorEvent& event);

  mutable std::mutex mu_;
  // Held while a replica's state changes and its event goes out, so events leave in the
  // order the states changed: a test that waits for IsRunning and then calls Exit could
  // otherwise send the exit ahead of kAttemptStarted, which the Executor contract rules
  // out (the job then never went RUNNING). The callback only queues, so this never nests.
  std::mutex order_mu_;
  executor::EventCallback callback_;
  std::vector<executor::AttemptSpec> launches_;
  std::set<std::string> running_;  // "uid/attempt/pool/index"
  std::set<std::string> cleaned_;
  std::optional<std::string> fail_next_;
  bool hold_ = false;
  int stop_calls_ = 0;
  int restart_calls_ = 0;
  std::vector<executor::ObservedReplica> recovered_;
  std::string bucket_root_ = "/gcs";
  std::string daemon_host_ = "127.0.0.1";
  bool needs_credential_ = false;
  std::set<std::string> missing_runtimes_;
};

}  // namespace ty::testing
