#include "service/admission_controller.h"

#include <chrono>

#include "service/job_demand.h"

namespace ty::service {

AdmissionController::AdmissionController(LoopCore* core, AdmissionOptions options, OwnsFn owns,
                                         LogFn log)
    : core_(core), options_(std::move(options)), owns_(std::move(owns)), log_(std::move(log)) {
  core_->Receive<AdmissionWanted>([this](const AdmissionWanted& m) {
    if (owns_(m.job->project)) Request(*m.job);
  });
  core_->Receive<JobLoaded>([this](const JobLoaded& m) {
    if (owns_(m.job->project)) Hold(*m.job);
  });
  core_->Receive<JobCommitted>([this](const JobCommitted& m) {
    // A job that ended or went back to the queue gives back what it holds.
    const model::Job& job = *m.job;
    const bool requeued = job.state == model::JobState::kQueued &&
                          m.before != model::JobState::kUnspecified &&
                          m.before != model::JobState::kQueued;
    if ((model::IsTerminal(job.state) || requeued) && owns_(job.project)) Release(job.uid);
  });
}

void AdmissionController::SendInput(const std::string& uid, machines::JobInput input) {
  core_->Send(JobInputMessage{uid, std::move(input)});
}

Status AdmissionController::CheckSubmittable(const model::Job& job) const {
  ASSIGN_OR_RETURN(scheduler::JobDemand demand, DemandOf(job, options_.machine_types));
  if (options_.capacity.nodes.empty()) return Status::Ok();
  Status s = scheduler::CheckCanEverFit(demand, options_.capacity);
  if (!s.ok() && !demand.replicas.empty()) return s.WithField(demand.replicas.front().field);
  return s;
}

void AdmissionController::Request(const model::Job& job) {
  holding_.erase(job.uid);
  Result<QueuedDemand> queued = QueuedDemandOf(job, options_.machine_types);
  if (!queued.ok()) {
    machines::JobInput in;
    in.kind = machines::JobInputKind::kUnrunnable;
    in.message = queued.status().message();
    return SendInput(job.uid, std::move(in));
  }
  queued_[job.uid] = std::move(queued).value();
  SchedulePass();
}

void AdmissionController::Hold(const model::Job& job) {
  queued_.erase(job.uid);
  holding_[job.uid] = AllocationOf(job, core_->clock()->Now());
}

void AdmissionController::Release(const std::string& uid) {
  bool had = queued_.erase(uid) + holding_.erase(uid) > 0;
  last_reason_.erase(uid);
  {
    std::lock_guard<std::mutex> lock(mu_);
    waits_.erase(uid);
  }
  if (had) SchedulePass();
}

void AdmissionController::SchedulePass() {
  if (pass_pending_) return;
  pass_pending_ = true;
  // Coalesced: every change made by the task that is running now is in one pass.
  core_->Post([this] {
    pass_pending_ = false;
    RunPass();
  });
}

void AdmissionController::RunPass() {
  if (queued_.empty()) return PublishWaits({});
  const TimeMicros now = core_->clock()->Now();
  const auto started = std::chrono::steady_clock::now();
  std::vector<scheduler::JobDemand> queue;
  queue.reserve(queued_.size());
  for (const auto& [uid, queued] : queued_) queue.push_back(queued.demand);
  std::vector<scheduler::Allocation> running;
  running.reserve(holding_.size());
  for (const auto& [uid, a] : holding_) running.push_back(a);

  scheduler::AdmissionDecisions decisions;
  if (options_.capacity.nodes.empty()) {
    for (const scheduler::JobDemand& d : queue) decisions.admit.push_back({d.uid, {}});
  } else {
    decisions = scheduler::Admit(options_.capacity, running, queue, now);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.passes += 1;
    stats_.admissions += static_cast<int64_t>(decisions.admit.size());
    stats_.preemptions += static_cast<int64_t>(decisions.preempt.size());
    stats_.pass_seconds_total += seconds;
    stats_.last_pass_seconds = seconds;
  }
  for (const std::string& uid : decisions.preempt) {
    auto it = holding_.find(uid);
    if (it == holding_.end()) continue;
    it->second.preempting = true;
    machines::JobInput preempt;
    preempt.kind = machines::JobInputKind::kPreempt;
    SendInput(uid, std::move(preempt));
  }
  for (scheduler::Admitted& a : decisions.admit) {
    auto it = queued_.find(a.uid);
    if (it == queued_.end()) continue;
    QueuedDemand queued = std::move(it->second);
    queued_.erase(it);
    last_reason_.erase(a.uid);
    std::vector<model::ReplicaGrant> grants = GrantsOf(queued, a.placement, options_.capacity);
    holding_[a.uid] = AllocationOf(queued, grants, now);
    machines::JobInput in;
    in.kind = machines::JobInputKind::kAdmitted;
    in.grants = std::move(grants);
    SendInput(a.uid, std::move(in));
  }
  PublishWaits(decisions.waiting);
}

void AdmissionController::PublishWaits(const scheduler::WaitList& waiting) {
  std::unordered_map<std::string, scheduler::WaitInfo> waits;
  waits.reserve(waiting.size());
  for (const auto& [uid, wait] : waiting) {
    waits.emplace(uid, wait);
    std::string& last = last_reason_[uid];
    if (last == wait.reason) continue;
    last = wait.reason;
    log_(uid,
         "Waiting in the queue (position " + std::to_string(wait.position) + "): " + wait.reason +
             ".",
         "INFO");
  }
  AdmissionStats s;
  for (const auto& [uid, queued] : queued_) {
    if (!waits.count(uid)) continue;
    s.queued += 1;
    if (s.oldest_queued_since == 0 || queued.create_time < s.oldest_queued_since) {
      s.oldest_queued_since = queued.create_time;
    }
  }
  for (const auto& [uid, a] : holding_) {
    for (const scheduler::ReplicaPlacement& r : a.replicas) {
      s.admitted_cpus += r.cpus;
      s.admitted_memory_gb += r.memory_gb;
      if (!r.gpu_indices.empty()) s.admitted_gpus[r.gpu_type] += r.gpu_indices.size();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  waits_ = std::move(waits);
  s.passes = stats_.passes;
  s.admissions = stats_.admissions;
  s.preemptions = stats_.preemptions;
  s.pass_seconds_total = stats_.pass_seconds_total;
  s.last_pass_seconds = stats_.last_pass_seconds;
  stats_ = std::move(s);
}

std::optional<scheduler::WaitInfo> AdmissionController::WaitOf(const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = waits_.find(uid);
  if (it == waits_.end()) return std::nullopt;
  return it->second;
}

AdmissionStats AdmissionController::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace ty::service
