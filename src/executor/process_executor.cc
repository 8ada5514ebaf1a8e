#include "executor/process_executor.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/files.h"

extern char** environ;

namespace ty::executor {
namespace {

using internal::SignalOf;
using json = nlohmann::json;

// The wrapper. $0 is the state path prefix. TERM/INT are trapped (not ignored: an
// ignored signal would be inherited by the program) so that the wrapper outlives
// the program it shares a process group with and records its status; the status
// of a program killed by signal N is 128+N, as engines report it.
constexpr char kWrapper[] =
    "trap 'true' TERM INT HUP; \"$@\"; s=$?; echo $s > \"$0.exit\"; exit $s";

constexpr auto kPollInterval = std::chrono::milliseconds(50);

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// Start time of `pid` in clock ticks since boot (/proc/<pid>/stat field 22), and
// whether it is a zombie. False if there is no such process.
bool ProcStat(int pid, unsigned long long* start_ticks, bool* zombie) {
  std::string stat;
  if (!ReadFile("/proc/" + std::to_string(pid) + "/stat", &stat)) return false;
  size_t close = stat.rfind(')');  // comm may contain spaces and parentheses.
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  std::vector<std::string> fields;  // fields[0] is field 3 (state).
  while (rest >> field && fields.size() < 20) fields.push_back(field);
  if (fields.size() < 20) return false;
  *zombie = fields[0] == "Z" || fields[0] == "X";
  *start_ticks = std::strtoull(fields[19].c_str(), nullptr, 10);
  return true;
}

bool IsAlive(int pid, unsigned long long start_ticks) {
  if (pid <= 0) return false;
  unsigned long long ticks = 0;
  bool zombie = false;
  if (!ProcStat(pid, &ticks, &zombie)) return false;
  return !zombie && ticks == start_ticks;
}

}  // namespace

// ---- Creation ---------------------------------------------------------------

ProcessExecutor::ProcessExecutor(Options options)
    : options_(std::move(options)), clock_(options_.clock) {}

Result<std::unique_ptr<ProcessExecutor>> ProcessExecutor::Create(Options options) {
  if (options.state_dir.empty()) return InvalidArgument("ProcessExecutor needs a state_dir");
  if (options.log_sink == nullptr) return InvalidArgument("ProcessExecutor needs a log sink");
  if (options.clock == nullptr) return InvalidArgument("ProcessExecutor needs a clock");
  std::error_code ec;
  std::filesystem::create_directories(options.state_dir, ec);
  if (ec) return Internal("create " + options.state_dir + ": " + ec.message());
  return std::unique_ptr<ProcessExecutor>(new ProcessExecutor(std::move(options)));
}

// Stops the threads while what they use is alive; processes keep running.
ProcessExecutor::~ProcessExecutor() { work_.Shutdown(); }

void ProcessExecutor::SetEventCallback(EventCallback callback) {
  work_.SetEventCallback(std::move(callback));
}

std::string ProcessExecutor::PathOf(const std::string& name, const char* suffix) const {
  return options_.state_dir + "/" + name + suffix;
}

// ---- Launch -----------------------------------------------------------------

Status ProcessExecutor::Launch(const AttemptSpec& attempt) {
  RETURN_IF_ERROR(internal::ValidateAttempt(attempt, [](const ReplicaLaunch& r) {
    if (r.name.empty() || r.name == "." || r.name == ".." ||
        r.name.find('/') != std::string::npos) {
      return InvalidArgument("launch: replica name '" + r.name + "' is not a valid file name");
    }
    if (r.command.empty()) {
      return InvalidArgument("launch: replica " + r.name +
                             " has no command (the process executor cannot run an image's "
                             "entrypoint)");
    }
    return Status::Ok();
  }));
  AttemptSpec owned = attempt;
  for (ReplicaLaunch& r : owned.replicas)
    r = WithMetricsDir(std::move(r), /*same_filesystem=*/true);
  return work_.StartLaunch([this, owned] { RunLaunch(owned); });
}

void ProcessExecutor::RunLaunch(const AttemptSpec& attempt) {
  // "Create" every replica (meta file, working directory, fresh output files)...
  Status status = internal::EnsureBucketDirs(options_.bucket_root, attempt.buckets);
  for (const ReplicaLaunch& r : attempt.replicas) {
    if (!status.ok()) break;
    RemoveFiles(r.name);  // Leftovers of an earlier run of the same name.
    json env = json::array();
    for (const auto& e : r.env) env.push_back({e.name, e.value});
    json meta = {{"job_uid", attempt.job_uid},
                 {"attempt", attempt.attempt},
                 {"pool", r.pool},
                 {"index", r.index},
                 {"name", r.name},
                 {"task", r.task_name},
                 {"command", r.command},
                 {"args", r.args},
                 {"env", env}};
    std::error_code ec;
    std::filesystem::create_directories(options_.state_dir + "/" + r.name, ec);
    if (ec || !WriteFileAtomically(PathOf(r.name, ".json"), meta.dump()).ok()) {
      status = Internal("create replica " + r.name + ": cannot write to " + options_.state_dir +
                        (ec ? ": " + ec.message() : ""));
      break;
    }
  }
  // ...then start every one.
  TimeMicros image_ready = clock_->Now();
  std::vector<Replica> started;
  if (status.ok()) {
    for (const ReplicaLaunch& r : attempt.replicas) {
      Replica rep;
      status = Spawn(attempt, r, /*append=*/false, &rep);
      if (!status.ok()) break;
      started.push_back(rep);
    }
  }
  if (!status.ok()) {
    for (const Replica& r : started) KillGroupAndWait(r, SIGKILL, 10 * 1000000LL);
    for (const ReplicaLaunch& r : attempt.replicas) RemoveFiles(r.name);
  }
  work_.Emit(internal::LaunchOutcomeEvent(attempt, status, image_ready, clock_->Now()));
  // After the event, so that no kReplicaExited overtakes kAttemptStarted; output
  // waits in the files meanwhile.
  for (const Replica& r : started) StartWatcher(r, /*resume=*/false);
}

namespace {

// "NAME=value" for the replica: its own env, the daemon's PATH unless it sets one,
// and the GPUs it was granted.
std::vector<std::string> ReplicaEnvironment(const ReplicaLaunch& r) {
  std::vector<std::string> env;
  bool has_path = false;
  for (const auto& e : r.env) {
    // The grant decides which GPUs a replica uses, not the job's own env.
    if (e.name == "CUDA_VISIBLE_DEVICES" || e.name == "NVIDIA_VISIBLE_DEVICES") continue;
    env.push_back(e.name + "=" + e.value);
    has_path = has_path || e.name == "PATH";
  }
  // A process sees every GPU of the host: CUDA is told which are this replica's,
  // and a replica granted none sees none (an empty list hides them all), so that a
  // CPU job never takes a GPU another job was given.
  env.push_back("CUDA_VISIBLE_DEVICES=" + JoinIndices(r.gpu_indices));
  if (!r.gpu_indices.empty()) env.push_back("NVIDIA_VISIBLE_DEVICES=" + JoinIndices(r.gpu_indices));
  if (!has_path) {
    const char* path = getenv("PATH");
    env.push_back(std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin"));
  }
  return env;
}

}  // namespace

Status ProcessExecutor::Spawn(const AttemptSpec& attempt, const ReplicaLaunch& r, bool append,
                              Replica* out) {
  std::string prefix = options_.state_dir + "/" + r.name;
  std::vector<std::string> argv_s = {"/bin/sh", "-c", kWrapper, prefix};
  argv_s.insert(argv_s.end(), r.command.begin(), r.command.end());
  argv_s.insert(argv_s.end(), r.args.begin(), r.args.end());
  std::vector<std::string> env_s = ReplicaEnvironment(r);
  std::vector<char*> argv, envp;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  std::string out_path = prefix + ".out", err_path = prefix + ".err";
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  const int out_flags = O_WRONLY | O_CREAT | O_APPEND | (append ? 0 : O_TRUNC);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), out_flags, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), out_flags, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, prefix.c_str());
  // The daemon may block or ignore signals; the replica must start with defaults.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigfillset(&defaults);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Internal("start replica " + r.name + ": " + std::strerror(rc));

  out->job_uid = attempt.job_uid;
  out->attempt = attempt.attempt;
  out->pool = r.pool;
  out->index = r.index;
  out->name = r.name;
  out->task = r.task_name;
  out->pid = pid;
  bool zombie = false;
  ProcStat(pid, &out->start_ticks, &zombie);
  if (!WriteFileAtomically(prefix + ".pid",
                           std::to_string(pid) + " " + std::to_string(out->start_ticks) + "\n")
           .ok()) {
    kill(-pid, SIGKILL);
    return Internal("start replica " + r.name + ": cannot write " + prefix + ".pid");
  }
  return Status::Ok();
}

