// WarmPool: containers started ahead of demand, so that an attempt of a shape
// seen before starts without the engine's create and start (the ContainerExecutor
// option `warm_sandboxes`; off by default).
//
// Why: on a small machine the engine spends ~60 ms of CPU to start one container
// (runc, conmon, the network), so a gang of nine costs about five times one; the
// only way to start a gang about as fast as a single replica is to have paid that
// cost before the job arrived. Like SageMaker's warm pools this trades idle
// containers (each a sleeping 1 MB process plus the engine's monitor) for latency.
//
// A gang is made for one attempt shape (ShapeKey: the image and mounts of every
// replica in launch order, and whether the attempt has its own network): a fresh
// network for multi-replica shapes, with one container per replica at a fixed
// address on it, each running ty-sandbox-init (src/executor/container/sandbox/main.cc, bind-mounted
// read-only at /.trainyard/init) which waits for a launch file in its run
// directory (a host directory bind-mounted at /.trainyard/run) and then becomes
// the replica's command. A networked gang's containers mount a host file at
// /etc/hosts, filled in when the gang is taken with every replica's host name.
// A taken gang belongs to the attempt: each sandbox's claim (claim.json in its
// directory, written before its launch file) names the replica it became, which
// is how Stop, Cleanup, Recover and RestartReplica find it (the containers keep
// their sandbox names: `podman ps` shows "ty-sbx-..."), and the gang's network and
// directories go when the attempt's cleanup runs. Gangs are never reused.
//
// Refill(shape) asks for a gang of that shape in the background (at most one
// ready per shape); the pool holds at most `max_sandboxes` containers, dropping
// the least recently made gangs first, and drops a gang unused for `idle_ttl`.
// Shapes with GPUs are never served warm (the devices would be held idle).
//
// What a warm replica sees differently from a cold one: /etc/hostname keeps the
// sandbox's name (the kernel's host name, what `hostname` and gethostname() say,
// is the replica's when the daemon may enter the sandbox's UTS namespace, i.e.
// runs as root; otherwise it stays the sandbox's, which /etc/hosts also resolves);
// a command that cannot be run ends the replica with exit code 127 and a message
// on stderr instead of failing the launch.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/random.h"
#include "common/status.h"
#include "common/time.h"
#include "executor/container/engine_client.h"
#include "executor/executor.h"

namespace ty::executor {

// Labels of warm sandboxes (besides kLabelInstance).
inline constexpr char kLabelSandbox[] = "trainyard.sandbox";                 // Its unclaimed name.
inline constexpr char kLabelSandboxNetwork[] = "trainyard.sandbox.network";  // Its gang's network.

struct WarmPoolOptions {
  int max_sandboxes = 0;  // 0 = no pool.
  std::string dir;        // Host directory for the sandboxes' run directories.
  std::string init_path;  // The ty-sandbox-init binary.
  std::string instance;   // kLabelInstance value; "" = none.
  DurationMicros idle_ttl = 10LL * 60 * 1000000;
  // A refill waits this long after the launch that asked for it, so the new gang's
  // container starts do not compete for CPU with the replicas just started.
  DurationMicros refill_delay = 500000;
  // false: Refill does nothing and only BuildNow fills the pool (tests that want
  // to know exactly which launches go warm).
  bool refill = true;
  const Clock* clock = nullptr;  // Required (the executor's).
  Random* random = nullptr;      // Gang ids; required (the executor's).
  // Sandboxes run in this user namespace (ContainerBody::userns_base, created through
  // podman's native API); 0 = the host's ids.
  uint32_t userns_base = 0;
};

// One started container waiting for its launch file.
struct Sandbox {
  std::string id;        // Container id (stays when the container is renamed).
  std::string name;      // Container name while unclaimed: "ty-sbx-<gang>-<i>".
  std::string dir;       // Host directory: run/ (mounted), hosts, claim.json.
  std::string address;   // On the gang's network; "" without one.
  std::string image_id;  // The image content it was created from.
  // Its init's host pid and the inode of its UTS namespace, to give it the
  // replica's host name when taken (SetHostname); 0 when unknown.
  int pid = 0;
  uint64_t uts_inode = 0;
};

struct WarmGang {
  std::string id;
  std::string key;
  std::string network;             // "" = the engine's default network.
  std::vector<Sandbox> sandboxes;  // In the attempt's launch order.
  TimeMicros ready_time = 0;
};

// Where a taken sandbox keeps what the executor needs after a daemon restart.
struct SandboxClaim {
  std::string replica;   // The replica's name (ReplicaName).
  std::string task;      // Log task name.
  std::string network;   // The gang network to remove with the attempt ("" none).
  std::string dir;       // The sandbox's host directory.
  std::string hostname;  // The replica's host name ("" = none).
};

class WarmPool {
 public:
  WarmPool(EngineClient* engine, WarmPoolOptions options);
  // Stops the builder and removes every gang not taken.
  ~WarmPool();
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;

