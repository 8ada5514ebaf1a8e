// The two wire dialects <-> the internal model (docs/design.md §1).
//
// Parsing validates everything Google's REST references say a server checks
// and returns InvalidArgument via FieldError(path, rule) naming the first offending
// field by its wire path ("jobSpec.workerPoolSpecs[0].replicaCount",
// "trainingInput.workerCount"). Unknown fields are rejected, as Google does.
// Wire rules honoured on input: lowerCamelCase or snake_case keys, int64 as string or
// number, enums as names or numbers. On output: lowerCamelCase, int64 as strings,
// enums as names (or numbers with RenderOptions::enum_as_int), RFC 3339 `Z` times,
// default-valued fields omitted.
//
// Pure functions: no I/O, no clock; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/status.h"
#include "model/job.h"

namespace ty::wire {

// The domain types the wire forms stand for.
using model::Dialect;
using model::Job;
using model::JobKind;
using model::JobSpec;
using model::JobState;

struct ParsedJob {
  JobSpec spec;
  std::string spec_json;         // Canonical request form; becomes Job::spec_json.
  JobKind kind = JobKind::kJob;  // Becomes Job::kind.
};

// Body of `POST .../customJobs` (a CustomJob). Output-only fields (name, state,
// createTime, ...) are accepted and ignored, as Google does.
Result<ParsedJob> ParseVertexCustomJob(const nlohmann::json& body);
// Body of `POST .../hyperparameterTuningJobs` (a Vertex HyperparameterTuningJob):
// the trial job spec becomes the pools, the study spec and budget `spec.study`.
Result<ParsedJob> ParseVertexHyperparameterTuningJob(const nlohmann::json& body);
// Body of `POST .../trainingPipelines` (a Vertex TrainingPipeline of the custom task):
// its trainingTaskInputs become the job spec, checked as a CustomJob's jobSpec (errors
// name `trainingTaskInputs.…`). modelToUpload, parentModel, modelId and inputDataConfig
// are 400s naming them (no Model registry or datasets here). The pipeline is one record
// that runs as its backing CustomJob (BackingCustomJobJson) under the same id.
Result<ParsedJob> ParseVertexTrainingPipeline(const nlohmann::json& body);
// The canonical CustomJob JSON of a stored pipeline's backing job.
Result<std::string> BackingCustomJobJson(const std::string& pipeline_spec_json);

// Body of `POST /v1/projects/{p}/jobs` (an ml v1 Job).
Result<ParsedJob> ParseMlJob(const nlohmann::json& body);

// Rebuilds the spec of a stored job from its canonical JSON (Job::spec_json), read
// as its kind's request (a trial job holds its study's).
Result<JobSpec> ParseStoredSpec(Dialect dialect, JobKind kind, const std::string& spec_json);
// The spec of a stored job: its versioned record when it has one (model/spec_record.h:
// no validation, so a rule tightened since does not make it unreadable), else its wire
// JSON re-parsed (jobs stored before records existed).
Result<JobSpec> RestoreSpec(const Job& job);

struct RenderOptions {
  bool enum_as_int = false;  // `$alt=json;enum-encoding=int`
  // A training pipeline read through customJobs: rendered as its backing CustomJob.
  bool as_backing_custom_job = false;
  // "http://host:port" the caller reached the daemon by: where webAccessUris point
  // ("" = leave them out).
  std::string web_access_origin;
};

// The resource as the job's dialect shows it: Vertex CustomJob (name, displayName,
// jobSpec, state "JOB_STATE_*", createTime/startTime/endTime/updateTime, error
// {code,message}, labels) or ml v1 Job (jobId, trainingInput, state, createTime,
// startTime, endTime, errorMessage, labels, trainingOutput, etag).
nlohmann::json RenderJob(const Job& job, const RenderOptions& options);

// State names per dialect ("JOB_STATE_RUNNING" / "RUNNING") and their enum numbers.
std::string StateWireName(Dialect dialect, JobState s);
int VertexStateNumber(JobState s);
// Accepts a dialect's name, or (Vertex) its number as text. nullopt if unknown.
std::optional<JobState> StateFromWireName(Dialect dialect, const std::string& name);

}  // namespace ty::wire
