#include "executor/container_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

namespace ty::executor {
namespace {

using json = nlohmann::json;

std::vector<std::string> AttemptFilters(const std::string& uid, int attempt) {
  return {std::string(kLabelJob) + "=" + uid,
          std::string(kLabelAttempt) + "=" + std::to_string(attempt)};
}

std::map<std::string, std::string> AttemptLabels(const AttemptSpec& a) {
  std::map<std::string, std::string> labels = a.labels;
  labels[kLabelJob] = a.job_uid;
  labels[kLabelAttempt] = std::to_string(a.attempt);
  return labels;
}

// Engines report a death by signal N as exit code 128 + N (the shell convention).
std::optional<int> SignalOf(int exit_code) {
  if (exit_code > 128 && exit_code < 128 + 65) return exit_code - 128;
  return std::nullopt;
}

bool ParseInt(const std::string& s, int* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return false;
  *out = static_cast<int>(v);
  return true;
}

std::string LabelOr(const std::map<std::string, std::string>& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

}  // namespace

// ---- Creation ---------------------------------------------------------------

ContainerExecutor::ContainerExecutor(Options options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : SystemClock::Get()),
      engine_(options_.engine_socket, options_.request_timeout_ms) {}

Result<std::unique_ptr<ContainerExecutor>> ContainerExecutor::Create(Options options) {
  if (options.log_sink == nullptr) return InvalidArgument("ContainerExecutor needs a log sink");
  std::unique_ptr<ContainerExecutor> ex(new ContainerExecutor(std::move(options)));
  Status ping = ex->engine_.Ping();
  if (!ping.ok()) {
    return Unavailable("container engine does not answer on " + ex->options_.engine_socket +
                       " (is `podman system service` running? see scripts/setup): " +
                       ping.message());
  }
  return ex;
}

ContainerExecutor::~ContainerExecutor() {
  shutting_down_.store(true);
  std::map<uint64_t, std::thread> launches;
  std::map<std::string, std::unique_ptr<Watcher>> watchers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    launches.swap(launch_threads_);
  }
  for (auto& [id, t] : launches) t.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    watchers.swap(watchers_);
  }
  for (auto& [name, w] : watchers) w->thread.join();
}

void ContainerExecutor::SetEventCallback(EventCallback callback) {
  std::lock_guard<std::mutex> lock(mu_);
  callback_ = std::move(callback);
}

void ContainerExecutor::Emit(const ExecutorEvent& event) {
  EventCallback cb;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cb = callback_;
  }
  if (cb) cb(event);
}

// ---- Launch -----------------------------------------------------------------

std::string ContainerExecutor::CreateBodyForTest(const AttemptSpec& attempt,
                                                 const ReplicaLaunch& r) {
  json body;
  body["Image"] = r.image;
  if (!r.hostname.empty()) body["Hostname"] = r.hostname;
  json env = json::array();
  for (const auto& e : r.env) env.push_back(e.name + "=" + e.value);
  body["Env"] = env;
  if (!r.command.empty()) {
    body["Entrypoint"] = r.command;
    // With Entrypoint overridden the engine already drops the image's CMD; an
    // explicit [] says the same to any engine (executor.h: "the command runs alone").
    body["Cmd"] = r.args;
  } else if (!r.args.empty()) {
    body["Cmd"] = r.args;
  }
  std::map<std::string, std::string> labels = AttemptLabels(attempt);
  labels[kLabelPool] = std::to_string(r.pool);
  labels[kLabelIndex] = std::to_string(r.index);
  labels[kLabelTask] = r.task_name;
  body["Labels"] = labels;
  json host;
  json binds = json::array();
  for (const Mount& m : r.mounts) {
    binds.push_back(m.host_path + ":" + m.container_path + (m.read_only ? ":ro" : ""));
  }
  host["Binds"] = binds;
  if (r.gpu_count > 0) {
    host["DeviceRequests"] = json::array(
        {{{"Driver", "nvidia"}, {"Count", r.gpu_count}, {"Capabilities", {{"gpu"}}}}});
  }
  if (!attempt.network.empty()) {
    host["NetworkMode"] = attempt.network;
    json endpoint;
    json aliases = json::array();
    if (!r.hostname.empty()) aliases.push_back(r.hostname);
    endpoint["Aliases"] = aliases;
    body["NetworkingConfig"]["EndpointsConfig"][attempt.network] = endpoint;
  }
  body["HostConfig"] = host;
  return body.dump();
}

