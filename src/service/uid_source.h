// Job uids for every controller that creates records (jobs, studies, trial jobs):
// 19 digits like Google's ids, milliseconds since the epoch then 6 random digits.
// Time-first keeps ids growing with creation (List pages by uid); the random part
// keeps two daemons sharing one container engine from minting the same id (and so
// the same container names and labels) in the same millisecond. Each uid is after
// every uid ever handed out, stored or reserved.
//
// Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/time.h"

namespace ty::service {

class UidSource {
 public:
  UidSource(const Clock* clock, std::function<uint64_t()> random)
      : clock_(clock), random_(std::move(random)) {}

  std::string Next();
  // `uid` was handed out (stored, or recorded before its job exists): later uids go
  // after it.
  void Reserve(const std::string& uid);

 private:
  const Clock* const clock_;
  const std::function<uint64_t()> random_;
  std::string last_;
};

}  // namespace ty::service
