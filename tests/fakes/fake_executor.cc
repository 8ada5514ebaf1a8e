#include "fakes/fake_executor.h"

namespace ty::testing {
namespace {
std::string Key(const std::string& uid, int attempt, int pool, int index) {
  return uid + "/" + std::to_string(attempt) + "/" + std::to_string(pool) + "/" +
         std::to_string(index);
}
TimeMicros FakeNow() { return SystemClock::Get()->Now(); }
}  // namespace

void FakeExecutor::SetEventCallback(executor::EventCallback callback) {
  std::lock_guard<std::mutex> lock(mu_);
  callback_ = std::move(callback);
}

void FakeExecutor::Emit(const executor::ExecutorEvent& event) {
  executor::EventCallback cb;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cb = callback_;
  }
  if (cb) cb(event);
}

Status FakeExecutor::Launch(const executor::AttemptSpec& attempt) {
  if (attempt.replicas.empty()) return InvalidArgument("attempt has no replicas");
  std::optional<std::string> fail;
  bool hold;
  {
    std::lock_guard<std::mutex> lock(mu_);
    launches_.push_back(attempt);
    fail.swap(fail_next_);
    hold = hold_;
  }
  executor::ExecutorEvent ev;
  ev.job_uid = attempt.job_uid;
  ev.attempt = attempt.attempt;
  ev.time = FakeNow();
  if (fail) {
    ev.kind = executor::ExecutorEventKind::kLaunchFailed;
    ev.message = *fail;
    Emit(ev);
    return Status::Ok();
  }
  if (hold) return Status::Ok();
  CompleteHeldLaunch(attempt.job_uid, attempt.attempt);
  return Status::Ok();
}

void FakeExecutor::CompleteHeldLaunch(const std::string& job_uid, int attempt) {
  std::lock_guard<std::mutex> order(order_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& a : launches_) {
      if (a.job_uid != job_uid || a.attempt != attempt) continue;
      for (const auto& r : a.replicas) running_.insert(Key(job_uid, attempt, r.pool, r.index));
    }
  }
  executor::ExecutorEvent ev;
  ev.kind = executor::ExecutorEventKind::kAttemptStarted;
  ev.job_uid = job_uid;
  ev.attempt = attempt;
  ev.time = FakeNow();
  ev.image_ready_time = ev.time;
  Emit(ev);
}

void FakeExecutor::Exit(const std::string& job_uid, int attempt, int pool, int index, int exit_code,
                        std::optional<int> signal) {
  std::lock_guard<std::mutex> order(order_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_.erase(Key(job_uid, attempt, pool, index)) == 0) return;
  }
  executor::ExecutorEvent ev;
  ev.kind = executor::ExecutorEventKind::kReplicaExited;
  ev.job_uid = job_uid;
  ev.attempt = attempt;
  ev.pool = pool;
  ev.index = index;
  ev.exit_code = exit_code;
  ev.signal = signal;
  ev.time = FakeNow();
  Emit(ev);
}

Status FakeExecutor::Stop(const std::string& job_uid, int attempt, DurationMicros) {
  std::vector<std::pair<int, int>> stopped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stop_calls_;
    for (const auto& a : launches_) {
      if (a.job_uid != job_uid || a.attempt != attempt) continue;
      for (const auto& r : a.replicas) {
        if (running_.count(Key(job_uid, attempt, r.pool, r.index))) {
          stopped.emplace_back(r.pool, r.index);
        }
      }
    }
  }
  for (auto [pool, index] : stopped) Exit(job_uid, attempt, pool, index, 143, 15);
  return Status::Ok();
}

Status FakeExecutor::RestartReplica(const std::string& job_uid, int attempt, int pool, int index) {
  std::lock_guard<std::mutex> lock(mu_);
  ++restart_calls_;
  bool known = false;  // Launched by this executor (a replica that vanished is not).
  for (const auto& a : launches_) {
    if (a.job_uid != job_uid || a.attempt != attempt) continue;
    for (const auto& r : a.replicas) known |= r.pool == pool && r.index == index;
  }
  if (!known) return NotFound("no such replica");
  if (!running_.insert(Key(job_uid, attempt, pool, index)).second) {
    return FailedPrecondition("replica is running");
  }
  return Status::Ok();
}

int FakeExecutor::restart_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restart_calls_;
}

Status FakeExecutor::Cleanup(const std::string& job_uid, int attempt) {
  std::lock_guard<std::mutex> lock(mu_);
  cleaned_.insert(job_uid + "/" + std::to_string(attempt));
  return Status::Ok();
}

Result<std::vector<executor::ObservedReplica>> FakeExecutor::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& r : recovered_) {
    if (r.running) running_.insert(Key(r.job_uid, r.attempt, r.pool, r.index));
  }
  return recovered_;
}

void FakeExecutor::FailNextLaunch(std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = std::move(message);
}

void FakeExecutor::HoldLaunches(bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_ = hold;
}

void FakeExecutor::SetRecovered(std::vector<executor::ObservedReplica> replicas) {
  std::lock_guard<std::mutex> lock(mu_);
  recovered_ = std::move(replicas);
}

std::vector<executor::AttemptSpec> FakeExecutor::launches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return launches_;
}

std::optional<executor::AttemptSpec> FakeExecutor::LastLaunchOf(const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = launches_.rbegin(); it != launches_.rend(); ++it) {
    if (it->job_uid == uid) return *it;
  }
  return std::nullopt;
}

int FakeExecutor::stop_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_calls_;
}

std::set<std::string> FakeExecutor::cleaned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cleaned_;
}

bool FakeExecutor::IsRunning(const std::string& uid, int attempt, int pool, int index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_.count(Key(uid, attempt, pool, index)) > 0;
}

}  // namespace ty::testing
