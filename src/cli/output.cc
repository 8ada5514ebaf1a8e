// Formatting helpers of the CLI; see output.h for the formats and their sources.
#include "cli/output.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <optional>
#include <sstream>

#include "common/time.h"
#include "format/yaml_json.h"

namespace ty::cli {
namespace {

// localtime_r + strftime for a parsed RFC 3339 instant; nullopt if it does not parse.
std::optional<std::string> FormatLocal(const std::string& rfc3339, const char* pattern) {
  Result<TimeMicros> t = ParseRfc3339(rfc3339);
  if (!t.ok()) return std::nullopt;
  // Floor division so instants before 1970 still land on the right second.
  int64_t micros = *t;
  time_t secs = static_cast<time_t>(micros / 1000000 - (micros % 1000000 < 0 ? 1 : 0));
  struct tm tm_local {};
  if (localtime_r(&secs, &tm_local) == nullptr) return std::nullopt;
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, pattern, &tm_local);
  return std::string(buf, n);
}

std::string StringField(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

}  // namespace

std::string FormatLocalLogTime(const std::string& rfc3339) {
  return FormatLocal(rfc3339, "%Y-%m-%d %H:%M:%S %z").value_or(rfc3339);
}

std::string FormatLocalDate(const std::string& rfc3339) {
  return FormatLocal(rfc3339, "%Y-%m-%dT%H:%M:%S").value_or(rfc3339);
}

std::string FormatLogRecord(const nlohmann::json& record, LogDialect dialect,
                            bool allow_multiline) {
  if (!record.is_object()) return "";
  std::string severity = StringField(record, "severity");
  if (severity.empty()) severity = "DEFAULT";
  std::string task = StringField(record, "taskName");
  if (task.empty()) task = "unknown_task";
  std::string prefix =
      severity + "\t" + FormatLocalLogTime(StringField(record, "timestamp")) + "\t" + task + "\t";
  // Trial ids only exist for tuning trials; plain jobs print an empty column.
  if (dialect == LogDialect::kMl) prefix += StringField(record, "trialId") + "\t";
  std::string message = StringField(record, "message");
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
    message.pop_back();
  }
  if (allow_multiline || message.find('\n') == std::string::npos) {
    return prefix + message + "\n";
  }
  std::string out;
  std::istringstream lines(message);
  for (std::string line; std::getline(lines, line);) out += prefix + line + "\n";
  return out;
}

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows,
                          const std::string& line_prefix) {
  std::vector<size_t> widths;
  for (const auto& r : rows) {
    if (widths.size() < r.size()) widths.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line = line_prefix;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(widths[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string FormatMlJobTable(const std::vector<nlohmann::json>& jobs) {
  if (jobs.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"JOB_ID", "STATUS", "CREATED"});
  for (const nlohmann::json& job : jobs) {
    std::string id = StringField(job, "jobId");
    // `jobId.basename()`: a full name prints as its last segment.
    if (size_t slash = id.rfind('/'); slash != std::string::npos) id = id.substr(slash + 1);
    std::string created = StringField(job, "createTime");
    rows.push_back(
        {id, StringField(job, "state"), created.empty() ? "" : FormatLocalDate(created)});
  }
  return FormatColumns(rows, "");
}

Result<OutputFormat> ParseOutputFormat(const std::string& name) {
  if (name == "yaml" || name.empty()) return OutputFormat::kYaml;
  if (name == "json") return OutputFormat::kJson;
  return InvalidArgument("Format type [" + name + "] is not supported; use json or yaml.");
}

std::string FormatResource(const nlohmann::json& resource, OutputFormat format) {
  if (format == OutputFormat::kJson) return resource.dump(2) + "\n";
  std::string yaml = format::ToYaml(resource);
  if (!yaml.empty() && yaml.back() != '\n') yaml += '\n';
  return yaml;
}

std::string FormatResourceList(const std::vector<nlohmann::json>& items, OutputFormat format) {
  if (format == OutputFormat::kJson) return nlohmann::json(items).dump(2) + "\n";
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += "---\n";
    out += FormatResource(items[i], format);
  }
  return out;
}

std::string FormatYamlProjection(const nlohmann::json& resource,
                                 const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) {
    auto it = resource.find(key);
    if (it == resource.end() || it->is_null()) continue;
    if (it->is_string()) {
      std::string v = it->get<std::string>();
      // Timestamps would read back as YAML dates; gcloud quotes them, so do we.
      bool quote = v.empty() || v.find_first_of(":#'\"{}[],&*!|>%@`") != std::string::npos;
      if (quote) {
        std::string escaped;
        for (char c : v) escaped += (c == '\'') ? std::string("''") : std::string(1, c);
        v = "'" + escaped + "'";
      }
      out += key + ": " + v + "\n";
    } else {
      out += key + ": " + it->dump() + "\n";
    }
  }
  return out;
}

std::string FormatCommandError(const std::string& command_path, const std::string& message) {
  return "ERROR: (" + command_path + ") " + message + "\n";
}

std::string ServerErrorMessage(long http_status, const std::string& body) {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    auto err = parsed.find("error");
    if (err != parsed.end() && err->is_object()) {
      std::string message = StringField(*err, "message");
      if (!message.empty()) return message;
    }
  }
  std::string trimmed = body.size() > 500 ? body.substr(0, 500) + "..." : body;
  return "HTTP " + std::to_string(http_status) + (trimmed.empty() ? "" : ": " + trimmed);
}

}  // namespace ty::cli
