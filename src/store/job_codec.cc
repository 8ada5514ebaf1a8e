#include "store/job_codec.h"

namespace ty::store::internal {

const char* DialectName(model::Dialect d) {
  return d == model::Dialect::kMlV1 ? "ML_V1" : "VERTEX";
}

std::optional<model::Dialect> DialectFromName(const std::string& name) {
  if (name == "VERTEX") return model::Dialect::kVertex;
  if (name == "ML_V1") return model::Dialect::kMlV1;
  return std::nullopt;
}

model::Job StoredCopy(const model::Job& job) {
  model::Job copy = job;
  copy.spec = model::JobSpec();
  copy.spec.job_id = MlJobIdOf(job);
  return copy;
}

std::string MlJobIdOf(const model::Job& job) {
  return job.dialect == model::Dialect::kMlV1 ? job.spec.job_id : std::string();
}

Status JobNotFound(const std::string& uid) { return NotFound("job " + uid + " not found"); }

}  // namespace ty::store::internal
