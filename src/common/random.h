// Where randomness comes from, injected as Clock injects time (docs/style.md §6.7): ids
// and jitter take a Random, so a test can replay them. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace ty {

class Random {
 public:
  virtual ~Random() = default;
  virtual uint64_t Next() = 0;
};

// The kernel's generator (getrandom(2)), the only place that reads it: unguessable,
// so ids that grant something to whoever knows them (an upload session) come from
// here; a seeded Mersenne Twister gives its state away after a few hundred outputs.
class SystemRandom : public Random {
 public:
  uint64_t Next() override;
  static SystemRandom* Get();
};

// Reproducible (splitmix64) for tests.
class SeededRandom : public Random {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t Next() override;

 private:
  std::mutex mu_;
  uint64_t state_;
};

// `digits` lower-case hex digits (at most 32) of `random`'s next outputs.
std::string RandomHex(Random& random, int digits);

}  // namespace ty