// ---- Watching -------------------------------------------------------------

void ProcessExecutor::StartWatcher(const Replica& r, bool resume) {
  work_.StartWatcher(r.job_uid, r.attempt, r.name, [this, r, resume] { RunWatcher(r, resume); });
}

internal::FileLogCapture ProcessExecutor::CaptureOf(const Replica& r) const {
  return internal::FileLogCapture(options_.log_sink, clock_, PathOf(r.name, ""), r.job_uid, r.task);
}

void ProcessExecutor::RunWatcher(const Replica& r, bool resume) {
  internal::FileLogCapture capture = CaptureOf(r);
  if (resume) capture.Resume();

  std::optional<int> wait_status;
  bool gone = false;
  while (!work_.shutting_down() && !gone) {
    // Liveness first, output second: once the wrapper is gone, this pass reads
    // everything it wrote, including a last line without "\n".
    int st = 0;
    pid_t got = waitpid(r.pid, &st, WNOHANG);  // Reaps it if it is our child.
    if (got == r.pid) {
      wait_status = st;
      gone = true;
    } else if (got < 0 && !IsAlive(r.pid, r.start_ticks)) {
      gone = true;
    }
    if (gone) {
      // Its end is reported after its last line, however long the disk stays full.
      capture.CaptureAllWaiting([this] { return work_.shutting_down(); });
    } else {
      capture.CaptureNew(/*writer_gone=*/false);
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  if (gone && !work_.shutting_down()) {
    int exit_code = 0;
    std::string text;
    if (ReadFile(PathOf(r.name, ".exit"), &text) && !text.empty()) {
      exit_code = std::atoi(text.c_str());
    } else if (wait_status && WIFEXITED(*wait_status)) {
      exit_code = WEXITSTATUS(*wait_status);
    } else if (wait_status && WIFSIGNALED(*wait_status)) {
      exit_code = 128 + WTERMSIG(*wait_status);
    } else {
      exit_code = 128 + SIGKILL;  // The wrapper itself was killed before it could write.
    }
    ExecutorEvent e = internal::ReplicaExitedEvent(r.job_uid, r.attempt, r.pool, r.index, exit_code,
                                                   clock_->Now());
    e.finished_at = FileModifiedAt(PathOf(r.name, ".exit"));  // Written as it ended.
    work_.Emit(e);
  }
}

// ---- Stop / Cleanup / Recover ---------------------------------------------

std::vector<ProcessExecutor::Replica> ProcessExecutor::ReplicasOnDisk(const std::string& job_uid,
                                                                      int attempt) {
  std::vector<Replica> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.state_dir, ec)) {
    const std::filesystem::path& p = entry.path();
    if (p.extension() != ".json") continue;
    std::string text;
    if (!ReadFile(p.string(), &text)) continue;
    json meta = json::parse(text, nullptr, false);
    if (!meta.is_object()) continue;
    Replica r;
    r.job_uid = meta.value("job_uid", "");
    r.attempt = meta.value("attempt", 0);
    r.pool = meta.value("pool", 0);
    r.index = meta.value("index", 0);
    r.name = meta.value("name", "");
    r.task = meta.value("task", "");
    if (r.name.empty()) continue;
    if (!job_uid.empty() && (r.job_uid != job_uid || r.attempt != attempt)) continue;
    std::string pid_text;
    if (ReadFile(PathOf(r.name, ".pid"), &pid_text)) {
      std::istringstream in(pid_text);
      in >> r.pid >> r.start_ticks;
    }
    out.push_back(std::move(r));
  }
  return out;
}

