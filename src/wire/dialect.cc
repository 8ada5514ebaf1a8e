// Stored-spec parsing, response rendering and state names for both dialects.
// Request parsing lives in vertex_dialect.cc and ml_dialect.cc.
//
// Rendering starts from the job's canonical request (Job::spec_json) so a job reads
// back exactly as it was created, then adds the output-only fields of its dialect.
// Decisions:
// - ml v1 `etag` is the base64 of the job's update time (microseconds, 8 bytes big
//   endian; create time if never updated): it changes whenever the job does, which is
//   all optimistic concurrency on `labels` needs.
// - ml v1 `trainingOutput` appears once a job has ended after starting, as Google
//   returns it for every finished training job (gcloud describe shows it), with
//   `consumedMLUnits` = replica-hours (replicas of the spec x start-to-end hours),
//   rounded to 2 decimals: machines are symbolic here, so one ML unit stands for
//   one replica for one hour. `jobPosition` is the queue position while QUEUED (the
//   service fills Job::queue_position on reads), omitted otherwise (proto3 default
//   0). `enum_as_int` does not apply to
//   ml v1 (only GAPIC asks for it, and GAPIC is Vertex-only).
#include "wire/dialect.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/files.h"  // Base64Encode
#include "model/machine_types.h"
#include "model/spec_record.h"
#include "wire/study_json.h"
#include "wire/study_output.h"
#include "wire/wire_json.h"

namespace ty::wire {

using namespace model;  // The domain the wire dialects read and write.

namespace {

std::string Etag(const Job& job) {
  uint64_t version =
      static_cast<uint64_t>(job.update_time != 0 ? job.update_time : job.create_time);
  std::string bytes(8, '\0');
  for (int k = 7; k >= 0; --k) {
    bytes[k] = static_cast<char>(version & 0xFF);
    version >>= 8;
  }
  return Base64Encode(bytes);
}

// Replaces the enum name at `obj[key]` with its number, if it is a known name.
void EnumToInt(nlohmann::json& obj, const char* key, internal::EnumTable table) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return;
  int number = internal::EnumNumber(table, it->get<std::string>());
  if (number >= 0) *it = number;
}

void PoolEnumsToInt(nlohmann::json& job_spec) {
  if (!job_spec.is_object()) return;
  if (auto pools = job_spec.find("workerPoolSpecs"); pools != job_spec.end() && pools->is_array()) {
    for (nlohmann::json& pool : *pools) {
      if (!pool.is_object()) continue;
      auto machine = pool.find("machineSpec");
      if (machine == pool.end() || !machine->is_object()) continue;
      EnumToInt(*machine, "acceleratorType", model::internal::VertexAcceleratorTypes());
      if (auto ra = machine->find("reservationAffinity"); ra != machine->end()) {
        EnumToInt(*ra, "reservationAffinityType",
                  model::internal::VertexReservationAffinityTypes());
      }
    }
  }
  if (auto scheduling = job_spec.find("scheduling"); scheduling != job_spec.end()) {
    EnumToInt(*scheduling, "strategy", model::internal::VertexSchedulingStrategies());
  }
}

// Every enum of a CustomJob or HyperparameterTuningJob as its number
// (docs/contracts/client-wire.md's schema reference); `state` is set by the caller.
void VertexEnumsToInt(nlohmann::json& resource) {
  for (const char* key : {"jobSpec", "trialJobSpec"}) {
    if (auto spec = resource.find(key); spec != resource.end()) PoolEnumsToInt(*spec);
  }
  if (auto study = resource.find("studySpec"); study != resource.end()) {
    VertexStudySpecEnumsToInt(*study);
  }
}

void SetTime(nlohmann::json& out, const char* key, TimeMicros t) {
  if (t != 0) out[key] = FormatRfc3339(t);
}

}  // namespace

