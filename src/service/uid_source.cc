#include "service/uid_source.h"

#include "model/job.h"

namespace ty::service {

std::string UidSource::Next() {
  uint64_t candidate = static_cast<uint64_t>(clock_->Now() / 1000) * 1000000 + random_() % 1000000;
  if (!last_.empty() && candidate <= std::stoull(last_)) candidate = std::stoull(last_) + 1;
  last_ = std::to_string(candidate);
  return last_;
}

void UidSource::Reserve(const std::string& uid) {
  if (uid.empty()) return;
  if (last_.empty() || model::UidLess(last_, uid)) last_ = uid;
}

}  // namespace ty::service