void ProcessExecutor::KillGroupAndWait(const Replica& r, int signal, DurationMicros timeout) {
  if (!IsAlive(r.pid, r.start_ticks)) return;
  kill(-r.pid, signal);
  int64_t deadline = MonotonicMicros() + timeout;
  while (IsAlive(r.pid, r.start_ticks) && MonotonicMicros() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status ProcessExecutor::Stop(const std::string& job_uid, int attempt, DurationMicros grace) {
  std::vector<Replica> replicas = ReplicasOnDisk(job_uid, attempt);
  for (const Replica& r : replicas) {
    if (IsAlive(r.pid, r.start_ticks)) kill(-r.pid, SIGTERM);
  }
  int64_t deadline = MonotonicMicros() + std::max<DurationMicros>(grace, 0);
  auto any_alive = [&] {
    return std::any_of(replicas.begin(), replicas.end(),
                       [](const Replica& r) { return IsAlive(r.pid, r.start_ticks); });
  };
  while (any_alive() && MonotonicMicros() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const Replica& r : replicas) KillGroupAndWait(r, SIGKILL, 10 * 1000000LL);
  if (any_alive()) return Internal("stop: a replica of " + job_uid + " survived SIGKILL");
  return Status::Ok();
}

namespace {

// What a replica's meta file recorded of its launch (task, command, args, env); nullopt
// when it lacks the command or the environment (written by an older daemon, or damaged).
std::optional<ReplicaLaunch> LaunchFromMeta(const json& meta) {
  if (!meta.contains("command") || !meta["command"].is_array() || meta["command"].empty() ||
      !meta.contains("env") || !meta["env"].is_array()) {
    return std::nullopt;
  }
  ReplicaLaunch launch;
  try {
    launch.task_name = meta.value("task", "");
    launch.command = meta["command"].get<std::vector<std::string>>();
    launch.args = meta.value("args", std::vector<std::string>{});
    for (const json& e : meta["env"]) {
      launch.env.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>()});
    }
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return launch;
}

}  // namespace

Status ProcessExecutor::RestartReplica(const std::string& job_uid, int attempt, int pool,
                                       int index) {
  std::lock_guard<std::mutex> lock(recover_mu_);
  const std::string name = ReplicaName(job_uid, attempt, pool, index);
  const std::string what = "restart " + name;
  std::string text;
  if (!ReadFile(PathOf(name, ".json"), &text)) return NotFound(what + ": no such replica");
  json meta = json::parse(text, nullptr, false);
  if (!meta.is_object() || meta.value("job_uid", "") != job_uid ||
      meta.value("attempt", 0) != attempt || meta.value("pool", -1) != pool ||
      meta.value("index", -1) != index) {
    return NotFound(what + ": no such replica");
  }
  Replica previous;
  std::vector<Replica> on_disk = ReplicasOnDisk(job_uid, attempt);
  for (const Replica& r : on_disk) {
    if (r.name == name) previous = r;
  }
  if (IsAlive(previous.pid, previous.start_ticks)) {
    return FailedPrecondition(what + ": the replica is running");
  }
  // Its previous watcher must have reported the previous end (and taken its last
  // output) before the replica runs again and writes more.
  if (!work_.WaitForWatcher(name)) {
    return FailedPrecondition(what +
                              ": the previous run is still being reported (called from "
                              "the event callback?)");
  }
  if (previous.pid > 0) waitpid(previous.pid, nullptr, WNOHANG);  // Reap it if ours.

  AttemptSpec spec;
  spec.job_uid = job_uid;
  spec.attempt = attempt;
  std::optional<ReplicaLaunch> launch = LaunchFromMeta(meta);
  if (!launch)
    return FailedPrecondition(what + ": its meta file does not record the command to run");
  launch->pool = pool;
  launch->index = index;
  launch->name = name;
  // A stale status would be taken for the new run's if its wrapper is SIGKILLed.
  std::remove(PathOf(name, ".exit").c_str());
  Replica started;
  RETURN_IF_ERROR(Spawn(spec, *launch, /*append=*/true, &started));
  // Resuming from .cursor starts the capture where the previous run's output
  // ended (and re-takes what the sink lacks of it: a run nobody watched).
  StartWatcher(started, /*resume=*/true);
  return Status::Ok();
}

void ProcessExecutor::RemoveFiles(const std::string& name) {
  for (const char* suffix : {".json", ".pid", ".exit", ".out", ".err", ".cursor", ".cursor.tmp",
                             ".json.tmp", ".pid.tmp"}) {
    std::remove(PathOf(name, suffix).c_str());
  }
  std::error_code ec;
  std::filesystem::remove_all(options_.state_dir + "/" + name, ec);
}

Status ProcessExecutor::Cleanup(const std::string& job_uid, int attempt) {
  std::vector<Replica> replicas = ReplicasOnDisk(job_uid, attempt);
  // The contract says they exited; kill any that did not, so their watchers end.
  for (const Replica& r : replicas) KillGroupAndWait(r, SIGKILL, 10 * 1000000LL);
  if (!work_.WaitForWatchers(job_uid, attempt)) {
    return DeadlineExceeded("cleanup of " + job_uid + "/" + std::to_string(attempt) +
                            ": log capture did not finish after its processes were killed");
  }
  for (const Replica& r : replicas) RemoveFiles(r.name);
  return Status::Ok();
}

Result<std::vector<ObservedReplica>> ProcessExecutor::Recover() {
  std::lock_guard<std::mutex> recover_lock(recover_mu_);
  std::vector<ObservedReplica> out;
  for (const Replica& r : ReplicasOnDisk("", 0)) {
    ObservedReplica o;
    o.job_uid = r.job_uid;
    o.attempt = r.attempt;
    o.pool = r.pool;
    o.index = r.index;
    o.name = r.name;
    if (r.pid > 0 && IsAlive(r.pid, r.start_ticks)) {
      o.running = true;
      StartWatcher(r, /*resume=*/true);
    } else {
      std::string text;
      if (ReadFile(PathOf(r.name, ".exit"), &text) && !text.empty()) {
        o.exit_code = std::atoi(text.c_str());
        o.finished_at = FileModifiedAt(PathOf(r.name, ".exit"));
      } else {
        o.exit_code = r.pid > 0 ? 128 + SIGKILL : ObservedReplica::kNeverStarted;
      }
      o.signal = SignalOf(o.exit_code);
      // Reap it if this process happens to be its parent (executor re-created).
      if (r.pid > 0) waitpid(r.pid, nullptr, WNOHANG);
      // What it wrote after the previous daemon stopped watching (and the rest of
      // a half-appended batch) would otherwise never reach the sink; the caller
      // reports its end with its last lines as soon as this returns. A replica
      // this executor watches is (being) captured to the end by its watcher.
      if (!work_.IsWatched(r.name)) {
        internal::FileLogCapture capture = CaptureOf(r);
        capture.Resume();
        if (!capture.CaptureAll()) {
          // The sink cannot take its last lines now (a full disk): reported running,
          // a watcher takes them once it can and then reports the end.
          o.running = true;
          o.exit_code = 0;
          o.signal.reset();
          o.finished_at = 0;
          StartWatcher(r, /*resume=*/true);
        }
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ty::executor
