#include "tuning/quasi_random.h"

#include <algorithm>
#include <numeric>

namespace ty::tuning {

namespace {

constexpr int kDigits = 24;  // Enough digits for 2^24 points in base 2.

std::vector<uint32_t> FirstPrimes(size_t n) {
  std::vector<uint32_t> primes;
  for (uint32_t c = 2; primes.size() < n; ++c) {
    bool prime = std::none_of(primes.begin(), primes.end(),
                              [c](uint32_t p) { return p * p <= c && c % p == 0; });
    if (prime) primes.push_back(c);
  }
  return primes;
}

}  // namespace

ScrambledHalton::ScrambledHalton(size_t dims, uint64_t seed) : bases_(FirstPrimes(dims)) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  permutations_.resize(dims);
  for (size_t d = 0; d < dims; ++d) {
    for (int k = 0; k < kDigits; ++k) {
      std::vector<uint32_t> perm(bases_[d]);
      std::iota(perm.begin(), perm.end(), 0u);
      // Fisher-Yates with our own index draw (portable). Digit 0 is permuted too:
      // otherwise base 2 could not be scrambled at all, and every point would keep
      // the plain sequence's trailing zeros.
      for (size_t i = perm.size() - 1; i > 0; --i) {
        size_t j = static_cast<size_t>(rng() % (i + 1));
        std::swap(perm[i], perm[j]);
      }
      permutations_[d].push_back(std::move(perm));
    }
  }
}

double ScrambledHalton::Coordinate(size_t d, uint64_t index) const {
  const uint32_t base = bases_[d];
  double inv = 1.0 / base;
  double factor = inv;
  double value = 0;
  for (int k = 0; k < kDigits; ++k) {
    value += permutations_[d][k][index % base] * factor;
    index /= base;
    factor *= inv;
  }
  return value;
}

std::vector<double> ScrambledHalton::Next() {
  std::vector<double> p(bases_.size());
  for (size_t d = 0; d < bases_.size(); ++d) p[d] = Coordinate(d, index_);
  ++index_;
  return p;
}

}  // namespace ty::tuning