Status ContainerExecutor::Launch(const AttemptSpec& attempt) {
  if (attempt.job_uid.empty()) return InvalidArgument("launch: job_uid is empty");
  if (attempt.replicas.empty()) return InvalidArgument("launch: attempt has no replicas");
  std::set<std::string> names;
  for (const ReplicaLaunch& r : attempt.replicas) {
    if (r.name.empty()) return InvalidArgument("launch: a replica has no name");
    if (r.image.empty()) return InvalidArgument("launch: replica " + r.name + " has no image");
    if (!names.insert(r.name).second) {
      return InvalidArgument("launch: replica name " + r.name + " is not unique");
    }
  }
  if (shutting_down_.load()) return Unavailable("launch: executor is shutting down");
  std::lock_guard<std::mutex> lock(mu_);
  for (uint64_t id : finished_launches_) {
    auto it = launch_threads_.find(id);
    if (it != launch_threads_.end()) {
      it->second.join();
      launch_threads_.erase(it);
    }
  }
  finished_launches_.clear();
  uint64_t id = next_launch_id_++;
  launch_threads_[id] = std::thread(&ContainerExecutor::RunLaunch, this, id, attempt);
  return Status::Ok();
}

void ContainerExecutor::RunLaunch(uint64_t id, AttemptSpec attempt) {
  TimeMicros image_ready = 0;
  Status s = LaunchReplicas(attempt, &image_ready);
  if (!shutting_down_.load()) {
    ExecutorEvent e;
    e.job_uid = attempt.job_uid;
    e.attempt = attempt.attempt;
    e.time = Now();
    if (s.ok()) {
      e.kind = ExecutorEventKind::kAttemptStarted;
      e.image_ready_time = image_ready;
    } else {
      e.kind = ExecutorEventKind::kLaunchFailed;
      e.message = s.message();
    }
    Emit(e);
    // Watchers attach after the event so that no kReplicaExited can overtake
    // kAttemptStarted; the engine keeps every line from the start, so none is lost.
    if (s.ok()) {
      for (const ReplicaLaunch& r : attempt.replicas) {
        StartWatcher(attempt.job_uid, attempt.attempt, r.pool, r.index, r.name, r.task_name, 0);
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  finished_launches_.push_back(id);
  cv_.notify_all();
}

Status ContainerExecutor::LaunchReplicas(const AttemptSpec& attempt, TimeMicros* image_ready) {
  std::set<std::string> images;
  for (const ReplicaLaunch& r : attempt.replicas) images.insert(r.image);
  for (const std::string& image : images) {
    Result<bool> exists = engine_.ImageExists(image);
    if (!exists.ok()) {
      return Unavailable("image inspect failed for " + image + ": " + exists.status().message());
    }
    if (!*exists) {
      Status pulled = engine_.PullImage(image);
      if (!pulled.ok()) return Unavailable("image pull failed for " + image + ": " + pulled.message());
    }
  }
  *image_ready = Now();

  std::string network;  // Set only when this launch created it, so only then removed.
  if (!attempt.network.empty()) {
    Status s = engine_.CreateNetwork(attempt.network, AttemptLabels(attempt));
    if (s.ok()) {
      network = attempt.network;
    } else if (s.code() != StatusCode::kAlreadyExists) {
      return Unavailable("create network " + attempt.network + ": " + s.message());
    }
  }
  std::vector<std::string> created;
  for (const ReplicaLaunch& r : attempt.replicas) {
    if (shutting_down_.load()) return Cancelled("launch: executor is shutting down");
    Result<std::string> id = engine_.CreateContainer(r.name, CreateBodyForTest(attempt, r));
    if (!id.ok()) {
      RemoveAll(created, network);
      return Unavailable("create replica " + r.name + ": " + id.status().message());
    }
    created.push_back(r.name);
  }
  for (const ReplicaLaunch& r : attempt.replicas) {
    Status s = engine_.StartContainer(r.name);
    if (!s.ok()) {
      RemoveAll(created, network);
      return Unavailable("start replica " + r.name + ": " + s.message());
    }
  }
  return Status::Ok();
}

void ContainerExecutor::RemoveAll(const std::vector<std::string>& containers,
                                  const std::string& network) {
  // Force-removal kills running ones first; failures here cannot be reported
  // anywhere better than stderr, and Cleanup() retries by label.
  for (const std::string& c : containers) {
    Status s = engine_.RemoveContainer(c);
    if (!s.ok()) std::fprintf(stderr, "executor: %s\n", s.ToString().c_str());
  }
  if (!network.empty()) {
    Status s = engine_.RemoveNetwork(network);
    if (!s.ok()) std::fprintf(stderr, "executor: %s\n", s.ToString().c_str());
  }
}

// ---- Watchers ---------------------------------------------------------------

void ContainerExecutor::StartWatcher(const std::string& job_uid, int attempt, int pool, int index,
                                     const std::string& name, const std::string& task,
                                     TimeMicros skip_until) {
  std::unique_ptr<Watcher> old;
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_.load()) return;
  auto it = watchers_.find(name);
  if (it != watchers_.end()) {
    if (!it->second->done) return;  // Already watched (Recover called twice).
    old = std::move(it->second);    // A finished watcher of an earlier container.
    watchers_.erase(it);
  }
  auto w = std::make_unique<Watcher>();
  w->job_uid = job_uid;
  w->attempt = attempt;
  w->pool = pool;
  w->index = index;
  w->name = name;
  w->task = task;
  w->skip_until = skip_until;
  Watcher* raw = w.get();
  w->thread = std::thread(&ContainerExecutor::RunWatcher, this, raw);
  watchers_[name] = std::move(w);
  if (old) old->thread.join();  // Already done: returns at once.
}

Status ContainerExecutor::CaptureLogs(const std::string& container, const std::string& job_uid,
                                      const std::string& task, bool follow, LogCursor* cursor) {
  // Re-reading from the second of the last line restarts the numbering of that
  // second identically, so `skip_until` drops exactly what was already appended.
  cursor->skip_until = std::max(cursor->skip_until, cursor->last);
  int64_t since_s = cursor->skip_until > 0 ? cursor->skip_until / 1000000 : 0;
  cursor->last = since_s > 0 ? since_s * 1000000 - 1 : 0;
  auto on_line = [&](int stream, std::string_view line) {
    TimeMicros t = Now();
    std::string_view message = line;
    size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      Result<TimeMicros> engine_time = ParseRfc3339(line.substr(0, space));
      if (engine_time.ok()) {
        t = *engine_time;
        message = line.substr(space + 1);
      }
    }
    t = std::max(t, cursor->last + 1);
    cursor->last = t;
    if (t <= cursor->skip_until) return;
    logs::LogEntry entry;
    entry.time = t;
    entry.task = task;
    entry.stream = stream == 2 ? logs::LogStream::kStderr : logs::LogStream::kStdout;
    entry.message = std::string(message);
    options_.log_sink->Append(job_uid, entry);
  };
  return engine_.StreamLogs(container, follow, since_s, on_line, &shutting_down_);
}

bool ContainerExecutor::IsWatched(const std::string& container) {
  std::lock_guard<std::mutex> lock(mu_);
  return watchers_.count(container) > 0;
}

void ContainerExecutor::RunWatcher(Watcher* w) {
  LogCursor cursor;
  cursor.skip_until = w->skip_until;
  auto stream = [&](bool follow) {
    return CaptureLogs(w->name, w->job_uid, w->task, follow, &cursor);
  };
  bool gone = false;
  for (;;) {
    Status s = stream(/*follow=*/true);
    if (shutting_down_.load()) break;
    if (s.code() == StatusCode::kNotFound) {
      gone = true;
      break;
    }
    Result<ContainerState> state = engine_.InspectContainer(w->name);
    if (!state.ok() && state.status().code() == StatusCode::kNotFound) {
      gone = true;
      break;
    }
    if (state.ok() && !state->running) {
      // Podman can end a follow stream at exit before it has sent the end of the
      // log file (seen under load with 20000-line bursts); one plain read from the
      // last second taken picks up the rest without duplicates.
      Status tail = stream(/*follow=*/false);
      if (tail.code() == StatusCode::kNotFound) gone = true;
      break;
    }
    // The stream ended (or failed) while the replica still runs, e.g. the engine
    // service restarted: resume after the last line taken.
    std::this_thread::sleep_for(std::chrono::milliseconds(s.ok() ? 50 : 1000));
  }

  if (!shutting_down_.load()) {
    ExecutorEvent e;
    e.kind = ExecutorEventKind::kReplicaExited;
    e.job_uid = w->job_uid;
    e.attempt = w->attempt;
    e.pool = w->pool;
    e.index = w->index;
    if (gone) {
      // Removed underneath us (forced Cleanup): it was killed.
      e.exit_code = 128 + 9;
    } else {
      Result<int> code = engine_.WaitContainer(w->name, &shutting_down_);
      Result<ContainerState> state = engine_.InspectContainer(w->name);
      if (state.ok()) {
        e.exit_code = state->exit_code;
        e.oom_killed = state->oom_killed;
      } else if (code.ok()) {
        e.exit_code = *code;
      } else {
        e.exit_code = 128 + 9;
      }
    }
    e.signal = SignalOf(e.exit_code);
    e.time = Now();
    if (!shutting_down_.load()) Emit(e);
  }
  std::lock_guard<std::mutex> lock(mu_);
  w->done = true;
  cv_.notify_all();
}

// ---- Stop / Cleanup / Recover ---------------------------------------------

Status ContainerExecutor::Stop(const std::string& job_uid, int attempt, DurationMicros grace) {
  ASSIGN_OR_RETURN(std::vector<ContainerSummary> containers,
                   engine_.ListContainers(AttemptFilters(job_uid, attempt)));
  int grace_s = static_cast<int>(std::max<DurationMicros>(1, (grace + 999999) / 1000000));
  std::vector<Status> results(containers.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < containers.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = engine_.StopContainer(containers[i].id, grace_s); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok() && results[i].code() != StatusCode::kNotFound) {
      return results[i].WithContext("stop " + containers[i].name);
    }
  }
  return Status::Ok();
}

