// The images a job spec names, checked at submit against the images module's rules
// (images/): a reference the grammar accepts, a prebuilt name that has a runtime here,
// and, with tokens, an image of the job's own project or a shared one.
//
// Pure; thread-safe.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "model/job_spec.h"

namespace ty::model {

// The first image of `spec` that is not a valid reference, or a prebuilt name with no
// runtime here, as a FieldError naming its wire path (e.g.
// "jobSpec.workerPoolSpecs[0].containerSpec.imageUri" or
// "trainingInput.masterConfig.imageUri").
Status CheckSpecImages(const JobSpec& spec);

// The first pool whose image is a runtime of the catalogue (images/runtimes.h) that
// `built` says is not built here (it is given the runtime's local image): a
// FailedPrecondition naming the field and `trainyard images build NAME`, so that a job
// is refused at submit rather than failed at launch. `built` may block briefly (an
// engine's image inspect); it is asked once per runtime.
Status CheckRuntimesBuilt(const JobSpec& spec,
                          const std::function<bool(const std::string& local_image)>& built);

// With tokens, a job pulls only its own project's images and the shared ones:
// PermissionDenied naming the field, the image's project and the rule otherwise.
Status CheckImageProjects(const std::string& project, const JobSpec& spec);

}  // namespace ty::model
