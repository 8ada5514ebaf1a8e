// The executor contract suite (executor.h), run for real against every backend:
// ContainerExecutor on the local engine with the busybox test image, and
// ProcessExecutor with /bin/sh. A backend is a small factory; the tests only
// speak the Executor interface plus "is anything of this job left?".
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "executor/container/container_executor.h"
#include "executor/container/engine_api_client.h"
#include "executor/event_recorder.h"
#include "executor/executor.h"
#include "executor/process_executor.h"
#include "executor/recording_log_sink.h"

namespace ty::testing {

inline const char* EngineSocket() {
  const char* s = std::getenv("TRAINYARD_ENGINE_SOCKET");
  return (s != nullptr && *s != '\0') ? s : "/run/podman/podman.sock";
}
inline constexpr char kTestImage[] = "localhost/trainyard/busybox:latest";
// Every container and network a test creates carries this label, so a failed
// test's leftovers can be found and removed.
inline constexpr char kTestLabel[] = "trainyard.test";

// Why engine tests cannot run here, or "" when they can. Builds the busybox image
// on first use (scripts/build-test-image is idempotent and fast once built).
inline std::string EngineUnavailableReason() {
  static std::string reason = [] {
    executor::EngineApiClient engine(EngineSocket(), 5000);
    Status ping = engine.Ping();
    if (!ping.ok())
      return "container engine does not answer on " + std::string(EngineSocket()) + " (" +
             ping.message() + "); run scripts/setup";
    Result<bool> has = engine.ImageExists(kTestImage);
    if (!has.ok() || !*has) {
      std::string cmd = std::string(TY_SOURCE_DIR) + "/scripts/build-test-image >/dev/null";
      if (std::system(cmd.c_str()) != 0) return std::string("scripts/build-test-image failed");
    }
    return std::string();
  }();
  return reason;
}

// GTEST_SKIPs when the engine is down, unless TRAINYARD_REQUIRE_ENGINE is set (CI),
// in which case the test fails instead.
#define TY_REQUIRE_ENGINE_OR_SKIP()                                                \
  do {                                                                             \
    std::string ty_reason = ::ty::testing::EngineUnavailableReason();              \
    if (!ty_reason.empty()) {                                                      \
      if (std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr) FAIL() << ty_reason; \
      GTEST_SKIP() << ty_reason;                                                   \
    }                                                                              \
  } while (0)

inline std::string UniqueJobUid() {
  static std::atomic<int> counter{0};
  std::string uid = "t";  // Appended, not "t" + ...: gcc 12 warns (-Wrestrict) of that.
  uid += std::to_string(getpid()) + "x" + std::to_string(counter++);
  return uid;
}

// Replica `pool`/`index` of attempt 1 of `job_uid`, named as the service names
// it; what it runs is up to the caller.
inline executor::ReplicaLaunch TestReplica(const std::string& job_uid, int pool, int index) {
  executor::ReplicaLaunch r;
  r.pool = pool;
  r.index = index;
  r.name = executor::ReplicaName(job_uid, 1, pool, index);
  r.task_name = "workerpool" + std::to_string(pool) + "-" + std::to_string(index);
  return r;
}

// Attempt 1 of `job_uid`, labelled with kTestLabel so ForceClean finds its leftovers.
inline executor::AttemptSpec TestAttempt(const std::string& job_uid,
                                         std::vector<executor::ReplicaLaunch> replicas) {
  executor::AttemptSpec a;
  a.job_uid = job_uid;
  a.attempt = 1;
  a.labels[kTestLabel] = "1";
  a.replicas = std::move(replicas);
  return a;
}

// Attempt 1 of `job_uid` as a training job has it: a chief ("chief", pool 0) and
// `replicas - 1` workers ("worker-i", pool 1) running `image`; replicas talk to
// each other when there are several.
inline executor::AttemptSpec ChiefAndWorkers(const std::string& job_uid, int replicas,
                                             const std::string& image) {
  std::vector<executor::ReplicaLaunch> launches;
  for (int i = 0; i < replicas; ++i) {
    executor::ReplicaLaunch r = TestReplica(job_uid, i == 0 ? 0 : 1, i == 0 ? 0 : i - 1);
    r.image = image;
    r.hostname = i == 0 ? "chief" : "worker-" + std::to_string(i - 1);
    launches.push_back(r);
  }
  executor::AttemptSpec a = TestAttempt(job_uid, launches);
  a.peers_talk = replicas > 1;
  return a;
}

// A ContainerExecutor over `engine` (a fake: logic tests) with options `o` besides,
// appending to `sink` and reporting to `events`; nullptr (and a test failure) when
// it cannot be made.
inline std::unique_ptr<executor::ContainerExecutor> ExecutorOnEngine(
    std::shared_ptr<executor::EngineClient> engine, executor::ContainerExecutor::Options o,
    logs::LogSink* sink, EventRecorder* events) {
  o.engine = std::move(engine);
  o.engine_socket = "fake";
  o.log_sink = sink;
  auto ex = executor::ContainerExecutor::Create(o);
  if (!ex.ok()) {
    ADD_FAILURE() << ex.status().ToString();
    return nullptr;
  }
  (*ex)->SetEventCallback(events->Callback());
  return std::move(*ex);
}

// A ContainerExecutor on the test engine that appends to `sink` and, when
// `callback` is set, reports to it; `native`: it creates every container through
// podman's native API (Options::native_create).
inline Result<std::unique_ptr<executor::ContainerExecutor>> NewContainerExecutor(
    logs::LogSink* sink, executor::EventCallback callback = nullptr, bool native = false) {
  executor::ContainerExecutor::Options o;
  o.clock = SystemClock::Get();
  o.random = SystemRandom::Get();
  o.engine_socket = EngineSocket();
  o.log_sink = sink;
  o.native_create = native;
  ASSIGN_OR_RETURN(auto ex, executor::ContainerExecutor::Create(o));
  if (callback) ex->SetEventCallback(std::move(callback));
  return ex;
}

// Removes every container, then every network, carrying `label` ("k=v"): what a
// failed test left.
inline void RemoveLabelled(const std::string& label) {
  executor::EngineApiClient engine(EngineSocket());
  auto containers = engine.ListContainers({label});
  if (containers.ok()) {
    for (const auto& c : *containers) engine.RemoveContainer(c.id).IgnoreError();
  }
  auto networks = engine.ListNetworks({label});
  if (networks.ok()) {
    for (const auto& n : *networks) engine.RemoveNetwork(n).IgnoreError();
  }
}

// One backend of the contract suite.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;
  virtual bool NeedsEngine() const = 0;
  // A new executor over the same backend state (the second one models a restarted daemon).
  virtual Result<std::unique_ptr<executor::Executor>> MakeExecutor(logs::LogSink* sink) = 0;
  // Makes `r` run `script` with /bin/sh.
  virtual void SetScript(executor::ReplicaLaunch* r, const std::string& script) = 0;
  // Called once the job's replicas started, so Leftovers() can check them later.
  virtual void Observe(const std::string& job_uid) {}
  // True if anything of the job (replicas, networks, processes) is left.
  virtual bool Leftovers(const std::string& job_uid) = 0;
  // Removes whatever a failed test left.
  virtual void ForceClean(const std::string& job_uid) = 0;
};

