#include "service/log_entries.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>

#include "common/files.h"  // UrlEncode
#include "common/time.h"
#include "logs/log_filter.h"

namespace ty::service {

namespace {

using json = nlohmann::json;

constexpr int kDefaultPageSize = 50;  // Google's default.
constexpr int kMaxPageSize = 1000;    // Google's maximum.
constexpr size_t kJobBatch = 500;     // Job records read per store call.
// A finished job's log ends when it ends; its last service line may follow the
// recorded end time by a moment.
constexpr DurationMicros kEndSlack = 60LL * 1000000;

// The job whose log is read, as entries name it.
struct Target {
  std::string uid;
  std::string project;
  std::string job_id;    // Public: ml v1 jobId, Vertex numeric id.
  std::string trial_id;  // A tuning job's trial whose job `uid` is; "" otherwise.
};

// Where an entry sorts: (timestamp, insertId), as gcloud de-duplicates.
struct Key {
  TimeMicros time = 0;
  std::string insert_id;
  bool operator<(const Key& o) const {
    return time != o.time ? time < o.time : insert_id < o.insert_id;
  }
};

std::string InsertId(const logs::LogEntry& e, const std::string& uid) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llu", static_cast<unsigned long long>(e.position));
  return std::string(buf) + "-" + uid;
}

std::string TokenOf(const Key& k) { return std::to_string(k.time) + "_" + k.insert_id; }

Result<std::optional<Key>> ParseToken(const std::string& token) {
  if (token.empty()) return std::optional<Key>();
  auto bad = [&] { return InvalidArgument("Invalid pageToken: \"" + token + "\""); };
  size_t sep = token.find('_');
  if (sep == std::string::npos || sep + 1 == token.size()) return bad();
  Key k;
  auto [end, ec] = std::from_chars(token.data(), token.data() + sep, k.time);
  if (ec != std::errc() || end != token.data() + sep) return bad();
  k.insert_id = token.substr(sep + 1);
  return std::optional<Key>(k);
}

// The store already lifted a structured line's `severity`; a name Cloud Logging
// does not know would print as DEFAULT in gcloud anyway.
std::string SeverityOf(const logs::LogEntry& e) {
  if (e.severity.empty()) return e.stream == logs::LogStream::kStderr ? "ERROR" : "INFO";
  return logs::SeverityLevel(e.severity) ? e.severity : "DEFAULT";
}

// A line that was a JSON object stays structured (log_store.h: json_payload).
void SetPayload(const logs::LogEntry& e, json* out) {
  if (!e.json_payload.empty()) {
    json j = json::parse(e.json_payload, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      (*out)["jsonPayload"] = std::move(j);
      return;
    }
  }
  (*out)["textPayload"] = e.message;
}

// Google labels a tuning job's replica lines with their trial; gcloud ai-platform's
// streamer prints it as a column (docs/contracts/cloud-logging-v2.md §2.1).
json Labels(const Target& t, const logs::LogEntry& e) {
  json labels = {{"ml.googleapis.com/task_name", e.task}};
  if (!t.trial_id.empty()) labels["ml.googleapis.com/trial_id"] = t.trial_id;
  return labels;
}

json Render(const Target& t, const logs::LogEntry& e) {
  const std::string log_id = e.task == "service" ? "ml.googleapis.com/" + t.job_id : e.task;
  const std::string time = FormatRfc3339Nanos(e.time);
  json out = {
      {"logName", "projects/" + t.project + "/logs/" + UrlEncode(log_id)},
      {"resource",
       {{"type", "ml_job"},
        {"labels", {{"job_id", t.job_id}, {"task_name", e.task}, {"project_id", t.project}}}}},
      {"labels", Labels(t, e)},
      {"timestamp", time},
      {"receiveTimestamp", time},
      {"severity", SeverityOf(e)},
      {"insertId", InsertId(e, t.uid)},
  };
  SetPayload(e, &out);
  return out;
}

Result<std::vector<std::string>> ProjectsOf(const std::vector<std::string>& names) {
  if (names.empty())
    return InvalidArgument("resourceNames: at least one resource name is required");
  std::vector<std::string> projects;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    const std::string field = "resourceNames[" + std::to_string(i) + "]";
    if (n.rfind("projects/", 0) == 0) {
      std::string p =
          n.substr(9, n.find('/', 9) == std::string::npos ? std::string::npos : n.find('/', 9) - 9);
      if (p.empty()) return InvalidArgument(field + ": \"" + n + "\" names no project");
      projects.push_back(p);
    } else if (n.rfind("organizations/", 0) != 0 && n.rfind("folders/", 0) != 0 &&
               n.rfind("billingAccounts/", 0) != 0) {
      return InvalidArgument(field + ": \"" + n +
                             "\" must start with projects/, organizations/, folders/ or "
                             "billingAccounts/");
    }
  }
  return projects;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The job's own log and, for a tuning job, each trial's: a study's log is its trials'
// replicas' lines under the study's id, as Google serves them.
void AddTargetsOf(const model::Job& job, std::vector<Target>* out) {
  const std::string id = job.dialect == model::Dialect::kMlV1 ? job.spec.job_id : job.uid;
  out->push_back(Target{job.uid, job.project, id, ""});
  for (const model::Trial& trial : job.trials) {
    if (trial.job_uid.empty()) continue;
    out->push_back(Target{trial.job_uid, job.project, id, std::to_string(trial.id)});
  }
}

// Jobs the filter pins by id in these projects.
std::vector<Target> PinnedJobs(jobstore::JobStore* store, const std::vector<std::string>& projects,
                               const std::set<std::string>& ids) {
  std::vector<Target> out;
  for (const std::string& project : projects) {
    for (const std::string& id : ids) {
      Result<model::Job> ml = store->FindMlJob(project, id);
      if (ml.ok()) AddTargetsOf(*ml, &out);
      if (!AllDigits(id)) continue;
      Result<model::Job> vertex = store->GetJob(id);
      if (vertex.ok() && vertex->dialect == model::Dialect::kVertex && vertex->project == project) {
        AddTargetsOf(*vertex, &out);
      }
    }
  }
  return out;
}

// Every job of the projects that may have lines within [floor, ceiling].
Result<std::vector<Target>> ScopedJobs(jobstore::JobStore* store,
                                       const std::vector<std::string>& projects,
                                       std::optional<TimeMicros> floor,
                                       std::optional<TimeMicros> ceiling) {
  std::vector<Target> out;
  for (const std::string& project : projects) {
    for (model::Dialect dialect : {model::Dialect::kMlV1, model::Dialect::kVertex}) {
      jobstore::JobStore::PageQuery q;
      q.dialect = dialect;
      q.project = project;
      q.any_location = true;
      q.limit = kJobBatch;
      for (;;) {
        ASSIGN_OR_RETURN(std::vector<model::Job> batch, store->ListJobsPage(q));
        for (const model::Job& job : batch) {
          if (floor && job.end_time != 0 && job.end_time + kEndSlack < *floor) continue;
          if (ceiling && job.create_time > *ceiling) continue;
          AddTargetsOf(job, &out);
        }
        if (batch.size() < q.limit) break;
        q.before_uid = batch.back().uid;
      }
    }
  }
  return out;
}

// The page: the first `size` + 1 entries after `after` in the order asked for.
class PageCollector {
 public:
  PageCollector(size_t size, bool descending, std::optional<Key> after)
      : size_(size), descending_(descending), after_(std::move(after)) {}

