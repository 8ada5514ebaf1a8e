// JobService's public methods and the loop's plumbing (queue, timers, reads).
// State transitions live in reconcile.cc.
#include "service/job_service.h"

#include <algorithm>
#include <future>
#include <random>

#include "model/list_filter.h"
#include "service/loop.h"

namespace ty::service {
namespace {

// Vertex ids are decimal int64s; a non-numeric id is a malformed request.
Status CheckVertexId(const std::string& id) {
  if (id.empty() || id.size() > 19 ||
      !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidArgument("Invalid job id \"" + id + "\": a CustomJob id is a decimal number.");
  }
  return Status::Ok();
}

// uids are decimal strings; compare them as numbers.
bool UidLess(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

bool InScope(const model::Job& job, model::Dialect dialect, const std::string& project,
             const std::string& location) {
  if (job.dialect != dialect || job.project != project) return false;
  return dialect == model::Dialect::kMlV1 || job.location == location;
}

}  // namespace

// ---------------------------------------------------------------------------
// JobService

JobService::JobService(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}
JobService::~JobService() { Shutdown(); }

Result<std::unique_ptr<JobService>> JobService::Create(store::JobStore* store,
                                                       executor::Executor* executor,
                                                       logs::LogStore* logs, const Clock* clock,
                                                       JobServiceOptions options) {
  if (!store || !executor || !logs || !clock) return Internal("JobService needs every collaborator");
  return std::unique_ptr<JobService>(
      new JobService(std::make_unique<Loop>(store, executor, logs, clock, std::move(options))));
}

Status JobService::Start() { return loop_->Start(); }
void JobService::Shutdown() {
  if (loop_) loop_->Shutdown();
}

Result<model::Job> JobService::Submit(model::Dialect dialect, const std::string& project,
                                      const std::string& location, model::ParsedJob parsed) {
  if (project.empty()) return InvalidArgument("project is required");
  if (dialect == model::Dialect::kVertex && location.empty()) return InvalidArgument("location is required");
  model::Job job;
  job.dialect = dialect;
  job.project = project;
  job.location = dialect == model::Dialect::kVertex ? location : "";
  job.spec = std::move(parsed.spec);
  job.spec.dialect = dialect;
  job.spec_json = std::move(parsed.spec_json);
  return loop_->Submit(std::move(job));
}

Result<model::Job> JobService::Get(const JobRef& ref) { return loop_->Get(ref); }
Result<ListResponse> JobService::List(const ListRequest& request) { return loop_->List(request); }
Status JobService::Cancel(const JobRef& ref) { return loop_->Cancel(ref); }
Result<Operation> JobService::Delete(const JobRef& ref) { return loop_->Delete(ref); }
Result<Operation> JobService::GetOperation(const std::string& name) { return loop_->GetOperation(name); }
Result<std::vector<model::JobEvent>> JobService::Events(const JobRef& ref) { return loop_->Events(ref); }

Result<logs::LogPage> JobService::ReadLogs(const JobRef& ref, const std::string& cursor,
                                           const std::string& task, size_t max_entries) {
  ASSIGN_OR_RETURN(std::string uid, loop_->ResolveUid(ref));
  return loop_->logs()->Read(uid, cursor, task, max_entries);
}

bool JobService::WaitForLogs(const JobRef& ref, const std::string& cursor, int timeout_ms) {
  Result<std::string> uid = loop_->ResolveUid(ref);
  if (!uid.ok()) return false;
  return loop_->logs()->WaitForMore(*uid, cursor, timeout_ms);
}

// ---------------------------------------------------------------------------
// Loop: plumbing

JobService::Loop::Loop(store::JobStore* store, executor::Executor* executor, logs::LogStore* logs,
                       const Clock* clock, JobServiceOptions options)
    : store_(store), executor_(executor), logs_(logs), clock_(clock), options_(std::move(options)) {}

JobService::Loop::~Loop() { Shutdown(); }

void JobService::Loop::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(q_mu_);
    if (stopping_) return;
    queue_.push_back(std::move(task));
  }
  q_cv_.notify_one();
}

void JobService::Loop::ScheduleAt(TimeMicros when, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(q_mu_);
    timers_.emplace(when, std::move(task));
  }
  q_cv_.notify_one();
}

template <typename T>
T JobService::Loop::PostAndWait(std::function<T()> task) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  {
    std::lock_guard<std::mutex> lock(q_mu_);
    if (stopping_) return T(Unavailable("the service is shutting down"));
    queue_.push_back([promise, task = std::move(task)] { promise->set_value(task()); });
  }
  q_cv_.notify_one();
  return future.get();
}

