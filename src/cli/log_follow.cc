// Log following with reconnects; see log_stream.h.
#include "cli/log_follow.h"

#include <algorithm>
#include <optional>

namespace ty::cli {
namespace {

Status HttpError(const HttpResponse& r) {
  StatusCode code = r.status == 404   ? StatusCode::kNotFound
                    : r.status == 400 ? StatusCode::kInvalidArgument
                                      : StatusCode::kInternal;
  return Status(code, ServerErrorMessage(r.status, r.body));
}

}  // namespace

bool JobIsDone(const nlohmann::json& job) {
  if (!job.is_object()) return false;
  if (auto it = job.find("endTime");
      it != job.end() && it->is_string() && !it->get<std::string>().empty()) {
    return true;
  }
  auto state = job.find("state");
  if (state == job.end() || !state->is_string()) return false;
  std::string s = state->get<std::string>();
  if (s.rfind("JOB_STATE_", 0) == 0) s = s.substr(10);
  return s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" || s == "EXPIRED" ||
         s == "PARTIALLY_SUCCEEDED";
}

Result<nlohmann::json> FollowJobLogs(HttpClient& http, const LogFollowOptions& options,
                                     std::ostream& out, const std::function<void(int)>& sleep_ms) {
  std::string cursor;
  int failures = 0;
  bool ever_connected = false;
  int wait_ms = 500;
  const int max_wait_ms = std::max(1, options.polling_interval_s) * 1000;
  while (true) {
    std::optional<Status> stream_error;  // The daemon ended the stream with an error record.
    std::string url = options.logs_url + "?follow=true";
    if (!options.task.empty()) url += "&task=" + UrlEncode(options.task);
    if (!cursor.empty()) url += "&cursor=" + UrlEncode(cursor);
    Result<HttpResponse> streamed = http.StreamLines(url, [&](std::string_view line) {
      nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      ever_connected = true;
      if (!record.is_object()) return true;  // Not a record (a heartbeat, say): skip.
      if (auto e = record.find("error"); e != record.end() && e->is_object()) {
        stream_error = Unavailable("log stream ended with an error: " +
                                   e->value("message", std::string("unknown")));
        return false;
      }
      out << FormatLogRecord(record, options.dialect, options.allow_multiline);
      out.flush();
      if (auto c = record.find("cursor"); c != record.end() && c->is_string())
        cursor = c->get<std::string>();
      return true;
    });
    if (stream_error) return *stream_error;
    if (streamed.ok()) {
      if (streamed->status < 200 || streamed->status >= 300) return HttpError(*streamed);
      ever_connected = true;
      failures = 0;
    } else {
      // Nothing ever answered: the daemon is not there, say so at once.
      if (!ever_connected) return streamed.status();
      if (++failures >= options.max_consecutive_failures) return streamed.status();
    }

    // The stream ended (the daemon closes it once the job is over) or broke: ask the
    // job whether there is anything left to wait for.
    Result<HttpResponse> got = http.Send("GET", options.job_url, "");
    if (got.ok() && got->status >= 200 && got->status < 300) {
      nlohmann::json job = nlohmann::json::parse(got->body, nullptr, /*allow_exceptions=*/false);
      if (JobIsDone(job)) return job;
      if (streamed.ok()) wait_ms = 500;  // A clean end on a live job: come back soon.
    } else if (got.ok()) {
      return HttpError(*got);
    } else if (++failures >= options.max_consecutive_failures) {
      return got.status();
    }
    sleep_ms(wait_ms);
    wait_ms = std::min(wait_ms * 2, max_wait_ms);
  }
}

}  // namespace ty::cli
