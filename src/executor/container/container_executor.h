// ContainerExecutor: runs each replica of an attempt as a container of a Docker
// Engine API compatible engine (podman's socket or Docker's), see executor.h for
// the contract.
//
// Launch, on a background thread: pull missing images while creating the
// attempt's network, create every container, then start every container (gang
// start: creates, then starts, each phase on up to 8 threads at once; on any
// failure everything this launch created is removed), report kAttemptStarted,
// then attach one watcher thread per replica.
//
// Peers find each other without DNS: every replica of a networked attempt gets a
// fixed IPv4 address in the network's subnet (in launch order, skipping the
// gateway), a MAC address derived from it (MacAddressFor) and an /etc/hosts entry
// for each replica's host name, its own included. Podman's aardvark-dns was seen to leave a name
// unanswered for 30-50 s when a replica asked for a peer that did not exist yet; /etc/hosts is read
// first and is complete before any replica starts. The DNS alias stays for
// tools that query DNS directly. The engine keeps both across RestartReplica.
// A subnet too small for the attempt falls back to DNS alone. (Docker, unlike
// podman, takes fixed addresses only on networks created with a subnet.)
//
// A watcher follows the replica's log stream into the LogSink and, when the
// stream ends, waits for the exit code and reports kReplicaExited; so the exit
// event always follows the last log line.
//
// Log times: the engine's timestamp of each line, made strictly increasing per
// replica (t = max(engine_time, previous + 1us)). Podman 4.3 sends whole seconds
// only; the +1us rule then numbers the lines within a second, which is what makes
// resuming after a restart exact: Recover() re-reads from the second of
// LogSink::LastEntryTime() and drops every line whose recomputed time is not later.
// It does so for every replica it finds: a running one gets a watcher, and an
// exited one is read once before Recover() returns, so the lines it wrote while
// no daemon watched are in the sink when the caller looks at how it ended.
//
// RestartReplica starts the exited container again (the engine keeps its name,
// host name, network aliases, environment and writable layer) and gives it a new
// watcher. The engine appends the new run to the same stored log, so the numbering
// above still holds over both runs: the new watcher re-reads from the second of
// LogSink::LastEntryTime() and skips the first run's lines, even when both runs
// wrote in the same second. One exception needs care: a first run that ended in
// the middle of a line. The engine joins that fragment with the next run's first
// line on the same stream, so the joined line takes the slot (and the time) the
// fragment had and would be skipped as already captured. LogCursor::run_end
// remembers the first run's last line; a re-read that does not find it unchanged
// in its slot knows the fragment is pending, strips it from the joined line and
// numbers what the new run wrote after it. That memory lives in the watcher only:
// after a daemon restart during the new run (Recover()), or a further restart in
// the same second, a line of that second may be missed, never taken twice.
//
// Containers are never stopped by the destructor: running training survives a
// daemon restart (docs/design.md §3); the destructor only aborts the watchers.
//
// Ownership: the LogSink is borrowed and must outlive the executor.
// Thread-safety: every method may be called from any thread (executor.h).
#pragma once

#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "executor/background_work.h"
#include "executor/container/engine_client.h"
#include "executor/container/health_probe.h"
#include "executor/container/network_slots.h"
#include "executor/container/oom_watch.h"
#include "executor/container/package_images.h"
#include "executor/container/replica_addresses.h"
#include "executor/container/warm_pool.h"
#include "executor/executor.h"
#include "logs/log_store.h"

