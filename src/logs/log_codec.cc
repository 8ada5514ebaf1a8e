#include "logs/log_codec.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace ty::logs {

const char* LogStreamName(LogStream s) {
  switch (s) {
    case LogStream::kStdout:
      return "stdout";
    case LogStream::kStderr:
      return "stderr";
    case LogStream::kService:
      return "service";
  }
  return "stdout";
}

namespace internal {

namespace {

LogStream StreamFromName(const std::string& name) {
  if (name == "stderr") return LogStream::kStderr;
  if (name == "service") return LogStream::kService;
  return LogStream::kStdout;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

LogEntry Normalize(const LogEntry& entry) {
  LogEntry out = entry;
  std::string lifted_severity;
  std::string_view trimmed = TrimSpace(entry.message);
  // Cheap test first: almost every line is plain text and must not pay for a parse.
  if (entry.stream != LogStream::kService && trimmed.size() >= 2 && trimmed.front() == '{' &&
      trimmed.back() == '}') {
    nlohmann::json j = nlohmann::json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      auto sev = j.find("severity");
      if (sev != j.end() && sev->is_string()) {
        lifted_severity = sev->get<std::string>();
        std::transform(lifted_severity.begin(), lifted_severity.end(), lifted_severity.begin(),
                       [](unsigned char c) { return std::toupper(c); });
      }
      auto msg = j.find("message");
      if (msg != j.end() && msg->is_string()) out.message = msg->get<std::string>();
      if (msg == j.end() || msg->is_string()) out.json_payload = std::string(trimmed);
    }
  }
  if (out.severity.empty()) out.severity = lifted_severity;
  if (out.severity.empty()) out.severity = entry.stream == LogStream::kStderr ? "ERROR" : "INFO";
  return out;
}

std::string EncodeLine(const LogEntry& entry) {
  // ordered_json keeps "t" first, which makes the files pleasant to grep and read.
  nlohmann::ordered_json j;
  j["t"] = entry.time;
  if (entry.source_time != 0 && entry.source_time != entry.time) j["k"] = entry.source_time;
  j["task"] = entry.task;
  j["stream"] = LogStreamName(entry.stream);
  j["sev"] = entry.severity;
  j["msg"] = entry.message;
  if (!entry.json_payload.empty()) {
    nlohmann::ordered_json payload =
        nlohmann::ordered_json::parse(entry.json_payload, nullptr, /*allow_exceptions=*/false);
    if (payload.is_object()) j["json"] = std::move(payload);
  }
  try {
    return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace) + "\n";
  } catch (const std::exception& e) {  // Not expected with `replace`; never lose the line.
    spdlog::warn("logs: cannot encode entry: {}", e.what());
    return "{\"t\":" + std::to_string(entry.time) + ",\"msg\":\"<unencodable>\"}\n";
  }
}

std::optional<LogEntry> DecodeLine(std::string_view line) {
  try {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return std::nullopt;
    auto t = j.find("t");
    if (t == j.end() || !t->is_number_integer()) return std::nullopt;
    LogEntry e;
    e.time = t->get<TimeMicros>();
    if (auto k = j.find("k"); k != j.end() && k->is_number_integer()) {
      e.source_time = k->get<TimeMicros>();
    }
    e.task = j.value("task", std::string());
    e.stream = StreamFromName(j.value("stream", std::string()));
    e.severity = j.value("sev", std::string());
    e.message = j.value("msg", std::string());
    if (auto payload = j.find("json"); payload != j.end() && payload->is_object()) {
      e.json_payload = payload->dump();
    }
    return e;
  } catch (const nlohmann::json::exception&) {  // A key of the wrong type.
    return std::nullopt;
  }
}

}  // namespace internal
}  // namespace ty::logs