void JobService::Loop::RunLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(q_mu_);
      for (;;) {
        if (stopping_) return;
        if (!queue_.empty()) break;
        TimeMicros now = clock_->Now();
        if (!timers_.empty() && timers_.begin()->first <= now) break;
        if (timers_.empty()) {
          q_cv_.wait(lock);
        } else {
          // Timers are in wall-clock micros; wait at most 1 s so a clock jump or a
          // coarse timer never delays a timeout by much.
          int64_t wait_us = std::min<int64_t>(timers_.begin()->first - now, 1000000);
          q_cv_.wait_for(lock, std::chrono::microseconds(wait_us));
        }
      }
      if (!queue_.empty()) {
        task = std::move(queue_.front());
        queue_.pop_front();
      } else {
        task = std::move(timers_.begin()->second);
        timers_.erase(timers_.begin());
      }
    }
    task();
  }
}

Status JobService::Loop::Start() {
  ASSIGN_OR_RETURN(std::vector<model::Job> stored, store_->ListJobs());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& job : stored) {
      Result<model::JobSpec> spec = model::ParseStoredSpec(job.dialect, job.spec_json);
      if (!spec.ok()) {
        return spec.status().WithContext("stored job " + job.uid + " has an unreadable spec");
      }
      job.spec = std::move(spec).value();
      job.spec.dialect = job.dialect;
      if (last_uid_.empty() || UidLess(last_uid_, job.uid)) last_uid_ = job.uid;
      jobs_[job.uid] = std::move(job);
    }
  }
  executor_->SetEventCallback([this](const executor::ExecutorEvent& event) {
    Post([this, event] { OnExecutorEvent(event); });
  });
  Result<std::vector<executor::ObservedReplica>> observed = executor_->Recover();
  if (!observed.ok()) return observed.status().WithContext("executor recovery");
  workers_ = std::make_unique<WorkerPool>(std::max(1, options_.worker_threads));
  thread_ = std::thread([this] {
    loop_thread_id_ = std::this_thread::get_id();
    RunLoop();
  });
  Post([this, observed = std::move(observed).value()] { Recover(observed); });
  return Status::Ok();
}

void JobService::Loop::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(q_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  q_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  workers_.reset();  // Finishes in-flight backend calls; their results are dropped.
}

std::string JobService::Loop::NewUid() {
  // 19 digits like Google's ids: milliseconds since the epoch, then 6 random digits.
  // Time-first keeps ids growing with creation (List pages by uid); the random part
  // keeps two daemons sharing one container engine from minting the same id (and so
  // the same container names and labels) in the same millisecond.
  static thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t candidate = static_cast<uint64_t>(clock_->Now() / 1000) * 1000000 + rng() % 1000000;
  if (!last_uid_.empty() && candidate <= std::stoull(last_uid_)) candidate = std::stoull(last_uid_) + 1;
  last_uid_ = std::to_string(candidate);
  return last_uid_;
}

model::Job* JobService::Loop::Find(const std::string& uid) {
  auto it = jobs_.find(uid);
  return it == jobs_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------
// Loop: reads (any thread, under mu_)

Result<std::string> JobService::Loop::ResolveUid(const JobRef& ref) const {
  if (ref.dialect == model::Dialect::kVertex) RETURN_IF_ERROR(CheckVertexId(ref.id));
  std::lock_guard<std::mutex> lock(mu_);
  if (ref.dialect == model::Dialect::kVertex) {
    auto it = jobs_.find(ref.id);
    if (it != jobs_.end() && InScope(it->second, ref.dialect, ref.project, ref.location)) {
      return it->first;
    }
    return NotFound("CustomJob projects/" + ref.project + "/locations/" + ref.location +
                    "/customJobs/" + ref.id + " does not exist.");
  }
  for (const auto& [uid, job] : jobs_) {
    if (InScope(job, ref.dialect, ref.project, "") && job.spec.job_id == ref.id) return uid;
  }
  return NotFound("Field: name Error: The job projects/" + ref.project + "/jobs/" + ref.id +
                  " does not exist.");
}

Result<model::Job> JobService::Loop::Get(const JobRef& ref) const {
  ASSIGN_OR_RETURN(std::string uid, ResolveUid(ref));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(uid);
  if (it == jobs_.end()) return NotFound("job " + ref.id + " does not exist.");
  return it->second;
}

Result<ListResponse> JobService::Loop::List(const ListRequest& request) const {
  ASSIGN_OR_RETURN(model::ListFilter filter, model::ListFilter::Parse(request.dialect, request.filter));
  int page_size = request.page_size;
  if (page_size < 0) return InvalidArgument("pageSize must not be negative");
  if (page_size == 0) page_size = request.dialect == model::Dialect::kMlV1 ? 20 : 100;
  page_size = std::min(page_size, request.dialect == model::Dialect::kMlV1 ? 100 : 1000);
  const std::string& token = request.page_token;
  if (!token.empty() && !std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidArgument("Invalid pageToken \"" + token + "\"");
  }
  ListResponse response;
  std::lock_guard<std::mutex> lock(mu_);
  // Newest first: uids grow with creation time.
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) {
    const model::Job& job = it->second;
    if (!token.empty() && !UidLess(job.uid, token)) continue;
    if (!InScope(job, request.dialect, request.project, request.location)) continue;
    if (!filter.Matches(job)) continue;
    if (static_cast<int>(response.jobs.size()) == page_size) {
      response.next_page_token = response.jobs.back().uid;
      break;
    }
    response.jobs.push_back(job);
  }
  return response;
}