Status ContainerExecutor::Cleanup(const std::string& job_uid, int attempt) {
  ASSIGN_OR_RETURN(std::vector<ContainerSummary> containers,
                   engine_.ListContainers(AttemptFilters(job_uid, attempt)));
  // The contract says the replicas exited; if one still runs, removing it is what
  // lets its watcher finish, so remove first and wait afterwards.
  bool any_running = std::any_of(containers.begin(), containers.end(),
                                 [](const ContainerSummary& c) { return c.state == "running"; });
  if (any_running) {
    for (const ContainerSummary& c : containers) RETURN_IF_ERROR(engine_.RemoveContainer(c.id));
  }
  // Wait for the attempt's watchers so that every line is in the sink before the
  // containers (and their logs) go.
  std::vector<std::unique_ptr<Watcher>> finished;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
      for (const auto& [name, w] : watchers_) {
        if (w->job_uid == job_uid && w->attempt == attempt && !w->done) return false;
      }
      return true;
    });
    for (auto it = watchers_.begin(); it != watchers_.end();) {
      if (it->second->job_uid == job_uid && it->second->attempt == attempt) {
        finished.push_back(std::move(it->second));
        it = watchers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : finished) w->thread.join();
  for (const ContainerSummary& c : containers) RETURN_IF_ERROR(engine_.RemoveContainer(c.id));
  ASSIGN_OR_RETURN(std::vector<std::string> networks,
                   engine_.ListNetworks(AttemptFilters(job_uid, attempt)));
  for (const std::string& n : networks) RETURN_IF_ERROR(engine_.RemoveNetwork(n));
  return Status::Ok();
}