class ContainerBackend : public Backend {
 public:
  std::string Name() const override { return "Container"; }
  bool NeedsEngine() const override { return true; }
  Result<std::unique_ptr<executor::Executor>> MakeExecutor(logs::LogSink* sink) override {
    ASSIGN_OR_RETURN(auto ex, NewContainerExecutor(sink));
    return std::unique_ptr<executor::Executor>(std::move(ex));
  }
  void SetScript(executor::ReplicaLaunch* r, const std::string& script) override {
    r->image = kTestImage;
    r->command = {"/bin/sh", "-c", script};
  }
  bool Leftovers(const std::string& job_uid) override {
    executor::EngineApiClient engine(EngineSocket());
    auto containers = engine.ListContainers({std::string(executor::kLabelJob) + "=" + job_uid});
    auto networks = engine.ListNetworks({std::string(executor::kLabelJob) + "=" + job_uid});
    return !containers.ok() || !networks.ok() || !containers->empty() || !networks->empty();
  }
  void ForceClean(const std::string& job_uid) override {
    RemoveLabelled(std::string(executor::kLabelJob) + "=" + job_uid);
  }
};

class ProcessBackend : public Backend {
 public:
  ProcessBackend() {
    char tmpl[] = "/tmp/ty-process-executor-XXXXXX";
    state_dir_ = mkdtemp(tmpl);
  }
  ~ProcessBackend() override {
    std::error_code ec;
    std::filesystem::remove_all(state_dir_, ec);
  }
  std::string Name() const override { return "Process"; }
  bool NeedsEngine() const override { return false; }
  const std::string& state_dir() const { return state_dir_; }
  Result<std::unique_ptr<executor::Executor>> MakeExecutor(logs::LogSink* sink) override {
    executor::ProcessExecutor::Options o;
    o.clock = SystemClock::Get();
    o.state_dir = state_dir_;
    o.log_sink = sink;
    ASSIGN_OR_RETURN(auto ex, executor::ProcessExecutor::Create(o));
    return std::unique_ptr<executor::Executor>(std::move(ex));
  }
  void SetScript(executor::ReplicaLaunch* r, const std::string& script) override {
    r->image = "ignored";
    r->command = {"/bin/sh", "-c", script};
  }
  void Observe(const std::string& job_uid) override {
    for (int pid : PidsOf(job_uid)) pids_[job_uid].push_back(pid);
  }
  bool Leftovers(const std::string& job_uid) override {
    for (const auto& entry : std::filesystem::directory_iterator(state_dir_)) {
      // Replica names embed the job uid: "ty-<uid>-<attempt>-<pool>-<index>".
      if (entry.path().filename().string().find("-" + job_uid + "-") != std::string::npos) {
        return true;
      }
    }
    for (int pid : pids_[job_uid]) {
      if (kill(pid, 0) == 0) return true;
    }
    return false;
  }
  void ForceClean(const std::string& job_uid) override {
    for (int pid : PidsOf(job_uid)) kill(-pid, SIGKILL);
    for (int pid : pids_[job_uid]) kill(-pid, SIGKILL);
  }
  // Wrapper pids (= process group ids) from the replicas' pid files.
  std::vector<int> PidsOf(const std::string& job_uid) {
    std::vector<int> pids;
    for (const auto& entry : std::filesystem::directory_iterator(state_dir_)) {
      std::string f = entry.path().filename().string();
      if (f.find("-" + job_uid + "-") == std::string::npos || entry.path().extension() != ".pid") {
        continue;
      }
      std::ifstream in(entry.path());
      int pid = 0;
      if (in >> pid && pid > 0) pids.push_back(pid);
    }
    return pids;
  }

