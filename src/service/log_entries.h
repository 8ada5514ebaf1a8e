// Cloud Logging v2 `entries:list` over the jobs' logs (docs/contracts/cloud-logging-v2.md):
// what gcloud's `stream-logs`, `--stream-logs` and `logging read` ask for.
//
// Every job log line becomes a LogEntry of resource type `ml_job` labelled with
// the job's public id (ml v1: the jobId; Vertex: the numeric id), its task and
// project. Ordering is by (timestamp, insertId), the order gcloud's de-duplication
// assumes (§1.2): timestamps always carry 9 fraction digits, and insertId is the
// entry's position in its job log, zero-padded, then the job's uid, so string
// order is position order and ids are unique across jobs. A page token names the
// last (timestamp, insertId) returned; the next page is what follows it.
//
// Decisions where the spec leaves room:
//  - stdout lines are INFO, stderr lines ERROR (as Vertex reports them); a line
//    that is a JSON object becomes `jsonPayload`, its string `severity` the
//    entry's (DEFAULT when not a Cloud Logging level); a `message` that is not a
//    string keeps the line as `textPayload`, because gcloud's printers fail on
//    anything else.
//  - logName: `projects/P/logs/<task>` for replica lines and
//    `projects/P/logs/ml.googleapis.com%2F<job id>` for the service's own lines.
//  - resourceNames other than `projects/P` (organizations, folders, billing
//    accounts, log views) hold no jobs here: they add no entries.
//
// Cost: jobs are found by the job id the filter pins (gcloud's streamers always
// pin one), else by scanning the project's job records; each candidate job's log
// is read once per call and only the page's entries are kept (a bounded heap).
// Thread-safe (reads only).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "jobstore/job_store.h"
#include "logs/log_store.h"

namespace ty::service {

struct LogEntriesRequest {
  std::vector<std::string> resource_names;  // "projects/P", ...; required.
  std::string filter;                       // Logging query language; "" = all.
  std::string order_by;                     // "", "timestamp asc" or "timestamp desc".
  int page_size = 0;                        // 0 = 50; at most 1000.
  std::string page_token;
  std::string only_job_uid;  // Entries of this job only ("" = every job named).
};

struct LogEntriesPage {
  std::vector<nlohmann::json> entries;  // REST LogEntry objects.
  std::string next_page_token;          // "" on the last page.
};

class LogEntriesQuery {
 public:
  LogEntriesQuery(jobstore::JobStore* store, logs::LogStore* logs) : store_(store), logs_(logs) {}

  // InvalidArgument naming the field for a bad filter, order, size, token or
  // resource name.
  Result<LogEntriesPage> List(const LogEntriesRequest& request) const;

 private:
  jobstore::JobStore* store_;
  logs::LogStore* logs_;
};

}  // namespace ty::service
