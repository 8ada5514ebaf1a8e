// One study of the tuner protocol (docs/contracts/tuner-protocol.md): a request object in, a
// reply object out. `trainyard-tuner` (src/tuner_cli/main.cc) wraps it in the stdin /
// stdout line loop; tests drive it directly. Never throws on bad input: a request it
// cannot serve gets {"ok": false, "error": ...}. Not thread-safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tuning/tuner.h"

namespace ty::tuning {

class ProtocolSession {
 public:
  // `algorithm` from the command line; the study may not override it.
  explicit ProtocolSession(Algorithm algorithm) : algorithm_(algorithm) {}

  nlohmann::json Handle(const nlohmann::json& request);
  bool closed() const { return closed_; }

 private:
  nlohmann::json Dispatch(const nlohmann::json& request);
  nlohmann::json Create(const nlohmann::json& request);
  nlohmann::json Suggest(const nlohmann::json& request);
  nlohmann::json Report(const nlohmann::json& request);
  nlohmann::json Add(const nlohmann::json& request);

  Algorithm algorithm_;
  std::optional<Tuner> tuner_;
  int64_t next_trial_ = 0;
  std::map<int64_t, Assignment> pending_;  // Suggested, not yet reported.
  bool closed_ = false;
};

}  // namespace ty::tuning
