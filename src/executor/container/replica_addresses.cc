#include "executor/container/replica_addresses.h"

namespace ty::executor {

namespace {
constexpr DurationMicros kStrangerMicros = 1000000;  // How long "nobody's" is believed.
constexpr size_t kMaxStrangers = 4096;               // Memory, whatever connects.
}  // namespace

std::optional<std::string> ReplicaAddressBook::JobAt(const std::string& address) {
  if (address.empty()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);  // One listing at a time; the others wait for it.
  auto known = known_.find(address);
  if (known != known_.end()) {
    if (known->second.job_uid.empty()) return std::nullopt;
    return known->second.job_uid;
  }
  const TimeMicros now = clock_->Now();
  auto stranger = strangers_.find(address);
  if (stranger != strangers_.end() && stranger->second > now) return std::nullopt;
  Result<std::vector<Entry>> listed = list_();
  if (listed.ok()) {  // The engine away: nobody is anybody, for a second.
    known_.clear();
    for (Entry& e : *listed) {
      auto [it, inserted] = known_.emplace(e.address, Known{e.job_uid});
      if (!inserted && it->second.job_uid != e.job_uid) it->second.job_uid.clear();
    }
    known = known_.find(address);
    if (known != known_.end()) {
      if (known->second.job_uid.empty()) return std::nullopt;
      return known->second.job_uid;
    }
  }
  if (strangers_.size() >= kMaxStrangers) strangers_.clear();
  strangers_[address] = now + kStrangerMicros;
  return std::nullopt;
}

void ReplicaAddressBook::Forget(const std::string& job_uid) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = known_.begin(); it != known_.end();) {
    it = it->second.job_uid == job_uid || it->second.job_uid.empty() ? known_.erase(it)
                                                                     : std::next(it);
  }
}

}  // namespace ty::executor
