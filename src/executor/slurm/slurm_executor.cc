#include "executor/slurm/slurm_executor.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/files.h"
#include "common/subprocess.h"
#include "executor/background_work.h"
#include "executor/file_log_capture.h"
#include "executor/slurm/slurm_context.h"
#include "executor/slurm/slurm_submit.h"

namespace ty::executor {
namespace {

using internal::FileLogCapture;
using json = nlohmann::json;

constexpr char kReplicaBucketRoot[] = "/gcs";
// How long a replica's exit file may trail Slurm's word that the job ended (the
// shared filesystem's attribute caching), before the replica counts as killed.
constexpr DurationMicros kExitFileGrace = 3 * 1000000;
// How long Slurm may not list a job it was given before it counts as forgotten.
constexpr int kMissingPollsToForget = 3;
// How long a replica's death by a signal waits for Slurm to say why (longer than
// the cluster's KillWait, the most a job stays COMPLETING after its signals).
constexpr DurationMicros kSignalEndWait = 90 * 1000000;
constexpr auto kCaptureInterval = std::chrono::milliseconds(50);
constexpr int64_t kNodeCountTtl = 30LL * 1000000;

std::string AttemptKey(const std::string& job_uid, int attempt) {
  return job_uid + "-" + std::to_string(attempt);
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::optional<int> ReadExitCode(const std::string& path) {
  Result<std::string> text = ty::ReadFile(path);
  if (!text.ok() || text->empty()) return std::nullopt;
  const char* p = text->c_str();
  char* end = nullptr;
  long v = std::strtol(p, &end, 10);
  if (end == p || v < 0 || v > 255) return 255;  // Not ours to trust beyond this.
  return static_cast<int>(v);
}

}  // namespace

class SlurmExecutor::Impl {
 public:
  struct ReplicaWatch {
    int pool = 0, index = 0;
    std::string name;
    std::unique_ptr<FileLogCapture> capture;  // The monitor thread's only.
    bool exited = false;                      // GUARDED_BY(mu_)
    int exit_code = 0;                        // The last end's. GUARDED_BY(mu_)
    TimeMicros signal_end_seen = 0;           // A death by a signal waiting for a poll.
  };
  struct AttemptWatch {
    std::string job_uid;
    int attempt = 0;
    std::string dir;
    std::string slurm_id;         // "" until sbatch answered.
    bool submitting = true;       // The launch thread still runs.
    bool stop_requested = false;  // Stop() or Cleanup() came.
    bool outcome_sent = false;    // kAttemptStarted or kLaunchFailed.
    bool done = false;            // Every end reported. GUARDED_BY(mu_)
    bool slurm_ended = false;     // Its leader ended (or was forgotten). GUARDED_BY(mu_)
    bool cleaning = false;        // Cleanup waits for Slurm to be done. GUARDED_BY(mu_)
    bool slurm_gone = false;      // Every component ended. GUARDED_BY(mu_)
    std::string last_reason;
    bool preempted = false;      // Slurm preempted it (kAttemptPreempted sent).
    TimeMicros ended_since = 0;  // When Slurm stopped running it (0 = it runs).
    int missing_polls = 0;
    std::vector<ReplicaWatch> replicas;
  };

  Impl(const Options& o, const Clock* clock) : o_(o), clock_(clock) {}

  CommandOutput Slurm(const std::string& command, const std::vector<std::string>& args,
                      DurationMicros timeout = 30 * 1000000) {
    std::vector<std::string> argv = {o_.slurm_bin_dir.empty() ? command
                                                              : o_.slurm_bin_dir + "/" + command};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandOptions co;
    co.set_env = o_.slurm_env;
    co.timeout = timeout;
    Result<CommandOutput> out = RunCommand(argv, co);
    if (!out.ok()) {
      CommandOutput failed;
      failed.exit_code = 127;
      failed.err = out.status().message();
      return failed;
    }
    return *out;
  }

