// trainyard-tuner: the tuning library as a program speaking the tuner protocol
// (docs/contracts/tuner-protocol.md) on stdin / stdout, one JSON object per line, so any
// benchmark driver can compare it with other tuners trial for trial.
//
//   trainyard-tuner [--algorithm ALGORITHM_UNSPECIFIED|GRID_SEARCH|RANDOM_SEARCH]
#include <malloc.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tuning/protocol_session.h"

int main(int argc, char** argv) {
  std::string algorithm = "ALGORITHM_UNSPECIFIED";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--algorithm" && i + 1 < argc) {
      algorithm = argv[++i];
    } else if (arg.rfind("--algorithm=", 0) == 0) {
      algorithm = arg.substr(12);
    } else {
      std::fprintf(stderr, "usage: trainyard-tuner [--algorithm ALGORITHM]\n");
      return 2;
    }
  }
  auto parsed = ty::tuning::ParseAlgorithm(algorithm);
  if (!parsed.ok()) {
    std::fprintf(stderr, "trainyard-tuner: %s\n", parsed.status().message().c_str());
    return 2;
  }
  // The model's matrices (n x n, n x candidates) are allocated and freed many times a
  // suggestion; above glibc's mmap threshold every one would be fresh pages from the
  // kernel, and page faults took a third of the time. Keep them on the heap.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  ty::tuning::ProtocolSession session(*parsed);
  std::ios::sync_with_stdio(false);
  std::string line;
  while (!session.closed() && std::getline(std::cin, line)) {
    nlohmann::json reply;
    nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded()) {
      reply = {{"ok", false}, {"error", "the request is not one line of JSON"}};
    } else {
      reply = session.Handle(request);
    }
    // One line per reply, flushed: a reply stuck in a buffer looks like a hang.
    std::cout << reply.dump() << '\n' << std::flush;
  }
  return 0;
}
