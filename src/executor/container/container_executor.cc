#include "executor/container/container_executor.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string_view>
#include <thread>

#include "executor/container/container_shell.h"
#include "executor/container/engine_api_client.h"

namespace ty::executor {
namespace {

// How often a running replica's stored log is read into the sink: the latency of
// live logs. A read costs about one second of the replica's output.
constexpr int kLogPollMs = 250;
// First poll interval after a replica starts; grows by half each time.
constexpr int kFirstPollMs = 10;

using internal::SignalOf;

// Label filters selecting what this executor owns, narrowed by `extra`.
std::vector<std::string> OwnedFilters(const std::string& instance, std::vector<std::string> extra) {
  if (!instance.empty()) extra.push_back(std::string(kLabelInstance) + "=" + instance);
  return extra;
}

std::vector<std::string> AttemptFilters(const std::string& instance, const std::string& uid,
                                        int attempt) {
  return OwnedFilters(instance, {std::string(kLabelJob) + "=" + uid,
                                 std::string(kLabelAttempt) + "=" + std::to_string(attempt)});
}

}  // namespace

// ---- Creation ---------------------------------------------------------------

ContainerExecutor::ContainerExecutor(Options options)
    : options_(std::move(options)),
      clock_(options_.clock),
      engine_(options_.engine != nullptr
                  ? options_.engine
                  : std::make_shared<EngineApiClient>(options_.engine_socket,
                                                      options_.request_timeout_ms)),
      addresses_([this] { return RunningReplicaAddresses(); }, clock_) {
  warm_ = std::make_unique<WarmPool>(engine_.get(), WarmOptions());
  NetworkSlotsOptions none;  // No holders until Create says how many.
  none.random = options_.random;
  slots_ = std::make_unique<NetworkSlots>(engine_.get(), none);
  packages_ = std::make_unique<internal::PackageImages>(engine_.get(), PackageOptions());
}

internal::PackageImages::Options ContainerExecutor::PackageOptions() const {
  internal::PackageImages::Options p;
  p.bucket_root = options_.bucket_root;
  p.wheelhouse = options_.wheelhouse;
  p.userns_base = UsernsBase();
  p.native_create = options_.native_create && speaks_libpod_;
  if (!options_.instance.empty()) p.labels[kLabelInstance] = options_.instance;
  return p;
}

WarmPoolOptions ContainerExecutor::WarmOptions() const {
  WarmPoolOptions w;
  w.max_sandboxes = options_.warm_sandboxes;
  w.dir = options_.sandbox_dir;
  w.init_path = options_.sandbox_init;
  w.instance = options_.instance;
  w.clock = clock_;
  w.random = options_.random;
  w.refill = options_.warm_refill;
  w.userns_base = UsernsBase();
  return w;
}

Result<std::unique_ptr<ContainerExecutor>> ContainerExecutor::Create(Options options) {
  return Create(std::move(options), [](Options checked) {
    return std::unique_ptr<ContainerExecutor>(new ContainerExecutor(std::move(checked)));
  });
}

Result<std::unique_ptr<ContainerExecutor>> ContainerExecutor::Create(Options options,
                                                                     const Make& make) {
  if (options.log_sink == nullptr) return InvalidArgument("ContainerExecutor needs a log sink");
  if (options.clock == nullptr || options.random == nullptr) {
    return InvalidArgument("ContainerExecutor needs a clock and a random source");
  }
  if (options.warm_sandboxes > 0 || options.network_slots > 0) {
    if (options.sandbox_dir.empty() || ::access(options.sandbox_init.c_str(), X_OK) != 0) {
      return InvalidArgument(
          "a warm pool and network slots need a sandbox directory and the ty-sandbox-init "
          "binary (\"" +
          options.sandbox_init + "\" is not executable)");
    }
    std::error_code ec;
    std::filesystem::create_directories(options.sandbox_dir, ec);
    if (ec) return Internal("cannot create " + options.sandbox_dir + ": " + ec.message());
  }
  std::unique_ptr<ContainerExecutor> ex = make(std::move(options));
  Status ping = ex->engine_->Ping();
  if (!ping.ok()) {
    return Unavailable(
        "container engine does not answer on " + ex->options_.engine_socket +
        " (is `podman system service` running? see scripts/setup): " + ping.message());
  }
  std::shared_ptr<EngineClient> engine = ex->engine_;
  ex->health_ = std::make_unique<HealthProbe>([engine] { return engine->Ping(); },
                                              std::chrono::seconds(2), ex->clock_);
  // Another engine (Docker) takes GPUs as DeviceRequests through its one API.
  Result<bool> libpod = ex->engine_->SpeaksLibpod();
  ex->speaks_libpod_ = libpod.ok() && *libpod;
  // Installs run as the replicas do: in the same user namespace, when podman gives one.
  ex->packages_ =
      std::make_unique<internal::PackageImages>(ex->engine_.get(), ex->PackageOptions());
  if (ex->UsernsBase() > 0) {
    // Sandboxes are made as the replicas they become: in the same user namespace.
    ex->warm_ = std::make_unique<WarmPool>(ex->engine_.get(), ex->WarmOptions());
  } else if (ex->options_.replica_userns_base > 0) {
    spdlog::warn(
        "executor: the engine is not podman; replicas run with the host's user ids (a user "
        "namespace per replica needs podman's native API)");
  }
  // Holders are made with podman's `rootfs` (no image to pin), which Docker lacks.
  if (ex->speaks_libpod_ && ex->options_.network_slots > 0) {
    NetworkSlotsOptions n;
    n.max_idle = ex->options_.network_slots;
    n.root_dir = ex->options_.sandbox_dir + "/netslot-root";
    n.init_path = ex->options_.sandbox_init;
    n.instance = ex->options_.instance;
    n.random = ex->options_.random;
    ex->slots_ = std::make_unique<NetworkSlots>(ex->engine_.get(), n);
  }
  return ex;
}

// Stops the threads while the engine client they use is alive; containers run on.
ContainerExecutor::~ContainerExecutor() {
  health_.reset();
  work_.Shutdown();
}

BackendHealth ContainerExecutor::Health() const {
  return health_ ? health_->Get() : BackendHealth{};
}

void ContainerExecutor::SetEventCallback(EventCallback callback) {
  work_.SetEventCallback(std::move(callback));
}

// ---- Watchers ---------------------------------------------------------------

void ContainerExecutor::StartWatcher(const Watched& w) {
  work_.StartWatcher(w.job_uid, w.attempt, w.name, [this, w] { RunWatcher(w); });
}

int64_t ContainerExecutor::RereadFromSecond(const LogCursor& cursor) {
  int64_t since_s =
      cursor.skip_until > 0 ? std::max<int64_t>(cursor.skip_until / 1000000 - 1, 1) : 0;
  // A restarted replica whose previous run ended mid-line: the engine keeps that line's
  // head (the previous run's) and its tail (the new run's first write on that stream)
  // as records of their own times, and a read that starts between them returns the
  // tail as a line of its own, which shifts the numbering of its second (a line was
  // captured twice). Reads of this run start no later than the head's second.
  if (cursor.run_end && cursor.run_end->kind != RunEnd::Kind::kWhole && since_s > 0) {
    since_s =
        std::min<int64_t>(since_s, std::max<int64_t>(cursor.run_end->line.time / 1000000 - 1, 1));
  }
  return since_s;
}

// When a line was written, as near as can be told. Docker stamps lines to the
// nanosecond; podman's API (4.3) only to the second, though its log file has them
// exact. Reading that file would tie the daemon to podman's storage layout, so a line
// stamped with a whole second is taken as written when this read saw it, but within
// that second: it cannot have been written before the second began nor after it
// ended. Without the clamp, every line of a second would read as written at its
// start, before the service lines of that second (the job's start among them).
// A line without a stamp was written at most a poll before it was seen.
TimeMicros ContainerExecutor::ShownTime(std::optional<TimeMicros> stamp, TimeMicros seen) {
  constexpr TimeMicros kSecond = 1000000;
  if (!stamp) return seen;
  if (*stamp % kSecond != 0) return *stamp;  // A finer stamp than podman's.
  return std::clamp(seen, *stamp, *stamp + kSecond - 1);
}

namespace {

// A line as the engine stores it: "<RFC 3339 time> <message>", the time absent when
// the engine wrote none.
struct StampedLine {
  std::optional<TimeMicros> stamp;
  std::string_view message;
};

StampedLine SplitStamp(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return {std::nullopt, line};
  Result<TimeMicros> engine_time = ParseRfc3339(line.substr(0, space));
  if (!engine_time.ok()) return {std::nullopt, line};
  return {*engine_time, line.substr(space + 1)};
}

}  // namespace

Status ContainerExecutor::CaptureLogs(const std::string& container, const std::string& job_uid,
                                      const std::string& task, bool replica_done,
                                      LogCursor* cursor) {
  // Re-reading from the second of the last line restarts the numbering of that
  // second identically, so `skip_until` drops exactly what was already appended.
  //
  // The re-read starts one second earlier: podman stores a long write as several
  // records with their own times, and a `since` read that begins inside such a
  // line returns its tail as if it were a line. Starting a second early puts any
  // such fragment in a second that is skipped whole, and the numbering of the last
  // line's second restarts at its first line, as in the first read.
  cursor->skip_until = std::max(cursor->skip_until, cursor->last);
  const int64_t since_s = RereadFromSecond(*cursor);
  cursor->last = since_s > 0 ? since_s * 1000000 - 1 : 0;
  // A restarted replica's previous end, when this read covers its slot (a read
  // from a later second gets a joined line's tail as a line of its own).
  RunEnd* end =
      cursor->run_end && cursor->last < cursor->run_end->line.time ? &*cursor->run_end : nullptr;
  bool fragment_split = false;
  Status stored = Status::Ok();  // The first append that failed; the rest of the read waits.
  auto on_line = [&](int stream, std::string_view text) {
    if (!stored.ok()) return;
    const TimeMicros seen = Now();
    StampedLine line = SplitStamp(text);
    TimeMicros t = std::max(line.stamp.value_or(seen), cursor->last + 1);
    if (end != nullptr && t >= end->line.time &&
        IsOnlyThePreviousRunsEnd(end, stream, &t, &line.message, &fragment_split)) {
      return;
    }
    stored =
        AppendLine(job_uid, task, stream, t, ShownTime(line.stamp, seen), line.message, cursor);
  };
  Status read = engine_->StreamLogs(container, /*follow=*/false, since_s, on_line,
                                    work_.cancel_flag(), /*flush_partial=*/replica_done);
  if (!stored.ok()) return ResourceExhausted(stored.message());
  return read;
}

bool ContainerExecutor::IsOnlyThePreviousRunsEnd(RunEnd* end, int stream, TimeMicros* t,
                                                 std::string_view* message, bool* fragment_split) {
  if (end->kind == RunEnd::Kind::kUnknown) {
    // The slot holds the previous run's last line unchanged only if that line was
    // whole; otherwise it holds a newer line, or is empty because the fragment waits
    // for its stream's next "\n".
    const bool whole =
        *t == end->line.time && stream == end->line.stream && *message == end->line.message;
    end->kind = whole ? RunEnd::Kind::kWhole : RunEnd::Kind::kFragment;
  }
  if (end->kind != RunEnd::Kind::kFragment) return false;
  // Whatever now takes the fragment's slot is the new run's.
  if (*t == end->line.time) *t += 1;
  if (*fragment_split || stream != end->line.stream ||
      message->substr(0, end->line.message.size()) != end->line.message) {
    return false;
  }
  *fragment_split = true;
  message->remove_prefix(end->line.message.size());
  // Only the fragment itself (the new run wrote nothing on its stream).
  return message->empty();
}

Status ContainerExecutor::AppendLine(const std::string& job_uid, const std::string& task,
                                     int stream, TimeMicros t, TimeMicros shown,
                                     std::string_view message, LogCursor* cursor) {
  // Where the cursor stood before this line: a line the sink cannot take is read
  // again from there, its numbering the same.
  const TimeMicros last_before = cursor->last, shown_before = cursor->last_shown;
  LogLine line_before = cursor->last_line;
  cursor->last = t;
  cursor->last_line = {.time = t, .stream = stream, .message = std::string(message)};
  if (t <= cursor->skip_until) return Status::Ok();
  logs::LogEntry entry;
  // Lines read in one go may be seen within one microsecond: still one after another.
  entry.time = std::max(shown, cursor->last_shown + 1);
  cursor->last_shown = entry.time;
  entry.source_time = t;
  entry.task = task;
  entry.stream = stream == 2 ? logs::LogStream::kStderr : logs::LogStream::kStdout;
  entry.message = std::string(message);
  Status stored = options_.log_sink->Append(job_uid, entry);
  if (!stored.ok()) {
    cursor->last = last_before;
    cursor->last_shown = shown_before;
    cursor->last_line = std::move(line_before);
  }
  return stored;
}

void ContainerExecutor::RunWatcher(const Watched& w) {
  std::optional<WatchedEnd> end = WatchUntilEnded(w);
  if (end && !work_.shutting_down()) ReportExit(w, *end);
}

std::optional<ContainerExecutor::WatchedEnd> ContainerExecutor::WatchUntilEnded(const Watched& w) {
  // Capture polls the engine's stored log instead of following it: podman's follow
  // stream was seen to skip a block of lines when attached while a replica writes
  // fast, and to stay open after the replica exited. A plain read returns what is
  // stored, completely; the per-second numbering of LogCursor makes repeated reads
  // append each line once. Exit is polled with inspect too: podman's /wait answers
  // 0.2-0.5 s after the exit (it polls internally), which would double the start-
  // to-end time of a short job. The interval starts short, so a quick job ends
  // quickly, and backs off to kLogPollMs for long ones.
  LogCursor cursor;
  cursor.skip_until = w.skip_until;
  if (w.run_end) cursor.run_end = RunEnd{.line = *w.run_end};
  WatchedEnd end;
  int interval_ms = kFirstPollMs;
  for (;;) {
    Result<ContainerState> state = engine_->InspectContainer(w.container);
    if (!state.ok() && state.status().code() == StatusCode::kNotFound) break;
    // Only a final status counts: while a stop is under way podman already reports
    // Running=false (status "stopping") with a provisional exit code of 0.
    bool done = state.ok() && (state->status == "exited" || state->status == "dead" ||
                               state->status == "stopped");
    if (state.ok()) end.last_state = *state;
    if (state.ok() && state->running) oom_watch_.Watch(w.container, state->pid);
    Status s = CaptureLogs(w.container, w.job_uid, w.task, /*replica_done=*/done, &cursor);
    if (work_.shutting_down()) return std::nullopt;
    if (s.code() == StatusCode::kNotFound) break;
    // The last read must succeed before the exit is told: the exit says the log is
    // complete, and an engine that went away between the inspect and the read (the
    // chaos test's outage) would otherwise cost the replica's last lines. Other errors
    // are not waited out.
    // Nor is it told while the log cannot take the last lines (a full disk): they are
    // read again, from the last one stored, until they land.
    const bool engine_away = s.code() == StatusCode::kUnavailable ||
                             s.code() == StatusCode::kDeadlineExceeded ||
                             s.code() == StatusCode::kResourceExhausted;
    if (done && !engine_away) return end;
    int wait_ms = (s.ok() && state.ok()) ? interval_ms : 1000;  // Engine trouble: back off.
    work_.SleepUnlessShuttingDown(wait_ms);
    if (work_.shutting_down()) return std::nullopt;
    interval_ms = std::min(kLogPollMs, interval_ms * 3 / 2);
  }
  end.gone = true;
  return end;
}

void ContainerExecutor::ReportExit(const Watched& w, const WatchedEnd& end) {
  const bool known = !end.gone && end.last_state.has_value();
  // Also when removed underneath us (forced Cleanup): killed.
  const int exit_code = known ? end.last_state->exit_code : 128 + 9;
  // Also when the engine did not say so (podman 4.3 on cgroup v1 never does).
  const bool oom_killed =
      oom_watch_.TakeOomKilled(w.container) || (known && end.last_state->oom_killed);
  // Before the exit is known: the address may go to another job's replica next.
  addresses_.Forget(w.job_uid);
  ExecutorEvent e =
      internal::ReplicaExitedEvent(w.job_uid, w.attempt, w.pool, w.index, exit_code, Now());
  // The engine's own finish time: the exit may have happened long before the daemon
  // could tell (an engine outage, the daemon frozen), and endTime is when it ended.
  if (known) e.finished_at = end.last_state->finished_at;
  e.oom_killed = oom_killed;
  work_.Emit(e);
}

// ---- Stop / Cleanup / Recover ---------------------------------------------

Status ContainerExecutor::Stop(const std::string& job_uid, int attempt, DurationMicros grace) {
  ASSIGN_OR_RETURN(std::vector<FoundReplica> replicas, ListReplicas(job_uid, attempt));
  int grace_s = static_cast<int>(std::max<DurationMicros>(1, (grace + 999999) / 1000000));
  std::vector<Status> results(replicas.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < replicas.size(); ++i) {
    threads.emplace_back(
        [&, i] { results[i] = engine_->StopContainer(replicas[i].container.id, grace_s); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok() && results[i].code() != StatusCode::kNotFound) {
      return results[i].WithContext("stop " + replicas[i].container.name);
    }
  }
  return Status::Ok();
}

Status ContainerExecutor::RestartReplica(const std::string& job_uid, int attempt, int pool,
                                         int index) {
  std::lock_guard<std::mutex> lock(recover_mu_);
  const std::string name = ReplicaName(job_uid, attempt, pool, index);
  const std::string what = "restart " + name;
  // Listed with the instance label, so that only a replica of this daemon is found.
  ASSIGN_OR_RETURN(std::vector<FoundReplica> replicas, ListReplicas(job_uid, attempt));
  auto found = std::find_if(replicas.begin(), replicas.end(),
                            [&](const FoundReplica& r) { return r.container.name == name; });
  if (found == replicas.end()) return NotFound(what + ": no such replica");
  const std::string& id = found->container.id;
  const std::string& task = found->task;
  Result<ContainerState> state = engine_->InspectContainer(id);
  if (!state.ok()) return state.status().WithContext(what);
  if (found->claim && !WarmPool::Launched(found->claim->dir)) {
    return StartPreparedLaunch(*found, state->running, pool, index).WithContext(what);
  }
  if (state->running) return FailedPrecondition(what + ": the replica is running");
  // Its previous watcher must have reported the previous end before the replica
  // runs again: it waits on the engine's /wait, which would return the new run's.
  if (!work_.WaitForWatcher(name)) {
    return FailedPrecondition(what +
                              ": the previous run is still being reported (called from "
                              "the event callback?)");
  }
  // Catch up on the previous run (a replica nobody watched since a daemon restart
  // may have lines the sink lacks) and learn where it ended.
  LogCursor cursor;
  cursor.skip_until = options_.log_sink->LastEntryTime(job_uid, task);
  Status read = CaptureLogs(id, job_uid, task, /*replica_done=*/true, &cursor);
  if (!read.ok()) return read.WithContext(what);
  Status started =
      found->claim ? warm_->StartAgain(id, *found->claim) : engine_->StartContainer(id);
  RETURN_IF_ERROR(started.WithContext(what));
  Watched w{.job_uid = job_uid,
            .attempt = attempt,
            .pool = pool,
            .index = index,
            .name = name,
            .container = id,
            .task = task,
            .skip_until = std::max(cursor.skip_until, cursor.last),
            .run_end = std::nullopt};
  if (cursor.last_line.time > 0) w.run_end = cursor.last_line;
  StartWatcher(w);
  return Status::Ok();
}

// A warm sandbox whose launch a dying daemon prepared and never handed over (its
// replica never ran, recovery said kNeverStarted): started in place is handing it
// over now. Its init still waits (`running`); one stopped since is started again.
Status ContainerExecutor::StartPreparedLaunch(const FoundReplica& r, bool running, int pool,
                                              int index) {
  const SandboxClaim& claim = *r.claim;
  if (!WarmPool::LaunchPrepared(claim.dir)) {
    return FailedPrecondition("its warm sandbox holds no launch to run");
  }
  if (!running) RETURN_IF_ERROR(warm_->StartAgain(r.container.id, claim));
  RETURN_IF_ERROR(WarmPool::HandOverLaunch(claim.dir));
  StartWatcher(Watched{.job_uid = r.job_uid,
                       .attempt = r.attempt,
                       .pool = pool,
                       .index = index,
                       .name = r.container.name,
                       .container = r.container.id,
                       .task = r.task,
                       .skip_until = options_.log_sink->LastEntryTime(r.job_uid, r.task),
                       .run_end = std::nullopt});
  return Status::Ok();
}

Status ContainerExecutor::Cleanup(const std::string& job_uid, int attempt) {
  ASSIGN_OR_RETURN(std::vector<FoundReplica> replicas, ListReplicas(job_uid, attempt));
  auto remove_all = [&]() -> Status {
    for (const FoundReplica& r : replicas) RETURN_IF_ERROR(RemoveReplica(r.container.id));
    return Status::Ok();
  };
  // The contract says the replicas exited; if one still runs, removing it is what
  // lets its watcher finish, so remove first and wait afterwards.
  bool any_running = std::any_of(replicas.begin(), replicas.end(), [](const FoundReplica& r) {
    return r.container.state == "running";
  });
  if (any_running) RETURN_IF_ERROR(remove_all());
  // Wait for the attempt's watchers so that every line is in the sink before the
  // containers (and their logs) go.
  if (!work_.WaitForWatchers(job_uid, attempt)) {
    // A watcher that does not finish (an engine call that hangs): removing the
    // containers ends its reads; never wait forever.
    RETURN_IF_ERROR(remove_all());
    if (!work_.WaitForWatchers(job_uid, attempt)) {
      return DeadlineExceeded("cleanup of " + job_uid + "/" + std::to_string(attempt) +
                              ": log capture did not finish after its replicas were removed");
    }
  }
  RETURN_IF_ERROR(remove_all());
  for (const FoundReplica& r : replicas) {
    if (std::string holder = r.container.Label(kLabelNetSlot); !holder.empty()) {
      slots_->Release(holder);
    }
  }
  ASSIGN_OR_RETURN(std::vector<std::string> networks,
                   engine_->ListNetworks(AttemptFilters(options_.instance, job_uid, attempt)));
  // Replicas that were warm sandboxes: their gang's network and directories.
  std::set<std::string> warm_networks;
  for (const FoundReplica& r : replicas) {
    if (!r.claim) continue;
    if (!r.claim->network.empty()) warm_networks.insert(r.claim->network);
    std::error_code ec;
    std::filesystem::remove_all(r.claim->dir, ec);
  }
  networks.insert(networks.end(), warm_networks.begin(), warm_networks.end());
  for (const std::string& n : networks) RETURN_IF_ERROR(engine_->RemoveNetwork(n));
  return Status::Ok();
}

Result<std::vector<ObservedReplica>> ContainerExecutor::Recover() {
  std::lock_guard<std::mutex> recover_lock(recover_mu_);
  // A previous daemon's warm sandboxes that no attempt took are of no use.
  warm_->ReapLeftovers();
  ASSIGN_OR_RETURN(std::vector<FoundReplica> replicas, ListReplicas("", 0));
  std::set<std::string> holders_in_use;
  for (const FoundReplica& r : replicas) {
    if (std::string holder = r.container.Label(kLabelNetSlot); !holder.empty()) {
      holders_in_use.insert(holder);
    }
  }
  slots_->Recover(holders_in_use);
  std::vector<ObservedReplica> out;
  for (const FoundReplica& r : replicas) {
    if (std::optional<ObservedReplica> o = RecoverReplica(r)) out.push_back(std::move(*o));
  }
  return out;
}

Result<ContainerState> ContainerExecutor::StateForRecovery(const ContainerSummary& c) {
  // The list's word suffices for a running replica (its watcher inspects it from
  // then on): one inspect per replica was most of a restart's time to re-attach
  // (45 ms each with 100 running). An ended one is inspected for its exit.
  ContainerState listed;
  listed.status = c.state;
  listed.running = c.state == "running";
  if (listed.running) return listed;
  Result<ContainerState> state = engine_->InspectContainer(c.id);
  if (state.ok() || state.status().code() == StatusCode::kNotFound) return state;
  // Never started (the daemon died mid-launch): the list says so, and a watcher
  // would wait for ever.
  if (c.state != "created" && c.state != "configured") return state;
  listed.status = "created";
  return listed;
}

namespace {

// An exited replica's end as the engine tells it.
void TakeExit(const ContainerState& state, ObservedReplica* o) {
  o->exit_code = state.exit_code;
  o->signal = SignalOf(state.exit_code);
  o->oom_killed = state.oom_killed;
  o->finished_at = state.finished_at;
  o->started_at = state.started_at;
}

}  // namespace

std::optional<ObservedReplica> ContainerExecutor::RecoverReplica(const FoundReplica& r) {
  const std::optional<ObservedReplica> kRemoved;  // Removed meanwhile: nothing to report.
  const ContainerSummary& c = r.container;
  ObservedReplica o;
  o.job_uid = r.job_uid;
  o.attempt = r.attempt;
  o.pool = r.pool;
  o.index = r.index;
  o.name = c.name;
  Watched watch{.job_uid = o.job_uid,
                .attempt = o.attempt,
                .pool = o.pool,
                .index = o.index,
                .name = c.name,
                .container = c.id,
                .task = r.task,
                .skip_until = options_.log_sink->LastEntryTime(o.job_uid, r.task),
                .run_end = std::nullopt};
  // What the engine cannot tell now (a busy engine's error, a read that met its own
  // cleanup) is left to a watcher, which rides out engine trouble and reports the
  // replica's exit once its log is read to the end. Failing the whole recovery for
  // one replica would keep the daemon from starting.
  auto watch_instead = [&](const Status& why) {
    spdlog::warn("recover {}: {}; watching it instead", c.name, why.ToString());
    o.running = true;
    StartWatcher(watch);
    return std::optional<ObservedReplica>(std::move(o));
  };
  Result<ContainerState> state = StateForRecovery(c);
  if (!state.ok()) {
    if (state.status().code() == StatusCode::kNotFound) return kRemoved;
    return watch_instead(state.status());
  }
  o.running = state->running;
  if (r.claim && !WarmPool::Launched(r.claim->dir)) {
    // A warm sandbox taken by a launch that never wrote its launch file: it still
    // waits, and never ran the replica.
    o.running = false;
    o.exit_code = ObservedReplica::kNeverStarted;
  } else if (o.running) {
    StartWatcher(watch);
  } else if (state->status == "created") {
    o.exit_code = ObservedReplica::kNeverStarted;  // The daemon died mid-launch.
  } else {
    TakeExit(*state, &o);
    // It may have written lines after the previous daemon stopped watching; the
    // caller reports its end (with its last lines) as soon as Recover returns, and
    // nobody would read them later. A replica this executor watches is (being)
    // captured to the end by its watcher; reading it here too could race it.
    Status s = work_.IsWatched(c.name) ? Status::Ok() : ReadToTheEnd(watch);
    if (s.code() == StatusCode::kNotFound) return kRemoved;
    if (!s.ok()) {
      // Its lines so far are in the sink; the watcher reads on from the last.
      watch.skip_until = options_.log_sink->LastEntryTime(o.job_uid, r.task);
      return watch_instead(s);
    }
  }
  return std::optional<ObservedReplica>(std::move(o));
}

Status ContainerExecutor::ReadToTheEnd(const Watched& w) {
  LogCursor cursor;
  cursor.skip_until = w.skip_until;
  return CaptureLogs(w.container, w.job_uid, w.task, /*replica_done=*/true, &cursor);
}

// ---- Lookup ------------------------------------------------------------------

Result<std::vector<ContainerExecutor::FoundReplica>> ContainerExecutor::ListReplicas(
    const std::string& job_uid, int attempt) {
  // A replica started cold carries its replica name and its job, attempt and task
  // labels; a warm sandbox keeps its own name and labels and says in its claim
  // which replica it became (WarmPool: renaming costs the engine ~2 ms per
  // container, one at a time, which would be most of a warm gang's start).
  // One attempt's lookup asks the engine for that attempt's containers only: podman
  // locks every container it lists, and one still starting holds its lock for the
  // whole start, so listing all of them took ~1 s per cleanup when many jobs ran.
  std::vector<ContainerSummary> listed;
  if (job_uid.empty()) {
    ASSIGN_OR_RETURN(listed, engine_->ListContainers(OwnedFilters(options_.instance, {})));
  } else {
    ASSIGN_OR_RETURN(listed,
                     engine_->ListContainers(AttemptFilters(options_.instance, job_uid, attempt)));
    if (warm_->enabled()) {
      ASSIGN_OR_RETURN(std::vector<ContainerSummary> sandboxes,
                       engine_->ListContainers(OwnedFilters(options_.instance, {kLabelSandbox})));
      for (ContainerSummary& c : sandboxes) listed.push_back(std::move(c));
    }
  }
  std::vector<FoundReplica> out;
  for (ContainerSummary& c : listed) {
    if (c.labels.count(kLabelNetSlotHolder)) continue;
    FoundReplica r;
    r.task = c.Label(kLabelTask);
    if (c.labels.count(kLabelSandbox)) {
      Result<SandboxClaim> claim = warm_->ReadClaim(c);
      if (!claim.ok()) continue;  // Not taken (yet).
      c.name = claim->replica;
      r.task = claim->task;
      r.claim = std::move(*claim);
    }
    if (!ParseReplicaName(c.name, &r.job_uid, &r.attempt, &r.pool, &r.index)) continue;
    if (!job_uid.empty() && (r.job_uid != job_uid || r.attempt != attempt)) continue;
    r.container = std::move(c);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::string> ContainerExecutor::JobAtAddress(const std::string& address) {
  return addresses_.JobAt(address);
}

Result<std::unique_ptr<ReplicaShell>> ContainerExecutor::OpenShell(const std::string& job_uid,
                                                                   int attempt, int pool,
                                                                   int index) {
  ASSIGN_OR_RETURN(std::vector<FoundReplica> found, ListReplicas(job_uid, attempt));
  for (const FoundReplica& r : found) {
    if (r.pool != pool || r.index != index) continue;
    if (r.container.state != "running") {
      return FailedPrecondition("replica " + r.task + " is not running (" + r.container.state +
                                ")");
    }
    ASSIGN_OR_RETURN(
        TerminalExec exec,
        engine_->StartTerminal(r.container.id, internal::ShellCommand(), {"TERM=xterm-256color"}));
    return std::unique_ptr<ReplicaShell>(new internal::ContainerShell(engine_, std::move(exec)));
  }
  return NotFound("the job has no replica " + std::to_string(pool) + "-" + std::to_string(index) +
                  " in attempt " + std::to_string(attempt));
}

bool ContainerExecutor::HoldsRuntime(const std::string& local_image) {
  Result<bool> exists = engine_->ImageExists(local_image);
  return !exists.ok() || *exists;  // An engine that does not answer: the launch will say.
}

Result<std::vector<ReplicaAddressBook::Entry>> ContainerExecutor::RunningReplicaAddresses() {
  ASSIGN_OR_RETURN(std::vector<FoundReplica> found, ListReplicas("", 0));
  std::vector<ReplicaAddressBook::Entry> out;
  for (const FoundReplica& r : found) {
    if (r.container.state != "running") continue;
    for (const std::string& a : r.container.addresses) out.push_back({a, r.job_uid});
  }
  return out;
}

}  // namespace ty::executor
