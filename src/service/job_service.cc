// JobService's public methods: requests become loop calls (mutations) or reads of
// the published index. Decisions live in machines/job_machine.h, commits and side
// effects in job_controller.cc.
#include "service/job_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <string_view>

#include "common/random.h"
#include "model/resource_ids.h"
#include "model/runtime_env.h"
#include "model/spec_images.h"
#include "model/work_memory.h"
#include "service/job_logs.h"
#include "service/launch_plan.h"
#include "service/study_controller.h"
#include "wire/list_filter.h"

namespace ty::service {
namespace {

// Whether a Vertex record is listed and read under `collection`: its own, and a training
// pipeline also as its backing CustomJob.
bool InCollection(const model::Job& job, model::VertexCollection collection) {
  const model::VertexCollection own = model::CollectionOf(job);
  return own == collection || (collection == model::VertexCollection::kCustomJobs &&
                               own == model::VertexCollection::kTrainingPipelines);
}

// Vertex ids are decimal int64s; a non-numeric id is a malformed request.
Status CheckVertexId(const std::string& id) {
  if (id.empty() || id.size() > 19 ||
      !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidArgument("Invalid job id \"" + id + "\": a CustomJob id is a decimal number.");
  }
  return Status::Ok();
}

bool InScope(const model::Job& job, model::Dialect dialect, const std::string& project,
             const std::string& location) {
  if (job.dialect != dialect || job.project != project) return false;
  return dialect == model::Dialect::kMlV1 || job.location == location;
}

// Each other executor is there, named once, and a project runs on one executor only.
Status CheckOtherExecutors(const JobServiceOptions& options) {
  std::set<std::string> names = {options.executor_name};
  std::set<std::string> projects;
  for (const JobServiceOptions::OtherExecutor& other : options.other_executors) {
    if (other.executor == nullptr) return Internal("executor " + other.name + " is missing");
    if (!names.insert(other.name).second) {
      return InvalidArgument("executor \"" + other.name + "\" is named twice");
    }
    for (const std::string& project : other.projects) {
      if (!projects.insert(project).second) {
        return InvalidArgument("project " + project + " is routed to more than one executor");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

JobService::JobService(jobstore::JobStore* store, executor::Executor* executor,
                       logs::LogStore* logs, const Clock* clock, JobServiceOptions options)
    : finished_(std::make_unique<FinishedJobs>(store)),
      store_(finished_.get()),
      logs_(logs),
      options_(std::move(options)) {
  core_ = std::make_unique<LoopCore>(
      clock, options_.manual_loop_for_test ? LoopCore::Mode::kManual : LoopCore::Mode::kThreaded,
      options_.worker_threads);
  uids_ = std::make_unique<UidSource>(clock, options_.random);
  // The controllers on the loop core; each registers the messages it receives
  // (service/messages.h) and knows no other.
  jobs_ = std::make_unique<JobController>(core_.get(), store_, &backends_, logs, uids_.get(),
                                          options_.jobs);
  auto add_backend = [this, logs, clock](const std::string& name, executor::Executor* ex,
                                         const AdmissionOptions& admission) {
    backends_.Add(name, ex).admission = std::make_unique<AdmissionController>(
        core_.get(), admission,
        [this, name](const std::string& project) { return backends_.For(project).name == name; },
        [logs, clock](const std::string& uid, const std::string& message,
                      const std::string& severity) {
          WriteServiceLine(logs, clock->Now(), uid, message, severity);
        });
  };
  add_backend(options_.executor_name, executor, options_.admission);
  for (const JobServiceOptions::OtherExecutor& other : options_.other_executors) {
    add_backend(other.name, other.executor, other.admission);
    for (const std::string& project : other.projects)
      backends_.Route(project, other.name).IgnoreError();
  }
  studies_ = std::make_unique<StudyController>(core_.get(), store_, logs, uids_.get(),
                                               &jobs_->published(), options_.jobs.trial_root);
  if (options_.register_controllers_for_test) options_.register_controllers_for_test(core_.get());
}

JobService::~JobService() { Shutdown(); }

Result<std::unique_ptr<JobService>> JobService::Create(jobstore::JobStore* store,
                                                       executor::Executor* executor,
                                                       logs::LogStore* logs, const Clock* clock,
                                                       JobServiceOptions options) {
  if (!store || !executor || !logs || !clock)
    return Internal("JobService needs every collaborator");
  if (!options.random) return InvalidArgument("JobService needs a random source for job ids");
  RETURN_IF_ERROR(model::ValidateSpecLimits(options.jobs.limits));
  RETURN_IF_ERROR(CheckOtherExecutors(options));
  return std::unique_ptr<JobService>(
      new JobService(store, executor, logs, clock, std::move(options)));
}

Status JobService::Start() {
  RETURN_IF_ERROR(jobs_->Load());
  RETURN_IF_ERROR(studies_->Load());
  const auto recover_start = std::chrono::steady_clock::now();
  std::vector<executor::ObservedReplica> observed;
  for (const auto& b : backends_.all()) {
    b->executor->SetEventCallback(
        [this](const executor::ExecutorEvent& event) { jobs_->OnExecutorEvent(event); });
    Result<std::vector<executor::ObservedReplica>> found = b->executor->Recover();
    if (!found.ok()) return found.status().WithContext(b->name + " executor recovery");
    for (executor::ObservedReplica& o : *found) observed.push_back(std::move(o));
  }
  spdlog::info("recovered {} replicas in {} ms", observed.size(),
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - recover_start)
                   .count());
  core_->Start();
  core_->Post([this, observed = std::move(observed)] {
    jobs_->Recover(observed);
    studies_->Start();
  });
  return Status::Ok();
}

void JobService::BeginShutdown() {
  for (const auto& b : backends_.all()) b->executor->BeginShutdown();
}

void JobService::Shutdown() {
  // First, so that a blocking executor call in the worker pool (a launch waiting for
  // the engine, a removal riding out a busy mount) ends before the pool is joined.
  BeginShutdown();
  if (core_) core_->Shutdown();
}

std::vector<std::string> JobService::problems() const {
  std::vector<std::string> all = jobs_->problems();
  for (std::string& p : studies_->problems()) all.push_back(std::move(p));
  for (std::string& p : store_->SetAsideRows()) all.push_back("set aside: " + std::move(p));
  return all;
}

StoreWriteHealth JobService::store_health() const {
  return Combined(jobs_->store_health(), studies_->store_health());
}

Result<std::string> JobService::BackupStore() {
  if (options_.backup_dir.empty()) return FailedPrecondition("this daemon keeps no backups");
  std::error_code ec;
  std::filesystem::create_directories(options_.backup_dir, ec);
  static std::atomic<uint64_t> serial{0};
  const std::string path = options_.backup_dir + "/trainyard-" +
                           std::to_string(core_->clock()->Now()) + "-" + std::to_string(++serial) +
                           ".db";
  RETURN_IF_ERROR(store_->BackupTo(path));
  return path;
}

std::optional<JobService::DataDisk> JobService::data_disk() const {
  if (!options_.data_disk) return std::nullopt;
  Result<DiskSpace> space = options_.data_disk();
  if (!space.ok()) return std::nullopt;
  return DataDisk{*space, ReserveBytes(*space, options_.data_reserve_bytes)};
}

int JobService::RunUntilIdleForTest() { return core_->RunUntilIdle(); }

namespace {

// The checks after parsing name a pool by its CustomJob path ("jobSpec.workerPoolSpecs[0]
// .machineSpec"); a Vertex tuning job's caller wrote that spec as `trialJobSpec` and a
// pipeline's as `trainingTaskInputs`, so a refusal names the field as they wrote it.
Status InCallersTerms(model::JobKind kind, Status s) {
  const char* root = kind == model::JobKind::kPipeline ? "trainingTaskInputs."
                     : kind == model::JobKind::kStudy  ? "trialJobSpec."
                                                       : nullptr;
  if (s.ok() || root == nullptr) return s;
  auto renamed = [root](std::string text) {
    constexpr std::string_view kJobSpec = "jobSpec.";
    for (size_t at = text.find(kJobSpec); at != std::string::npos;
         at = text.find(kJobSpec, at + 1)) {
      text.replace(at, kJobSpec.size(), root);
    }
    return text;
  };
  Status out(s.code(), renamed(s.message()));
  return s.field().empty() ? out : out.WithField(renamed(s.field()));
}

// A claim refused for a bucket (an invalid name, another project's) names the field of
// the request that holds it, as a parse error would.
Status NamingTheBucketsField(const model::Job& job, Status s) {
  if (s.ok() || !s.field().empty()) return s;
  const bool vertex = job.dialect == model::Dialect::kVertex;
  auto names = [&s](const std::string& uri) {
    std::optional<std::pair<std::string, std::string>> split = model::SplitGcsUri(uri);
    return split && s.message().find(split->first) != std::string::npos;
  };
  if (names(job.spec.base_output_directory)) {
    return s.WithField(vertex ? "jobSpec.baseOutputDirectory.outputUriPrefix"
                              : "trainingInput.jobDir");
  }
  if (names(job.spec.job_dir)) return s.WithField("trainingInput.jobDir");
  for (size_t p = 0; p < job.spec.pools.size(); ++p) {
    if (!job.spec.pools[p].python_package) continue;
    const std::vector<std::string>& uris = job.spec.pools[p].python_package->package_uris;
    for (size_t i = 0; i < uris.size(); ++i) {
      if (!names(uris[i])) continue;
      const std::string index = "packageUris[" + std::to_string(i) + "]";
      return s.WithField(vertex ? "jobSpec.workerPoolSpecs[" + std::to_string(p) +
                                      "].pythonPackageSpec." + index
                                : "trainingInput." + index);
    }
  }
  return s;
}

}  // namespace

Result<model::Job> JobService::Submit(model::Dialect dialect, const std::string& project,
                                      const std::string& location, wire::ParsedJob parsed) {
  RETURN_IF_ERROR(model::CheckProjectId(project));
  if (dialect == model::Dialect::kVertex && location.empty())
    return InvalidArgument("location is required");
  parsed.spec.dialect = dialect;
  // Before anything is stored or allocated in proportion to the spec's sizes.
  RETURN_IF_ERROR(
      InCallersTerms(parsed.kind, model::CheckSpecLimits(parsed.spec, options_.jobs.limits)));
  model::Job job;
  job.dialect = dialect;
  job.project = project;
  job.location = dialect == model::Dialect::kVertex ? location : "";
  job.spec = std::move(parsed.spec);
  job.spec_json = std::move(parsed.spec_json);
  job.kind = parsed.kind;
  if (options_.images_scoped_to_projects) {
    RETURN_IF_ERROR(InCallersTerms(job.kind, model::CheckImageProjects(job.project, job.spec)));
  }
  const Backend& backend = backends_.For(project);
  RETURN_IF_ERROR(InCallersTerms(job.kind, backend.admission->CheckSubmittable(job)));
  RETURN_IF_ERROR(InCallersTerms(
      job.kind, model::CheckRuntimesBuilt(job.spec, [&backend](const std::string& image) {
        return backend.executor->HoldsRuntime(image);
      })));
  if (!job.spec.tensorboard.empty() && options_.check_tensorboard) {
    RETURN_IF_ERROR(
        InCallersTerms(job.kind, options_.check_tensorboard(job.project, job.spec.tensorboard)));
  }
  RETURN_IF_ERROR(CheckMemoryBudget(job));
  if (std::optional<DataDisk> disk = data_disk()) {
    RETURN_IF_ERROR(CheckReserve(disk->space, disk->reserve_bytes));
  }
  // Last check before the job is stored: a claim is not undone if storing fails,
  // which leaves the bucket with the project that asked for it (harmless).
  if (options_.claim_buckets) {
    Status claimed = options_.claim_buckets(job.project, BucketsOf(job.spec));
    if (!claimed.ok()) return InCallersTerms(job.kind, NamingTheBucketsField(job, claimed));
  }
  if (job.spec.study) {
    job.create_time = core_->clock()->Now();
    job.update_time = job.create_time;
    return core_->Call<Result<model::Job>>(
        [this, job = std::move(job)]() mutable { return studies_->Submit(std::move(job)); });
  }
  return core_->Call<Result<model::Job>>(
      [this, job = std::move(job)]() mutable { return jobs_->Submit(std::move(job)); });
}

Status JobService::CheckMemoryBudget(const model::Job& job) const {
  const size_t budget = options_.max_work_bytes;
  if (budget == 0) return Status::Ok();
  // The stored record (spec_record) is made at commit; it is about the request's size.
  const size_t adds = model::WorkBytes(job) + model::kLiveRecordCopies * job.spec_json.size();
  const auto mb = [](size_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20); };
  const std::string what = job.spec.study ? "This tuning job (its record at its last trial and "
                                            "its parallel trial jobs)"
                                          : "This job";
  if (adds > budget) {
    return InvalidArgument(what + " would hold about " + mb(adds) +
                           " MB of the daemon's memory, more than its whole budget "
                           "(max_daemon_memory, " +
                           mb(budget) + " MB)" +
                           (job.spec.study ? ": ask for fewer trials or parallel trials, or "
                                             "fewer or smaller parameter values"
                                           : ""));
  }
  const size_t held = jobs_->published().WorkBytes() + studies_->published().WorkBytes();
  if (held + adds > budget) {
    return Status(StatusCode::kResourceExhausted,
                  what + " would hold about " + mb(adds) + " MB of the daemon's memory; " +
                      "unfinished work holds " + mb(held) + " MB of its " + mb(budget) +
                      " MB budget (max_daemon_memory). Try again as work finishes.");
  }
  return Status::Ok();
}

Result<std::shared_ptr<const JobRead>> JobService::Lookup(const std::string& uid) const {
  if (std::optional<model::Job> live = jobs_->published().Get(uid)) {
    WithQueueView(&*live);
    return std::make_shared<const JobRead>(std::move(*live));
  }
  if (std::optional<model::Job> study = studies_->published().Get(uid)) {
    return std::make_shared<const JobRead>(std::move(*study));
  }
  return finished_->Read(uid, [](model::Job* job) {
    // Best effort: a finished job whose spec no longer parses is still shown (the
    // store kept its list fields and its wire JSON, which is what renders).
    Result<model::JobSpec> spec = wire::RestoreSpec(*job);
    if (spec.ok()) job->spec = std::move(spec).value();
  });
}

std::optional<JobService::ReplicaJob> JobService::JobOfReplicaAt(const std::string& address) const {
  for (const auto& b : backends_.all()) {
    if (std::optional<std::string> uid = b->executor->JobAtAddress(address)) {
      return LiveReplicaJob(*uid);
    }
  }
  return std::nullopt;
}

std::optional<JobService::ReplicaJob> JobService::LiveReplicaJob(const std::string& uid) const {
  Result<std::shared_ptr<const JobRead>> read = Lookup(uid);
  // A finished job's replica is no longer anyone (its address may be reused).
  if (!read.ok() || model::IsTerminal((*read)->job().state)) return std::nullopt;
  return ReplicaJob{(*read)->job().uid, (*read)->job().project};
}

std::vector<model::Job> JobService::LiveJobsWhere(
    const std::function<bool(const model::Job&)>& keep) const {
  return jobs_->published().Where(keep);
}

Result<std::string> JobService::ResolveUid(const JobRef& ref) const {
  if (ref.dialect == model::Dialect::kVertex) {
    ASSIGN_OR_RETURN(std::shared_ptr<const JobRead> read, Read(ref));
    return read->job().uid;
  }
  return ResolveMlUid(ref);
}

Result<std::string> JobService::ResolveMlUid(const JobRef& ref) const {
  if (std::optional<std::string> uid = jobs_->published().FindMl(ref.project, ref.id)) return *uid;
  if (std::optional<std::string> uid = studies_->published().FindMl(ref.project, ref.id))
    return *uid;
  if (std::optional<std::string> uid = finished_->FindFinishedMl(ref.project, ref.id)) return *uid;
  Result<model::Job> stored = store_->FindMlJob(ref.project, ref.id);
  if (stored.ok()) return stored->uid;
  if (stored.status().code() != StatusCode::kNotFound) return stored.status();
  return NotFound("Field: name Error: The job projects/" + ref.project + "/jobs/" + ref.id +
                  " does not exist.");
}

Result<std::shared_ptr<const JobRead>> JobService::Read(const JobRef& ref) const {
  if (ref.dialect == model::Dialect::kVertex) {
    RETURN_IF_ERROR(CheckVertexId(ref.id));
    Result<std::shared_ptr<const JobRead>> read = Lookup(ref.id);
    if (read.ok() && InScope((*read)->job(), ref.dialect, ref.project, ref.location) &&
        InCollection((*read)->job(), ref.collection) &&
        (*read)->job().kind != model::JobKind::kTrial) {
      return read;
    }
    if (!read.ok() && read.status().code() != StatusCode::kNotFound) return read.status();
    return NotFound("projects/" + ref.project + "/locations/" + ref.location + "/" +
                    model::CollectionName(ref.collection) + "/" + ref.id + " does not exist.");
  }
  ASSIGN_OR_RETURN(std::string uid, ResolveMlUid(ref));
  Result<std::shared_ptr<const JobRead>> read = Lookup(uid);
  // A trial's job is its study's part, read through the study.
  if ((!read.ok() && read.status().code() == StatusCode::kNotFound) ||
      (read.ok() && (*read)->job().kind == model::JobKind::kTrial)) {
    return NotFound("job " + ref.id + " does not exist.");
  }
  return read;
}

Result<model::Job> JobService::Get(const JobRef& ref) {
  ASSIGN_OR_RETURN(std::shared_ptr<const JobRead> read, Read(ref));
  return read->job();
}

Result<ListResponse> JobService::List(const ListRequest& request) {
  ASSIGN_OR_RETURN(wire::ListFilter filter,
                   wire::ListFilter::Parse(request.dialect, request.filter));
  int page_size = request.page_size;
  if (page_size < 0) return InvalidArgument("pageSize must not be negative");
  if (page_size == 0) page_size = request.dialect == model::Dialect::kMlV1 ? 20 : 100;
  page_size = std::min(page_size, request.dialect == model::Dialect::kMlV1 ? 100 : 1000);
  const std::string& token = request.page_token;
  if (!token.empty() && (token.size() > 19 || !std::all_of(token.begin(), token.end(), [](char c) {
                           return c >= '0' && c <= '9';
                         }))) {
    return InvalidArgument("Invalid pageToken \"" + token + "\"");
  }
  // Newest first, straight from the store (its scope index): memory stays bounded
  // however long the history. The store has every committed record, live ones too.
  // Filters run here, over batches, until the page is full or the scope exhausted.
  ListResponse response;
  jobstore::JobStore::PageQuery query;
  query.dialect = request.dialect;
  query.project = request.project;
  query.location = request.location;
  query.before_uid = token;
  query.limit = std::max<size_t>(256, static_cast<size_t>(page_size) + 1);
  query.max_bytes = request.max_bytes;
  size_t page_bytes = 0;
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<model::Job> batch, store_->ListJobsPage(query));
    // Taken before the loop moves records out (a moved record's uid is empty).
    const std::string last_uid = batch.empty() ? "" : batch.back().uid;
    size_t batch_bytes = 0;
    for (model::Job& job : batch) {
      batch_bytes += model::ApproxRecordBytes(job);
      if (request.dialect == model::Dialect::kVertex && !InCollection(job, request.collection)) {
        continue;  // Another Vertex collection.
      }
      if (!filter.Matches(job)) continue;
      const size_t bytes = model::ApproxRecordBytes(job);
      const bool full = static_cast<int>(response.jobs.size()) == page_size ||
                        (request.max_bytes != 0 && !response.jobs.empty() &&
                         page_bytes + bytes > request.max_bytes);
      if (full) {
        response.next_page_token = response.jobs.back().uid;
        return response;
      }
      WithQueueView(&job);
      page_bytes += bytes;
      response.jobs.push_back(std::move(job));
    }
    // A short batch ends the scope, unless the store stopped it for its bytes.
    const bool cut_for_bytes = query.max_bytes != 0 && batch_bytes >= query.max_bytes;
    if (batch.empty() || (batch.size() < query.limit && !cut_for_bytes)) return response;
    query.before_uid = last_uid;
  }
}

Status JobService::Cancel(const JobRef& ref) {
  ASSIGN_OR_RETURN(std::string uid, ResolveUid(ref));
  return core_->Call<Status>([this, uid] {
    if (studies_->IsLive(uid)) return studies_->Cancel(uid);
    return jobs_->Cancel(uid, "Job was cancelled by a user request.");
  });
}

Result<Operation> JobService::Delete(const JobRef& ref) {
  ASSIGN_OR_RETURN(std::shared_ptr<const JobRead> read, Read(ref));
  const std::string uid = read->job().uid;
  const model::Job& job = read->job();
  RETURN_IF_ERROR(core_->Call<Status>([this, uid] { return jobs_->Delete(uid); }));
  // A study's trial jobs go with it (they are not listed or addressable otherwise).
  for (const model::Trial& t : job.trials) {
    if (t.job_uid.empty()) continue;
    core_->Call<Status>([this, trial = t.job_uid] { return jobs_->Delete(trial); }).IgnoreError();
  }
  return GetOperation(OperationName(ref.project, job.location, uid));
}

// One delete per job, so the job's uid names its operation; what the store keeps of
// the deleted job answers for it, across restarts (jobstore::JobStore::Deletion).
std::string JobService::OperationName(const std::string& project, const std::string& location,
                                      const std::string& uid) {
  return "projects/" + project + "/locations/" + location + "/operations/" + uid;
}

Result<Operation> JobService::GetOperation(const std::string& name) {
  const std::string uid = name.substr(name.rfind('/') + 1);
  Result<jobstore::JobStore::Deletion> deleted = store_->GetDeletion(uid);
  if (!deleted.ok() || OperationName(deleted->project, deleted->location, uid) != name) {
    if (deleted.ok() || deleted.status().code() == StatusCode::kNotFound) {
      return NotFound("Operation " + name + " does not exist.");
    }
    return deleted.status();
  }
  Operation op;
  op.name = name;
  op.create_time = op.update_time = deleted->time;
  op.done = true;
  return op;
}

Result<std::vector<model::JobEvent>> JobService::Events(const JobRef& ref) {
  ASSIGN_OR_RETURN(std::string uid, ResolveUid(ref));
  return store_->ListEvents(uid);
}

Result<JobLogPage> JobService::ReadLogs(const JobRef& ref, const std::string& cursor,
                                        const std::string& task, size_t max_entries) {
  ASSIGN_OR_RETURN(model::Job job, Get(ref));
  // A tuning job's log is its own lines and its trials' (job_logs.h).
  std::vector<LogSource> sources = {{job.uid, 0}};
  for (const model::Trial& t : job.trials) {
    if (!t.job_uid.empty()) sources.push_back({t.job_uid, t.id});
  }
  return ReadJobLogs(logs_, sources, cursor, task, max_entries);
}

Result<std::unique_ptr<ReplicaShell>> JobService::OpenShell(const JobRef& ref,
                                                            const std::string& replica) {
  ASSIGN_OR_RETURN(model::Job job, Get(ref));
  if (!job.spec.enable_web_access) {
    return FailedPrecondition(
        "The job was not created with enableWebAccess: its replicas offer no shell.");
  }
  if (job.state != model::JobState::kRunning) {
    return FailedPrecondition(std::string("The job is ") + model::JobStateName(job.state) +
                              ": a shell opens only in a running job's replica.");
  }
  for (const model::ReplicaRecord& r : job.replicas) {
    if (r.task_name != replica) continue;
    if (r.state != model::ReplicaState::kRunning) {
      return FailedPrecondition("Replica " + replica + " is " + model::ReplicaStateName(r.state) +
                                ": a shell opens only in a running replica.");
    }
    return backends_.For(job.project).executor->OpenShell(job.uid, r.attempt, r.pool, r.index);
  }
  return NotFound("The job has no replica " + replica + ".");
}

std::vector<model::Job> JobService::EndedSince(
    TimeMicros since, const std::function<bool(const model::Job&)>& keep) const {
  std::vector<model::Job> out;
  Result<std::vector<model::Job>> jobs = store_->ListEndedSince(since);
  if (!jobs.ok()) {
    spdlog::warn("cannot list the jobs that ended while no daemon ran: {}",
                 jobs.status().ToString());
    return out;
  }
  for (model::Job& job : *jobs) {
    Result<model::JobSpec> spec = wire::RestoreSpec(job);
    if (!spec.ok()) continue;
    job.spec = std::move(spec).value();
    if (keep(job)) out.push_back(std::move(job));
  }
  return out;
}

Result<JobLogPage> JobService::ReadLogTail(const JobRef& ref, const std::string& before,
                                           const std::string& task, size_t max_entries) {
  ASSIGN_OR_RETURN(model::Job job, Get(ref));
  for (const model::Trial& t : job.trials) {
    if (!t.job_uid.empty()) {
      return FailedPrecondition(
          "tail: a tuning job's log merges its trials' logs and reads forward only (no tail).");
    }
  }
  return ReadJobLogTail(logs_, {job.uid, 0}, before, task, max_entries);
}

void JobService::SetReplicaStoragePort(int port) {
  for (const auto& b : backends_.all()) {
    b->storage_endpoint =
        port <= 0 ? ""
                  : "http://" + b->executor->DaemonHostForReplicas() + ":" + std::to_string(port);
  }
}

void JobService::SetReplicaCredentials(
    std::function<std::string(const std::string& job_uid)> credential) {
  jobs_->SetReplicaCredentials(std::move(credential));
}

Result<LogEntriesPage> JobService::ListLogEntries(const LogEntriesRequest& request) {
  return LogEntriesQuery(store_, logs_).List(request);
}

bool JobService::WaitForLogs(const JobRef& ref, const std::string& cursor, int timeout_ms) {
  Result<std::string> uid = ResolveUid(ref);
  if (!uid.ok()) return false;
  return logs_->WaitForMore(*uid, cursor, timeout_ms);
}

std::optional<scheduler::WaitInfo> JobService::QueueWait(const std::string& uid) const {
  return backends_.WaitOf(uid);
}

void JobService::WithQueueView(model::Job* job) const {
  if (job->state != model::JobState::kQueued) return;
  if (std::optional<scheduler::WaitInfo> wait =
          backends_.For(job->project).admission->WaitOf(job->uid)) {
    job->queue_position = wait->position;
    job->queue_reason = wait->reason;
  }
}

}  // namespace ty::service