namespace ty::executor {
namespace internal {
struct ContainerBody;
}  // namespace internal

class ContainerExecutor : public Executor {
 public:
  struct Options {
    std::string engine_socket = "/run/podman/podman.sock";
    // The engine to use; nullptr = the Engine API on `engine_socket`. Tests of
    // executor logic pass a fake.
    std::shared_ptr<EngineClient> engine;
    logs::LogSink* log_sink = nullptr;  // Required; borrowed.
    // Required (Create refuses null): only main wires the system's; tests their own.
    const Clock* clock = nullptr;
    Random* random = nullptr;        // Names of warm gangs and network-slot holders.
    int request_timeout_ms = 30000;  // For every non-streaming engine call.
    // Identifies the daemon (its data dir) this executor works for. Every container
    // and network gets it as the label `trainyard.instance`, and Stop, Cleanup and
    // Recover see only objects carrying it, so several daemons can share one engine
    // without adopting or removing each other's replicas. "" = no scoping.
    std::string instance;
    // Warm pool (warm_pool.h): at most this many containers started ahead of
    // demand; 0 = none. Needs `sandbox_dir` (a host directory of this daemon) and
    // `sandbox_init` (the ty-sandbox-init binary).
    int warm_sandboxes = 0;
    std::string sandbox_dir;
    std::string sandbox_init;
    bool warm_refill = true;  // WarmPoolOptions::refill.
    // Host directory with one directory per bucket, mounted at /gcs in every
    // replica (kReplicaBucketRoot); "" = no buckets.
    std::string bucket_root;
    // Host directory of wheels every replica and package install sees read-only at
    // model::kReplicaWheelhouse, pip's find-links; "" = none.
    std::string wheelhouse;
    // "HOST:PORT" of the registry standing in for gcr.io and *.pkg.dev
    // (images/google_names.h): such names are pulled from it, never from the internet.
    // "" = none here, and such a name the engine lacks fails its job at once.
    std::string google_registry;
    // The credential the daemon pulls a job's images from that registry with when it
    // takes tokens (auth/replica_credentials.h: the job's own, which the token service
    // turns into pulls of its project's images); unset = a registry without tokens.
    std::function<std::string(const std::string& job_uid)> registry_credential;
    // Attempts being launched (pull, create, start) at once. Each launch is a burst
    // of engine calls; with a few hundred at once podman's answers passed
    // request_timeout_ms and jobs failed (bench/scheduler). Later launches wait
    // their turn. Podman 4.3 on 2 cores started 4.8 containers/s from 4 parallel
    // clients, 6.8 from 8 and 7.2 from 16 (it serializes part of each start): 8
    // took bench/scheduler's container jobs from ~6 to ~7.2 jobs/s. Over 600 jobs
    // through the daemon: 6 slots 6.5 jobs/s, 8 slots 6.9, 16 slots 3.3 (podman's
    // own CPU per container doubled: its locks contended).
    int max_parallel_launches = 8;
    // A launch that fails while the engine does not answer (podman restarted, its
    // socket gone) waits this long for the engine and tries again, instead of failing
    // a job that did nothing wrong. Longer outages fail the launch, saying why.
    int engine_outage_wait_ms = 15 * 60 * 1000;
    // GPUs on podman are CDI devices "<cdi_gpu_kind>=<index>" (what `nvidia-ctk cdi
    // generate` names them), in containers created through podman's native API.
    std::string cdi_gpu_kind = "nvidia.com/gpu";
    // Create every container through podman's native API, not only those with GPUs
    // (the contract tests run the whole suite so).
    bool native_create = false;
    // Network slots (network_slots.h): idle holders kept for single-replica
    // attempts; 0 = every replica gets a network namespace of its own. Podman only
    // (ignored on another engine); needs `sandbox_dir` and `sandbox_init`.
    int network_slots = 0;
    // Replicas run in a user namespace of 65,536 ids whose root is this host uid and
    // gid, so root in a replica is an unprivileged id on the host; the directories
    // they write (buckets, metrics) are given to it at launch. 0 = the host's ids.
    // Podman only (its native create: the compat API has no per-container mapping);
    // GPU replicas keep the host's ids (their CDI hooks are unverified in one).
    uint32_t replica_userns_base = 0;
  };

  // The time a captured line is shown with (LogEntry::time), from the engine's stamp
  // of it, if any, and when it was read.
  static TimeMicros ShownTime(std::optional<TimeMicros> stamp, TimeMicros seen);

  // Where replicas see the buckets, as on Vertex.
  static constexpr char kReplicaBucketRoot[] = "/gcs";
  // The engine network of an attempt whose replicas talk (AttemptSpec::peers_talk).
  static std::string AttemptNetworkName(const std::string& job_uid, int attempt);

