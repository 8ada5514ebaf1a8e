// ManualClock: a Clock tests move by hand, so timers fire exactly when a test says
// (docs/style.md §6.7). Thread-safe.
#pragma once

#include <atomic>

#include "common/time.h"

namespace ty::testing {

class ManualClock : public Clock {
 public:
  explicit ManualClock(TimeMicros start = 1'700'000'000'000'000) : now_(start) {}
  TimeMicros Now() const override { return now_.load(); }
  void Advance(DurationMicros d) { now_ += d; }
  void Set(TimeMicros t) { now_ = t; }

 private:
  std::atomic<TimeMicros> now_;
};

}  // namespace ty::testing