  // Hosts the cluster has (a het job needs one per pool), as ReadNodes counts them
  // (once each, whatever their partitions); asked again after kNodeCountTtl, not at
  // every launch.
  int ClusterNodes() {
    std::lock_guard<std::mutex> lock(nodes_mu_);
    const int64_t now = MonotonicMicros();
    if (node_count_ == 0 || now - node_count_at_ >= kNodeCountTtl) {
      Result<std::vector<NodeInventory>> nodes = ReadNodes(o_);
      if (nodes.ok()) {
        node_count_ = static_cast<int>(nodes->size());
        node_count_at_ = now;
      }
    }
    return std::max(node_count_, 1);
  }

  std::shared_ptr<AttemptWatch> NewWatch(const std::string& job_uid, int attempt,
                                         const std::vector<ReplicaLaunch>& replicas) {
    auto w = std::make_shared<AttemptWatch>();
    w->job_uid = job_uid;
    w->attempt = attempt;
    w->dir = o_.state_dir + "/" + AttemptKey(job_uid, attempt);
    for (const ReplicaLaunch& r : replicas) {
      ReplicaWatch rw;
      rw.pool = r.pool;
      rw.index = r.index;
      rw.name = r.name;
      rw.capture = std::make_unique<FileLogCapture>(o_.log_sink, clock_, w->dir + "/" + r.name,
                                                    job_uid, r.task_name);
      w->replicas.push_back(std::move(rw));
    }
    return w;
  }

  std::shared_ptr<AttemptWatch> Find(const std::string& job_uid, int attempt) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = attempts_.find(AttemptKey(job_uid, attempt));
    return it == attempts_.end() ? nullptr : it->second;
  }

  // ---- Launch ----

  Status WriteAttemptFiles(const AttemptSpec& attempt, const internal::SlurmJobShape& shape,
                           const std::string& dir) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // A launch a restart interrupted before sbatch.
    std::filesystem::create_directories(dir, ec);
    if (ec) return Unavailable("slurm: cannot make " + dir + ": " + ec.message());
    chmod(dir.c_str(), 0700);
    SlurmContext context;
    context.job_uid = attempt.job_uid;
    context.attempt = attempt.attempt;
    context.labels = attempt.labels;
    context.userns_base = o_.userns_base;
    context.stop_grace_s = o_.stop_grace_s;
    context.replicas = attempt.replicas;
    if (o_.registry_credential) context.registry_password = o_.registry_credential(attempt.job_uid);
    RETURN_IF_ERROR(WriteFileAtomically(dir + "/context.json", SlurmContextToJson(context)));
    RETURN_IF_ERROR(WriteFileAtomically(dir + "/batch.sh", shape.script));
    chmod((dir + "/batch.sh").c_str(), 0700);
    return Status::Ok();
  }

  // The attempt with its buckets mounted at /gcs/B from the shared bucket root, and a
  // trial's metrics directory (the daemon's, on the cluster's shared filesystem).
  AttemptSpec WithMounts(AttemptSpec attempt) {
    for (ReplicaLaunch& r : attempt.replicas) r = WithMetricsDir(std::move(r), false);
    if (o_.bucket_root.empty()) return attempt;
    for (ReplicaLaunch& r : attempt.replicas) {
      r = internal::WithPackageInstall(std::move(r), kReplicaBucketRoot);
      for (const std::string& bucket : internal::MountedBuckets(attempt)) {
        r.mounts.push_back(
            {o_.bucket_root + "/" + bucket, std::string(kReplicaBucketRoot) + "/" + bucket, false});
      }
    }
    return attempt;
  }

