// `GET .../{job}/details`: replicas, attempts, phase times and events of a job
// (wire/job_details.h). Our extension, beside Google's resources like `/logs`.
#include <nlohmann/json.hpp>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "wire/job_details.h"

namespace ty::api::internal {

HttpResponse GetJobDetails(const Call& call, const service::JobRef& ref) {
  Result<model::Job> job = call.service->Get(ref);
  if (!job.ok()) return ErrorResponse(job.status());
  Result<std::vector<model::JobEvent>> events = call.service->Events(ref);
  if (!events.ok()) return ErrorResponse(events.status());
  nlohmann::json details = wire::RenderJobDetails(*job, *events);
  // An engine outage stalls every unfinished job: said where `describe` looks.
  executor::BackendHealth engine = call.service->backend_health();
  if (!engine.reachable && !model::IsTerminal(job->state)) {
    details["engine"] = {
        {"reachable", false}, {"detail", engine.detail}, {"since", FormatRfc3339(engine.since)}};
  }
  // Its news waits for a store that cannot write (a full disk): said, with why.
  service::StoreWriteHealth store = call.service->store_health();
  if (store.waiting.count(job->uid) > 0) {
    details["store"] = {{"writing", false},
                        {"detail", "this job's latest events wait to be recorded: " + store.detail},
                        {"since", FormatRfc3339(store.since)}};
  }
  return JsonResponse(details);
}

}  // namespace ty::api::internal
