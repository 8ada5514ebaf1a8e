// Log endpoints (our extension; no Google equivalent):
//   GET .../jobs/{id}/logs, GET .../customJobs/{id}/logs
//   ?task=workerpool0-0 &cursor=<opaque> &pageSize=1000 &follow=true|false
//
// Non-follow answers one page: {"entries":[...],"nextCursor":"..."}; `nextCursor` is
// present whenever the job has any log, also at the end, so a client can poll.
// `?tail=N[&before=CURSOR]` answers the last N lines (before the cursor), oldest first,
// each with its `cursor`, and `previousCursor` for the page before them (absent at the
// log's start): a page of a million-line log costs what it returns. Not with follow:
// follow from the tail's `nextCursor` instead.
// Follow answers an NDJSON stream (see http_session.h for the transport) where each
// entry also carries `cursor`, the position just after it, so a client that loses
// the connection resumes exactly where it stopped.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "common/time.h"
#include "logs/log_store.h"

namespace ty::api {

namespace {

constexpr int kDefaultPageSize = 1000;
constexpr int kMaxPageSize = 10000;
constexpr size_t kFollowBatch = 256;  // Lines read per step of a follow stream.

nlohmann::json RenderLine(const service::JobLogLine& line) {
  const logs::LogEntry& entry = line.entry;
  nlohmann::json out = {
      {"timestamp", FormatRfc3339(entry.time)},
      {"taskName", entry.task},
      {"stream", logs::LogStreamName(entry.stream)},
      {"message", entry.message},
  };
  if (!entry.severity.empty()) out["severity"] = entry.severity;
  if (line.trial_id != 0) out["trialId"] = std::to_string(line.trial_id);  // A study's trial.
  return out;
}

std::string ErrorLine(const Status& status) { return ErrorResponse(status).body + "\n"; }

// `?tail=N&before=CURSOR`: the page of lines before the cursor (see the top).
Dispatch ReadTail(const internal::Call& call, const service::JobRef& ref, const std::string& task) {
  auto fail = [](const Status& s) { return Dispatch{ErrorResponse(s), std::nullopt, nullptr}; };
  Result<int> tail = internal::IntParam(call.request, "tail", kDefaultPageSize);
  if (!tail.ok()) return fail(tail.status());
  if (*tail < 1 || *tail > kMaxPageSize) {
    return fail(InvalidArgument("tail: must be 1.." + std::to_string(kMaxPageSize)));
  }
  Result<service::JobLogPage> page = call.service->ReadLogTail(
      ref, internal::Param(call.request, "before"), task, static_cast<size_t>(*tail));
  if (!page.ok()) return fail(page.status());
  nlohmann::json entries = nlohmann::json::array();
  for (const service::JobLogLine& line : page->lines) {
    nlohmann::json entry = RenderLine(line);
    entry["cursor"] = line.cursor;
    entries.push_back(std::move(entry));
  }
  nlohmann::json out = {{"entries", std::move(entries)}};
  if (!page->next_cursor.empty()) out["nextCursor"] = page->next_cursor;
  if (!page->previous_cursor.empty()) out["previousCursor"] = page->previous_cursor;
  return Dispatch{JsonResponse(out), std::nullopt, nullptr};
}

}  // namespace

namespace internal {

Dispatch ReadLogs(const Call& call, const service::JobRef& ref) {
  auto fail = [](const Status& s) { return Dispatch{ErrorResponse(s), std::nullopt}; };
  Result<int> page_size = IntParam(call.request, "pageSize", kDefaultPageSize);
  if (!page_size.ok()) return fail(page_size.status());
  if (*page_size == 0) *page_size = kDefaultPageSize;
  *page_size = std::min(*page_size, kMaxPageSize);
  const std::string follow = Param(call.request, "follow");
  if (!follow.empty() && follow != "true" && follow != "false") {
    return fail(InvalidArgument("Invalid value at 'follow' (TYPE_BOOL), \"" + follow + "\""));
  }
  const std::string task = Param(call.request, "task");
  const std::string cursor = Param(call.request, "cursor");
  if (!Param(call.request, "tail").empty()) {
    if (follow == "true") {
      return fail(InvalidArgument("tail: not with follow=true; follow from the tail's nextCursor"));
    }
    return ReadTail(call, ref, task);
  }

  // Also validates the job and the cursor before a follow stream commits to 200.
  Result<service::JobLogPage> page =
      call.service->ReadLogs(ref, cursor, task, follow == "true" ? 1 : *page_size);
  if (!page.ok()) return fail(page.status());
  if (follow == "true") {
    LogFollow stream;
    stream.ref = ref;
    stream.task = task;
    stream.cursor = cursor;  // The probe above is discarded; the stream re-reads it.
    return Dispatch{HttpResponse{}, std::move(stream)};
  }

  nlohmann::json out = nlohmann::json::object();
  nlohmann::json entries = nlohmann::json::array();
  for (const service::JobLogLine& line : page->lines) entries.push_back(RenderLine(line));
  out["entries"] = std::move(entries);
  if (!page->next_cursor.empty()) out["nextCursor"] = page->next_cursor;
  return Dispatch{JsonResponse(out), std::nullopt};
}

}  // namespace internal

FollowChunk Router::NextChunk(LogFollow* follow, size_t max_bytes) const {
  FollowChunk chunk;
  if (follow->done) return chunk;
  try {
    // Terminal-ness is read BEFORE the log: an executor writes a replica's last line
    // before reporting its exit, so once the job is terminal an empty read below
    // really is the end and no line can be lost to the race.
    Result<model::Job> job = service_->Get(follow->ref);
    if (!job.ok()) {
      chunk.data = ErrorLine(job.status());
      follow->done = true;
      return chunk;
    }
    const bool terminal = model::IsTerminal(job->state);
    // Every line carries the cursor just after it: what lets a client resume
    // without duplicates.
    while (chunk.data.size() < max_bytes) {
      Result<service::JobLogPage> page =
          service_->ReadLogs(follow->ref, follow->cursor, follow->task, kFollowBatch);
      if (!page.ok()) {
        chunk.data += ErrorLine(page.status());
        follow->done = true;
        return chunk;
      }
      bool full = false;
      for (const service::JobLogLine& l : page->lines) {
        nlohmann::json line = RenderLine(l);
        line["cursor"] = l.cursor;
        chunk.data += DumpJson(line);
        chunk.data += '\n';
        follow->cursor = l.cursor;
        full = chunk.data.size() >= max_bytes;
        if (full) break;  // The rest is read again from this line's cursor.
      }
      if (full) break;
      // With a task filter an empty page may still have skipped other tasks' lines.
      if (!page->next_cursor.empty()) follow->cursor = page->next_cursor;
      if (page->lines.empty()) break;
    }
    if (chunk.data.empty()) {
      if (terminal) {
        follow->done = true;
      } else {
        chunk.idle = true;
      }
    }
  } catch (const std::exception& e) {
    chunk.data += ErrorLine(Internal(std::string("internal error: ") + e.what()));
    follow->done = true;
  }
  return chunk;
}

}  // namespace ty::api