  Status Submit(const AttemptSpec& spec, const std::shared_ptr<AttemptWatch>& w) {
    AttemptSpec attempt = WithMounts(spec);
    RETURN_IF_ERROR(internal::EnsureBucketDirs(o_.bucket_root, internal::MountedBuckets(attempt)));
    if (o_.userns_base > 0)
      RETURN_IF_ERROR(internal::GiveWritableMountsTo(attempt, o_.userns_base));
    internal::SlurmSubmitSettings settings;
    settings.dir = w->dir;
    settings.launcher = o_.launcher;
    settings.partition = o_.partition;
    settings.qos = o_.qos;
    settings.spot_partition = o_.spot_partition;
    settings.spot_qos = o_.spot_qos;
    settings.cluster_nodes = ClusterNodes();
    internal::SlurmJobShape shape = internal::ShapeSlurmJob(attempt, settings);
    RETURN_IF_ERROR(WriteAttemptFiles(attempt, shape, w->dir));
    ASSIGN_OR_RETURN(std::string id, SubmitUntilAnswered(attempt, shape.sbatch_args));
    Status recorded = WriteFileAtomically(w->dir + "/slurm.json", json{{"job_id", id}}.dump());
    if (!recorded.ok())
      spdlog::warn("slurm: {} (recovery finds job {} by name)", recorded.message(), id);
    bool cancel = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      w->slurm_id = id;
      w->submitting = false;
      cancel = w->stop_requested;
    }
    if (cancel) Slurm("scancel", {id});
    spdlog::info("slurm: job {} attempt {} is Slurm job {} ({})", w->job_uid, w->attempt, id,
                 shape.heterogeneous ? "one component per pool" : "one component");
    return Status::Ok();
  }

  // The Slurm id of `attempt`'s job, submitted by sbatch. A failed sbatch is asked
  // about: if Slurm's queue holds the job by its name, only the answer was lost; if the
  // queue answers without it, Slurm refused it (InvalidArgument with Slurm's reason);
  // if the controller answers neither (restarting, failing over), the launch waits for
  // it, says so in the job's log, and submits again, up to controller_wait.
  Result<std::string> SubmitUntilAnswered(const AttemptSpec& attempt,
                                          const std::vector<std::string>& sbatch_args) {
    const int64_t deadline = MonotonicMicros() + o_.controller_wait;
    const std::string name = internal::SlurmJobName(attempt.job_uid, attempt.attempt);
    bool said = false;
    while (true) {
      CommandOutput out = Slurm("sbatch", sbatch_args);
      if (out.exit_code == 0) return SbatchJobId(out);
      const std::string why = LastLine(out.err + "\n" + out.out);
      CommandOutput q = Slurm("squeue", {"-h", "--me", "-t", "all", "-n", name, "-o", "%i"});
      if (q.exit_code == 0) {
        std::string id = LastLine(q.out);
        id = id.substr(0, id.find('+'));
        if (!id.empty()) return id;
        // Slurm's own reason ("Requested node configuration is not available").
        return InvalidArgument("Slurm refused the job: " + why);
      }
      if (work_.shutting_down() || MonotonicMicros() >= deadline) {
        return Unavailable("the Slurm controller does not answer: " + why);
      }
      if (!said) {
        said = true;
        spdlog::warn("slurm: job {} attempt {} waits for the controller: {}", attempt.job_uid,
                     attempt.attempt, why);
        ExecutorEvent waiting;
        waiting.kind = ExecutorEventKind::kLaunchWaiting;
        waiting.job_uid = attempt.job_uid;
        waiting.attempt = attempt.attempt;
        waiting.time = clock_->Now();
        waiting.message = "Waiting for the Slurm controller, which does not answer (" + why +
                          "); the job is submitted when it is back.";
        waiting.trouble = true;
        Emit(waiting);
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::microseconds(o_.controller_retry),
                   [this] { return work_.shutting_down(); });
    }
  }

  static Result<std::string> SbatchJobId(const CommandOutput& out) {
    std::string id = LastLine(out.out);
    id = id.substr(0, id.find(';'));  // "123;cluster" on federated sites.
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
      return Internal("sbatch answered no job id: " + LastLine(out.out));
    }
    return id;
  }

  void RunLaunch(const AttemptSpec& attempt, const std::shared_ptr<AttemptWatch>& w) {
    Status s = Submit(attempt, w);
    if (s.ok()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      w->submitting = false;
      w->outcome_sent = true;
      w->done = true;
      for (ReplicaWatch& r : w->replicas) r.exited = true;
    }
    std::error_code ec;
    std::filesystem::remove_all(w->dir, ec);  // Nothing is left of a failed launch.
    work_.Emit(internal::LaunchOutcomeEvent(attempt, s, 0, clock_->Now()));
    cv_.notify_all();
  }

  // ---- Monitor ----

  void Emit(const ExecutorEvent& e) { work_.Emit(e); }

  ExecutorEvent Event(const AttemptWatch& w, ExecutorEventKind kind, std::string message = "") {
    ExecutorEvent e;
    e.kind = kind;
    e.job_uid = w.job_uid;
    e.attempt = w.attempt;
    e.time = clock_->Now();
    e.message = std::move(message);
    return e;
  }

  void SendStarted(AttemptWatch* w) {
    if (w->outcome_sent) return;
    w->outcome_sent = true;
    ExecutorEvent e = Event(*w, ExecutorEventKind::kAttemptStarted);
    e.image_ready_time = e.time;  // The hosts pull what they lack as the replicas start.
    Emit(e);
  }

  // One replica's end: its last output first, then the event. While the sink cannot
  // take its last lines (a full disk) the end waits: the next tick tries again.
  void ReportExit(AttemptWatch* w, ReplicaWatch* r, int code) {
    if (!r->capture->CaptureAll()) return;
    SendStarted(w);
    {
      std::lock_guard<std::mutex> lock(mu_);
      r->exited = true;
      r->exit_code = code;
    }
    ExecutorEvent e = internal::ReplicaExitedEvent(w->job_uid, w->attempt, r->pool, r->index, code,
                                                   clock_->Now());
    // The launcher writes the exit file as the replica ends: its time is the end's,
    // however late the daemon reads it (a frozen daemon, a restart).
    e.finished_at = FileModifiedAt(w->dir + "/" + r->name + ".exit");
    Emit(e);
  }

  // Recover: what became of a replica of an attempt found on disk. Ended, with its last
  // lines taken; one whose lines the sink cannot take now (a full disk) is reported
  // running, and its end follows them from the monitor.
  ObservedReplica ObserveRecovered(const AttemptWatch& w, ReplicaWatch* r) {
    ObservedReplica o;
    o.job_uid = w.job_uid;
    o.attempt = w.attempt;
    o.pool = r->pool;
    o.index = r->index;
    o.name = r->name;
    r->capture->Resume();
    const std::string exit_file = w.dir + "/" + r->name + ".exit";
    std::optional<int> code = ReadExitCode(exit_file);
    if (code && r->capture->CaptureAll()) {
      r->exited = true;
      o.exit_code = *code;
      o.signal = internal::SignalOf(*code);
      o.finished_at = FileModifiedAt(exit_file);
    } else {
      o.running = true;
    }
    return o;
  }

  bool AnyReplicaPlaced(const AttemptWatch& w) {
    for (const ReplicaWatch& r : w.replicas) {
      if (Exists(w.dir + "/" + r.name + ".placed") || Exists(w.dir + "/" + r.name + ".exit")) {
        return true;
      }
    }
    return false;
  }

  void EndUnstarted(AttemptWatch* w, const std::string& state) {
    Result<std::string> batch_out = ty::ReadFile(w->dir + "/batch.out");
    std::string why = batch_out.ok() ? LastLine(*batch_out) : "";
    std::string message = w->stop_requested ? "stopped before Slurm started it"
                                            : "Slurm job " + w->slurm_id + " ended " + state +
                                                  " before its replicas started" +
                                                  (why.empty() ? "" : ": " + why);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (ReplicaWatch& r : w->replicas) r.exited = true;
    }
    w->outcome_sent = true;
    std::error_code ec;
    std::filesystem::remove_all(w->dir, ec);
    Emit(Event(*w, ExecutorEventKind::kLaunchFailed, message));
  }

  bool Exited(const ReplicaWatch& r) {
    std::lock_guard<std::mutex> lock(mu_);
    return r.exited;
  }

  // Slurm's state of `w` from this poll (`states`; null when there was none this time):
  // started, pending and why, preempted, ended or forgotten. Returns the state seen.
  std::string ObserveSlurm(AttemptWatch* w,
                           const std::map<std::string, internal::SlurmJobState>* states) {
    std::string state = "UNKNOWN";
    if (states == nullptr) return state;
    auto it = states->find(w->slurm_id);
    if (it != states->end()) {
      w->missing_polls = 0;
      state = it->second.state;
      if (internal::IsSlurmRunning(state) && !w->outcome_sent) SendStarted(w);
      // "None": between submission and the scheduler's first look; not a wait.
      if (state == "PENDING" && it->second.reason != w->last_reason &&
          it->second.reason != "None") {
        w->last_reason = it->second.reason;
        Emit(Event(*w, ExecutorEventKind::kLaunchWaiting,
                   "Slurm job " + w->slurm_id + " is pending (" + w->last_reason + ")"));
      }
      // Before any replica's end: those ends are the preemption's, not failures.
      if (state == "PREEMPTED" && !w->preempted && w->outcome_sent) {
        w->preempted = true;
        Emit(Event(*w, ExecutorEventKind::kAttemptPreempted,
                   "Slurm preempted job " + w->slurm_id +
                       " (a job of a higher priority needed its resources); this job is "
                       "queued again."));
      }
      if (it->second.all_ended) {
        std::lock_guard<std::mutex> lock(mu_);
        w->slurm_gone = true;
      }
    } else {
      ++w->missing_polls;
      if (w->missing_polls >= kMissingPollsToForget) {
        std::lock_guard<std::mutex> lock(mu_);
        w->slurm_gone = true;
      }
    }
    const bool ended = internal::IsSlurmEnded(state) || w->missing_polls >= kMissingPollsToForget;
    if (ended && w->ended_since == 0) {
      w->ended_since = clock_->Now();
      std::lock_guard<std::mutex> lock(mu_);
      w->slurm_ended = true;
    }
    return state;
  }

  void Tick(AttemptWatch* w, const std::map<std::string, internal::SlurmJobState>* states) {
    const std::string state = ObserveSlurm(w, states);
    for (ReplicaWatch& r : w->replicas) {
      if (Exited(r)) continue;
      std::optional<int> code = ReadExitCode(w->dir + "/" + r.name + ".exit");
      if (code && *code >= 128 && r.signal_end_seen == 0) r.signal_end_seen = clock_->Now();
      // A death by a signal waits for a poll of Slurm that shows why: while the job
      // is COMPLETING, Slurm is ending it (a preemption shows as PREEMPTED only once
      // its processes are gone), and the ends it causes must not read as failures.
      // Up to kSignalEndWait, in case squeue does not answer.
      const bool waits = code && *code >= 128 && !w->preempted &&
                         (states == nullptr || state == "COMPLETING") &&
                         clock_->Now() - r.signal_end_seen < kSignalEndWait;
      if (code && !waits) {
        ReportExit(w, &r, *code);
      } else {
        r.capture->CaptureNew(/*writer_gone=*/false);
      }
    }
    // A launcher that placed its replica is the earliest sign the attempt runs (Slurm's
    // own state comes with the next poll).
    if (!w->outcome_sent && AnyReplicaPlaced(*w)) SendStarted(w);
    if (w->ended_since != 0 && clock_->Now() - w->ended_since >= kExitFileGrace) {
      if (!w->outcome_sent && !AnyReplicaPlaced(*w)) {
        EndUnstarted(w, state);
      } else {
        for (ReplicaWatch& r : w->replicas) {
          if (Exited(r)) continue;
          // No launcher wrote its end: killed with the job (SIGKILL), or lost with
          // its node.
          ReportExit(w, &r, 128 + 9);
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    bool all = true;
    for (const ReplicaWatch& r : w->replicas) all = all && r.exited;
    if (all) w->done = true;
  }

  // Output is taken every kCaptureInterval; Slurm is asked every poll_interval (one
  // squeue for every live attempt), and at once after a launch or a stop.
  void MonitorLoop() {
    int64_t last_poll = 0;
    bool poll_now = false;
    bool squeue_failing = false;
    while (!work_.shutting_down()) {
      std::vector<std::shared_ptr<AttemptWatch>> live;
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto& [key, w] : attempts_) {
          if ((!w->done || (w->cleaning && !w->slurm_gone)) && !w->submitting) live.push_back(w);
        }
      }
      if (!live.empty()) {
        std::optional<std::map<std::string, internal::SlurmJobState>> states;
        if (poll_now || MonotonicMicros() - last_poll >= o_.poll_interval) {
          last_poll = MonotonicMicros();
          CommandOutput out = Slurm("squeue", {"-h", "--me", "-t", "all", "-o", "%i|%T|%r"});
          if (out.exit_code == 0) {
            states = internal::ParseSqueue(out.out);
            if (squeue_failing) spdlog::info("slurm: squeue answers again");
            squeue_failing = false;
          } else if (!squeue_failing) {  // Once per outage, not at every poll.
            squeue_failing = true;
            spdlog::warn("slurm: squeue failed: {} (jobs are left as they were until it answers)",
                         LastLine(out.err));
          }
        }
        for (auto& w : live) Tick(w.get(), states ? &*states : nullptr);
        cv_.notify_all();
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, kCaptureInterval, [this] { return work_.shutting_down() || wake_; });
      poll_now = wake_;
      wake_ = false;
    }
  }

  // Waits until Slurm runs nothing of `w`'s job any more (its launchers have removed
  // their containers, the epilogs have run), as the monitor's polls see it; false
  // after `timeout`.
  bool WaitSlurmJobGone(const std::shared_ptr<AttemptWatch>& w, DurationMicros timeout) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (w->slurm_id.empty()) return true;
      w->cleaning = true;
      wake_ = true;
    }
    cv_.notify_all();
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::microseconds(timeout), [&] {
      return w->slurm_gone || work_.shutting_down();
    }) && w->slurm_gone;
  }

  // Waits until `w` reported every end; false after `timeout`.
  bool WaitDone(const std::shared_ptr<AttemptWatch>& w, DurationMicros timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::microseconds(timeout), [&] {
      return w->done || work_.shutting_down();
    }) && w->done;
  }

  void Wake() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      wake_ = true;
    }
    cv_.notify_all();
  }

  const Options& o_;
  const Clock* clock_;
  internal::BackgroundWork work_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;                                              // GUARDED_BY(mu_)
  std::map<std::string, std::shared_ptr<AttemptWatch>> attempts_;  // GUARDED_BY(mu_)
  std::thread monitor_;
  std::mutex nodes_mu_;
  int node_count_ = 0;         // GUARDED_BY(nodes_mu_)
  int64_t node_count_at_ = 0;  // GUARDED_BY(nodes_mu_)
};

