#include "model/outbox.h"

#include <nlohmann/json.hpp>

namespace ty::model {

using nlohmann::json;

std::string EncodeOutbox(const ServiceOutbox& outbox) {
  json j = json::object();
  if (outbox.last_seq != 0) j["lastSeq"] = outbox.last_seq;
  if (!outbox.lines.empty()) {
    json lines = json::array();
    for (const OutboxLine& l : outbox.lines) {
      lines.push_back({{"seq", l.seq}, {"severity", l.severity}, {"message", l.message}});
    }
    j["lines"] = std::move(lines);
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<ServiceOutbox> DecodeOutbox(const std::string& text) {
  ServiceOutbox out;
  if (text.empty()) return out;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status(StatusCode::kDataLoss, "stored outbox is no object");
  try {
    out.last_seq = j.value("lastSeq", int64_t{0});
    for (const json& l : j.value("lines", json::array())) {
      out.lines.push_back(OutboxLine{l.at("seq").get<int64_t>(), l.value("severity", "INFO"),
                                     l.at("message").get<std::string>()});
    }
  } catch (const json::exception& e) {
    return Status(StatusCode::kDataLoss, std::string("stored outbox: ") + e.what());
  }
  return out;
}

}  // namespace ty::model
