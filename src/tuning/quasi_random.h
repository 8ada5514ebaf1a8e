// Scrambled Halton points for the quasi-random start of a study: they cover the unit
// cube far more evenly than independent uniform draws, and the scrambling (a seeded
// random permutation of the digits of every base) removes the correlations plain
// Halton shows between high dimensions. Deterministic per seed; not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ty::tuning {

// A uniform double in [0, 1) from 53 random bits: the same on every platform, unlike
// std::uniform_real_distribution.
inline double Uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

class ScrambledHalton {
 public:
  ScrambledHalton(size_t dims, uint64_t seed);
  // The next point of [0,1)^dims.
  std::vector<double> Next();
  // Skips ahead (a study resumed after n points asks for point n + 1).
  void Skip(uint64_t n) { index_ += n; }

 private:
  double Coordinate(size_t d, uint64_t index) const;

  std::vector<uint32_t> bases_;
  // permutations_[d][digit position][digit]: random digit scrambling.
  std::vector<std::vector<std::vector<uint32_t>>> permutations_;
  uint64_t index_ = 0;
};

}  // namespace ty::tuning
