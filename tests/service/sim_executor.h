// SimExecutor: an Executor whose replicas follow a script on a ManualClock, for
// deterministic whole-scenario tests of the service (crash_points_test.cc).
//
// Each start of replica (pool, index) — counted over every attempt and restart of
// the job — asks the script how that run behaves: exit after some time with some
// code, or run until stopped; honour SIGTERM or ignore it (then SIGKILL after the
// grace). Launch creates the replicas and starts them after `launch_delay`. Exits
// are reported by Tick(), which the test calls as it advances the clock. The
// executor's state (what exists, what runs, how often each replica started)
// survives a "daemon crash": it is the world outside the daemon.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "executor/executor.h"
#include "fakes/manual_clock.h"

namespace ty::testing {

struct SimRun {
  std::optional<DurationMicros> exit_after;  // nullopt: runs until stopped.
  int exit_code = 0;
  std::optional<int> signal;
  bool ignores_sigterm = false;
};

// (pool, index, start number from 1) -> how that run behaves.
using SimScript = std::function<SimRun(int pool, int index, int start)>;

class SimExecutor : public executor::Executor {
 public:
  SimExecutor(ManualClock* clock, SimScript script, DurationMicros launch_delay = 0)
      : clock_(clock), script_(std::move(script)), launch_delay_(launch_delay) {}

  void SetEventCallback(executor::EventCallback callback) override {
    std::lock_guard<std::mutex> lock(mu_);
    callback_ = std::move(callback);
  }

