#include "executor/container/health_probe.h"

#include <spdlog/spdlog.h>

namespace ty::executor {

HealthProbe::HealthProbe(std::function<Status()> probe, std::chrono::milliseconds interval,
                         const Clock* clock)
    : probe_(std::move(probe)), interval_(interval), clock_(clock), thread_([this] { Run(); }) {}

HealthProbe::~HealthProbe() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

BackendHealth HealthProbe::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_;
}

void HealthProbe::Record(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (s.ok() == health_.reachable) {
    if (!s.ok()) health_.detail = s.message();
    return;
  }
  health_.reachable = s.ok();
  health_.detail = s.ok() ? "" : s.message();
  health_.since = clock_->Now();
  if (s.ok()) {
    spdlog::warn("container engine answers again");
  } else {
    spdlog::error("container engine unreachable: {}", s.message());
  }
}

void HealthProbe::Run() {
  for (;;) {
    Status s = Status::Ok();
    if (Status thrown = NoThrow([&] { s = probe_(); }); !thrown.ok()) s = thrown;
    Record(s);
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, interval_, [this] { return stopping_; })) return;
  }
}

}  // namespace ty::executor