Result<JobSpec> ParseStoredSpec(Dialect dialect, JobKind kind, const std::string& spec_json) {
  nlohmann::json body = nlohmann::json::parse(spec_json, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return Internal("stored job spec is not valid JSON");
  const bool vertex_study = kind == JobKind::kStudy || kind == JobKind::kTrial;
  Result<ParsedJob> parsed = dialect == Dialect::kMlV1    ? ParseMlJob(body)
                             : kind == JobKind::kPipeline ? ParseVertexTrainingPipeline(body)
                             : vertex_study               ? ParseVertexHyperparameterTuningJob(body)
                                                          : ParseVertexCustomJob(body);
  if (!parsed.ok())
    return Internal("stored job spec no longer parses: " + parsed.status().message());
  return std::move(parsed).value().spec;
}

Result<JobSpec> RestoreSpec(const Job& job) {
  Result<JobSpec> spec = job.spec_record.empty()
                             ? ParseStoredSpec(job.dialect, job.kind, job.spec_json)
                             : DecodeSpecRecord(job.spec_record);
  if (spec.ok()) spec->dialect = job.dialect;
  return spec;
}

namespace {

// ml v1: the master plus the worker, parameter server and evaluator counts
// (int64 fields, strings on the wire).
int64_t MlReplicaCount(const nlohmann::json& training_input) {
  int64_t n = 1;
  for (const char* key : {"workerCount", "parameterServerCount", "evaluatorCount"}) {
    auto it = training_input.find(key);
    if (it == training_input.end()) continue;
    if (it->is_number_integer()) n += it->get<int64_t>();
    if (it->is_string()) n += std::strtoll(it->get_ref<const std::string&>().c_str(), nullptr, 10);
  }
  return n;
}

nlohmann::json MlTrainingOutput(const Job& job, const nlohmann::json& rendered) {
  auto input = rendered.find("trainingInput");
  int64_t replicas = input != rendered.end() && input->is_object() ? MlReplicaCount(*input) : 1;
  double hours = static_cast<double>(job.end_time - job.start_time) / 3600e6;
  double units = std::round(static_cast<double>(replicas) * hours * 100) / 100;
  return {{"consumedMLUnits", units}};
}

}  // namespace

namespace {

// A TrainingPipeline: the request as made, its state under PIPELINE_STATE_* names (the
// same numbers as JobState's), and its backing CustomJob, which is the same record read
// through customJobs (RenderOptions::as_backing_custom_job).
nlohmann::json RenderPipeline(const Job& job, nlohmann::json out, const RenderOptions& options) {
  out["name"] = job.ResourceName();
  if (options.enum_as_int) {
    out["state"] = VertexStateNumber(job.state);
  } else {
    std::string state = StateWireName(Dialect::kVertex, job.state);  // JOB_STATE_…
    out["state"] = "PIPELINE_STATE_" + state.substr(std::string_view("JOB_STATE_").size());
  }
  SetTime(out, "createTime", job.create_time);
  SetTime(out, "startTime", job.start_time);
  SetTime(out, "endTime", job.end_time);
  SetTime(out, "updateTime", job.update_time);
  if (job.error) out["error"] = {{"code", job.error->code}, {"message", job.error->message}};
  out["trainingTaskMetadata"] = {{"backingCustomJob", "projects/" + job.project + "/locations/" +
                                                          job.location + "/customJobs/" + job.uid}};
  return out;
}

// enableWebAccess: the console's terminal page for each running replica of a running
// job, keyed by the replica's name (workerpool0-0, master-replica-0). The page opens
// `{resource}:shell` (api/shell_bridge.h); empty when the job offers none now.
nlohmann::json WebAccessUris(const Job& job, const std::string& origin) {
  nlohmann::json uris = nlohmann::json::object();
  if (origin.empty() || !job.spec.enable_web_access || job.kind != JobKind::kJob ||
      job.state != JobState::kRunning) {
    return uris;
  }
  for (const ReplicaRecord& r : job.replicas) {
    if (r.state != ReplicaState::kRunning) continue;
    uris[r.task_name] =
        origin + "/console/shell.html#/v1/" + job.ResourceName() + ":shell?replica=" + r.task_name;
  }
  return uris;
}

// A Vertex customJob or hyperparameterTuningJob: the stored spec with what the
// service owns set over it.
nlohmann::json RenderVertexJob(const Job& job, nlohmann::json out, const RenderOptions& options) {
  out["name"] = job.ResourceName();
  if (options.enum_as_int) {
    out["state"] = VertexStateNumber(job.state);
    VertexEnumsToInt(out);
  } else {
    out["state"] = StateWireName(Dialect::kVertex, job.state);
  }
  SetTime(out, "createTime", job.create_time);
  SetTime(out, "startTime", job.start_time);
  SetTime(out, "endTime", job.end_time);
  SetTime(out, "updateTime", job.update_time);
  if (job.error) out["error"] = {{"code", job.error->code}, {"message", job.error->message}};
  if (nlohmann::json uris = WebAccessUris(job, options.web_access_origin); !uris.empty()) {
    out["webAccessUris"] = std::move(uris);
  }
  if (job.kind == JobKind::kStudy && !job.trials.empty()) {
    out["trials"] = VertexTrials(job, out);
    if (options.enum_as_int) {
      static constexpr internal::EnumValue kTrialStates[] = {
          {"STATE_UNSPECIFIED", 0}, {"REQUESTED", 1}, {"ACTIVE", 2},
          {"STOPPING", 3},          {"SUCCEEDED", 4}, {"INFEASIBLE", 5}};
      for (nlohmann::json& trial : out["trials"]) EnumToInt(trial, "state", kTrialStates);
    }
  }
  return out;
}

// An ml v1 job: the stored spec with state, times and trainingOutput.
nlohmann::json RenderMlJob(const Job& job, nlohmann::json out, const RenderOptions& options) {
  out["jobId"] = job.spec.job_id.empty() ? out.value("jobId", "") : job.spec.job_id;
  out["state"] = StateWireName(Dialect::kMlV1, job.state);
  SetTime(out, "createTime", job.create_time);
  SetTime(out, "startTime", job.start_time);
  SetTime(out, "endTime", job.end_time);
  if (job.error && !job.error->message.empty()) out["errorMessage"] = job.error->message;
  if (job.state == JobState::kQueued && job.queue_position > 0) {
    out["jobPosition"] = std::to_string(job.queue_position);  // int64: a string.
  }
  const bool study = !MlHyperparametersOf(out).empty() && job.study_uid.empty();
  if (study) {
    nlohmann::json output = MlStudyTrainingOutput(job, out);
    if (IsTerminal(job.state) && job.start_time != 0 && job.end_time >= job.start_time) {
      output.update(MlTrainingOutput(job, out));
    }
    out["trainingOutput"] = std::move(output);
  } else if (IsTerminal(job.state) && job.start_time != 0 && job.end_time >= job.start_time) {
    out["trainingOutput"] = MlTrainingOutput(job, out);
  }
  if (nlohmann::json uris = WebAccessUris(job, options.web_access_origin); !uris.empty()) {
    out["trainingOutput"]["webAccessUris"] = std::move(uris);
  }
  out["etag"] = Etag(job);
  return out;
}

}  // namespace

nlohmann::json RenderJob(const Job& job, const RenderOptions& options) {
  if (job.dialect == Dialect::kVertex && job.kind == JobKind::kPipeline &&
      options.as_backing_custom_job) {
    Job backing = job;
    Result<std::string> custom_job = BackingCustomJobJson(job.spec_json);
    backing.spec_json = custom_job.ok() ? *custom_job : "{}";
    backing.kind = JobKind::kJob;
    RenderOptions plain = options;
    plain.as_backing_custom_job = false;
    return RenderJob(backing, plain);
  }
  nlohmann::json out = nlohmann::json::parse(job.spec_json, nullptr, /*allow_exceptions=*/false);
  if (!out.is_object())
    out = nlohmann::json::object();  // Never stored that way; render what we can.
  if (job.dialect == Dialect::kVertex && job.kind == JobKind::kPipeline) {
    return RenderPipeline(job, std::move(out), options);
  }
  if (job.dialect == Dialect::kVertex) return RenderVertexJob(job, std::move(out), options);
  return RenderMlJob(job, std::move(out), options);
}

std::string StateWireName(Dialect dialect, JobState s) {
  if (dialect == Dialect::kMlV1) return JobStateName(s);
  switch (s) {
    case JobState::kUnspecified:
      return "JOB_STATE_UNSPECIFIED";
    case JobState::kPreparing:
      return "JOB_STATE_PENDING";
    default:
      return std::string("JOB_STATE_") + JobStateName(s);
  }
}

int VertexStateNumber(JobState s) {
  switch (s) {
    case JobState::kUnspecified:
      return 0;
    case JobState::kQueued:
      return 1;
    case JobState::kPreparing:
      return 2;
    case JobState::kRunning:
      return 3;
    case JobState::kSucceeded:
      return 4;
    case JobState::kFailed:
      return 5;
    case JobState::kCancelling:
      return 6;
    case JobState::kCancelled:
      return 7;
  }
  return 0;
}

std::optional<JobState> StateFromWireName(Dialect dialect, const std::string& name) {
  if (dialect == Dialect::kMlV1) return JobStateFromName(name);
  for (JobState s :
       {JobState::kUnspecified, JobState::kQueued, JobState::kPreparing, JobState::kRunning,
        JobState::kSucceeded, JobState::kFailed, JobState::kCancelling, JobState::kCancelled}) {
    if (name == StateWireName(Dialect::kVertex, s) || name == std::to_string(VertexStateNumber(s)))
      return s;
  }
  return std::nullopt;
}

}  // namespace ty::wire