  Status Launch(const executor::AttemptSpec& attempt) override {
    std::vector<executor::ExecutorEvent> events;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& r : attempt.replicas) {
        Replica& rep = replicas_[{attempt.job_uid, attempt.attempt, r.pool, r.index}];
        rep = Replica{};
        rep.start_at = clock_->Now() + launch_delay_;
        NoteTrial(r, &rep);
      }
      ++launches_;
      if (launch_delay_ == 0) StartDue(&events);
    }
    Emit(events);
    return Status::Ok();
  }

  Status Stop(const std::string& uid, int attempt, DurationMicros grace) override {
    std::vector<executor::ExecutorEvent> events;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [key, rep] : replicas_) {
        if (std::get<0>(key) != uid || std::get<1>(key) != attempt || !rep.running) continue;
        if (rep.run.ignores_sigterm) {
          if (!rep.kill_at) rep.kill_at = clock_->Now() + grace;
        } else {
          Exit(key, rep, 143, 15, &events);
        }
      }
    }
    Emit(events);
    return Status::Ok();
  }

  Status RestartReplica(const std::string& uid, int attempt, int pool, int index) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = replicas_.find({uid, attempt, pool, index});
    if (it == replicas_.end()) return NotFound("no such replica");
    if (it->second.running) return FailedPrecondition("replica is running");
    Start(it->first, it->second);
    return Status::Ok();
  }

  Status Cleanup(const std::string& uid, int attempt) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = replicas_.begin(); it != replicas_.end();) {
      if (std::get<0>(it->first) == uid && std::get<1>(it->first) == attempt) {
        if (it->second.running) ++removed_running_;
        it = replicas_.erase(it);
      } else {
        ++it;
      }
    }
    return Status::Ok();
  }

  // The daemon is gone: nobody hears events until the next one sets its callback, and
  // a launch it had under way (created, not started) never starts.
  void DaemonDied() {
    std::lock_guard<std::mutex> lock(mu_);
    callback_ = nullptr;
    for (auto& [key, rep] : replicas_) rep.start_at.reset();
  }

  Result<std::vector<executor::ObservedReplica>> Recover() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<executor::ObservedReplica> out;
    for (const auto& [key, rep] : replicas_) {
      executor::ObservedReplica o;
      std::tie(o.job_uid, o.attempt, o.pool, o.index) = key;
      o.running = rep.running;
      o.exit_code = rep.exit_code;
      o.signal = rep.signal;
      o.started_at = rep.started;
      o.finished_at = rep.ended;
      // Created by a launch that had not started it: the daemon that would have is gone.
      if (!rep.running && rep.started == 0) o.exit_code = executor::ObservedReplica::kNeverStarted;
      out.push_back(o);
    }
    return out;
  }

  std::string ReplicaBucketRoot() const override { return "/gcs"; }
  // Like local processes: a trial's metrics file is a host path.
  // Starts replicas whose launch is due and ends runs whose time has come.
  void Tick() {
    std::vector<executor::ExecutorEvent> events;
    {
      std::lock_guard<std::mutex> lock(mu_);
      StartDue(&events);
      TimeMicros now = clock_->Now();
      for (auto& [key, rep] : replicas_) {
        if (!rep.running) continue;
        if (rep.kill_at && *rep.kill_at <= now) {
          Exit(key, rep, 137, 9, &events);
        } else if (rep.run.exit_after && rep.started + *rep.run.exit_after <= now) {
          Exit(key, rep, rep.run.exit_code, rep.run.signal, &events);
        }
      }
    }
    Emit(events);
  }

  // Starts of (pool, index) over the whole run.
  std::map<std::pair<int, int>, int> starts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return starts_;
  }
  size_t leftovers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return replicas_.size();
  }
  int removed_running() const {
    std::lock_guard<std::mutex> lock(mu_);
    return removed_running_;
  }

 private:
  using Key = std::tuple<std::string, int, int, int>;  // uid, attempt, pool, index
  struct Replica {
    std::optional<TimeMicros> start_at;  // Launched, not started yet.
    bool running = false;
    TimeMicros started = 0;
    TimeMicros ended = 0;
    SimRun run;
    std::optional<TimeMicros> kill_at;
    int exit_code = 0;
    std::optional<int> signal;
    std::string metrics_file;  // CLOUD_ML_HP_METRIC_FILE of a trial's primary replica.
    std::string metric_tag;
    double objective = 0;  // What it reports: its first `--name=number` argument.
  };

  // A tuning trial's trainer: on a clean exit it writes its objective to the
  // hypertune file, as cloudml-hypertune does (the file is on the host here).
  static void ReportMetric(const Replica& rep) {
    if (rep.metrics_file.empty()) return;
    std::filesystem::create_directories(std::filesystem::path(rep.metrics_file).parent_path());
    std::ofstream(rep.metrics_file)
        << "{\"" << rep.metric_tag << "\": \"" << rep.objective << "\", \"global_step\": \"1\"}\n";
  }

  // Its replicas run on the host's filesystem, as local processes do.
  static void NoteTrial(const executor::ReplicaLaunch& given, Replica* rep) {
    const executor::ReplicaLaunch launch =
        executor::WithMetricsDir(given, /*same_filesystem=*/true);
    for (const auto& [name, value] : launch.env) {
      if (name == "CLOUD_ML_HP_METRIC_FILE") rep->metrics_file = value;
      if (name == "CLOUD_ML_HP_METRIC_TAG") rep->metric_tag = value;
    }
    for (const std::string& arg : launch.args) {
      size_t eq = arg.find('=');
      if (arg.rfind("--", 0) != 0 || eq == std::string::npos) continue;
      rep->objective = std::strtod(arg.c_str() + eq + 1, nullptr);
      break;
    }
  }

  void Start(const Key& key, Replica& rep) {
    int n = ++starts_[{std::get<2>(key), std::get<3>(key)}];
    rep.run = script_(std::get<2>(key), std::get<3>(key), n);
    rep.running = true;
    rep.started = clock_->Now();
    rep.kill_at.reset();
    rep.start_at.reset();
  }

  // REQUIRES: mu_ held. Starts every due launch, one kAttemptStarted per attempt.
  void StartDue(std::vector<executor::ExecutorEvent>* events) {
    std::map<std::pair<std::string, int>, bool> started;
    for (auto& [key, rep] : replicas_) {
      if (!rep.start_at || *rep.start_at > clock_->Now()) continue;
      Start(key, rep);
      started[{std::get<0>(key), std::get<1>(key)}] = true;
    }
    for (const auto& [attempt, unused] : started) {
      executor::ExecutorEvent ev;
      ev.kind = executor::ExecutorEventKind::kAttemptStarted;
      ev.job_uid = attempt.first;
      ev.attempt = attempt.second;
      ev.time = clock_->Now();
      events->push_back(ev);
    }
  }

  void Exit(const Key& key, Replica& rep, int code, std::optional<int> signal,
            std::vector<executor::ExecutorEvent>* events) {
    rep.running = false;
    rep.ended = clock_->Now();
    rep.exit_code = code;
    rep.signal = signal;
    if (code == 0) ReportMetric(rep);
    executor::ExecutorEvent ev;
    ev.kind = executor::ExecutorEventKind::kReplicaExited;
    std::tie(ev.job_uid, ev.attempt, ev.pool, ev.index) = key;
    ev.exit_code = code;
    ev.signal = signal;
    ev.time = clock_->Now();
    events->push_back(ev);
  }

  void Emit(const std::vector<executor::ExecutorEvent>& events) {
    executor::EventCallback cb;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cb = callback_;
    }
    for (const auto& ev : events) {
      if (cb) cb(ev);
    }
  }

  ManualClock* const clock_;
  const SimScript script_;
  const DurationMicros launch_delay_;
  mutable std::mutex mu_;
  executor::EventCallback callback_;
  std::map<Key, Replica> replicas_;
  std::map<std::pair<int, int>, int> starts_;
  int launches_ = 0;
  int removed_running_ = 0;
};

}  // namespace ty::testing
