// The internal JobSpec as stored: a versioned JSON record kept beside the job's wire
// JSON (which stays for rendering the job back byte-faithfully).
//
// Why: a stored job must come back as it was accepted. Re-parsing its wire JSON runs
// today's validation, so tightening a rule would make old jobs unreadable; decoding
// this record runs none. The record says its version ("v"); a newer record than this
// build knows is refused rather than misread, and fields unknown to this version are
// ignored (a later version only adds fields).
//
//   {"v": 1, "dialect": "VERTEX"|"ML_V1", "jobId", "displayName", "labels": {..},
//    "pools": [{"replicaCount", "machine": {"type", "acceleratorType",
//               "acceleratorCount"}, "disk": {"type", "sizeGb"},
//               "container": {"imageUri", "command", "args", "env": [[name, value]]},
//               "pythonPackage": {"executorImageUri", "packageUris", "pythonModule",
//                                 "args", "env"}}],
//    "scheduling": {"timeoutMicros", "maxWaitMicros", "restartJobOnWorkerRestart",
//                   "disableRetries", "priority"},
//    "baseOutputDirectory", "jobDir", "useChiefInTfConfig", "region", "scaleTier",
//    "study": {...} (tuning jobs; EncodeStudy below)}
//
// Pure; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/status.h"
#include "model/job_spec.h"

namespace ty::model {

inline constexpr int kSpecRecordVersion = 1;

std::string EncodeSpecRecord(const JobSpec& spec);

// DataLoss for text that is not a record; FailedPrecondition for a newer version.
Result<JobSpec> DecodeSpecRecord(const std::string& text);

// The study inside a record: every field, the parameter tree included; Decode never
// validates (records are trusted).
nlohmann::json EncodeStudy(const StudySpec& study);
StudySpec DecodeStudy(const nlohmann::json& record);

}  // namespace ty::model