  bool enabled() const { return options_.max_sandboxes > 0; }

  // "" when warm sandboxes cannot serve the attempt.
  static std::string ShapeKey(const AttemptSpec& attempt);

  // A ready gang of the attempt's shape, now the caller's; nullopt when none.
  std::optional<WarmGang> Take(const AttemptSpec& attempt);
  // Asks for a gang of the attempt's shape to be made ready in the background.
  void Refill(const AttemptSpec& attempt);
  // Makes a gang of the attempt's shape ready before returning.
  Status BuildNow(const AttemptSpec& attempt);
  // Sandboxes ready to be taken.
  size_t ReadySandboxes();
  // Removes a gang's containers, network and directories (one not taken, or
  // taken and given up before it ran anything).
  void Discard(const WarmGang& gang);

  // Hands `sandbox` to `replica`: writes its claim record and, on a networked
  // gang, its /etc/hosts, and gives it the replica's host name (best effort).
  // `peers`: every replica of the attempt with the gang's sandbox of the same
  // position. Nothing runs until HandOverLaunch.
  static Status Claim(const Sandbox& sandbox, const ReplicaLaunch& replica,
                      const std::string& network,
                      const std::vector<std::pair<const ReplicaLaunch*, const Sandbox*>>& peers);
  // Writes the launch the sandbox's init will run (`argv` with `env`) beside the
  // sandbox's directory, where the sandbox does not look: nothing runs yet.
  static Status PrepareLaunch(const Sandbox& sandbox, const std::vector<std::string>& argv,
                              const std::vector<model::EnvVar>& env);
  // Moves the prepared launch where the init waits for it (one rename): it runs.
  // NotFound when no launch was prepared.
  static Status HandOverLaunch(const std::string& sandbox_dir);
  // What a taken sandbox recorded; NotFound when `container` is no sandbox of
  // this pool's directory or holds no claim.
  Result<SandboxClaim> ReadClaim(const ContainerSummary& container) const;
  // Whether a taken sandbox's launch file was handed over (its replica ran).
  static bool Launched(const std::string& sandbox_dir);
  // Whether a launch waits prepared, not handed over (a daemon died in between).
  static bool LaunchPrepared(const std::string& sandbox_dir);
  // Starts a taken sandbox's container again (a restart in place) so that its
  // replica runs under its host name again.
  Status StartAgain(const std::string& container, const SandboxClaim& claim);
  const std::string& dir() const { return options_.dir; }

  // Removes the sandboxes and gang networks of this instance that no attempt
  // took (a previous daemon's pool), and directories nothing uses any more.
  // Does nothing without an instance and a directory.
  void ReapLeftovers();

 private:
  // Gives the sandbox the replica's host name (what `hostname` says inside), by
  // entering its UTS namespace from a short-lived thread of this process. Needs
  // CAP_SYS_ADMIN (a daemon running as root has it); refuses when the sandbox's
  // process is no longer the one recorded (Sandbox::pid, uts_inode).
  static Status SetHostname(const Sandbox& sandbox, const std::string& hostname);
  // SetHostname, saying on stderr when it could not ("" = nothing to do).
  static void NameOrSay(const Sandbox& sandbox, const std::string& hostname);
  // Around StartAgain: HoldLaunch moves the launch file aside so the restarted
  // init waits; ReleaseLaunch puts it back and the replica runs.
  static Status HoldLaunch(const std::string& sandbox_dir);
  static Status ReleaseLaunch(const std::string& sandbox_dir);
  void RunBuilder();
  Result<WarmGang> Build(const AttemptSpec& shape);
  // Build's steps: the gang's own network (sets gang->network; returns one fixed
  // address per replica), and one sandbox container (sets s->id).
  Result<std::vector<std::string>> CreateGangNetwork(
      const std::map<std::string, std::string>& labels, size_t n, WarmGang* gang);
  Status CreateSandbox(const ReplicaLaunch& r, const std::string& network,
                       const std::map<std::string, std::string>& labels, Sandbox* s);
  // Drops gangs past idle_ttl and, to fit `incoming` more sandboxes, the oldest.
  // Returns them (removed from `ready_`) for removal outside the lock.
  std::vector<WarmGang> EvictLocked(size_t incoming);
  size_t SandboxesLocked() const;

  EngineClient* engine_;
  WarmPoolOptions options_;
  const Clock* clock_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  struct Wanted {
    std::string key;  // ShapeKey(shape).
    AttemptSpec shape;
    std::chrono::steady_clock::time_point not_before;
  };
  std::deque<Wanted> wanted_;  // Shapes to build, oldest first.
  std::vector<WarmGang> ready_;
  std::string building_key_;  // The shape the builder works on now.
  uint64_t next_gang_ = 0;
  std::thread builder_;
};

}  // namespace ty::executor