// ---------------------------------------------------------------------------

SlurmExecutor::SlurmExecutor(Options options) : options_(std::move(options)) {}

Result<std::vector<SlurmExecutor::NodeInventory>> SlurmExecutor::ReadNodes(const Options& options) {
  std::vector<std::string> argv = {
      options.slurm_bin_dir.empty() ? "sinfo" : options.slurm_bin_dir + "/sinfo", "-h", "-N", "-o",
      "%N|%c|%m|%G"};
  CommandOptions co;
  co.set_env = options.slurm_env;
  ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv, co));
  if (out.exit_code != 0) return Unavailable("sinfo failed: " + LastLine(out.err));
  std::vector<NodeInventory> nodes;
  for (const internal::SlurmNodeInventory& n : internal::ParseSinfoNodes(out.out)) {
    nodes.push_back({n.name, n.cpus, n.memory_gb, n.gpu_type, n.gpus});
  }
  if (nodes.empty()) return Unavailable("sinfo lists no node");
  return nodes;
}

Result<std::unique_ptr<SlurmExecutor>> SlurmExecutor::Create(Options options) {
  if (options.state_dir.empty()) return InvalidArgument("slurm executor: state_dir is required");
  if (options.launcher.empty()) return InvalidArgument("slurm executor: launcher is required");
  if (options.log_sink == nullptr) return InvalidArgument("slurm executor: log_sink is required");
  if (options.clock == nullptr) return InvalidArgument("slurm executor: clock is required");
  std::error_code ec;
  std::filesystem::create_directories(options.state_dir, ec);
  if (ec) return Internal("slurm executor: cannot make " + options.state_dir + ": " + ec.message());
  chmod(options.state_dir.c_str(), 0700);
  std::unique_ptr<SlurmExecutor> ex(new SlurmExecutor(std::move(options)));
  ex->impl_ = std::make_unique<Impl>(ex->options_, ex->options_.clock);
  Impl* impl = ex->impl_.get();
  impl->monitor_ = std::thread([impl] { impl->MonitorLoop(); });
  return ex;
}