  // Unavailable when the engine does not answer on `engine_socket`;
  // InvalidArgument without a log sink.
  static Result<std::unique_ptr<ContainerExecutor>> Create(Options options);
  ~ContainerExecutor() override;

  void SetEventCallback(EventCallback callback) override;
  Status Launch(const AttemptSpec& attempt) override;
  Status Stop(const std::string& job_uid, int attempt, DurationMicros grace) override;
  // Must not be called from the event callback (it waits for the replica's
  // previous watcher, which may be the caller); FailedPrecondition if it is.
  Status RestartReplica(const std::string& job_uid, int attempt, int pool, int index) override;
  Status Cleanup(const std::string& job_uid, int attempt) override;
  std::string ReplicaBucketRoot() const override;
  uint32_t ReplicaUidBase() const override { return UsernsBase(); }
  void BeginShutdown() override { work_.BeginShutdown(); }
  BackendHealth Health() const override;
  std::optional<std::string> JobAtAddress(const std::string& address) override;
  bool HoldsRuntime(const std::string& local_image) override;
  // An exec on a terminal in the replica's container (a warm sandbox's, for a replica
  // that started in one: the shell then has the sandbox's environment, not the replica's).
  Result<std::unique_ptr<ReplicaShell>> OpenShell(const std::string& job_uid, int attempt, int pool,
                                                  int index) override;
  // Podman (and Docker with host-gateway) resolve it to the gateway of the
  // container's network; a listener on 0.0.0.0 answers there.
  std::string DaemonHostForReplicas() const override { return "host.containers.internal"; }
  // A replica that was created but never started is reported not running with
  // exit_code -1. The log of every exited replica is complete in the sink when
  // this returns.
  Result<std::vector<ObservedReplica>> Recover() override;

  // Warm pool hooks for tests: make a gang of the attempt's shape ready now; how
  // many sandboxes are ready.
  Status PrewarmForTest(const AttemptSpec& attempt) {
    return warm_->BuildNow(WithEngineParts(attempt));
  }
  size_t WarmSandboxesForTest() { return warm_->ReadySandboxes(); }

  // The request body of `POST /containers/create` for `replica`; exposed so tests
  // can check the Docker semantics of command/args/env/mounts/GPUs. `addresses`:
  // the IPv4 address of each of `attempt.replicas` (same order) on its network;
  // empty = the engine picks, and peers resolve through DNS only.
  static std::string CreateBodyForTest(const AttemptSpec& attempt, const ReplicaLaunch& replica,
                                       const std::vector<std::string>& addresses = {});
  // The MAC address a replica at `ipv4` gets: locally administered, derived from
  // the address ("02:42:" + its four bytes), so a replica restarted in place
  // keeps it. With a new MAC on every start, a peer that had talked to the first
  // run keeps sending to the old one until its ARP entry expires (seen: ~40 s).
  static std::string MacAddressFor(const std::string& ipv4);
  // `count` host addresses of `subnet` ("10.89.0.0/24") from its lowest up,
  // skipping `gateway` (or, when "", the first host address, where gateways
  // conventionally sit). InvalidArgument for a malformed subnet,
  // ResourceExhausted when they do not fit.
  static Result<std::vector<std::string>> PickReplicaAddresses(const std::string& subnet,
                                                               const std::string& gateway,
                                                               size_t count);

 protected:
  // For a test's subclass that injects a fault at one step, as a wrapper would (the
  // executor's own code has no test branch): `make` builds the executor from the
  // options Create checked.
  using Make = std::function<std::unique_ptr<ContainerExecutor>(Options)>;
  static Result<std::unique_ptr<ContainerExecutor>> Create(Options options, const Make& make);
  explicit ContainerExecutor(Options options);
  // Hands warm sandbox `sandbox_dir`, replica `replica` of the gang, its prepared launch
  // (WarmPool::HandOverLaunch): the step a daemon dying inside a warm launch may not
  // reach for some replicas (StartWarmGang).
  virtual Status HandOverLaunch(size_t replica, const std::string& sandbox_dir);