 private:
  std::string state_dir_;
  std::map<std::string, std::vector<int>> pids_;
};
// ContainerExecutor creating every container through podman's native API
// (RenderLibpodBody), as it creates those with GPUs: the same contract must hold.
class LibpodContainerBackend : public ContainerBackend {
 public:
  std::string Name() const override { return "LibpodContainer"; }
  Result<std::unique_ptr<executor::Executor>> MakeExecutor(logs::LogSink* sink) override {
    ASSIGN_OR_RETURN(auto ex, NewContainerExecutor(sink, nullptr, /*native=*/true));
    return std::unique_ptr<executor::Executor>(std::move(ex));
  }
};

// A ContainerExecutor backend that is a daemon instance of its own, with its own
// sandbox directory (shared by the executors it makes, as a restarted daemon shares
// its data dir); what a test leaves of the instance goes with the job's replicas
// (those first: the engine keeps a network slot holder while a replica joined it).
class InstanceContainerBackend : public ContainerBackend {
 public:
  explicit InstanceContainerBackend(const std::string& kind) {
    std::string tmpl_text = "/tmp/ty-" + kind + "-backend-XXXXXX";
    std::vector<char> tmpl(tmpl_text.begin(), tmpl_text.end());
    tmpl.push_back('\0');
    dir_ = mkdtemp(tmpl.data());
    static std::atomic<int> counter{0};
    instance_ = kind + "test" + std::to_string(getpid()) + "x" + std::to_string(counter++);
  }
  ~InstanceContainerBackend() override {
    RemoveLabelled(std::string(executor::kLabelInstance) + "=" + instance_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void ForceClean(const std::string& job_uid) override {
    ContainerBackend::ForceClean(job_uid);
    RemoveLabelled(std::string(executor::kLabelInstance) + "=" + instance_);
  }

 protected:
  std::string dir_;
  std::string instance_;
};

// ContainerExecutor launching every attempt from a warm gang (warm_pool.h): a
// gang of the attempt's exact shape is made ready just before each Launch, so the
// whole contract runs against replicas that were sandboxes. Each backend object
// is its own daemon instance with its own sandbox directory (shared by the
// executors it makes, as a restarted daemon shares its data dir).
class WarmContainerBackend : public InstanceContainerBackend {
 public:
  WarmContainerBackend() : InstanceContainerBackend("warm") {}
  std::string Name() const override { return "WarmContainer"; }

  // Forwards to the ContainerExecutor, preparing a gang before each launch.
  class Warming : public executor::Executor {
   public:
    explicit Warming(std::unique_ptr<executor::ContainerExecutor> ex) : ex_(std::move(ex)) {}
    void SetEventCallback(executor::EventCallback cb) override {
      ex_->SetEventCallback(std::move(cb));
    }
    Status Launch(const executor::AttemptSpec& a) override {
      // Only attempts the executor accepts get a gang (a malformed one must be
      // rejected by Launch itself).
      if (!a.replicas.empty()) {
        Status warmed = ex_->PrewarmForTest(a);
        if (!warmed.ok()) ADD_FAILURE() << "prewarm: " << warmed.ToString();
      }
      return ex_->Launch(a);
    }
    Status Stop(const std::string& uid, int attempt, DurationMicros grace) override {
      return ex_->Stop(uid, attempt, grace);
    }
    Status RestartReplica(const std::string& uid, int attempt, int pool, int index) override {
      return ex_->RestartReplica(uid, attempt, pool, index);
    }
    Status Cleanup(const std::string& uid, int attempt) override {
      return ex_->Cleanup(uid, attempt);
    }
    Result<std::vector<executor::ObservedReplica>> Recover() override { return ex_->Recover(); }
    std::string ReplicaBucketRoot() const override { return ex_->ReplicaBucketRoot(); }

   private:
    std::unique_ptr<executor::ContainerExecutor> ex_;
  };

  Result<std::unique_ptr<executor::Executor>> MakeExecutor(logs::LogSink* sink) override {
    executor::ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.engine_socket = EngineSocket();
    o.log_sink = sink;
    o.instance = instance_;
    o.warm_sandboxes = 16;
    o.sandbox_dir = dir_;
    o.sandbox_init = std::string(TY_BINARY_DIR) + "/bin/ty-sandbox-init";
    o.warm_refill = false;
    ASSIGN_OR_RETURN(auto ex, executor::ContainerExecutor::Create(o));
    current_ = ex.get();
    return std::unique_ptr<executor::Executor>(std::make_unique<Warming>(std::move(ex)));
  }
  // Nothing of the job: no replica started cold, no sandbox that became one of
  // its replicas, no sandbox besides those the pool holds ready, no gang network
  // without a sandbox on it.
  bool Leftovers(const std::string& job_uid) override {
    if (ContainerBackend::Leftovers(job_uid)) return true;
    executor::EngineApiClient engine(EngineSocket());
    auto mine = engine.ListContainers({std::string(executor::kLabelInstance) + "=" + instance_});
    auto networks = engine.ListNetworks({std::string(executor::kLabelInstance) + "=" + instance_});
    if (!mine.ok() || !networks.ok()) return true;
    std::set<std::string> used;
    size_t sandboxes = 0;
    for (const auto& c : *mine) {
      std::string sandbox = c.Label(executor::kLabelSandbox);
      if (sandbox.empty()) continue;
      ++sandboxes;
      std::ifstream claim(dir_ + "/" + sandbox + "/claim.json");
      std::string text((std::istreambuf_iterator<char>(claim)), std::istreambuf_iterator<char>());
      if (text.find("ty-" + job_uid + "-") != std::string::npos) return true;
      used.insert(c.Label(executor::kLabelSandboxNetwork));
    }
    // A sandbox whose claim is gone but whose container stayed would pass the
    // check above: count them against what the pool holds.
    if (current_ == nullptr || sandboxes != current_->WarmSandboxesForTest()) return true;
    for (const auto& n : *networks) {
      if (!used.count(n)) return true;
    }
    return false;
  }

 private:
  // The executor made last (the test's current one; Leftovers runs while it lives).
  executor::ContainerExecutor* current_ = nullptr;
};

// ContainerExecutor with network slots (network_slots.h): every single-replica
// attempt joins a holder's network namespace, which serves one attempt after
// another. Each backend object is its own daemon instance with its own holders.
class SlotsContainerBackend : public InstanceContainerBackend {
 public:
  SlotsContainerBackend() : InstanceContainerBackend("slots") {}
  std::string Name() const override { return "SlotsContainer"; }
  Result<std::unique_ptr<executor::Executor>> MakeExecutor(logs::LogSink* sink) override {
    executor::ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.engine_socket = EngineSocket();
    o.log_sink = sink;
    o.instance = instance_;
    o.network_slots = 4;
    o.sandbox_dir = dir_;
    o.sandbox_init = std::string(TY_BINARY_DIR) + "/bin/ty-sandbox-init";
    ASSIGN_OR_RETURN(auto ex, executor::ContainerExecutor::Create(o));
    return std::unique_ptr<executor::Executor>(std::move(ex));
  }
};

// A named backend maker: the name labels the parameterised tests (and keeps
// gtest from printing the std::function as bytes).
struct BackendFactory {
  std::string name;
  std::function<std::unique_ptr<Backend>()> make;
  std::unique_ptr<Backend> operator()() const { return make(); }
};
inline void PrintTo(const BackendFactory& f, std::ostream* os) { *os << f.name; }

}  // namespace ty::testing