Result<std::vector<model::JobEvent>> JobService::Loop::Events(const JobRef& ref) const {
  ASSIGN_OR_RETURN(std::string uid, ResolveUid(ref));
  return store_->ListEvents(uid);
}

Result<Operation> JobService::Loop::GetOperation(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = operations_.find(name);
  if (it == operations_.end()) return NotFound("Operation " + name + " does not exist.");
  return it->second;
}

// ---------------------------------------------------------------------------
// Loop: mutations (posted to the loop thread)

Result<model::Job> JobService::Loop::Submit(model::Job job) {
  return PostAndWait<Result<model::Job>>([this, job = std::move(job)]() mutable -> Result<model::Job> {
    if (job.dialect == model::Dialect::kMlV1) {
      for (const auto& [uid, other] : jobs_) {
        if (other.dialect == model::Dialect::kMlV1 && other.project == job.project &&
            other.spec.job_id == job.spec.job_id) {
          return AlreadyExists("Field: job.job_id Error: A job with this id already exists.")
              .WithField("job.job_id");
        }
      }
    }
    TimeMicros now = clock_->Now();
    job.uid = NewUid();
    job.state = model::JobState::kQueued;
    job.create_time = job.update_time = job.phases.queued = now;
    RETURN_IF_ERROR(store_->CreateJob(job));
    RETURN_IF_ERROR(store_->AppendEvent(job.uid, {now, "state", "Job is queued."}));
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_[job.uid] = job;
    }
    ServiceLog(job, "Validating job requirements...");
    ServiceLog(job, "Job creation request has been successfully validated.");
    ServiceLog(job, "Job " + job.public_id() + " is queued.");
    std::string uid = job.uid;
    Post([this, uid] { Admit(uid); });
    return job;
  });
}

Status JobService::Loop::Cancel(const JobRef& ref) {
  ASSIGN_OR_RETURN(std::string uid, ResolveUid(ref));
  return PostAndWait<Status>([this, uid] { return CancelOnLoop(uid, "Job was cancelled by a user request."); });
}

Result<Operation> JobService::Loop::Delete(const JobRef& ref) {
  ASSIGN_OR_RETURN(std::string uid, ResolveUid(ref));
  return PostAndWait<Result<Operation>>([this, uid, ref]() -> Result<Operation> {
    model::Job* job = Find(uid);
    if (!job) return NotFound("job " + ref.id + " does not exist.");
    if (!model::IsTerminal(job->state)) {
      return FailedPrecondition("The CustomJob " + job->ResourceName() + " is in state " +
                                model::StateWireName(job->dialect, job->state) +
                                "; only a finished job can be deleted. Cancel it first.");
    }
    RETURN_IF_ERROR(store_->DeleteJob(uid));
    logs_->Delete(uid).IgnoreError();
    TimeMicros now = clock_->Now();
    std::lock_guard<std::mutex> lock(mu_);
    Operation op;
    op.name = "projects/" + job->project + "/locations/" + job->location + "/operations/" +
              uid;  // One delete per job, so the job id names it.
    op.create_time = op.update_time = now;
    op.done = true;
    operations_[op.name] = op;
    jobs_.erase(uid);
    return op;
  });
}

}  // namespace ty::service
