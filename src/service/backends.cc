#include "service/backends.h"

#include <algorithm>

namespace ty::service {

Backend& Backends::Add(std::string name, executor::Executor* executor) {
  auto b = std::make_unique<Backend>();
  b->name = std::move(name);
  b->executor = executor;
  return *backends_.emplace_back(std::move(b));
}

Status Backends::Route(const std::string& project, const std::string& backend) {
  for (const auto& b : backends_) {
    if (b->name != backend) continue;
    by_project_[project] = b.get();
    return Status::Ok();
  }
  return InvalidArgument("project " + project + ": no executor \"" + backend + "\" here");
}

Backend& Backends::For(const std::string& project) {
  auto it = by_project_.find(project);
  return it != by_project_.end() ? *it->second : *backends_.front();
}

const Backend& Backends::For(const std::string& project) const {
  return const_cast<Backends*>(this)->For(project);
}

AdmissionStats Backends::Stats() const {
  AdmissionStats sum;
  for (const auto& b : backends_) {
    AdmissionStats s = b->admission->stats();
    sum.queued += s.queued;
    if (s.oldest_queued_since > 0 &&
        (sum.oldest_queued_since == 0 || s.oldest_queued_since < sum.oldest_queued_since)) {
      sum.oldest_queued_since = s.oldest_queued_since;
    }
    sum.admitted_cpus += s.admitted_cpus;
    sum.admitted_memory_gb += s.admitted_memory_gb;
    for (const auto& [type, n] : s.admitted_gpus) sum.admitted_gpus[type] += n;
    sum.passes += s.passes;
    sum.admissions += s.admissions;
    sum.preemptions += s.preemptions;
    sum.pass_seconds_total += s.pass_seconds_total;
    sum.last_pass_seconds = std::max(sum.last_pass_seconds, s.last_pass_seconds);
  }
  return sum;
}

std::optional<scheduler::WaitInfo> Backends::WaitOf(const std::string& uid) const {
  for (const auto& b : backends_) {
    if (std::optional<scheduler::WaitInfo> w = b->admission->WaitOf(uid)) return w;
  }
  return std::nullopt;
}

std::vector<scheduler::Capacity> Backends::Capacities() const {
  std::vector<scheduler::Capacity> out;
  for (const auto& b : backends_) out.push_back(b->admission->capacity());
  return out;
}

executor::BackendHealth Backends::Health() const {
  executor::BackendHealth healthy;
  for (const auto& b : backends_) {
    executor::BackendHealth h = b->executor->Health();
    healthy.since = std::max(healthy.since, h.since);
    if (h.reachable) continue;
    if (backends_.size() > 1) h.detail = b->name + " executor: " + h.detail;
    return h;
  }
  return healthy;
}

}  // namespace ty::service
