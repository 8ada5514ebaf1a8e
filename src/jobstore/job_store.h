// JobStore: durable records of jobs, their replicas and their events.
//
// Every state transition is written here *before* its side effect starts
// (docs/design.md §2), so a restarted daemon replays intents instead of guessing.
// Two backends run the same contract tests (tests/jobstore/job_store_contract.h):
// SqliteJobStore (WAL, versioned schema with migrations) and MemoryJobStore.
//
// Thread-safety: implementations are safe to call from any thread; each call is
// atomic (one transaction). The service uses one writer (its reconcile loop).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/job.h"

namespace ty::jobstore {

class JobStore {
 public:
  virtual ~JobStore() = default;

  // Writes a job's record and the history events its decision made in one
  // transaction: both land or neither (a crash between two writes left a record
  // without its events). Every write of a record goes through here, so a wrapper
  // (a cache, a test's fault injection) overrides this one method.
  // `create`: inserts a new job (all fields of `job`, replicas included; `spec` itself
  // is not persisted, `spec_json` and `spec_record` are, and never change afterwards);
  // AlreadyExists if `uid` is taken, or if an ml v1 job with the same (project,
  // spec.job_id) exists. Else replaces the stored record of `job.uid` (state, times,
  // error, attempt, replicas, cancel flag...); NotFound if absent.
  virtual Status CommitJob(const model::Job& job, bool create,
                           const std::vector<model::JobEvent>& events) = 0;
  Status CreateJob(const model::Job& job) { return CommitJob(job, /*create=*/true, {}); }
  Status UpdateJob(const model::Job& job) { return CommitJob(job, /*create=*/false, {}); }

  // NotFound if absent. The returned job's `spec` holds only the list fields (job_id,
  // display_name, labels, kept from CreateJob): callers rebuild the rest with
  // wire::ParseStoredSpec(job.dialect, job.kind, job.spec_json).
  virtual Result<model::Job> GetJob(const std::string& uid) = 0;

  // ml v1 lookup by user id. NotFound if absent.
  virtual Result<model::Job> FindMlJob(const std::string& project, const std::string& job_id) = 0;

  // Every job, oldest first (by create_time, then uid); `spec` as in GetJob.
  virtual Result<std::vector<model::Job>> ListJobs() = 0;

  // Every job not in a terminal state, oldest first, with replicas: what the service
  // keeps in memory (finished jobs are read back from the store when asked for). And a
  // finished job whose outbox still holds its last lines (model/outbox.h): start-up
  // writes those its log lacks, then commits the record without them.
  virtual Result<std::vector<model::Job>> ListLiveJobs() = 0;

  // Every finished job (SUCCEEDED, FAILED, CANCELLED) whose end_time is at or after
  // `since`, oldest end first, without replicas: what ended while no daemon looked
  // (the TensorBoard indexer's last passes). Costs what it returns, not the store.
  virtual Result<std::vector<model::Job>> ListEndedSince(TimeMicros since) = 0;

  // One page of a scope's jobs, newest first by uid as a number, for List: at most
  // `limit` jobs whose uid is below `before_uid` (when not empty). Replicas are not
  // loaded. Trial jobs (study_uid set) are left out: a study lists as one job. Like
  // every read, `spec` holds only the list fields (job_id, display_name, labels); the
  // rest is in `spec_json`.
  struct PageQuery {
    model::Dialect dialect = model::Dialect::kVertex;
    std::string project;
    std::string location;       // Ignored for ml v1.
    bool any_location = false;  // Vertex: every location of the project (log queries).
    std::string before_uid;     // Decimal; "" = from the newest.
    size_t limit = 100;
    // Stop once the records read hold this many bytes (model::ApproxRecordBytes),
    // after at least one; 0 = no bound. Rows are up to a request's size each.
    size_t max_bytes = 0;
  };
  virtual Result<std::vector<model::Job>> ListJobsPage(const PageQuery& query) = 0;

  // The largest uid ever stored, deleted jobs' included ("" when none): new uids
  // must sort after it (a deleted job's name never names another job).
  virtual Result<std::string> LastUid() = 0;

  // How many stored jobs are in each state (GET /metrics).
  virtual Result<std::map<model::JobState, int64_t>> CountJobsByState() = 0;

  // Removes the job, its replicas and its events, keeping a Deletion of it made at
  // `when`, in the same transaction. Deletions older than kDeletionsKeptFor go then
  // too, except the newest (LastUid's). NotFound if absent.
  virtual Status DeleteJob(const std::string& uid, TimeMicros when) = 0;
  // What is kept of a deleted job: its delete operation's answer (JobService::
  // GetOperation) after the record is gone and the daemon restarted. NotFound unless
  // the job was deleted within kDeletionsKeptFor.
  struct Deletion {
    std::string uid;
    std::string project;
    std::string location;
    TimeMicros time = 0;
  };
  virtual Result<Deletion> GetDeletion(const std::string& uid) = 0;
  // Google keeps a finished operation about this long.
  static constexpr DurationMicros kDeletionsKeptFor = 30LL * 24 * 3600 * 1000000;

  // Appends to the job's history. NotFound if the job is absent.
  virtual Status AppendEvent(const std::string& uid, const model::JobEvent& event) = 0;
  // Oldest first.
  virtual Result<std::vector<model::JobEvent>> ListEvents(const std::string& uid) = 0;

  // Rows lists and loads skipped because they could not be read back (a damaged or
  // hostile row: an unknown state or kind, trials that do not decode, a value larger
  // than any request makes), each "job UID: why"; the daemon serves on without them
  // and /healthz lists them. Empty for stores that cannot hold such rows.
  virtual std::vector<std::string> SetAsideRows() const { return {}; }
  // A consistent copy of the whole store at `path` (a new file, 0600), taken while
  // writers go on. Unimplemented where the store keeps nothing on disk.
  virtual Status BackupTo(const std::string& path) {
    return Status(StatusCode::kUnimplemented, "this store has no file to back up");
  }
};

}  // namespace ty::jobstore
