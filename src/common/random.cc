#include "common/random.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace ty {

uint64_t SystemRandom::Next() {
  uint64_t value = 0;
  size_t got = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&value);
  while (got < sizeof(value)) {
    ssize_t n = getrandom(bytes + got, sizeof(value) - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      // Linux >= 3.17 has it and it cannot fail once the pool is ready; an id from
      // a guessable source would be worse than stopping.
      std::perror("getrandom");
      std::abort();
    }
  }
  return value;
}

SystemRandom* SystemRandom::Get() {
  static SystemRandom random;
  return &random;
}

uint64_t SeededRandom::Next() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string RandomHex(Random& random, int digits) {
  std::string out;
  while (static_cast<int>(out.size()) < digits && out.size() < 32) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(random.Next()));
    out += buf;
  }
  out.resize(std::min<size_t>(static_cast<size_t>(std::max(digits, 0)), 32));
  return out;
}

}  // namespace ty