Result<std::vector<ObservedReplica>> ContainerExecutor::Recover() {
  std::lock_guard<std::mutex> recover_lock(recover_mu_);
  ASSIGN_OR_RETURN(std::vector<ContainerSummary> containers,
                   engine_.ListContainers({std::string(kLabelJob)}));
  std::vector<ObservedReplica> out;
  for (const ContainerSummary& c : containers) {
    ObservedReplica o;
    o.job_uid = LabelOr(c.labels, kLabelJob);
    o.name = c.name;
    if (!ParseInt(LabelOr(c.labels, kLabelAttempt), &o.attempt) ||
        !ParseInt(LabelOr(c.labels, kLabelPool), &o.pool) ||
        !ParseInt(LabelOr(c.labels, kLabelIndex), &o.index)) {
      continue;  // Not a replica (or labels tampered with): nothing we can report.
    }
    Result<ContainerState> state = engine_.InspectContainer(c.id);
    if (!state.ok()) {
      if (state.status().code() == StatusCode::kNotFound) continue;  // Removed meanwhile.
      return state.status().WithContext("recover " + c.name);
    }
    o.running = state->running;
    std::string task = LabelOr(c.labels, kLabelTask);
    if (o.running) {
      TimeMicros last = options_.log_sink->LastEntryTime(o.job_uid, task);
      StartWatcher(o.job_uid, o.attempt, o.pool, o.index, c.name, task, last);
    } else if (state->status == "created") {
      o.exit_code = -1;  // Never started: the daemon died mid-launch.
    } else {
      o.exit_code = state->exit_code;
      o.signal = SignalOf(state->exit_code);
      o.oom_killed = state->oom_killed;
      // It may have written lines after the previous daemon stopped watching; the
      // caller reports its end (with its last lines) as soon as this returns, and
      // nobody would read them later. A replica this executor watches is (being)
      // captured to the end by its watcher; reading it here too could race it.
      if (!IsWatched(c.name)) {
        LogCursor cursor;
        cursor.skip_until = options_.log_sink->LastEntryTime(o.job_uid, task);
        Status s = CaptureLogs(c.name, o.job_uid, task, /*follow=*/false, &cursor);
        if (s.code() == StatusCode::kNotFound) continue;  // Removed meanwhile.
        if (!s.ok()) return s.WithContext("recover the log of " + c.name);
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ty::executor