 private:
  // The attempt as this engine runs it: the daemon's instance label, the bucket mount.
  AttemptSpec WithEngineParts(const AttemptSpec& attempt) const;
  // One line as capture numbered it.
  struct LogLine {
    TimeMicros time = 0;
    int stream = 0;  // 1 stdout, 2 stderr.
    std::string message;
  };

  // Where a restarted replica's previous run ended (see RestartReplica above).
  struct RunEnd {
    LogLine line;  // The previous run's last line.
    // Whether that line had its "\n", learnt from the first re-read that covers
    // its slot; until then unknown. kFragment: the engine will join it with the
    // next line on its stream, which still has to be split off once.
    enum class Kind { kUnknown, kWhole, kFragment, kFragmentSplit } kind = Kind::kUnknown;
  };

  // Where log capture of one replica stands (see "Log times" above).
  struct LogCursor {
    TimeMicros skip_until = 0;  // Lines at or before this time are already in the sink.
    TimeMicros last = 0;        // Time given to the previous line read.
    TimeMicros last_shown = 0;  // Time the previous line appended was shown with.
    LogLine last_line;          // The previous line read (kept for RestartReplica).
    std::optional<RunEnd> run_end;
  };

  // The replica a watcher follows.
  struct Watched {
    std::string job_uid;
    int attempt = 0;
    int pool = 0;
    int index = 0;
    std::string name;       // The replica's name (ReplicaName): the watcher's key.
    std::string container;  // What the engine calls it: the replica's own container, or
                            // the warm sandbox that became the replica.
    std::string task;
    TimeMicros skip_until = 0;       // Lines at or before this time are already in the sink.
    std::optional<LogLine> run_end;  // Restarted: where the previous run ended.
  };

