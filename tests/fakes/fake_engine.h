// FakeEngine: an in-memory container engine (executor::EngineClient) for unit
// tests of ContainerExecutor logic: what it creates, labels, starts, stops and
// removes, and what it does when one engine call fails. The real engine is
// tested through EngineApiClient and the executor contract suite.
//
// Containers do nothing by themselves; the test plays their part: Print() adds
// a log line, Exit() ends a running container, Stopping() shows the state podman
// reports while a stop is under way. StopContainer ends a container with 143
// (SIGTERM), or with 137 when IgnoreTerm() was called for it (the engine's kill
// after the grace; the fake does not wait the grace out, it records it).
// FailNext() makes the next call of one operation fail, once.
//
// Log lines carry engine timestamps: a fake clock that starts at a fixed second
// and moves 1 ms per line, so since-second reads behave as the engine's do.
// Thread-safe; blocking calls (WaitContainer) honour their cancel flag.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "executor/container/engine_client.h"

namespace ty::testing {

class FakeEngine : public executor::EngineClient {
 public:
  // ---- EngineClient --------------------------------------------------------
  Status Ping() override;
  Result<bool> ImageExists(const std::string& image) override;
  Result<executor::ImageConfig> InspectImage(const std::string& image) override;
  Status PullImage(const std::string& image) override;
  Status PullImagePlainHttp(const std::string& image,
                            const executor::RegistryLogin& login) override {
    {
      std::lock_guard<std::mutex> lock(login_mu_);
      pull_logins_.push_back(login);
    }
    return PullImage(image);
  }
  // The logins of PullImagePlainHttp, in order.
  std::vector<executor::RegistryLogin> pull_logins() const {
    std::lock_guard<std::mutex> lock(login_mu_);
    return pull_logins_;
  }
  Status TagImage(const std::string& source, const std::string& target) override;
  Result<std::vector<executor::ImageSummary>> ListImages(const std::string& reference) override;
  Status RemoveImage(const std::string& name) override;
  Status CreateNetwork(const std::string& name,
                       const std::map<std::string, std::string>& labels) override;
  Status RemoveNetwork(const std::string& name) override;
  Result<bool> NetworkExists(const std::string& name) override;
  Result<std::vector<executor::NetworkSubnet>> NetworkSubnets(const std::string& name) override;
  Result<std::vector<std::string>> ListNetworks(
      const std::vector<std::string>& label_filters) override;
  Result<std::string> CreateContainer(const std::string& name,
                                      const std::string& body_json) override;
  // Keeps the SpecGenerator body as given (CreateBody returns it).
  Result<std::string> CreateContainerLibpod(const std::string& name,
                                            const std::string& body_json) override;
  Result<bool> SpeaksLibpod() override { return speaks_libpod; }
  Status StartContainer(const std::string& id) override;
  Result<executor::ContainerState> InspectContainer(const std::string& id) override;
  Result<int> WaitContainer(const std::string& id, const std::atomic<bool>* cancel) override;
  Status KillContainer(const std::string& id, int signal) override;
  Status StopContainer(const std::string& id, int timeout_s) override;
  Status CommitContainer(const std::string& id, const std::string& repo,
                         const std::string& tag) override;
  Status RemoveContainer(const std::string& id) override;
  Result<std::vector<executor::ContainerSummary>> ListContainers(
      const std::vector<std::string>& label_filters) override;
  Status StreamLogs(const std::string& id, bool follow, int64_t since_s,
                    const executor::LogDemuxer::LineCallback& on_line,
                    const std::atomic<bool>* cancel, bool flush_partial = true) override;

  // ---- What the world holds ------------------------------------------------
  bool speaks_libpod = false;               // Podman (true) or another Docker Engine API engine.
  void AddImage(const std::string& image);  // Present locally.
  void AddRegistryImage(const std::string& image);  // Pullable.
  void SetDown(bool down);                          // Every call: Unavailable.
  // The next call of `operation` ("CreateContainer", "StartContainer", ...) whose
  // first argument contains `target` fails with `status`; once.
  void FailNext(const std::string& operation, Status status, const std::string& target = "");

  // ---- Playing the containers' part (by name) -------------------------------
  void Print(const std::string& name, const std::string& line, int stream = 1);
  void Exit(const std::string& name, int exit_code, bool oom_killed = false);
  void Stopping(const std::string& name);    // Running=false, "stopping", provisional 0.
  void IgnoreTerm(const std::string& name);  // StopContainer ends it with 137.

  // ---- What happened ---------------------------------------------------------
  std::vector<std::string> ContainerNames() const;  // Existing, sorted.
  std::vector<std::string> NetworkNames() const;    // Existing, sorted.
  bool IsRunning(const std::string& name) const;
  int Starts(const std::string& name) const;     // Successful starts, removed ones included.
  int StopGrace(const std::string& name) const;  // Last StopContainer's timeout_s; -1 none.
  nlohmann::json CreateBody(const std::string& name) const;  // As created ({} if never).
  std::vector<std::string> Pulls() const;
  // Blocks until `name` exists and runs (true), or `timeout_ms` passed.
  bool WaitRunning(const std::string& name, int timeout_ms) const;

 private:
  // The container whose network namespace `name` joined ("" = none); mu_ held.
  std::string JoinedNamespaceOf(const std::string& name) const;
  // Records a created container (mu_ held); the body's image and labels under these keys.
  Result<std::string> CreateWith(const std::string& name, const std::string& body_json,
                                 const char* image_key, const char* labels_key);
  struct LogLine {
    int64_t time_us;
    int stream;
    std::string text;
  };
  struct Container {
    std::string id;
    std::string name;
    std::map<std::string, std::string> labels;
    std::string status = "created";
    int exit_code = 0;
    bool oom_killed = false;
    bool ignores_term = false;
    int stop_grace = -1;
    std::vector<LogLine> logs;
  };

  // Consumes a FailNext entry matching (operation, target); OK when none.
  Status Injected(const std::string& operation, const std::string& target);
  // `what` by id or name; nullptr when there is none.
  Container* Find(const std::string& what);
  const Container* Find(const std::string& what) const;
  void EndLocked(Container* c, int exit_code);
  static bool Matches(const std::map<std::string, std::string>& labels,
                      const std::vector<std::string>& filters);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool down_ = false;
  std::map<std::string, int64_t> images_;  // Name -> when made (a counter).
  int64_t image_clock_ = 0;
  std::set<std::string> registry_;
  std::vector<std::string> pulls_;
  struct Failure {
    std::string operation;
    std::string target;
    Status status;
  };
  std::vector<Failure> failures_;
  struct Network {
    std::map<std::string, std::string> labels;
    int number = 0;
  };
  std::map<std::string, Network> networks_;
  int next_network_ = 0;
  std::map<std::string, Container> containers_;   // By name.
  std::map<std::string, nlohmann::json> bodies_;  // By name, kept after removal.
  std::map<std::string, int> starts_;             // By name, kept after removal.
  int next_id_ = 0;
  int64_t log_clock_us_ = 1'700'000'000'000'000;

 private:
  mutable std::mutex login_mu_;
  std::vector<executor::RegistryLogin> pull_logins_;
};

}  // namespace ty::testing
