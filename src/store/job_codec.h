// Spellings shared by both JobStore backends, so a job reads back the same from
// either one (tests/store/job_store_contract.h checks that).
//
// Pure functions, no state: thread-safe.
#pragma once

#include <optional>
#include <string>

#include "model/job.h"

namespace ty::store::internal {

// Stored spelling of a dialect: "VERTEX" / "ML_V1". Stable: it is on disk.
const char* DialectName(model::Dialect d);
std::optional<model::Dialect> DialectFromName(const std::string& name);

// What a backend keeps of `job`: every field except `spec`, which is reset to its
// default but for the ml v1 `job_id` (the store persists `spec_json`; job_store.h).
model::Job StoredCopy(const model::Job& job);

// The ml v1 user id a job is indexed under: `spec.job_id` for ml v1 jobs, empty for
// Vertex jobs (they never collide on job_id).
std::string MlJobIdOf(const model::Job& job);

// The NotFound both backends answer for an absent uid.
Status JobNotFound(const std::string& uid);

}  // namespace ty::store::internal