  void RunLaunch(const AttemptSpec& attempt);  // Waits for a launch slot, then:
  void RunLaunchInSlot(AttemptSpec attempt);   // A copy: package installs change its images.
  // After a failed launch: true when the engine did not answer and answers again
  // before `deadline` (the launch should be tried again); false when the engine
  // answers at once (the failure is the launch's own) or not in time.
  bool EngineCameBack(const AttemptSpec& attempt, TimeMicros deadline);
  // Creates one replica's container, replacing a leftover of this very attempt.
  // `holder`: the network slot it joins ("" = none).
  Result<std::string> CreateReplica(const AttemptSpec& attempt, const ReplicaLaunch& replica,
                                    const std::vector<std::string>& addresses,
                                    const std::string& holder);
  // What a launch try did: for its kAttemptStarted event and for what a retry replaces.
  struct LaunchRecord {
    TimeMicros image_ready = 0;           // When every image was present.
    std::vector<std::string> containers;  // What the engine calls replica i.
    bool warm = false;                    // A warm gang ran them.
    std::vector<model::ImageRan> images;  // What each distinct image name stood for.
  };
  // Does the launch; on failure has removed what it created and returns why.
  Status LaunchReplicas(const AttemptSpec& attempt, LaunchRecord* record);
  // Hands a warm gang to the attempt. Aborted: the gang was given up before any
  // replica ran (an image changed, a claim could not be written), so a cold
  // launch may follow.
  Status LaunchWarm(const AttemptSpec& attempt, const WarmGang& gang, LaunchRecord* record);
  // LaunchWarm's last step: each sandbox runs its replica's `argv`.
  Status StartWarmGang(const AttemptSpec& attempt, const WarmGang& gang,
                       const std::vector<std::vector<std::string>>& argv);
  // Each distinct image of the attempt, made current (a Google name from the registry)
  // and inspected on a thread of its own; LaunchWarm claims sandboxes meanwhile.
  std::map<std::string, std::future<Result<ImageConfig>>> InspectInBackground(
      const AttemptSpec& attempt);
  // A replica found on the engine, started cold or from a warm gang.
  struct FoundReplica {
    ContainerSummary container;  // `name`: the replica's name (ReplicaName); `id` to address.
    std::string job_uid;         // Parsed from the replica's name.
    int attempt = 0;
    int pool = 0;
    int index = 0;
    std::string task;                   // Its log task.
    std::optional<SandboxClaim> claim;  // When it was a warm sandbox.
  };
  // The replicas of this daemon: of one attempt, or all (job_uid "").
  Result<std::vector<FoundReplica>> ListReplicas(const std::string& job_uid, int attempt);
  // Recover's step for one found replica: a running one watched again, an ended one's
  // exit and last lines read (or, when the engine cannot tell now, watched as if
  // running). nullopt when it was removed meanwhile.
  // RestartReplica of a warm sandbox claimed and never handed its launch.
  Status StartPreparedLaunch(const FoundReplica& r, bool running, int pool, int index);
  std::optional<ObservedReplica> RecoverReplica(const FoundReplica& r);
  // A found replica's state: the list's for a running one, else the engine's (the
  // list's again for one never started, when the engine cannot answer).
  Result<ContainerState> StateForRecovery(const ContainerSummary& c);
  // Every running replica's addresses, for addresses_.
  Result<std::vector<ReplicaAddressBook::Entry>> RunningReplicaAddresses();
  // Makes every image of the attempt present (inspect, pull if missing); `ran`, when
  // given, gets what each distinct name stands for now.
  Status EnsureImages(const AttemptSpec& attempt, std::vector<model::ImageRan>* ran);
  // The manifest digest the daemon's registry holds for a Google name ("" otherwise, or
  // when the registry cannot tell).
  std::string RegistryDigest(const AttemptSpec& attempt, const std::string& image);
  // What the job's pulls from the daemon's registry authenticate with (its credential).
  RegistryLogin LoginFor(const AttemptSpec& attempt) const;
  // One image present: pulled when the engine lacks it, and a Google name from the
  // daemon's registry at every launch.
  Status EnsureImage(const AttemptSpec& attempt, const std::string& image);
  // What the launch waits for, into the job's log (a kLaunchWaiting event).
  // A kLaunchWaiting event: progress, or `trouble` (ExecutorEvent::trouble).
  void SayLaunchWaits(const AttemptSpec& attempt, const std::string& message, bool trouble = false);
  // One image the engine lacks: from the local registry for a Google name (then
  // tagged by that name), else from where the name says.
  Status PullMissingImage(const AttemptSpec& attempt, const std::string& image);
  std::mutex mirror_pull_mu_;  // PullMissingImage's pull and tag from the local registry.
  // Python-package replicas: their packages installed into their image (once per
  // image and packages; package_images.h), which they then run instead.
  Status InstallPackages(AttemptSpec* attempt);
  // Creates the attempt's network, if it has one, and picks the replicas' addresses
  // on it (empty when it cannot). `*created` names the network only when this call
  // created it (so only then does the launch remove it).
  Status CreateNetwork(const AttemptSpec& attempt, std::string* created,
                       std::vector<std::string>* addresses);
  void RemoveAll(const std::vector<std::string>& containers, const std::string& network);
  void StartWatcher(const Watched& w);
  void RunWatcher(const Watched& w);  // WatchUntilEnded, then ReportExit.
  // How a watched replica's container ended: removed underneath (gone), or its last
  // state as inspected.
  struct WatchedEnd {
    bool gone = false;
    std::optional<ContainerState> last_state;
  };
  // Polls the replica's state and log until it ended and its log is complete; nullopt
  // when the executor shuts down first.
  std::optional<WatchedEnd> WatchUntilEnded(const Watched& w);
  void ReportExit(const Watched& w, const WatchedEnd& end);
  // An exited replica's log read to its end, from where the sink stands.
  Status ReadToTheEnd(const Watched& w);
  // Reads what the engine has stored of the replica's log, from a second before
  // `cursor`, into the sink, dropping what is already there. `replica_done` also
  // takes an unterminated last line (the replica will not finish it). NotFound
  // when the container is gone.
  Status CaptureLogs(const std::string& container, const std::string& job_uid,
                     const std::string& task, bool replica_done, LogCursor* cursor);
  // The engine second a re-read of the cursor's replica starts from (0: the start).
  static int64_t RereadFromSecond(const LogCursor& cursor);
  // A restarted replica's re-read reaching `end`, its previous run's last line: true
  // when this line is only that run's unfinished fragment (dropped); otherwise the
  // line's time `t` and `message` are what the new run wrote.
  static bool IsOnlyThePreviousRunsEnd(RunEnd* end, int stream, TimeMicros* t,
                                       std::string_view* message, bool* fragment_split);
  // Appends one line read at engine time `t` (shown at `shown`) unless the cursor
  // already passed it; on a sink failure the cursor stays where it was.
  Status AppendLine(const std::string& job_uid, const std::string& task, int stream, TimeMicros t,
                    TimeMicros shown, std::string_view message, LogCursor* cursor);
  TimeMicros Now() const { return clock_->Now(); }

