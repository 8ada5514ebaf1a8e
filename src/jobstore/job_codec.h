// Spellings shared by both JobStore backends, so a job reads back the same from
// either one (tests/jobstore/job_store_contract.h checks that).
//
// Pure functions, no state: thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/job.h"

namespace ty::jobstore::internal {

// Stored spelling of a dialect: "VERTEX" / "ML_V1". Stable: it is on disk.
const char* DialectName(model::Dialect d);
std::optional<model::Dialect> DialectFromName(const std::string& name);

// What a backend keeps of `job`: every field except `spec`, which is reset to its
// default but for the list fields (ml v1 `job_id`, `display_name`, `labels`): the
// store persists `spec_json` (job_store.h).
model::Job StoredCopy(const model::Job& job);

// The ml v1 user id a job is indexed under: `spec.job_id` for ml v1 jobs, empty for
// Vertex jobs (they never collide on job_id).
std::string MlJobIdOf(const model::Job& job);

// Labels as stored (a JSON object of strings) and back. An unreadable text reads as
// no labels: it only narrows what a list filter can match.
std::string LabelsToJson(const std::map<std::string, std::string>& labels);
std::map<std::string, std::string> LabelsFromJson(const std::string& text);

// Admission grants as stored (a JSON array) and back. An unreadable text reads as
// no grants (a running job then restarts without a GPU pin rather than not at all).
std::string GrantsToJson(const std::vector<model::ReplicaGrant>& grants);
std::vector<model::ReplicaGrant> GrantsFromJson(const std::string& text);

// What the current attempt's image names stood for, as stored (a JSON array) and back.
// An unreadable text reads as none: it only informs describe.
std::string ImagesToJson(const std::vector<model::ImageRan>& images);
std::vector<model::ImageRan> ImagesFromJson(const std::string& text);

// Numeric value of a decimal uid (0 when it is not one); uids fit in int64.
int64_t UidNumber(const std::string& uid);

// The NotFound both backends answer for an absent uid.
Status JobNotFound(const std::string& uid);

}  // namespace ty::jobstore::internal