SlurmExecutor::~SlurmExecutor() {
  impl_->work_.BeginShutdown();
  impl_->Wake();
  if (impl_->monitor_.joinable()) impl_->monitor_.join();
  impl_->work_.Shutdown();
}

void SlurmExecutor::SetEventCallback(EventCallback callback) {
  impl_->work_.SetEventCallback(std::move(callback));
}

void SlurmExecutor::BeginShutdown() {
  impl_->work_.BeginShutdown();
  impl_->Wake();
}

std::string SlurmExecutor::ReplicaBucketRoot() const {
  return options_.bucket_root.empty() ? "" : kReplicaBucketRoot;
}

std::string SlurmExecutor::DaemonHostForReplicas() const {
  if (!options_.daemon_host.empty()) return options_.daemon_host;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

Status SlurmExecutor::Launch(const AttemptSpec& attempt) {
  RETURN_IF_ERROR(internal::ValidateAttempt(attempt, [](const ReplicaLaunch& r) {
    if (r.image.empty()) return InvalidArgument("launch: replica " + r.name + " has no image");
    return Status::Ok();
  }));
  auto w = impl_->NewWatch(attempt.job_uid, attempt.attempt, attempt.replicas);
  {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    auto& slot = impl_->attempts_[AttemptKey(attempt.job_uid, attempt.attempt)];
    if (slot != nullptr && !slot->done) {
      return FailedPrecondition("launch: attempt " + std::to_string(attempt.attempt) + " of " +
                                attempt.job_uid + " is already running");
    }
    slot = w;
  }
  Impl* impl = impl_.get();
  return impl_->work_.StartLaunch([impl, attempt, w] {
    impl->RunLaunch(attempt, w);
    impl->Wake();
  });
}

Status SlurmExecutor::Stop(const std::string& job_uid, int attempt, DurationMicros grace) {
  std::shared_ptr<Impl::AttemptWatch> w = impl_->Find(job_uid, attempt);
  if (w == nullptr) return Status::Ok();
  std::string id;
  {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    if (w->done) return Status::Ok();
    w->stop_requested = true;
    id = w->slurm_id;
  }
  if (!id.empty()) {
    CommandOutput out = impl_->Slurm("scancel", {id});
    if (out.exit_code != 0) spdlog::warn("slurm: scancel {}: {}", id, LastLine(out.err));
  }
  impl_->Wake();
  // The launchers' grace, Slurm's KillWait after it, and the exit-file grace.
  const DurationMicros wait =
      std::max<DurationMicros>(grace, options_.stop_grace_s * 1000000LL) + 60 * 1000000LL;
  if (!impl_->WaitDone(w, wait)) {
    return DeadlineExceeded("stop: Slurm job " + id + " of " + job_uid + " is still running");
  }
  return Status::Ok();
}

Status SlurmExecutor::RestartReplica(const std::string& job_uid, int attempt, int pool, int index) {
  const std::string what = "restart " + ReplicaName(job_uid, attempt, pool, index);
  std::shared_ptr<Impl::AttemptWatch> w = impl_->Find(job_uid, attempt);
  if (w == nullptr) return NotFound(what + ": no such replica");
  std::lock_guard<std::mutex> lock(impl_->mu_);
  for (Impl::ReplicaWatch& r : w->replicas) {
    if (r.pool != pool || r.index != index) continue;
    if (!r.exited) return FailedPrecondition(what + ": the replica is running");
    if (r.exit_code == 0) {
      return FailedPrecondition(what + ": it succeeded, and its launcher ended with it");
    }
    if (w->slurm_ended || w->stop_requested) {
      return FailedPrecondition(what + ": Slurm job " + w->slurm_id + " has ended");
    }
    // The launcher kept the replica's container and its task (slurm_launch/main.cc):
    // asked, it starts the container again on the same host and port. The old exit
    // code goes first, so the monitor cannot take it for the new run's.
    const std::string prefix = w->dir + "/" + r.name;
    std::remove((prefix + ".exit").c_str());
    RETURN_IF_ERROR(WriteFileAtomically(prefix + ".restart", ""));
    r.exited = false;
    w->done = false;
    return Status::Ok();
  }
  return NotFound(what + ": no such replica");
}

Status SlurmExecutor::Cleanup(const std::string& job_uid, int attempt) {
  const std::string dir = options_.state_dir + "/" + AttemptKey(job_uid, attempt);
  std::shared_ptr<Impl::AttemptWatch> w = impl_->Find(job_uid, attempt);
  if (w != nullptr) {
    // Every replica ended (or is stopped now); their launchers wait for a restart
    // until the Slurm job ends, which Cleanup sees to.
    RETURN_IF_ERROR(Stop(job_uid, attempt, 0));
    std::string id;
    {
      std::lock_guard<std::mutex> lock(impl_->mu_);
      id = w->slurm_id;
    }
    bool all_succeeded = true;
    {
      std::lock_guard<std::mutex> lock(impl_->mu_);
      for (const Impl::ReplicaWatch& r : w->replicas) all_succeeded &= r.exit_code == 0;
    }
    // Launchers of replicas that succeeded remove their containers and end on their
    // own: a scancel now would only cut that short (and cost slurmctld an RPC).
    if (!id.empty() && all_succeeded && impl_->WaitSlurmJobGone(w, 10 * 1000000LL)) id.clear();
    if (!id.empty()) {
      impl_->Slurm("scancel", {id});
      if (!impl_->WaitSlurmJobGone(w, 120 * 1000000LL)) {
        return DeadlineExceeded("cleanup: Slurm job " + id + " of " + job_uid +
                                " is still running after scancel");
      }
    }
    std::lock_guard<std::mutex> lock(impl_->mu_);
    impl_->attempts_.erase(AttemptKey(job_uid, attempt));
  } else if (Result<std::string> rec = ty::ReadFile(dir + "/slurm.json"); rec.ok()) {
    json j = json::parse(*rec, nullptr, false);
    if (j.is_object() && j.value("job_id", "") != "")
      impl_->Slurm("scancel", {j.value("job_id", "")});
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) return Internal("cleanup: cannot remove " + dir + ": " + ec.message());
  return Status::Ok();
}

Result<std::vector<ObservedReplica>> SlurmExecutor::Recover() {
  std::vector<ObservedReplica> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.state_dir, ec)) {
    const std::string dir = entry.path().string();
    Result<std::string> text = ty::ReadFile(dir + "/context.json");
    if (!text.ok()) continue;
    Result<SlurmContext> context = SlurmContextFromJson(*text);
    if (!context.ok()) {
      spdlog::warn("slurm: {}: {}", dir, context.status().message());
      continue;
    }
    if (entry.path().filename() != AttemptKey(context->job_uid, context->attempt)) continue;
    if (impl_->Find(context->job_uid, context->attempt) != nullptr) continue;  // Watched.
    std::string id;
    if (Result<std::string> rec = ty::ReadFile(dir + "/slurm.json"); rec.ok()) {
      json j = json::parse(*rec, nullptr, false);
      if (j.is_object()) id = j.value("job_id", "");
    }
    if (id.empty()) {
      // The daemon died between sbatch and recording its answer: ask by name. Only an
      // answer counts: taking a controller that does not answer for "no such job"
      // would submit the attempt twice (tried for a minute, then so be it).
      const std::string name = internal::SlurmJobName(context->job_uid, context->attempt);
      CommandOutput q;
      for (int i = 0; i < 60 && !impl_->work_.shutting_down(); ++i) {
        q = impl_->Slurm("squeue", {"-h", "--me", "-t", "all", "-n", name, "-o", "%i"});
        if (q.exit_code == 0) break;
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      id = q.exit_code == 0 ? LastLine(q.out) : "";
      id = id.substr(0, id.find('+'));
    }
    auto w = impl_->NewWatch(context->job_uid, context->attempt, context->replicas);
    w->submitting = false;
    w->outcome_sent = true;  // The job machine decides what the recovered attempt is.
    w->slurm_id = id;
    if (id.empty() && !impl_->AnyReplicaPlaced(*w)) {
      // Never submitted: nothing of it exists; the service launches it again.
      std::filesystem::remove_all(dir, ec);
      continue;
    }
    for (Impl::ReplicaWatch& r : w->replicas) out.push_back(impl_->ObserveRecovered(*w, &r));
    bool all = true;
    for (const auto& r : w->replicas) all = all && r.exited;
    w->done = all;
    std::lock_guard<std::mutex> lock(impl_->mu_);
    impl_->attempts_[AttemptKey(w->job_uid, w->attempt)] = w;
  }
  impl_->Wake();
  return out;
}

}  // namespace ty::executor