  // Creates every replica of the attempt (none started); `created` gets the names of
  // those that were, also on failure, so that they can be removed.
  // `holders[i]`: the network slot replica i joins ("" = none).
  Status CreateGang(const AttemptSpec& attempt, const std::vector<std::string>& addresses,
                    const std::vector<std::string>& holders, std::vector<std::string>* created);
  // A network slot for each replica of an attempt whose replicas talk to no peer
  // ("" where none: slots off, or none could be made).
  std::vector<std::string> AcquireSlots(const AttemptSpec& attempt);
  // The slot holder a failed launch is to blame on (named in the failure, or not
  // running); nullptr when the failure is the replicas' own.
  const std::string* FailedHolder(const std::vector<std::string>& holders, const Status& failure);
  // CreateGang, then start every replica; on failure removes what it created.
  Status CreateAndStart(const AttemptSpec& attempt, const std::vector<std::string>& addresses,
                        const std::vector<std::string>& holders);
  // Starts a created replica; a failure says what to do when it is a missing CDI spec.
  Status StartReplica(const ReplicaLaunch& replica);
  // The container of `replica` (CreateBodyForTest's, before rendering for an API).
  static internal::ContainerBody ReplicaBody(const AttemptSpec& attempt,
                                             const ReplicaLaunch& replica,
                                             const std::vector<std::string>& addresses,
                                             const std::string& holder = "");

  WarmPoolOptions WarmOptions() const;
  internal::PackageImages::Options PackageOptions() const;
  // Force-removes a replica's container, riding out podman's transient busy mounts.
  Status RemoveReplica(const std::string& id);
  // Options::replica_userns_base where the engine can map ids (podman), else 0.
  uint32_t UsernsBase() const;
  // UsernsBase(), or 0 for a replica with GPUs (Options::replica_userns_base says why).
  uint32_t ReplicaUsernsBase(const ReplicaLaunch& replica) const;

  Options options_;
  bool speaks_libpod_ = false;  // The engine is podman (EngineClient::SpeaksLibpod).
  const Clock* clock_;
  std::shared_ptr<EngineClient> engine_;
  std::unique_ptr<WarmPool>
      warm_;  // Uses engine_; always there, maybe disabled. ("pool" means a worker pool.)
  std::unique_ptr<NetworkSlots> slots_;  // Uses engine_; always there, maybe disabled.
  std::unique_ptr<internal::PackageImages> packages_;  // Uses engine_; always there.

  // Serializes Recover() and RestartReplica(): two log catch-ups of one exited
  // replica at once would both append its missing lines, and a restart racing
  // either would be read by both.
  std::mutex recover_mu_;
  // Launch slots (Options::max_parallel_launches); waiters also wake on shutdown.
  std::mutex launch_mu_;
  std::condition_variable launch_cv_;
  int launches_running_ = 0;  // Guarded by launch_mu_.
  // Which job's replica has an address (JobAtAddress); lists through ListReplicas.
  // Declared before work_, whose watchers call Forget.
  ReplicaAddressBook addresses_;
  // OOM kills the engine misses (cgroup v1); declared before work_, whose watcher
  // threads use it and stop first.
  OomWatch oom_watch_;
  // Launch and watcher threads (watchers keyed by container name), the callback.
  internal::BackgroundWork work_;
  // Pings the engine every 2 s (Health()); made in Create, after the first ping.
  std::unique_ptr<HealthProbe> health_;
};

}  // namespace ty::executor