  void Offer(Key key, json entry) {
    if (after_ && !Precedes(*after_, key)) return;
    items_.emplace_back(std::move(key), std::move(entry));
    std::push_heap(items_.begin(), items_.end(), Cmp());
    if (items_.size() > size_ + 1) {
      std::pop_heap(items_.begin(), items_.end(), Cmp());
      items_.pop_back();
    }
  }

  LogEntriesPage Finish() {
    std::sort_heap(items_.begin(), items_.end(), Cmp());
    LogEntriesPage page;
    for (size_t i = 0; i < items_.size() && i < size_; ++i) {
      page.entries.push_back(std::move(items_[i].second));
    }
    if (items_.size() > size_) page.next_page_token = TokenOf(items_[size_ - 1].first);
    return page;
  }

 private:
  using Item = std::pair<Key, json>;
  bool Precedes(const Key& a, const Key& b) const { return descending_ ? b < a : a < b; }
  // Max-heap on the order: the top is the entry the page would drop first.
  std::function<bool(const Item&, const Item&)> Cmp() const {
    return [this](const Item& a, const Item& b) { return Precedes(a.first, b.first); };
  }

  size_t size_;
  bool descending_;
  std::optional<Key> after_;
  std::vector<Item> items_;
};

}  // namespace

Result<LogEntriesPage> LogEntriesQuery::List(const LogEntriesRequest& request) const {
  ASSIGN_OR_RETURN(std::vector<std::string> projects, ProjectsOf(request.resource_names));
  ASSIGN_OR_RETURN(logs::LogFilter filter, logs::LogFilter::Parse(request.filter));
  bool descending = false;
  if (request.order_by == "timestamp desc") {
    descending = true;
  } else if (!request.order_by.empty() && request.order_by != "timestamp asc") {
    return InvalidArgument("orderBy: \"" + request.order_by +
                           "\" is not one of \"timestamp asc\", \"timestamp desc\"");
  }
  if (request.page_size < 0) return InvalidArgument("pageSize: must not be negative");
  const size_t page_size =
      request.page_size == 0 ? kDefaultPageSize : std::min(request.page_size, kMaxPageSize);
  ASSIGN_OR_RETURN(std::optional<Key> after, ParseToken(request.page_token));

  const std::optional<TimeMicros> floor = filter.TimestampFloor();
  const std::optional<TimeMicros> ceiling = filter.TimestampCeiling();
  std::vector<Target> targets;
  if (auto ids = filter.RequiredValues("resource.labels.job_id")) {
    targets = PinnedJobs(store_, projects, *ids);
  } else {
    ASSIGN_OR_RETURN(targets, ScopedJobs(store_, projects, floor, ceiling));
  }
  if (!request.only_job_uid.empty()) {
    std::erase_if(targets, [&](const Target& t) { return t.uid != request.only_job_uid; });
  }

  PageCollector page(page_size, descending, std::move(after));
  for (const Target& t : targets) {
    RETURN_IF_ERROR(logs_->Scan(t.uid, [&](const logs::LogEntry& e) {
      if ((floor && e.time < *floor) || (ceiling && e.time > *ceiling)) return true;
      json entry = Render(t, e);
      if (!filter.Matches(entry)) return true;
      Key key{e.time, entry["insertId"].get<std::string>()};
      page.Offer(std::move(key), std::move(entry));
      return true;
    }));
  }
  return page.Finish();
}

}  // namespace ty::service
