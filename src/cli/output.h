// Pure output formatting of the CLI, matching gcloud's printers (docs/contracts/gcloud-cli.md
// §1, §2, §8): log lines, the ml list table, error lines, job resources as YAML or
// JSON. No I/O besides the local time zone (TZ) used for timestamps, as gcloud does.
// Thread-safe except that time zone changes while formatting are not.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace ty::cli {

// The two log line layouts of gcloud's `value(...)` printer.
enum class LogDialect {
  kVertex,  // SEVERITY\tTIME\tTASK_NAME\tMESSAGE
  kMl,      // SEVERITY\tTIME\tTASK_NAME\tTRIAL_ID\tMESSAGE
};

// RFC 3339 text -> "YYYY-MM-DD HH:MM:SS ±zzzz" in the local time zone. Text that does
// not parse is returned unchanged (a log line is worth more than a perfect date).
std::string FormatLocalLogTime(const std::string& rfc3339);

// RFC 3339 text -> "YYYY-MM-DDTHH:MM:SS" in local time (gcloud's `.date(tz=LOCAL)`).
std::string FormatLocalDate(const std::string& rfc3339);

// One NDJSON record of the daemon's follow endpoint ({timestamp, taskName, stream,
// severity, message, cursor}) -> printed lines (one per line of `message`, unless
// `allow_multiline`), each ending in '\n'. Missing severity prints DEFAULT, missing
// task `unknown_task`.
std::string FormatLogRecord(const nlohmann::json& record, LogDialect dialect, bool allow_multiline);

// Rows as columns padded to the widest cell plus two spaces, the last column unpadded,
// each line starting with `line_prefix`.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows,
                          const std::string& line_prefix);

// The trials of a tuning job of either dialect (ml v1 trainingOutput.trials, Vertex
// trials with studySpec's goal) as a table, best first (no objective last, then by
// id), every line a YAML comment so that describe's YAML stays parseable; "" when the
// job has no trials.
std::string FormatTrialsTable(const nlohmann::json& job);

// `table(jobId, state:label=STATUS, createTime.date(tz=LOCAL):label=CREATED)`: columns
// padded to the widest cell plus two spaces, the last column unpadded. An empty list
// prints nothing (gcloud writes "Listed 0 items." to stderr instead).
std::string FormatMlJobTable(const std::vector<nlohmann::json>& jobs);

// A resource as gcloud prints it with --format=yaml (default) or json.
enum class OutputFormat { kYaml, kJson };
Result<OutputFormat> ParseOutputFormat(const std::string& name);
std::string FormatResource(const nlohmann::json& resource, OutputFormat format);
// A list: YAML documents separated by `---`, or one JSON array.
std::string FormatResourceList(const std::vector<nlohmann::json>& items, OutputFormat format);
// `yaml(jobId,state,startTime,endTime)`: only the given keys, in this order, if set.
std::string FormatYamlProjection(const nlohmann::json& resource,
                                 const std::vector<std::string>& keys);

// "ERROR: (trainyard.ai.custom-jobs.describe) <message>\n".
std::string FormatCommandError(const std::string& command_path, const std::string& message);

// The message of a google.rpc.Status error body ({"error": {"code", "message",
// "status"}}); falls back to "HTTP <status>: <body>" for anything else.
std::string ServerErrorMessage(long http_status, const std::string& body);

}  // namespace ty::cli
