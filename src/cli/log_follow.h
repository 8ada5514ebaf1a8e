// Follows a job's log through the daemon's follow endpoint
// (`GET <job>/logs?follow=true[&task=T][&cursor=C]`, chunked NDJSON records
// {timestamp, taskName, stream, severity, message, cursor}) and prints gcloud's log
// lines. If the stream ends or the connection drops while the job is not finished,
// it reconnects from the last cursor, so no line is printed twice or lost.
// Single-threaded; blocks until the job ends.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/http_client.h"
#include "cli/output.h"
#include "common/status.h"

namespace ty::cli {

struct LogFollowOptions {
  std::string job_url;   // Absolute URL of the job resource (GET gives its state).
  std::string logs_url;  // Absolute URL of its logs, without a query.
  std::string task;      // Only this task's lines when non-empty.
  LogDialect dialect = LogDialect::kVertex;
  bool allow_multiline = false;
  int polling_interval_s = 60;        // Upper bound of the wait between reconnects.
  int max_consecutive_failures = 10;  // Transport failures in a row before giving up.
};

// True when a job resource is finished: endTime set, or a terminal state name in
// either dialect ("SUCCEEDED", "JOB_STATE_FAILED", ...).
bool JobIsDone(const nlohmann::json& job);

// Prints every record as it arrives to `out` and returns the finished job resource.
// Errors: the server's error (e.g. NotFound) as a Status with its message;
// Unavailable when the daemon cannot be reached (at once on the first attempt, after
// `max_consecutive_failures` later).
Result<nlohmann::json> FollowJobLogs(HttpClient& http, const LogFollowOptions& options,
                                     std::ostream& out, const std::function<void(int)>& sleep_ms);

}  // namespace ty::cli
